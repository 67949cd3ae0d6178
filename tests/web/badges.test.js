// The player page's badges, worked out by hand from a player page's figures.

import assert from "node:assert/strict";
import test from "node:test";
import { badges } from "../../clients/web/badges.js";

test("a new player has none, each with its way to go", () => {
  assert.deepEqual(badges({ stats: [], daily: [] }), [
    { id: "first_win", need: 1, have: 0, earned: false },
    { id: "ten_dailies", need: 10, have: 0, earned: false },
    { id: "perfect_week", need: 7, have: 0, earned: false },
  ]);
});

test("wins count over games, dailies over daily games, a perfect week in one game", () => {
  const player = {
    stats: [{ game: "klondike", won: 0 }, { game: "easy-harp", won: 2 }],
    daily: [
      { game: "klondike", days_played: 6, longest_won_streak: 4 },
      { game: "easy-harp", days_played: 5, longest_won_streak: 6 },
    ],
  };
  const [win, dailies, week] = badges(player);
  assert.deepEqual([win.earned, win.have], [true, 1]);
  assert.deepEqual([dailies.earned, dailies.have], [true, 10]); // 11, shown as done
  assert.deepEqual([week.earned, week.have], [false, 6]); // 4 + 6 days are no week in a row
  assert.equal(badges({ stats: [], daily: [{ days_played: 7, longest_won_streak: 7 }] })[2].earned, true);
});
