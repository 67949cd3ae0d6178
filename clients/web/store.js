// The room as this page knows it: one state object that every screen reads, and the named
// updates below, the only code that writes to it (ESLint refuses a write to `state`
// anywhere else). The server's snapshots and room events, this player's seat and the
// boards a spectator follows all come in here. No DOM: the screens draw the room from the
// state, and app.js draws it again after an update.

export const MAX_FOLLOWED = 4; // boards a spectator sees side by side

/** The room: read it anywhere, change it with the updates below. */
export const state = {
  room: null,
  key: null,
  seat: null,
  token: null,
  role: null,
  game: null,
  options: null,
  host: null,
  phase: "lobby",
  race: 0,
  deal: "",
  daily: false, // the room plays the deal of the day (see isDailyRoom)
  solo: false, // a game in one tap: its races start at once; others join for the next one
  startAt: null,
  counted: false, // the race began with a countdown (a solo game's has none: no "Go!")
  deadline: null,
  clockOffset: 0, // server ms − local ms
  lastSeq: 0,
  seats: new Map(), // seat → {name, connected, status, on_foundations, total, score, moves, elapsed_ms, rating, provisional}
  names: new Map(), // seat → the last name seen (results keep the names of those who left)
  participants: [],
  results: null,
  view: null, // my board (player) or the followed board (spectator)
  viewVersion: 0, // rises whenever the board changes (a double tap is on one version)
  following: null, // the first followed seat (the board in #board when only one is)
  follows: [], // every followed seat, up to MAX_FOLLOWED, side by side
  boards: new Map(), // seat → the followed player's board (spectator)
  spectators: null,
  offer: null, // a rematch waiting for answers: {race, deal, deadline, by}
  recorded: null, // {race, game_id, ratings}: the race in the records (race_recorded): its replay, rating changes
  tournament: null, // {id, name, round, link}: the tournament whose round this room plays
  recordDelayed: null, // race: its record waits for the records database (race_record_delayed)
};

// ---------------------------------------------------------------------- reading

/** The server's clock (ms), from the local one and the offset the server last told. */
export function serverNow() {
  return Date.now() + state.clockOffset;
}

/** Whether this page's player races now (and so may move). */
export function isPlaying() {
  if (state.role !== "player" || state.phase !== "running") return false;
  if (!state.participants.includes(state.seat)) return false;
  const me = state.seats.get(state.seat);
  return !me || me.status === "playing" || me.status === "disconnected";
}

/** Whether this room plays the deal of the day: ``daily`` in the snapshot and in
 * ``race_starting`` (the host who chose it knows at once). */
export function isDailyRoom() {
  return state.daily;
}

/** Whether this page's player sits in the room without racing its race: they joined a
 * solo game during it, and race from the next deal. */
export function waitsForNextDeal() {
  return state.role === "player" && state.phase === "running" && !state.participants.includes(state.seat);
}

// ---------------------------------------------------------------------- this player's seat

/** The key of a private room, from the page's address (sent when joining it). */
export function setRoomKey(key) {
  state.key = key;
}

/** The host asks for a room on the deal of the day (or not), before the server says so. */
export function setDaily(daily) {
  state.daily = daily;
}

/** Take the room and seat of a ``joined`` reply; another room than the one held starts
 * from nothing. */
export function takeSeat(reply) {
  if (state.room && reply.room !== state.room) {
    Object.assign(state, { view: null, following: null, lastSeq: 0, results: null, names: new Map(), tournament: null });
  }
  state.role = reply.role;
  state.seat = reply.seat ?? null;
  state.token = reply.token ?? null;
  state.key = reply.key ?? state.key;
  if (reply.snapshot) applySnapshot(reply.snapshot);
  if (reply.view) setView(reply.view);
}

/** A seat this tab held before a reload, about to be resumed. */
export function rememberSeat(room, token, key) {
  state.room = room.toUpperCase();
  state.token = token;
  state.key = key || state.key;
  state.role = "player";
}

/** The seat, resumed on a new connection (``reply``: its ``joined``). */
export function seatResumed(reply) {
  if (reply.seat !== undefined && reply.seat !== null) state.seat = reply.seat;
  if (reply.snapshot) applySnapshot(reply.snapshot);
  if (reply.view) setView(reply.view);
}

/** No room any more (left, or a seat that could not be taken back). */
export function forgetSeat() {
  Object.assign(state, { room: null, token: null, role: null, tournament: null });
}

/** The room plays a round of this tournament ({id, name, round, link}; null: none). */
export function setTournament(tournament) {
  state.tournament = tournament;
}

// ---------------------------------------------------------------------- what the server says

/** The whole room at once (on joining, resuming, or a ``resync``). */
function applySnapshot(snap) {
  state.room = snap.room;
  state.game = snap.game;
  state.options = snap.options;
  state.host = snap.host;
  state.phase = snap.phase;
  state.race = snap.race;
  // The deal code is told only once the race is over (fair play): the game name before.
  state.deal = snap.deal || "";
  if (typeof snap.daily === "boolean") state.daily = snap.daily;
  state.solo = Boolean(snap.solo);
  state.startAt = snap.start_at;
  state.counted = snap.phase === "running" && snap.start_at > snap.now;
  state.deadline = snap.deadline;
  state.results = snap.results;
  state.clockOffset = snap.now - Date.now();
  state.lastSeq = Math.max(state.lastSeq, snap.seq);
  if (typeof snap.spectators === "number") state.spectators = snap.spectators;
  state.offer = snap.rematch_offer || null;
  state.seats = new Map();
  for (const s of snap.seats) {
    state.seats.set(s.seat, { ...s });
    state.names.set(s.seat, s.name);
  }
  // the racers: a seat that sits the race out (joined a solo game during it, or sat out a
  // rematch) is "waiting"
  state.participants = snap.phase === "lobby" ? [] : snap.seats.filter((s) => s.status !== "waiting").map((s) => s.seat);
}

