// The room's state and its updates: a seat taken from a snapshot, the room's events as the
// server sends them, frames already seen, and the boards a spectator follows. The store is
// one state per page, so each test starts by taking a seat in a room of its own.

import assert from "node:assert/strict";
import test from "node:test";
import {
  MAX_FOLLOWED,
  applyEvent,
  dropOffer,
  forgetSeat,
  isPlaying,
  rememberSeat,
  serverNow,
  setFollows,
  setView,
  state,
  takeSeat,
  takeSeq,
  waitsForNextDeal,
} from "../../clients/web/store.js";

function snapshot(room, changes = {}) {
  return {
    room,
    game: "klondike",
    options: { max_players: 8 },
    host: 0,
    phase: "lobby",
    race: 0,
    deal: "",
    start_at: null,
    deadline: null,
    results: null,
    now: Date.now(),
    seq: 3,
    spectators: 0,
    rematch_offer: null,
    seats: [
      { seat: 0, name: "Ann", connected: true, status: "waiting" },
      { seat: 1, name: "Bo", connected: true, status: "waiting" },
    ],
    ...changes,
  };
}

/** Sit in ``room`` as seat 1 (``role`` "player") or watch it. */
function enter(room, role = "player", changes = {}) {
  takeSeat({ room, role, seat: role === "player" ? 1 : null, token: role === "player" ? "tok" : null, snapshot: snapshot(room, changes) });
  setFollows([]);
}

const VIEW = { tableau: [], foundations: [[], [], [], []], stock: 24, waste: { top: [], count: 0 }, score: 0, moves: 0 };

function start(race, seats = [0, 1], view = VIEW) {
  return applyEvent({ type: "race_starting", race, seats, deal: "", start_at: Date.now(), deadline: null, now: Date.now(), view });
}

test("a joined reply's snapshot is the room: seats, names, host, game, phase", () => {
  takeSeat({ room: "AAAA", role: "player", seat: 1, token: "tok", key: "k1", snapshot: snapshot("AAAA") });
  assert.equal(state.room, "AAAA");
  assert.equal(state.role, "player");
  assert.equal(state.seat, 1);
  assert.equal(state.token, "tok");
  assert.equal(state.key, "k1");
  assert.equal(state.game, "klondike");
  assert.equal(state.phase, "lobby");
  assert.deepEqual([...state.seats.keys()], [0, 1]);
  assert.equal(state.names.get(1), "Bo");
  assert.deepEqual(state.participants, []);
  assert.equal(state.lastSeq, 3);
  assert.equal(isPlaying(), false);
});

test("the server's clock is the snapshot's, however far the local one is off", () => {
  takeSeat({ room: "CLCK", role: "player", seat: 1, snapshot: snapshot("CLCK", { now: Date.now() + 3_600_000 }) });
  const ahead = serverNow() - Date.now();
  assert.ok(ahead > 3_599_000 && ahead <= 3_600_000, ahead);
});

test("seats come and go; a name stays known for the results, the host moves", () => {
  enter("BBBB");
  assert.equal(applyEvent({ type: "seat", seat: 2, name: "Cy", connected: true }), true);
  assert.deepEqual(state.seats.get(2), { status: "waiting", on_foundations: 0, total: 0, score: 0, moves: 0, name: "Cy", connected: true, seat: 2 });
  applyEvent({ type: "seat", seat: 0, left: true, host: false });
  assert.equal(state.seats.has(0), false);
  assert.equal(state.names.get(0), "Ann");
  applyEvent({ type: "seat", seat: 1, name: "Bo", connected: false, host: true });
  assert.equal(state.host, 1);
  assert.equal(state.seats.get(1).connected, false);
});

