// Cards and the few rules the browser needs to know by itself: which click can mean only
// one thing (a card no foundation takes cannot be "tapped" home), and the rules page's
// small examples. The server stays the judge of every move in a race.

export const SUIT_SYMBOLS = { S: "♠", H: "♥", D: "♦", C: "♣" };
export const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
export const RANKS = "A23456789TJQK";
export const EH_SLOT_SUITS = ["S", "H", "C", "D", "S", "H", "C", "D"];

/** How many cards ``game`` deals: two decks in Easy Harp, one in Klondike. */
export function deckSize(game) {
  return game === "easy-harp" ? 104 : 52;
}

/** 1 for an ace … 13 for a king. */
export function rankOf(card) {
  return RANKS.indexOf(card[0]) + 1;
}

export function isRed(card) {
  return card[1] === "H" || card[1] === "D";
}

/** How a rank is written on a card: "10" for T, the letter otherwise. */
export function rankText(card) {
  return card[0] === "T" ? "10" : card[0];
}

/** Rule 1 of both games: one rank lower, the other colour. */
export function fitsOn(card, top) {
  return Boolean(top) && isRed(card) !== isRed(top) && rankOf(top) === rankOf(card) + 1;
}

/** The 0-based foundation slot a card would go to by a "tap", or -1 (Easy Harp slots are
 * reserved for a suit; Klondike's take any suit). */
export function foundationFor(view, card, harp) {
  for (let i = 0; i < view.foundations.length; i++) {
    if (harp && EH_SLOT_SUITS[i] !== card[1]) continue;
    const pile = view.foundations[i];
    const top = pile[pile.length - 1];
    if (!top ? card[0] === "A" : top[1] === card[1] && rankOf(card) === rankOf(top) + 1) return i;
  }
  return -1;
}

/** Whether some column other than ``fromPile`` takes ``card`` (a "double tap" could mean
 * something). */
export function tableTakes(view, card, fromPile) {
  return view.tableau.some((col, i) => {
    if (`t${i + 1}` === fromPile) return false;
    const top = col.up[col.up.length - 1];
    return top ? fitsOn(card, top) : col.down === 0 && card[0] === "K";
  });
}

/** Whether ``cards`` (bottom first) descend by one rank in alternating colours. */
export function isRun(cards) {
  for (let i = 1; i < cards.length; i++) if (!fitsOn(cards[i], cards[i - 1])) return false;
  return true;
}
