// Share texts: what a player copies or shares after a race, spoiler-free: the deal's code
// (never on the deal of the day, secret until its day is over), how it went, a link; never
// a move or a card. The words come from the page's catalogue (i18n.js); the facts from the
// caller, so nothing here reads the page.

import { deckSize } from "./cards.js";
import { formatTime, t, tOrdinal, tn } from "./i18n.js";

const FULL = 13; // a foundation holds ace to king, in both games
// Emoji squares for the shared text only (chat apps draw them; a shared text says the
// same in words above them): empty, a few cards, about half, most, full.
const SQUARES = [0x2b1c, 0x1f7e5, 0x1f7e7, 0x1f7e8, 0x1f7e9].map((c) => String.fromCodePoint(c));

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
 * moves, deck turns (Klondike), time, the foundations as squares and the day's page — never
 * the deal code nor a card. ``r``: {number, game, attempt, won, onFoundations, total, score,
 * moves, deckTurns, elapsedMs, foundations (cards per foundation, or null), url}. The
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
 * link that opens a room on the same deal. ``s``: {game, deal, role, seat, results (in
 * rank order, or null), origin (the site's address)}. */
export function raceShareText({ game, deal, role, seat, results, origin }) {
  const lines = [`samedeal · ${game ? t(`game.${game}`) : ""} · ${t("share.deal", { deal })}`];
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
  lines.push(t("share.link", { url: `${origin}/d/${deal}` }));
  return lines.join("\n");
}
