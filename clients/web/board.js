// Drawing a board (a player's view: face-up cards only) as DOM, with a short slide for the
// cards that changed place. Used by the race and by the rules page's examples.

import { EH_SLOT_SUITS, SUIT_SYMBOLS, isRed, rankText } from "./cards.js";
import { t, tn } from "./i18n.js";
import { burstStar, columnHeight, columnOffsets, css, placesAcross, slideOffset, wasteShift } from "./layout.js";
import { cardName } from "./words.js";

const SVG = "http://www.w3.org/2000/svg";
const ICON_PATHS = {
  // a cup on a stand: drawn, so it shows on a machine without an emoji font
  trophy:
    "M7 3h10v2h3v3a4 4 0 0 1-4 4h-.4A5 5 0 0 1 13 14.9V18h3v3H8v-3h3v-3.1A5 5 0 0 1 8.4 12H8a4 4 0 0 1-4-4V5h3V3zm0 4H6v1a2 2 0 0 0 1 1.7V7zm10 0v2.7A2 2 0 0 0 18 8V7h-1z",
  star: "M12 2l2.9 6.9 7.1.6-5.4 4.7 1.6 7L12 17.5 5.8 21.2l1.6-7L2 9.5l7.1-.6z",
  redeal: "M12 4a8 8 0 1 0 8 8h-2.5A5.5 5.5 0 1 1 12 6.5V10l5-5-5-5z",
};

/** A small inline SVG icon (never an emoji: a machine without an emoji font draws boxes). */
export function icon(name, className = "icon") {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", className);
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", ICON_PATHS[name]);
  path.setAttribute("fill", "currentColor");
  svg.append(path);
  return svg;
}

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

export function cardNode(name, faceUp = true) {
  if (!faceUp) {
    const back = el("div", "card back");
    back.setAttribute("aria-hidden", "true");
    return back;
  }
  const node = el("div", `card up${isRed(name) ? " red" : ""}`);
  node.dataset.card = name;
  node.dataset.suit = name[1]; // a four-colour deck colours each suit
  node.setAttribute("aria-hidden", "true"); // the pile's label reads the cards
  const corner = el("span", "corner");
  corner.append(el("span", "r", rankText(name)), el("span", "s", SUIT_SYMBOLS[name[1]]));
  node.append(corner, el("span", "pip", SUIT_SYMBOLS[name[1]]));
  return node;
}

function pileNode(className, pile, label) {
  const node = el("div", `pile slot ${className}`);
  node.dataset.pile = pile;
  // Focusable (Enter or Space picks and drops: input.js); a labelled group, since its
  // visible text (card corners) is not its name: the label reads the cards out in words.
  node.tabIndex = 0;
  node.setAttribute("role", "group");
  node.setAttribute("aria-label", label);
  return node;
}

function columnLabel(i, col) {
  const parts = [t("pile.column", { n: i + 1 })];
  if (col.down) parts.push(tn("pile.face_down", col.down));
  if (col.up.length) parts.push(col.up.map(cardName).join(", "));
  if (!col.down && !col.up.length) parts.push(t("pile.empty"));
  return parts.join(": ");
}

/** Positions of the face-up cards now on ``board``, by card, for :func:`slide`. */
function cardPlaces(board) {
  const places = new Map();
  for (const node of board.querySelectorAll(".card.up")) {
    const pile = node.closest("[data-pile]");
    const list = places.get(node.dataset.card) || [];
    list.push({ pile: pile ? pile.dataset.pile : "", rect: node.getBoundingClientRect() });
    places.set(node.dataset.card, list);
  }
  return places;
}

