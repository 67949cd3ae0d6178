// Share texts: what a player copies or shares after a race, spoiler-free: the deal's code
// (never on the deal of the day, secret until its day is over), how it went, a link; never
// a move or a card. The words come from the page's catalogue (i18n.js); the facts from the
// caller, so nothing here reads the page.

import { deckSize } from "./cards.js";
import { formatTime, t, tOrdinal, tn } from "./i18n.js";

const FULL = 13; // a foundation holds ace to king, in both games
// One mark per foundation, filled in proportion — empty, a few cards, about half, most,
// full — from the characters every font has (Windows' WGL4 set, which DejaVu, Liberation,
// Noto and Apple's fonts all cover: an empty square and the shades), not emoji, which a
// machine without a colour-emoji font draws as empty boxes. The line above says the same
// in words. (clients/daily_share.py writes the same.)
export const SQUARES = ["\u25a1", "\u2591", "\u2592", "\u2593", "\u2588"];

/** One square per foundation, by how many of its 13 cards it holds. */
export function foundationLine(counts) {
  return counts.map((n) => SQUARES[n >= FULL ? 4 : n >= 9 ? 3 : n >= 5 ? 2 : n >= 1 ? 1 : 0]).join("");
}

/** How an acknowledged action changed the deck turns (passes through the stock after the
 * first), from the boards before and after it: a stock action that refilled an empty stock
 * is one; an undo that emptied the stock took one back. (clients/daily_share.py too.) */
export function deckTurnStep(before, after, move) {
  if (!before || !after) return 0;
  if (move.startsWith("s") && before.stock === 0 && after.stock > 0) return 1;
  if (move === "u" && before.stock > 0 && after.stock === 0) return -1;
  return 0;
}

/**
 * The spoiler-free share text of a race on the deal of the day: the day's number, the
 * game, what the race was for the player (unless their ranked attempt), won or not, score,
 * moves, deck turns (Klondike), time, the days in a row they have played it (from two),
 * the foundations as marks and the day's page — never the deal code nor a card. ``r``:
 * {number, game, attempt, won, onFoundations, total, score, moves, deckTurns, elapsedMs,
 * streak (days in a row, or null), foundations (cards per foundation, or null), url}. The
 * terminal writes the same (clients/daily_share.py).
 */
export function dailyShareText(r) {
  const head = [t("share.daily_title", { n: r.number, game: t(`game.${r.game}`) })];
  if (r.attempt && r.attempt !== "ranked") head.push(t(`attempt.${r.attempt}`));
  const facts = [
    r.won ? t("share.daily_won") : t("share.daily_not_won", { cards: r.onFoundations, total: r.total }),
    t("share.daily_score", { score: r.score }),
    tn("stats.moves", r.moves),
  ];
  if (r.game === "klondike") facts.push(tn("share.deck_turns", r.deckTurns));
  facts.push(t("share.daily_time", { time: formatTime(r.elapsedMs) }));
  if (r.streak >= 2) facts.push(tn("share.daily_streak", r.streak)); // a streak is two days or more
  const lines = [head.join(" · "), facts.join(" · ")];
  if (r.foundations) lines.push(foundationLine(r.foundations));
  lines.push(t("share.daily_link", { url: r.url }));
  return lines.join("\n");
}

/** A spectator's share text of a daily race: the day, the game, how many raced, the link. */
export function dailyWatchText(number, game, racers, url) {
  return [t("share.daily_title", { n: number, game: t(`game.${game}`) }), tn("share.racing", racers), t("share.daily_link", { url })].join("\n");
}

/** The share text of a race not on the deal of the day: the game and its deal, the
 * player's place and how it went (a spectator's: how many raced and the winner), and a
 * link that opens a room on the same deal — none while the deal is not told (it is no
 * secret once the race is over, but a room that keeps it longer leaves it out). ``s``:
 * {game, deal, role, seat, results (in rank order, or null), origin (the site's address)}. */
export function raceShareText({ game, deal, role, seat, results, origin }) {
  const head = [`samedeal · ${game ? t(`game.${game}`) : ""}`];
  if (deal) head.push(t("share.deal", { deal }));
  const lines = [head.join(" · "), ...outcomeLines(game, role, seat, results)];
  if (deal) lines.push(t("share.link", { url: `${origin}/d/${deal}` }));
  return lines.join("\n");
}

/** The share text of a tournament round's race: the tournament, the round and the game,
 * the player's place and how it went, and the tournament's page — never the deal, told to
 * nobody before the round is over. ``s``: {game, tournament ({name, round, link}), role,
 * seat, results}. */
export function tournamentShareText({ game, tournament, role, seat, results }) {
  const head = t("share.tournament_title", { name: tournament.name, n: tournament.round, game: t(`game.${game}`) });
  return [head, ...outcomeLines(game, role, seat, results), t("share.tournament_link", { url: tournament.link })].join("\n");
}

/** How a race went, in a line: the player's place and result, or for a spectator how many
 * raced and the winner's (nothing without results). */
function outcomeLines(game, role, seat, results) {
  const lines = [];
  const mine = results && results.find((r) => r.seat === seat);
  const n = results ? results.length : 0;
  const total = deckSize(game);
  if (role === "player" && mine) {
    const how = mine.status === "won"
      ? tn("share.cleared", mine.moves, { time: formatTime(mine.elapsed_ms) })
      : t("share.home", { cards: mine.on_foundations, total });
    lines.push(`${tOrdinal("share.place", { rank: mine.rank, n })}: ${how}`);
  } else if (n) {
    const best = results[0];
    const winner = best.status === "won"
      ? t("share.winner_time", { time: formatTime(best.elapsed_ms) })
      : t("share.winner_cards", { cards: best.on_foundations, total });
    lines.push(`${tn("share.racing", n)}; ${winner}`);
  }
  return lines;
}
