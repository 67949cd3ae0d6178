// Where things go on a board, as numbers. A card's size is CSS's (style.css: --cw from the
// board's width and its number of places, --ch, --gap, and the --down and --up steps of a
// column, all in proportion to it), so positions here are counts of those lengths, which
// :func:`css` writes as a calc(); the few placed in pixels (a reminder, a card's slide) are
// worked out from rectangles the caller measured. No DOM here.

const FAN = { one: 0.36, three: 0.5 }; // the waste's fan, in card places (card and gap)

/** How many card places a board is wide: Klondike's top row (stock, waste, a gap, four
 * foundations) is 7, Easy Harp's (stock, waste, eight foundations) 10; a rules page's
 * small example only its widest row. */
export function placesAcross(view, game, mini = false) {
  if (mini) return Math.max(view.tableau.length, view.foundations.length);
  return game === "easy-harp" ? 10 : 7;
}

/** How far the ``i``-th shown waste card sits from the first, in card places: a third of
 * a card or so, and in draw three half a place, so that three cards fill two places
 * (the waste is two cards and a gap wide there) with every index in full view. */
export function wasteShift(i, three) {
  return (three ? FAN.three : FAN.one) * i;
}

/** Where each card of a column sits, from the top of the column: {down, up}, how many
 * face-down steps and face-up steps above it (``down`` cards face down first, then ``up``
 * face up). */
export function columnOffsets(down, up) {
  const offsets = [];
  for (let d = 0; d < down; d++) offsets.push({ down: d, up: 0 });
  for (let j = 0; j < up; j++) offsets.push({ down, up: j });
  return offsets;
}

/** A column's height: one card, and the steps down to its last card. */
export function columnHeight(down, up) {
  return { ch: 1, down, up: Math.max(up - 1, 0) };
}

/** A length made of counts of the board's lengths ({ch: 1, down: 2}: one card's height
 * and two face-down steps) as CSS. */
export function css(counts) {
  const terms = Object.entries(counts).map(([name, n]) => (n === 1 ? `var(--${name})` : `${n} * var(--${name})`));
  return `calc(${terms.join(" + ")})`;
}

/** Where a refused move's reminder goes, in px from the board's top left, for a box
 * ``width`` wide: below its ``card`` (at most 40 px of the card down, then 8 px), as far
 * left as the card but inside the board; at the board's top left when there is no card.
 * ``board`` and ``card``: {left, top, width, height} as the page measured them. */
export function reminderPlace(board, card, width = 270) {
  if (!card) return { left: 0, top: 8 };
  return {
    left: Math.max(0, Math.min(card.left - board.left, board.width - width)),
    top: Math.min(card.top - board.top + Math.min(card.height, 40) + 8, board.height),
  };
}

/** How far a card moved from ``from`` to ``to`` (rectangles), for its slide; null when it
 * barely moved (under 2 px), which is not worth a slide. */
export function slideOffset(from, to) {
  const dx = from.left - to.left;
  const dy = from.top - to.top;
  return Math.abs(dx) + Math.abs(dy) < 2 ? null : { dx, dy };
}

/** A progress bar's filled part, in whole percent. */
export function progressPercent(done, total) {
  return Math.round((100 * done) / total);
}

/** The ``i``-th of ``count`` stars bursting from a win's banner: its direction (degrees) and
 * how far it flies (px), in three rings. */
export function burstStar(i, count) {
  return { angle: (360 / count) * i, distance: 60 + (i % 3) * 30 };
}
