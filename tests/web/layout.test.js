// Board geometry: how wide a board is in card places, where cards of a column and of the
// waste sit, where a refused move's reminder goes, and what is worth a slide.

import assert from "node:assert/strict";
import test from "node:test";
import {
  burstStar,
  columnHeight,
  columnOffsets,
  css,
  placesAcross,
  progressPercent,
  reminderPlace,
  slideOffset,
  wasteShift,
} from "../../clients/web/layout.js";

const board = (columns, foundations) => ({ tableau: Array(columns).fill({}), foundations: Array(foundations).fill([]) });

test("a board's width in card places: the top row's piles", () => {
  assert.equal(placesAcross(board(7, 4), "klondike"), 7); // stock, waste, a gap, 4 foundations
  assert.equal(placesAcross(board(7, 4), "klondike-3"), 7);
  assert.equal(placesAcross(board(9, 8), "easy-harp"), 10); // stock, waste, 8 foundations
  assert.equal(placesAcross(board(3, 4), "klondike", true), 4); // a rules example: its widest row
  assert.equal(placesAcross(board(5, 2), "easy-harp", true), 5);
});

test("draw three fans its three cards over exactly two places (the waste is two cards and a gap wide)", () => {
  assert.deepEqual([0, 1, 2].map((i) => wasteShift(i, true)), [0, 0.5, 1]);
  assert.deepEqual([0, 1, 2].map((i) => wasteShift(i, false)), [0, 0.36, 0.72]);
});

test("a column: face-down cards a --down step apart, then face-up ones a --up step apart", () => {
  assert.deepEqual(columnOffsets(2, 3), [
    { down: 0, up: 0 },
    { down: 1, up: 0 },
    { down: 2, up: 0 },
    { down: 2, up: 1 },
    { down: 2, up: 2 },
  ]);
  assert.deepEqual(columnOffsets(0, 1), [{ down: 0, up: 0 }]);
  assert.deepEqual(columnOffsets(0, 0), []);
});

test("a column's height: a card and the steps to its last card", () => {
  assert.deepEqual(columnHeight(2, 3), { ch: 1, down: 2, up: 2 });
  assert.deepEqual(columnHeight(6, 1), { ch: 1, down: 6, up: 0 });
  assert.deepEqual(columnHeight(0, 0), { ch: 1, down: 0, up: 0 }); // an empty column keeps a card's room
});

test("lengths as CSS: one of a length is the variable itself", () => {
  assert.equal(css({ ch: 1, down: 2, up: 0 }), "calc(var(--ch) + 2 * var(--down) + 0 * var(--up))");
  assert.equal(css({ down: 1, up: 3 }), "calc(var(--down) + 3 * var(--up))");
});

const BOARD = { left: 100, top: 50, width: 700, height: 500 };

test("a reminder goes under its card, 8 px below at most 40 px of it", () => {
  const card = { left: 300, top: 250, width: 80, height: 112 };
  assert.deepEqual(reminderPlace(BOARD, card), { left: 200, top: 248 }); // 200 + 40 + 8
  const short = { left: 300, top: 250, width: 80, height: 30 };
  assert.deepEqual(reminderPlace(BOARD, short), { left: 200, top: 238 }); // 200 + 30 + 8
});

test("a reminder stays inside the board: not past its right edge, nor below it, nor left of it", () => {
  assert.deepEqual(reminderPlace(BOARD, { left: 760, top: 60, width: 80, height: 112 }), { left: 430, top: 58 }); // 700 - 270
  assert.equal(reminderPlace(BOARD, { left: 300, top: 540, width: 80, height: 112 }).top, 500);
  assert.equal(reminderPlace({ ...BOARD, width: 200 }, { left: 150, top: 60, width: 80, height: 112 }).left, 0);
  assert.equal(reminderPlace(BOARD, { left: 300, top: 60, width: 80, height: 112 }, 400).left, 200);
});

test("a reminder without a card goes to the board's top left", () => {
  assert.deepEqual(reminderPlace(BOARD, null), { left: 0, top: 8 });
});

test("a card slides back from where it was; one that moved under 2 px does not", () => {
  assert.deepEqual(slideOffset({ left: 10, top: 20 }, { left: 110, top: 300 }), { dx: -100, dy: -280 });
  assert.deepEqual(slideOffset({ left: 10, top: 20 }, { left: 8, top: 20 }), { dx: 2, dy: 0 });
  assert.equal(slideOffset({ left: 10, top: 20 }, { left: 11, top: 20.5 }), null);
});

test("progress in whole percent", () => {
  assert.equal(progressPercent(0, 52), 0);
  assert.equal(progressPercent(13, 52), 25);
  assert.equal(progressPercent(1, 104), 1); // 0.96 rounds up
  assert.equal(progressPercent(104, 104), 100);
});

test("a win's stars burst all round, in three rings", () => {
  const stars = Array.from({ length: 14 }, (_, i) => burstStar(i, 14));
  assert.equal(stars[0].angle, 0);
  assert.ok(Math.abs(stars[7].angle - 180) < 1e-9);
  assert.deepEqual(stars.slice(0, 4).map((s) => s.distance), [60, 90, 120, 60]);
});
