// Message catalogues: placeholders, plural and ordinal forms by CLDR's rules in the three
// shipped languages, English behind a missing key, and durations.

import assert from "node:assert/strict";
import test from "node:test";
import { Catalogue, fill, formatTime } from "../../clients/web/messages.js";
import { catalogue } from "./catalogues.js";

test("placeholders are filled by name; one without a value stays as written", () => {
  assert.equal(fill("{a} and {b}, {a}", { a: 1, b: "two" }), "1 and two, 1");
  assert.equal(fill("{a} of {n}", { a: 3 }), "3 of {n}");
  assert.equal(fill("no params {x}"), "no params {x}");
});

test("Russian counts: one for 1, 21, 101; few for 2-4, 22; many for 0, 5-20, 25, 111", () => {
  const ru = catalogue("ru");
  const moves = (n) => ru.tn("stats.moves", n);
  for (const n of [1, 21, 101]) assert.equal(moves(n), `${n} ход`);
  for (const n of [2, 3, 4, 22, 34]) assert.equal(moves(n), `${n} хода`);
  for (const n of [0, 5, 11, 12, 14, 20, 25, 111]) assert.equal(moves(n), `${n} ходов`);
});

test("English and Swedish counts: one for 1 only", () => {
  const en = catalogue("en");
  assert.equal(en.tn("stats.moves", 1), "1 move");
  assert.equal(en.tn("stats.moves", 0), "0 moves");
  assert.equal(en.tn("stats.moves", 21), "21 moves");
  const sv = catalogue("sv");
  assert.equal(sv.tn("share.deck_turns", 1), "1 lekvända");
  assert.equal(sv.tn("share.deck_turns", 2), "2 lekvändor");
});

test("English places: 1st 2nd 3rd, but 11th 12th 13th, then 21st 22nd 23rd 101st", () => {
  const en = catalogue("en");
  const place = (rank) => en.tOrdinal("share.place", { rank, n: 200 });
  const expected = { 1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th" };
  Object.assign(expected, { 21: "21st", 22: "22nd", 23: "23rd", 101: "101st", 111: "111th", 112: "112th" });
  for (const [rank, text] of Object.entries(expected)) assert.equal(place(Number(rank)), `${text} of 200`);
});

test("Swedish places: 1:a and 2:a (21:a, 22:a), else :e (3:e, 11:e, 12:e)", () => {
  const sv = catalogue("sv");
  const place = (rank) => sv.tOrdinal("share.place", { rank, n: 30 });
  for (const rank of [1, 2, 21, 22]) assert.equal(place(rank), `${rank}:a av 30`);
  for (const rank of [3, 4, 11, 12, 20]) assert.equal(place(rank), `${rank}:e av 30`);
});

test("an ordinal entry that is plain text is filled as it is (Russian has one form)", () => {
  assert.equal(catalogue("ru").tOrdinal("share.place", { rank: 2, n: 3 }), "2-е место из 3");
});

test("a key the language lacks comes from English; a key nobody has is itself", () => {
  const partial = new Catalogue("sv", { "only.sv": "bara" }, { "only.sv": "only", "only.en": "English {x}" });
  assert.equal(partial.t("only.sv"), "bara");
  assert.equal(partial.t("only.en", { x: 1 }), "English 1");
  assert.equal(partial.t("nowhere"), "nowhere");
  assert.equal(partial.has("only.en"), true);
  assert.equal(partial.has("nowhere"), false);
  assert.equal(partial.tOrdinal("nowhere", { rank: 1 }), "nowhere");
});

test("a plural entry without the counted form falls back to 'other'", () => {
  const c = new Catalogue("ru", { k: { other: "{n} штук" } });
  assert.equal(c.tn("k", 1), "1 штук");
});

test("the three catalogues have the same keys", () => {
  const keys = (lang) => Object.keys(catalogue(lang).messages).sort();
  assert.deepEqual(keys("ru"), keys("en"));
  assert.deepEqual(keys("sv"), keys("en"));
});

test("durations: m:ss, h:mm:ss past an hour, a dash when unknown", () => {
  assert.equal(formatTime(0), "0:00");
  assert.equal(formatTime(999), "0:00");
  assert.equal(formatTime(61_500), "1:01");
  assert.equal(formatTime(3_599_999), "59:59");
  assert.equal(formatTime(3_600_000), "1:00:00");
  assert.equal(formatTime(3_725_000), "1:02:05");
  assert.equal(formatTime(null), "–");
  assert.equal(formatTime(undefined), "–");
  assert.equal(formatTime(-1), "–");
});
