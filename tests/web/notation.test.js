// The move notation the page writes (docs/spec/moves.md): its own examples.

import assert from "node:assert/strict";
import test from "node:test";
import { FOUNDATIONS, TABLE, destination, move, source } from "../../clients/web/notation.js";

test("a source is a pile, or a column with the count of its top cards when more than one", () => {
  assert.equal(source("w"), "w");
  assert.equal(source("t2"), "t2");
  assert.equal(source("t2", 1), "t2"); // tN:1 is written tN
  assert.equal(source("t6", 4), "t6:4");
  assert.equal(source("f3"), "f3");
});

test("a foundation slot as a destination means the foundations; a column is itself", () => {
  assert.equal(destination("f5"), FOUNDATIONS);
  assert.equal(destination("t7"), "t7");
});

test("moves are written as the spec's examples", () => {
  assert.equal(move("w", "t3"), "w-t3");
  assert.equal(move(source("t2"), destination("f1")), "t2-f");
  assert.equal(move("f3", "t7"), "f3-t7");
  assert.equal(move(source("t6", 4), "t2"), "t6:4-t2");
  assert.equal(move("w", TABLE), "w-t");
});
