// Share texts, worked out by hand from the catalogues: a race's (place, how it went, a link
// to the same deal), a daily race's (never the deal's code nor a card) and its squares.

import assert from "node:assert/strict";
import test from "node:test";
import {
  dailyShareText,
  dailyWatchText,
  deckTurnStep,
  foundationLine,
  raceShareText,
  tournamentShareText,
} from "../../clients/web/share.js";
import { speak } from "./catalogues.js";

// an empty square and the shades: characters every font has (the WGL4 set), not emoji
const [EMPTY, FEW, HALF, MOST, FULL] = ["\u25a1", "\u2591", "\u2592", "\u2593", "\u2588"];
const DAY_URL = "https://example.test/daily/2026-01-12";

test("a foundation's square: empty, 1-4 cards, 5-8, 9-12, all 13", () => {
  assert.equal(foundationLine([0, 1, 4, 5, 8, 9, 12, 13]), [EMPTY, FEW, FEW, HALF, HALF, MOST, MOST, FULL].join(""));
  assert.equal(foundationLine([]), "");
});

test("deck turns: a stock action that refills an empty stock is one, an undo of it takes it back", () => {
  assert.equal(deckTurnStep({ stock: 0 }, { stock: 24 }, "s"), 1);
  assert.equal(deckTurnStep({ stock: 5 }, { stock: 0 }, "u"), -1);
  assert.equal(deckTurnStep({ stock: 10 }, { stock: 9 }, "s"), 0); // a draw
  assert.equal(deckTurnStep({ stock: 1 }, { stock: 0 }, "s"), 0); // the last draw of a pass
  assert.equal(deckTurnStep({ stock: 0 }, { stock: 0 }, "w-t3"), 0);
  assert.equal(deckTurnStep(null, { stock: 3 }, "s"), 0);
});

/** A daily race's facts: a won ranked Klondike, unless ``changes`` say otherwise. */
function daily(changes) {
  return {
    number: 12,
    game: "klondike",
    attempt: "ranked",
    won: true,
    onFoundations: 52,
    total: 52,
    score: 640,
    moves: 98,
    deckTurns: 2,
    elapsedMs: 245_000,
    foundations: [13, 13, 13, 13],
    url: DAY_URL,
    ...changes,
  };
}

test("a won ranked Klondike daily: no attempt named, deck turns, four full squares", () => {
  speak("en");
  assert.equal(
    dailyShareText(daily({})),
    [
      "samedeal · deal of the day #12 · Klondike, draw one",
      "Won · score 640 · 98 moves · 2 deck turns · time 4:05",
      FULL.repeat(4),
      `The day's results: ${DAY_URL}`,
    ].join("\n"),
  );
});

test("an Easy Harp practice daily, not won: the attempt named, no deck turns", () => {
  speak("en");
  const facts = { number: 3, game: "easy-harp", attempt: "practice", won: false, total: 104, score: 120, moves: 1 };
  const text = dailyShareText(daily({ ...facts, deckTurns: 4, elapsedMs: 60_000, foundations: [13, 9, 5, 1, 0, 4, 8, 12] }));
  assert.equal(
    text,
    [
      "samedeal · deal of the day #3 · Easy Harp · Practice",
      "Not won: 52/104 cards home · score 120 · 1 move · time 1:00",
      [FULL, MOST, HALF, FEW, EMPTY, FEW, HALF, MOST].join(""),
      `The day's results: ${DAY_URL}`,
    ].join("\n"),
  );
});

test("a Russian daily counts its moves and deck turns in Russian; no squares without a board", () => {
  speak("ru");
  const text = dailyShareText(daily({ number: 40, attempt: null, score: 500, moves: 22, deckTurns: 5, elapsedMs: 600_000, foundations: null }));
  assert.equal(
    text,
    [
      "samedeal · раскладка дня №40 · Косынка, по одной",
      "Пройдено · очки 500 · 22 хода · 5 оборотов колоды · время 10:00",
      `Итоги дня: ${DAY_URL}`,
    ].join("\n"),
  );
});