test("a race starts: its racers play from the same board, the others wait; this player may move", () => {
  enter("CCCC");
  applyEvent({ type: "seat", seat: 2, name: "Cy", connected: true });
  const version = state.viewVersion;
  start(1, [0, 1]);
  assert.equal(state.phase, "running");
  assert.equal(state.race, 1);
  assert.deepEqual(state.participants, [0, 1]);
  assert.equal(state.seats.get(1).status, "playing");
  assert.equal(state.seats.get(2).status, "waiting");
  assert.equal(state.view, VIEW);
  assert.equal(state.viewVersion, version + 1);
  assert.equal(isPlaying(), true);
});

test("a player left out of the race, and a spectator, get no board and cannot move", () => {
  enter("DDDD");
  start(1, [0]);
  assert.equal(state.view, null);
  assert.equal(isPlaying(), false);
  enter("DDDE", "spectator");
  start(1, [0, 1]);
  assert.equal(state.view, null);
  assert.equal(isPlaying(), false);
});

test("progress counts for the race it names only; a finish ends this player's play", () => {
  enter("EEEE");
  start(2, [0, 1]);
  const progress = { type: "progress", seat: 0, on_foundations: 9, total: 52, score: 90, moves: 12, status: "playing", elapsed_ms: 30_000 };
  applyEvent({ ...progress, race: 1 }); // the last race's, arriving late
  assert.equal(state.seats.get(0).on_foundations, 0);
  applyEvent({ ...progress, race: 2 });
  assert.equal(state.seats.get(0).on_foundations, 9);
  applyEvent({ type: "player_finished", seat: 1, status: "won", elapsed_ms: 95_000, deal: "KL1-1-AAAAAAF" });
  assert.equal(state.seats.get(1).status, "won");
  assert.equal(state.deal, "KL1-1-AAAAAAF"); // told once this player has finished
  assert.equal(isPlaying(), false);
});

test("a resigned player cannot move, a disconnected one still can", () => {
  enter("EEEF");
  start(1, [0, 1]);
  applyEvent({ type: "progress", race: 1, seat: 1, on_foundations: 0, total: 52, score: 0, moves: 0, status: "disconnected", elapsed_ms: 0 });
  assert.equal(isPlaying(), true);
  applyEvent({ type: "player_finished", seat: 1, status: "resigned", elapsed_ms: 1_000 });
  assert.equal(isPlaying(), false);
});

test("a race ends with its results; a new one clears them and any rematch offer", () => {
  enter("FFFF");
  start(1);
  const results = [{ seat: 1, rank: 1, name: "Bo", status: "won" }];
  applyEvent({ type: "race_ended", results, deal: "KL1-1-AAAAAAF" });
  assert.equal(state.phase, "ended");
  assert.equal(state.results, results);
  applyEvent({ type: "rematch_offered", race: 2, deal: "same", deadline: Date.now() + 30_000, by: 0, now: Date.now() });
  assert.equal(state.offer.race, 2);
  start(2);
  assert.equal(state.results, null);
  assert.equal(state.offer, null);
  applyEvent({ type: "rematch_offered", race: 3, deal: "random", deadline: Date.now(), by: 0, now: Date.now() });
  dropOffer();
  assert.equal(state.offer, null);
});

test("a race's record may wait for the records database; its replay comes when written", () => {
  enter("RRRR");
  start(1);
  applyEvent({ type: "race_ended", results: [], deal: "KL1-1-AAAAAAF" });
  assert.equal(applyEvent({ type: "race_record_delayed", race: 1 }), true);
  assert.equal(state.recordDelayed, 1);
  applyEvent({ type: "race_recorded", race: 1, game_id: "0123456789ab" });
  assert.deepEqual(state.recorded, { race: 1, game_id: "0123456789ab", ratings: null });
});

test("a frame already seen is dropped, but a finish withheld during the race comes late on purpose", () => {
  enter("GGGG"); // the snapshot's seq is 3
  assert.equal(takeSeq({ type: "progress", seq: 3 }), false);
  assert.equal(takeSeq({ type: "progress", seq: 4 }), true);
  assert.equal(state.lastSeq, 4);
  assert.equal(takeSeq({ type: "player_finished", seq: 2 }), true);
  assert.equal(state.lastSeq, 4);
  assert.equal(takeSeq({ type: "live_rooms" }), true); // not a room event: no seq
});

