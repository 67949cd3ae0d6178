// Cards and moves in words, as a reader follows them: a card's name ("7 of spades") and a
// move of a replay — what moved, from where, to where ("7 of spades from the waste to
// column 3") — from the move as the server resolved it (the notation of
// docs/spec/moves.md, which a replay showed as it was: "Played t2-t8") and the board
// before it. The words come from the page's catalogue; no DOM.

import { t } from "./i18n.js";

/** A card's name for people: "7 of spades", "туз пик", "spader kung". */
export function cardName(card) {
  return t("card.name", { rank: t(`rank.${card[0]}`), suit: t(`suit.${card[1]}`) });
}

const MOVE = /^(w|[tf](\d+))(?::(\d+))?-([tf])(\d+)$/;

/** The cards a move takes from ``src`` ("w", "t6", "f2") of ``board``, ``count`` of them,
 * the lowest first; null where the board does not show them. */
function taken(board, src, count) {
  if (src === "w") return board.waste.top.slice(-1);
  const n = Number(src.slice(1)) - 1;
  if (src[0] === "f") return (board.foundations[n] || []).slice(-1);
  const up = board.tableau[n] ? board.tableau[n].up : [];
  return up.length >= count ? up.slice(up.length - count) : null;
}

/** ``move`` (as resolved: ``s``, ``u``, ``a``, ``w-t3``, ``t6:4-t2``, ``f1-t3`` …) in
 * words, from ``before``, the mover's board before it (null: the move as written). */
export function moveWords(move, before) {
  if (move === "u") return t("words.undo");
  if (move === "a") return t("words.auto");
  if (move === "s") return before && before.stock === 0 ? t("words.redeal") : t("words.draw");
  const m = MOVE.exec(move);
  const cards = m && before ? taken(before, m[1], Number(m[3] || 1)) : null;
  if (!m || !cards || !cards.length) return move;
  const what = cards.length > 1 ? t("words.run", { card: cardName(cards[0]), n: cards.length - 1 }) : cardName(cards[0]);
  const from = m[1] === "w" ? t("words.from_waste") : t(m[1][0] === "t" ? "words.from_column" : "words.from_foundation", { n: m[2] });
  const to = t(m[4] === "t" ? "words.to_column" : "words.to_foundation", { n: m[5] });
  return t("words.move", { what, from, to });
}
