// The room as this page knows it: one state object, read by every screen, and the updates
// that change it. No DOM here: what the room shows is drawn from it by the screens.

export const MAX_FOLLOWED = 4; // boards a spectator sees side by side

export const state = {
  welcome: null,
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
  startAt: null,
  deadline: null,
  clockOffset: 0, // server ms − local ms
  lastSeq: 0,
  seats: new Map(), // seat → {name, connected, status, on_foundations, total, score, moves, elapsed_ms}
  names: new Map(), // seat → the last name seen (results keep the names of those who left)
  participants: [],
  results: null,
  view: null, // my board (player) or the followed board (spectator)
  viewVersion: 0, // rises whenever the board changes (a double tap is on one version)
  following: null, // the first followed seat (the board in #board when only one is)
  follows: [], // every followed seat, up to MAX_FOLLOWED, side by side
  boards: new Map(), // seat → the followed player's board (spectator)
  spectators: null,
  reminder: null, // {text, rule, pile, until}: a refused move's rule, shown next to its card
  reconnects: 0,
  boardStale: false, // a drawing put off until a drag ends
  celebrated: 0, // the race whose win was celebrated
  offer: null, // a rematch waiting for answers: {race, deal, deadline, by}
  answered: null, // {race, accept}: this player's answer to it
  recorded: null, // {race, game_id}: the race in the records (race_recorded): its replay
};

export function serverNow() {
  return Date.now() + state.clockOffset;
}

export function applySnapshot(snap) {
  state.room = snap.room;
  state.game = snap.game;
  state.options = snap.options;
  state.host = snap.host;
  state.phase = snap.phase;
  state.race = snap.race;
  // The deal code is told only once the race is over (fair play): the game name before.
  state.deal = snap.deal || "";
  if (typeof snap.daily === "boolean") state.daily = snap.daily;
  state.startAt = snap.start_at;
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
  state.participants = snap.phase === "lobby" ? [] : snap.seats.map((s) => s.seat);
}

export function setView(view) {
  state.view = view;
  state.viewVersion += 1;
}

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

export function setFollows(seats) {
  state.follows = seats.slice(0, MAX_FOLLOWED);
  state.following = state.follows.length ? state.follows[0] : null;
  for (const seat of [...state.boards.keys()]) if (!state.follows.includes(seat)) state.boards.delete(seat);
  state.view = state.following !== null && state.boards.has(state.following) ? state.boards.get(state.following) : null;
  state.viewVersion += 1;
}

/**
 * A rematch the host offers (the server's ``rematch_offered`` event): each player races it
 * or sits it out (or leaves); nobody is pulled into a race. The race starts once everyone
 * answered, or at the offer's deadline.
 */
export function onRematchOffered(msg) {
  state.clockOffset = msg.now - Date.now();
  state.offer = msg;
}
