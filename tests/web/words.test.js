// Moves in words, worked out by hand from boards: a replay says what moved, from where, to
// where, in the page's language.

import assert from "node:assert/strict";
import test from "node:test";
import { moveWords } from "../../clients/web/words.js";
import { speak } from "./catalogues.js";

const BOARD = {
  tableau: [{ down: 2, up: ["KS", "QH", "JC"] }, { down: 0, up: ["7S"] }, { down: 1, up: [] }],
  waste: { count: 4, top: ["9D"] },
  foundations: [["AH", "2H"], [], [], []],
  stock: 10,
};

test("a card, a run, a card home and one taken back, in English", () => {
  speak("en");
  assert.equal(moveWords("w-t2", BOARD), "9 of diamonds from the waste to column 2");
  assert.equal(moveWords("t1:3-t3", BOARD), "king of spades and 2 more from column 1 to column 3");
  assert.equal(moveWords("t1-f2", BOARD), "jack of clubs from column 1 to foundation 2");
  assert.equal(moveWords("f1-t2", BOARD), "2 of hearts from foundation 1 to column 2");
});

test("the stock, a redeal, an undo, auto-finish; a move it cannot read is left as written", () => {
  speak("en");
  assert.equal(moveWords("s", BOARD), "a card from the stock to the waste");
  assert.equal(moveWords("s", { ...BOARD, stock: 0 }), "the waste turned over into the stock");
  assert.equal(moveWords("u", BOARD), "an undo");
  assert.equal(moveWords("a", BOARD), "the rest put home (auto-finish)");
  assert.equal(moveWords("t9-t1", BOARD), "t9-t1"); // no such column on this board
  assert.equal(moveWords("w-t2", null), "w-t2");
});

test("Russian and Swedish say it their way", () => {
  speak("ru");
  assert.equal(moveWords("w-t2", BOARD), "9 бубен из сброса в столбец 2");
  speak("sv");
  assert.equal(moveWords("t1-f2", BOARD), "klöver knekt från kolumn 1 till grundhög 2");
});