/** Whether a frame is new to this page, noting its ``seq`` (frames without one always
 * are): a room event already seen (by a resumed connection) is dropped. */
export function takeSeq(msg) {
  if (typeof msg.seq !== "number") return true;
  // a finish withheld while I raced comes once I have finished, with its older seq
  if (msg.seq <= state.lastSeq && msg.type !== "player_finished") return false;
  state.lastSeq = Math.max(state.lastSeq, msg.seq);
  return true;
}

/** Apply a room event (docs/protocol.md); false for a frame that is not one. */
export function applyEvent(msg) {
  switch (msg.type) {
    case "seat": {
      if (msg.left) {
        state.seats.delete(msg.seat);
      } else {
        const seat = state.seats.get(msg.seat) || { status: "waiting", on_foundations: 0, total: 0, score: 0, moves: 0 };
        Object.assign(seat, { name: msg.name, connected: msg.connected, seat: msg.seat });
        // a rated room's seats show their player's rating
        if (msg.rating !== undefined) Object.assign(seat, { rating: msg.rating, provisional: msg.provisional });
        state.seats.set(msg.seat, seat);
        state.names.set(msg.seat, msg.name);
      }
      if (msg.host) state.host = msg.seat;
      return true;
    }
    case "race_starting":
      state.phase = "running";
      state.race = msg.race;
      state.deal = msg.deal || "";
      if (typeof msg.daily === "boolean") state.daily = msg.daily;
      state.startAt = msg.start_at;
      state.counted = msg.start_at > msg.now;
      state.deadline = msg.deadline;
      state.clockOffset = msg.now - Date.now();
      state.participants = msg.seats;
      state.results = null;
      state.view = null;
      state.offer = null;
      for (const [n, s] of state.seats) {
        Object.assign(s, { status: msg.seats.includes(n) ? "playing" : "waiting", on_foundations: 0, score: 0, moves: 0, elapsed_ms: null });
      }
      if (state.role === "player" && msg.seats.includes(state.seat) && msg.view) {
        setView(msg.view); // the starting board, the same for every player
      }
      return true;
    case "progress": {
      const seat = state.seats.get(msg.seat);
      if (seat && msg.race === state.race) {
        Object.assign(seat, {
          on_foundations: msg.on_foundations,
          total: msg.total,
          score: msg.score,
          moves: msg.moves,
          status: msg.status,
          elapsed_ms: msg.elapsed_ms,
        });
      }
      return true;
    }
    case "player_finished": {
      const seat = state.seats.get(msg.seat);
      if (seat) Object.assign(seat, { status: msg.status, elapsed_ms: msg.elapsed_ms });
      if (msg.deal) state.deal = msg.deal; // told to a player once they have finished
      return true;
    }
    case "race_ended":
      state.phase = "ended";
      state.results = msg.results;
      if (msg.deal) state.deal = msg.deal;
      return true;
    case "rematch_offered":
      // each player races it or sits it out (or leaves); nobody is pulled into a race
      state.clockOffset = msg.now - Date.now();
      state.offer = msg;
      return true;
    case "race_recorded":
      state.recorded = { race: msg.race, game_id: msg.game_id, ratings: msg.ratings || null };
      for (const change of msg.ratings || []) {
        const seat = state.seats.get(change.seat);
        if (seat) Object.assign(seat, { rating: change.rating, provisional: change.provisional });
      }
      return true;
    case "race_record_delayed":
      state.recordDelayed = msg.race;
      return true;
    case "board":
      // a spectator's, or a player's who finished and watches those still racing (their
      // own board stays theirs)
      if (state.follows.includes(msg.seat)) {
        state.boards.set(msg.seat, msg.view);
        if (msg.seat === state.following && state.role === "spectator") setView(msg.view);
        else state.viewVersion += 1;
      }
      return true;
    case "resync":
      applySnapshot(msg.snapshot);
      return true;
    case "spectators":
      state.spectators = msg.count;
      return true;
    default:
      return false;
  }
}

/** A rematch offer that started or lapsed: nothing to answer any more. */
export function dropOffer() {
  state.offer = null;
}

// ---------------------------------------------------------------------- boards

/** The board shown: this player's own (after an acknowledged move), or the followed one. */
export function setView(view) {
  state.view = view;
  state.viewVersion += 1;
}

/** Follow ``seats`` (up to MAX_FOLLOWED; a spectator, or a player who finished): the
 * boards of others are dropped. A spectator's board is the first followed; a player's
 * stays their own. */
export function setFollows(seats) {
  state.follows = seats.slice(0, MAX_FOLLOWED);
  state.following = state.follows.length ? state.follows[0] : null;
  for (const seat of [...state.boards.keys()]) if (!state.follows.includes(seat)) state.boards.delete(seat);
  if (state.role !== "player") {
    state.view = state.following !== null && state.boards.has(state.following) ? state.boards.get(state.following) : null;
  }
  state.viewVersion += 1;
}

/** Whether this page's player has finished the race under way, while others still race
 * it: they see the results so far, and may watch the others. */
export function finishedEarly() {
  if (state.role !== "player" || state.phase !== "running" || !state.participants.includes(state.seat)) return false;
  const me = state.seats.get(state.seat);
  return Boolean(me) && !["playing", "disconnected", "waiting"].includes(me.status);
}
