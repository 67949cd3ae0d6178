// The move notation (docs/spec/moves.md) as the page writes it: `s` (stock), `u` (undo),
// `a` (auto-finish) and `SRC-DST` moves such as `w-t3`, `t6:4-t2`, `t2-f` (the first
// foundation that takes the card: a tap) and `w-t` (the game's double-tap destination).
// The server reads and judges every move; the page only writes them.

// The actions that are one letter.
export const STOCK = "s";
export const UNDO = "u";
export const AUTO_FINISH = "a";
export const FOUNDATIONS = "f"; // the first foundation that takes the card
export const TABLE = "t"; // where the game's double tap puts the card (its rule book says)

/** Where cards come from: ``count`` cards of a column ("t6:4"), or one card of a pile
 * ("w", "t6", "f2"). */
export function source(pile, count = 1) {
  return pile.startsWith("t") && count > 1 ? `${pile}:${count}` : pile;
}

/** Where a move to ``pile`` goes: a foundation slot means the foundations (the card finds
 * its own slot, the first one if two fit, as in the Easy Harp app); a column is itself. */
export function destination(pile) {
  return pile.startsWith("f") ? FOUNDATIONS : pile;
}

/** A move from ``from`` (a :func:`source`) to ``to`` ("t3", "f", "t", …). */
export function move(from, to) {
  return `${from}-${to}`;
}
