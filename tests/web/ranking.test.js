// The one ranking rule in the page, worked out by hand: the race's key, and places that
// equal results share (server/rooms/ranking.py; tests/test_ranking_mirror.py compares the
// two on many cases).

import assert from "node:assert/strict";
import test from "node:test";
import { places, raceKey, ranked } from "../../clients/web/ranking.js";

test("places: equal keys share one, the next counts everyone ahead", () => {
  assert.deepEqual(places([[1], [2], [2], [3]]), [1, 2, 2, 4]);
  assert.deepEqual(places([[0], [0], [0]]), [1, 1, 1]);
  assert.deepEqual(places([]), []);
});

test("winners by time then moves, then the rest by cards, score, moves; ties shared", () => {
  const rows = [
    { seat: 1, status: "resigned", on_foundations: 20, score: 300, moves: 50 },
    { seat: 2, status: "won", elapsed_ms: 90_000, moves: 120 },
    { seat: 3, status: "won", elapsed_ms: 90_000, moves: 110 },
    { seat: 4, status: "timeout", on_foundations: 20, score: 300, moves: 50 },
    { seat: 5, status: "resigned", on_foundations: 30, score: 0, moves: 500 },
  ];
  const order = ranked(rows, (r) => r.seat).map(({ place, row }) => [place, row.seat]);
  assert.deepEqual(order, [[1, 3], [2, 2], [3, 5], [4, 1], [4, 4]]);
  assert.deepEqual(raceKey({ status: "won", elapsed_ms: 5, moves: 2 }), [0, 5, 2, 0]);
});
