// The few rules the page knows by itself (the server judges every move): which card fits
// on which, which foundation a tap sends a card to, whether a double tap could mean
// something, and a game's deck.

import assert from "node:assert/strict";
import test from "node:test";
import { deckSize, fitsOn, foundationFor, isRun, rankText, tableTakes } from "../../clients/web/cards.js";

test("one rank lower in the other colour fits; same colour or rank does not", () => {
  assert.equal(fitsOn("9H", "TS"), true);
  assert.equal(fitsOn("9C", "TS"), false);
  assert.equal(fitsOn("8H", "TS"), false);
  assert.equal(fitsOn("KH", null), false);
  assert.equal(isRun(["KS", "QH", "JC", "TD"]), true);
  assert.equal(isRun(["KS", "QH", "JH"]), false);
});

test("a tap sends an ace to the first empty foundation, a card to its suit's next rank", () => {
  const view = { foundations: [["AH", "2H"], [], ["AS"], []] };
  assert.equal(foundationFor(view, "3H", false), 0);
  assert.equal(foundationFor(view, "AD", false), 1);
  assert.equal(foundationFor(view, "2S", false), 2);
  assert.equal(foundationFor(view, "4H", false), -1);
});

test("Easy Harp's foundations are kept for a suit each: spades, hearts, clubs, diamonds, twice", () => {
  const empty = { foundations: [[], [], [], [], [], [], [], []] };
  assert.equal(foundationFor(empty, "AC", true), 2);
  assert.equal(foundationFor(empty, "AD", true), 3);
  const oneUp = { foundations: [["AS"], [], [], [], [], [], [], []] };
  assert.equal(foundationFor(oneUp, "AS", true), 4); // the second spades foundation
  assert.equal(foundationFor(oneUp, "2S", true), 0);
});

test("a double tap means something when another column takes the card; an empty one only a king", () => {
  const view = {
    tableau: [
      { down: 0, up: ["TS"] },
      { down: 0, up: [] },
      { down: 2, up: ["9H"] },
    ],
  };
  assert.equal(tableTakes(view, "9H", "t3"), true); // onto the ten in column 1
  assert.equal(tableTakes(view, "9H", "t1"), false); // its own column does not count
  assert.equal(tableTakes(view, "KD", "t3"), true); // the empty column 2
  assert.equal(tableTakes(view, "QD", "t3"), false);
});

test("a game's deck, and how a rank is written", () => {
  assert.equal(deckSize("easy-harp"), 104);
  assert.equal(deckSize("klondike"), 52);
  assert.equal(deckSize("klondike-3"), 52);
  assert.equal(rankText("TH"), "10");
  assert.equal(rankText("QS"), "Q");
});