test("days in a row are told from two, counted in the language", () => {
  speak("en");
  assert.equal(dailyShareText(daily({ streak: 1 })).split("\n")[1], "Won · score 640 · 98 moves · 2 deck turns · time 4:05");
  assert.equal(dailyShareText(daily({ streak: 21 })).split("\n")[1], "Won · score 640 · 98 moves · 2 deck turns · time 4:05 · 21 days in a row");
  speak("ru");
  assert.match(dailyShareText(daily({ streak: 21 })).split("\n")[1], / · 21 день подряд$/);
});

test("a spectator's daily text: the day, how many raced, the link", () => {
  speak("en");
  assert.equal(
    dailyWatchText(12, "klondike", 3, DAY_URL),
    `samedeal · deal of the day #12 · Klondike, draw one\n3 racing\nThe day's results: ${DAY_URL}`,
  );
});

const RESULTS = [
  { seat: 2, rank: 1, status: "won", on_foundations: 52, moves: 120, elapsed_ms: 302_000 },
  { seat: 1, rank: 2, status: "resigned", on_foundations: 20, moves: 41, elapsed_ms: 90_000 },
];
const RACE = { game: "klondike-3", deal: "KL1-3-AAAAAAF", results: RESULTS, origin: "https://example.test" };
const LINK = "Race the same deal: https://example.test/d/KL1-3-AAAAAAF";

test("a race's winner shares their place, time and moves and a link to the deal", () => {
  speak("en");
  assert.equal(
    raceShareText({ ...RACE, role: "player", seat: 2 }),
    ["samedeal · Klondike, draw three · deal KL1-3-AAAAAAF", "1st of 2: cleared it in 5:02 with 120 moves", LINK].join("\n"),
  );
});

test("a player who did not clear the table shares their cards home", () => {
  speak("en");
  assert.equal(
    raceShareText({ ...RACE, role: "player", seat: 1 }),
    ["samedeal · Klondike, draw three · deal KL1-3-AAAAAAF", "2nd of 2: 20/52 cards home", LINK].join("\n"),
  );
});

test("a spectator shares how many raced and the winner's time, or cards when nobody won", () => {
  speak("en");
  assert.equal(
    raceShareText({ ...RACE, role: "spectator", seat: null }),
    ["samedeal · Klondike, draw three · deal KL1-3-AAAAAAF", "2 racing; winner in 5:02", LINK].join("\n"),
  );
  const unfinished = [{ seat: 0, rank: 1, status: "timeout", on_foundations: 30, moves: 80, elapsed_ms: 600_000 }];
  const harp = { game: "easy-harp", deal: "EH1-N-AAAAAAF", results: unfinished, origin: "https://example.test" };
  assert.equal(
    raceShareText({ ...harp, role: "spectator", seat: null }).split("\n")[1],
    "1 racing; winner with 30/104",
  );
});

test("a Swedish winner's place is written the Swedish way", () => {
  speak("sv");
  assert.equal(
    raceShareText({ ...RACE, role: "player", seat: 2 }).split("\n")[1],
    "1:a av 2: lade ut allt på 5:02 med 120 drag",
  );
});

test("a race whose deal is not told shares no link to a deal", () => {
  speak("en");
  assert.equal(
    raceShareText({ ...RACE, deal: "", role: "player", seat: 2 }),
    ["samedeal · Klondike, draw three", "1st of 2: cleared it in 5:02 with 120 moves"].join("\n"),
  );
});

test("a tournament round's race: the tournament, the round, the place, the standings' page", () => {
  const tournament = { name: "Friday cup", round: 2, link: "https://example.test/t/K7QF-2M" };
  speak("en");
  const text = tournamentShareText({ game: "klondike-3", tournament, role: "player", seat: 1, results: RESULTS });
  assert.equal(
    text,
    [
      "samedeal · Friday cup · round 2 · Klondike, draw three",
      "2nd of 2: 20/52 cards home",
      "The standings: https://example.test/t/K7QF-2M",
    ].join("\n"),
  );
  assert.doesNotMatch(text, /\/d\//);
  speak("ru");
  assert.match(tournamentShareText({ game: "klondike", tournament, role: "spectator", seat: null, results: RESULTS }), /^samedeal · Friday cup · раунд 2 ·/);
});
