// Boards refused as hidden, asked for again when they open: once on a guess (a tournament
// round's end, a race's), and when the server says so (boards_open) — a guess refused
// too; the seats kept from a refusal, given back once per kind, and never for another
// room.

import assert from "node:assert/strict";
import test from "node:test";
import { HiddenBoards, boardsHidden } from "../../clients/web/hidden.js";

const OK = { type: "ok", id: 4 };
const HIDDEN = { type: "error", id: 4, code: "boards_hidden", message: "a tournament round's boards are shown once it is over" };
const UNKNOWN = { type: "error", id: 4, code: "unknown_seat", message: "seat 9 is not racing" };

test("only boards_hidden is a refusal because the boards are hidden", () => {
  assert.equal(boardsHidden(HIDDEN), true);
  for (const reply of [OK, UNKNOWN, { type: "error", code: "not_spectator" }, null, undefined]) {
    assert.equal(boardsHidden(reply), false, JSON.stringify(reply));
  }
});

test("the seats refused as hidden are followed again once, when the boards may have opened", () => {
  const hidden = new HiddenBoards();
  assert.equal(hidden.answered("K7QF-2M", [2, 1], HIDDEN), true);
  assert.deepEqual(hidden.again("K7QF-2M"), [2, 1]);
  assert.deepEqual(hidden.again("K7QF-2M"), []); // once: a second end asks nothing
});

test("the one asked again is final: refused again, nothing is asked any more", () => {
  const hidden = new HiddenBoards();
  hidden.answered("K7QF-2M", [3], HIDDEN);
  const seats = hidden.again("K7QF-2M");
  assert.equal(hidden.answered("K7QF-2M", seats, HIDDEN, true), true); // still hidden: said so
  assert.deepEqual(hidden.again("K7QF-2M"), []);
});

test("the spectator's last ask is what is asked again", () => {
  const hidden = new HiddenBoards();
  hidden.answered("K7QF-2M", [1], HIDDEN);
  hidden.answered("K7QF-2M", [1, 3], HIDDEN); // a second Watch, refused too
  assert.deepEqual(hidden.again("K7QF-2M"), [1, 3]);
});

test("a follow let through, or refused for another reason, forgets the refusal", () => {
  const hidden = new HiddenBoards();
  hidden.answered("K7QF-2M", [1], HIDDEN);
  assert.equal(hidden.answered("K7QF-2M", [2], OK), false); // a delay's boards, shown
  assert.deepEqual(hidden.again("K7QF-2M"), []);
  hidden.answered("K7QF-2M", [1], HIDDEN);
  assert.equal(hidden.answered("K7QF-2M", [9], UNKNOWN), false);
  assert.deepEqual(hidden.again("K7QF-2M"), []);
  hidden.answered("K7QF-2M", [1], HIDDEN);
  hidden.answered("K7QF-2M", [], OK); // stopped following
  assert.deepEqual(hidden.again("K7QF-2M"), []);
});

test("another room's end asks nothing, and spends the refusal", () => {
  const hidden = new HiddenBoards();
  hidden.answered("K7QF-2M", [1], HIDDEN);
  assert.deepEqual(hidden.again("B3XH-9P"), []); // the spectator moved to another room
  assert.deepEqual(hidden.again("K7QF-2M"), []);
});

test("the seats given back are a copy: the follow asked may change", () => {
  const hidden = new HiddenBoards();
  const seats = [1, 2];
  hidden.answered("K7QF-2M", seats, HIDDEN);
  seats.push(3);
  assert.deepEqual(hidden.again("K7QF-2M"), [1, 2]);
});

test("the server's word that the boards opened gives the refused seats back, once", () => {
  const hidden = new HiddenBoards();
  hidden.answered("K7QF-2M", [2, 1], HIDDEN);
  assert.deepEqual(hidden.opened("K7QF-2M"), [2, 1]);
  assert.deepEqual(hidden.opened("K7QF-2M"), []);
  assert.deepEqual(hidden.again("K7QF-2M"), []); // round_ended after it: nothing more
});

test("a guess refused still leaves the seats to the server's word, and that one is final", () => {
  const hidden = new HiddenBoards();
  hidden.answered("K7QF-2M", [3], HIDDEN);
  // a room's race ended before its round (/tv's race_ended): asked, refused
  assert.equal(hidden.answered("K7QF-2M", hidden.again("K7QF-2M"), HIDDEN, true), true);
  assert.deepEqual(hidden.again("K7QF-2M"), []); // guessed once
  const seats = hidden.opened("K7QF-2M"); // the round is over: boards_open
  assert.deepEqual(seats, [3]);
  assert.equal(hidden.answered("K7QF-2M", seats, HIDDEN, true), true); // said so, as ever
  assert.deepEqual(hidden.opened("K7QF-2M"), []);
  assert.deepEqual(hidden.again("K7QF-2M"), []);
});

test("boards_open let through first, the round_ended after it asks nothing", () => {
  const hidden = new HiddenBoards();
  hidden.answered("K7QF-2M", [1], HIDDEN);
  const seats = hidden.opened("K7QF-2M");
  assert.equal(hidden.answered("K7QF-2M", seats, OK, true), false);
  assert.deepEqual(hidden.again("K7QF-2M"), []);
});

test("another room's boards opening asks nothing, and leaves this room's refusal", () => {
  const hidden = new HiddenBoards();
  hidden.answered("K7QF-2M", [1], HIDDEN);
  assert.deepEqual(hidden.opened("B3XH-9P"), []);
  assert.deepEqual(hidden.opened("K7QF-2M"), [1]);
});

test("nothing refused, nothing to ask when the boards open", () => {
  const hidden = new HiddenBoards();
  assert.deepEqual(hidden.opened("K7QF-2M"), []);
  hidden.answered("K7QF-2M", [1], OK);
  assert.deepEqual(hidden.opened("K7QF-2M"), []);
});