function reducedMotion() {
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

/** Slide every card that changed pile from where it was (``before``) to where it is. */
function slide(board, before) {
  const moved = [];
  for (const node of board.querySelectorAll(".card.up")) {
    const pile = node.closest("[data-pile]").dataset.pile;
    const olds = before.get(node.dataset.card);
    if (!olds || !olds.length) continue;
    const same = olds.findIndex((o) => o.pile === pile);
    if (same >= 0) {
      olds.splice(same, 1);
      continue;
    }
    moved.push([node, olds]);
  }
  for (const [node, olds] of moved) {
    const from = olds.shift();
    if (!from) continue;
    const offset = slideOffset(from.rect, node.getBoundingClientRect());
    if (!offset) continue;
    node.animate(
      [{ transform: `translate(${offset.dx}px, ${offset.dy}px)`, zIndex: 30 }, { transform: "none", zIndex: 30 }],
      { duration: 180, easing: "ease-out" },
    );
  }
}

/**
 * Draw ``view`` of ``game`` into ``board``.
 * ``options.animate``: slide the cards that moved since the last drawing of this board;
 * ``options.mini``: columns and foundations only (the rules page's examples).
 */
export function renderBoard(board, view, game, options = {}) {
  const before = options.animate && !reducedMotion() ? cardPlaces(board) : null;
  board.replaceChildren();
  if (!view) return;
  const harp = game === "easy-harp";
  const three = game === "klondike-3";
  board.style.setProperty("--n", placesAcross(view, game, options.mini));
  board.classList.toggle("harp", harp);

  const top = el("div", "row top");
  if (!options.mini) {
    const stockLabel = view.stock
      ? tn("pile.stock", view.stock)
      : view.waste.count
        ? t("pile.stock_redeal")
        : t("pile.stock_empty");
    const stock = pileNode(`stock${view.stock ? "" : " empty"}`, "s", stockLabel);
    if (view.stock) {
      stock.append(cardNode(null, false), el("span", "count", view.stock));
    } else if (view.waste.count) {
      const again = el("span", "redeal");
      again.append(icon("redeal"));
      stock.append(again);
    }
    top.append(stock);

    const wasteCards = view.waste.top;
    const wasteLabel = [tn("pile.waste", view.waste.count)];
    if (wasteCards.length) wasteLabel.push(cardName(wasteCards[wasteCards.length - 1]));
    const waste = pileNode(`waste${three ? " three" : ""}`, "w", wasteLabel.join(": "));
    wasteCards.forEach((name, i) => {
      const c = cardNode(name);
      // draw three: the fan spreads over two card places, so every index shows in full
      if (i) c.style.left = `calc((var(--cw) + var(--gap)) * ${wasteShift(i, three)})`;
      waste.append(c);
    });
    if (view.waste.count) waste.append(el("span", "count", view.waste.count));
    top.append(waste);
    if (!harp && !three) top.append(el("div", "spacer"));
  }
  const foundations = el("div", "foundations");
  foundations.dataset.area = "f";
  view.foundations.forEach((cards, i) => {
    const suit = harp ? EH_SLOT_SUITS[i] : null;
    const topCard = cards[cards.length - 1];
    const label = [t(harp ? "pile.foundation_suit" : "pile.foundation", { n: i + 1, suit: suit ? t(`suit.${suit}`) : "" })];
    label.push(topCard ? cardName(topCard) : t("pile.empty"));
    const f = pileNode("foundation", `f${i + 1}`, label.join(": "));
    const mark = el("span", `slot-mark${suit && isRed(`A${suit}`) ? " red" : ""}`, suit ? SUIT_SYMBOLS[suit] : "A");
    if (suit) mark.dataset.suit = suit; // a four-colour deck colours each suit
    f.append(mark);
    if (topCard) f.append(cardNode(topCard));
    foundations.append(f);
  });
  top.append(foundations);
  board.append(top);

  // column numbers: what the keys 1–9 and the typed notation call the columns
  const numbers = el("div", "row numbers");
  numbers.setAttribute("aria-hidden", "true");
  view.tableau.forEach((_, i) => numbers.append(el("span", "col-no", i + 1)));
  board.append(numbers);

  const tableau = el("div", "row tableau");
  view.tableau.forEach((col, i) => {
    const pile = pileNode("column", `t${i + 1}`, columnLabel(i, col));
    columnOffsets(col.down, col.up.length).forEach((offset, k) => {
      const c = k < col.down ? cardNode(null, false) : cardNode(col.up[k - col.down]);
      c.style.top = css(offset);
      pile.append(c);
    });
    pile.style.height = css(columnHeight(col.down, col.up.length));
    tableau.append(pile);
  });
  board.append(tableau);
  if (before) slide(board, before);
}

/** One followed player's board under a ``heading`` (their name, or with the spectators'
 * delay): a spectator's boards side by side, in a room or on TV. */
export function followedBoard(seat, name, heading, view, game) {
  const cell = el("section", "followed");
  cell.dataset.seat = String(seat);
  cell.setAttribute("aria-label", t("spectate.watching", { name }));
  cell.append(el("h3", "watching", heading));
  const inner = el("div", "board readonly");
  cell.append(inner);
  renderBoard(inner, view, game);
  if (view && view.won) inner.append(wonBanner());
  return cell;
}

/** The "cleared!" banner, with a short burst of stars unless motion is reduced. */
export function wonBanner() {
  const banner = el("div", "won-banner");
  banner.setAttribute("role", "status");
  banner.append(icon("trophy", "icon big"), el("span", null, t("race.cleared")));
  if (!reducedMotion()) {
    const burst = el("div", "burst");
    burst.setAttribute("aria-hidden", "true");
    for (let i = 0; i < 14; i++) {
      const star = icon("star", "icon spark");
      const { angle, distance } = burstStar(i, 14);
      star.style.setProperty("--a", `${angle}deg`);
      star.style.setProperty("--d", `${distance}px`);
      burst.append(star);
    }
    banner.append(burst);
  }
  return banner;
}
