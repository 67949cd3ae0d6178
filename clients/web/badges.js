// A few honest badges on a player's page, worked out from what the page already has (GET
// /api/players/HANDLE: the stats per game and the daily's figures), each with the rule that
// earns it and how far the player is: a first win (any race won), ten dailies (ten days'
// deals of the day played, in all daily games), a perfect week (the deal of the day won
// seven days in a row, in one game). No DOM.

/** The badges, in the order a page shows them, and what each needs. */
export const BADGES = [
  { id: "first_win", need: 1 },
  { id: "ten_dailies", need: 10 },
  { id: "perfect_week", need: 7 },
];

/** Each badge for ``player`` (``{stats, daily}`` of the player page): ``{id, need, have,
 * earned}``, ``have`` counted towards ``need``. */
export function badges(player) {
  const stats = player.stats || [];
  const daily = player.daily || [];
  const have = {
    first_win: stats.reduce((n, s) => n + (s.won || 0), 0),
    ten_dailies: daily.reduce((n, d) => n + (d.days_played || 0), 0),
    perfect_week: daily.reduce((n, d) => Math.max(n, d.longest_won_streak || 0), 0),
  };
  return BADGES.map(({ id, need }) => ({ id, need, have: Math.min(have[id], need), earned: have[id] >= need }));
}