test("another room starts from nothing; the same room keeps what it knew", () => {
  enter("HHHH");
  applyEvent({ type: "seat", seat: 5, name: "Gone", connected: true });
  takeSeat({ room: "HHHH", role: "player", seat: 1, token: "tok", key: "k9" });
  assert.equal(state.names.get(5), "Gone");
  takeSeat({ room: "IIII", role: "spectator", snapshot: snapshot("IIII", { seq: 1 }) });
  assert.equal(state.names.has(5), false);
  assert.equal(state.lastSeq, 1);
  assert.equal(state.token, null);
  assert.equal(state.key, "k9"); // a key given once stays until another is given
});

test("a seat kept over a reload is remembered, then forgotten if it cannot be taken back", () => {
  rememberSeat("jjjj-kk", "tok2", "key2");
  assert.deepEqual([state.room, state.token, state.key, state.role], ["JJJJ-KK", "tok2", "key2", "player"]);
  forgetSeat();
  assert.deepEqual([state.room, state.token, state.role], [null, null, null]);
});

test("a spectator follows up to four boards; the first is the one shown", () => {
  enter("KKKK", "spectator");
  setFollows([3, 1, 4, 0, 2]);
  assert.equal(MAX_FOLLOWED, 4);
  assert.deepEqual(state.follows, [3, 1, 4, 0]);
  assert.equal(state.following, 3);
  const seen = state.viewVersion;
  applyEvent({ type: "board", seat: 1, view: { n: 1 } });
  assert.equal(state.view, null); // not the first followed: drawn beside it
  assert.equal(state.viewVersion, seen + 1);
  applyEvent({ type: "board", seat: 3, view: { n: 3 } });
  assert.deepEqual(state.view, { n: 3 });
  applyEvent({ type: "board", seat: 2, view: { n: 2 } }); // not followed
  assert.equal(state.boards.has(2), false);
  setFollows([1]);
  assert.deepEqual([...state.boards.keys()], [1]);
  assert.deepEqual(state.view, { n: 1 });
  setFollows([]);
  assert.equal(state.following, null);
  assert.equal(state.view, null);
});

test("a player's own board is not replaced by board events", () => {
  enter("LLLL");
  start(1);
  applyEvent({ type: "board", seat: 1, view: { n: 9 } });
  assert.equal(state.view, VIEW);
  setView({ n: 10 });
  assert.deepEqual(state.view, { n: 10 });
});

test("what is not a room event is left to others", () => {
  enter("MMMM");
  for (const type of ["reactions", "error", "live_rooms", "tournament_standings"]) {
    assert.equal(applyEvent({ type }), false, type);
  }
  assert.equal(applyEvent({ type: "spectators", count: 7 }), true);
  assert.equal(state.spectators, 7);
});

test("a seat that joined a solo game during its race waits for the next deal", () => {
  const seats = [
    { seat: 0, name: "Ann", connected: true, status: "playing", on_foundations: 3, total: 104 },
    { seat: 1, name: "Bo", connected: true, status: "waiting" },
  ];
  enter("SOLO", "player", { phase: "running", race: 2, solo: true, seats });
  assert.equal(state.solo, true);
  assert.deepEqual(state.participants, [0]); // Bo is seated, not racing
  assert.equal(waitsForNextDeal(), true);
  assert.equal(isPlaying(), false);
  start(3, [0, 1]);
  assert.equal(waitsForNextDeal(), false);
  assert.equal(isPlaying(), true);
  enter("ROOM", "player", { phase: "running", race: 1, seats: [{ ...seats[0] }, { ...seats[1], status: "playing" }] });
  assert.equal(state.solo, false);
  assert.deepEqual(state.participants, [0, 1]);
});
