// samedeal browser client: lobby, waiting room, race, results, spectating, rules; the
// replay (replay.js), player (profile.js) pages and the player's identity (identity.js); the
// live directory (/watch, watch.js) and the featured race (/tv, tv.js) are pages of their own.
// Plain ES modules, no build step. Everything that comes from other users (names, room
// data) is put on the page with textContent, never as markup. Every word comes from the
// catalogues (i18n.js).

import { el, icon, renderBoard, wonBanner } from "./board.js";
import {
  currentLang,
  detectLang,
  errorText,
  formatTime,
  ruleText,
  setLang,
  t,
  tOrdinal,
  tn,
  translateDom,
} from "./i18n.js";
import {
  dailyRaceShare,
  noteAck,
  noteRaceStarting,
  refreshDaily,
  refreshDailyLobby,
  renderRoomDaily,
  setupDaily,
  setupShareButton,
  shareOut,
  showDailyLobby,
  showDailyPage,
} from "./daily.js";
import { render as refreshYou, setupIdentity } from "./identity.js";
import { clearSelection, dragging, markSelection, resetInput, setupInput } from "./input.js";
import { ReactionPops, liveRow, reactionButtons } from "./live.js";
import { Connection, roomHint } from "./net.js";
import { refreshProfile, showProfile } from "./profile.js";
import { refreshReplay, replayKey, showReplay } from "./replay.js";
import { renderRules, ruleSection, rulesGame } from "./rules.js";
import { mergeView } from "./views.js";
import { startTv } from "./tv.js";
import { startWatch } from "./watch.js";
import { TournamentPage, listTournaments } from "./tournament.js";

const DEAL_PREFIXES = { "EH1-N": "easy-harp", "KL1-1": "klondike", "KL1-3": "klondike-3" };
const MAX_FOLLOWED = 4; // boards a spectator sees side by side
const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------------- state

const state = {
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
  recordDelayed: null, // race: its record waits for the records database (race_record_delayed)
};

const settings = {
  flag(name, fallback) {
    const v = localStorage.getItem(`samedeal.${name}`);
    return v === null ? fallback : v === "on";
  },
  set(name, on) {
    localStorage.setItem(`samedeal.${name}`, on ? "on" : "off");
  },
  get rules() {
    return this.flag("rules", true);
  },
  get doubleClick() {
    return this.flag("double", true);
  },
  get sound() {
    return this.flag("sound", false);
  },
};

const conn = new Connection(onFrameEvent, onClose);
const pops = new ReactionPops(() => state.room && renderPlayers());
// the tournament page (/t/CODE) shares the connection and the room view
const tournament = new TournamentPage({ conn, state, takeJoined, follow, showScreen, toast, serverNow, render });

function serverNow() {
  return Date.now() + state.clockOffset;
}

// ---------------------------------------------------------------------- connection

function onClose(code) {
  if (tournament.active && code !== 4000) {
    // the tournament is opened again on a new connection; it hands the seat back
    setTimeout(() => tournament.follow().catch(() => toast(t("net.lost_reload"))), 800);
    return;
  }
  if (code === 4000) {
    toast(t("net.taken_elsewhere"));
  } else if (state.room && state.token && state.reconnects < 5) {
    state.reconnects += 1;
    setTimeout(() => resumeSeat().catch(() => toast(t("net.lost_reload"))), 800);
  } else if (state.room && state.role === "spectator") {
    toast(t("net.lost_watch"));
  }
}

/** Take the seat again on a new connection (after a drop or a reload); the old
 * connection is retired. */
async function resumeSeat() {
  const ws = await conn.open();
  // The server closes the seat's old connection when the new one resumes: expected.
  const old = conn.ws;
  if (old) conn.retiring.add(old);
  const reply = await conn.request(
    { type: "resume", room: state.room, token: state.token, last_seq: state.lastSeq || null },
    ws,
  );
  if (reply.type !== "joined") {
    if (old) conn.retiring.delete(old);
    ws.close();
    throw new Error(errorText(reply.code, reply.message));
  }
  conn.replace(ws);
  if (reply.seat !== undefined && reply.seat !== null) state.seat = reply.seat;
  state.reconnects = 0;
  if (reply.snapshot) applySnapshot(reply.snapshot);
  if (reply.view) setView(reply.view);
  render();
}

function onFrameEvent(msg) {
  if (msg.type === "live_rooms") {
    renderLobbyLive(msg);
    return;
  }
  if (String(msg.type).startsWith("tournament") && tournament.onMessage(msg)) return;
  if (typeof msg.seq === "number") {
    // a finish withheld while I raced comes once I have finished, with its older seq
    if (msg.seq <= state.lastSeq && msg.type !== "player_finished") return;
    state.lastSeq = Math.max(state.lastSeq, msg.seq);
  }
  onEvent(msg);
}

// ---------------------------------------------------------------------- room state

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

function onEvent(msg) {
  switch (msg.type) {
    case "seat": {
      if (msg.left) {
        state.seats.delete(msg.seat);
      } else {
        const seat = state.seats.get(msg.seat) || { status: "waiting", on_foundations: 0, total: 0, score: 0, moves: 0 };
        Object.assign(seat, { name: msg.name, connected: msg.connected, seat: msg.seat });
        state.seats.set(msg.seat, seat);
        state.names.set(msg.seat, msg.name);
      }
      if (msg.host) state.host = msg.seat;
      break;
    }
    case "race_starting":
      noteRaceStarting(state.room, msg); // the deal of the day: what the race is for whom
      state.phase = "running";
      state.race = msg.race;
      state.deal = msg.deal || "";
      if (typeof msg.daily === "boolean") state.daily = msg.daily;
      state.startAt = msg.start_at;
      state.deadline = msg.deadline;
      state.clockOffset = msg.now - Date.now();
      state.participants = msg.seats;
      state.results = null;
      state.view = null;
      state.offer = null;
      resetInput();
      $("move-input").value = ""; // a bad text typed in the last race is not this one's
      $("move-error").textContent = "";
      for (const [n, s] of state.seats) {
        Object.assign(s, { status: msg.seats.includes(n) ? "playing" : "waiting", on_foundations: 0, score: 0, moves: 0, elapsed_ms: null });
      }
      if (state.role === "player" && msg.seats.includes(state.seat)) {
        if (msg.view) setView(msg.view); // the starting board, the same for every player
      } else if (state.role === "spectator" && state.follows.length) {
        follow(state.follows.filter((s) => msg.seats.includes(s)));
      }
      break;
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
      break;
    }
    case "player_finished": {
      const seat = state.seats.get(msg.seat);
      if (seat) Object.assign(seat, { status: msg.status, elapsed_ms: msg.elapsed_ms });
      if (msg.deal) state.deal = msg.deal; // told to a player once they have finished
      break;
    }
    case "race_ended":
      state.phase = "ended";
      state.results = msg.results;
      if (msg.deal) state.deal = msg.deal;
      break;
    case "rematch_offered":
      onRematchOffered(msg);
      break;
    case "race_recorded":
      state.recorded = { race: msg.race, game_id: msg.game_id };
      break;
    case "race_record_delayed":
      state.recordDelayed = msg.race;
      break;
    case "board":
      if (state.role === "spectator" && state.follows.includes(msg.seat)) {
        state.boards.set(msg.seat, msg.view);
        if (msg.seat === state.following) setView(msg.view);
        else state.viewVersion += 1;
      }
      break;
    case "reactions":
      pops.add(msg);
      return; // drawn by the pops themselves
    case "resync":
      applySnapshot(msg.snapshot);
      break;
    case "spectators":
      state.spectators = msg.count;
      break;
    case "error":
      toast(errorText(msg.code, msg.message));
      break;
    default:
      return;
  }
  render();
}

function setView(view) {
  state.view = view;
  state.viewVersion += 1;
}

function isPlaying() {
  if (state.role !== "player" || state.phase !== "running") return false;
  if (!state.participants.includes(state.seat)) return false;
  const me = state.seats.get(state.seat);
  return !me || me.status === "playing" || me.status === "disconnected";
}

/** Whether this room plays the deal of the day: ``daily`` in the snapshot and in
 * ``race_starting`` (the host who chose it knows at once). */
function isDailyRoom() {
  return state.daily;
}

// ---------------------------------------------------------------------- lobby

/** The game a deal code names ("KL1-3-…" → "klondike-3"), or null. */
function gameOfDeal(code) {
  const m = String(code || "").trim().toUpperCase().match(/^([A-Z]{2}\d)-([A-Z0-9])-/);
  return m ? DEAL_PREFIXES[`${m[1]}-${m[2]}`] || null : null;
}

/** A deal code naming the other game switches the game choice instead of being refused. */
function followDealCode() {
  const game = gameOfDeal($("deal-code").value);
  const form = $("create-form");
  $("deal-note").textContent = "";
  if (game && form.elements.game.value !== game) {
    form.querySelector(`input[name="game"][value="${game}"]`).checked = true;
    $("deal-note").textContent = t("lobby.switched_game", { game: t(`game.${game}`) });
  }
}

function createPayload(game, deal, code) {
  const payload = {
    type: "create",
    game,
    deal,
    name: playerName(),
    max_players: Number($("max-players").value) || 8,
    spectators: $("allow-spectators").checked,
    private: $("private-room").checked,
    spectator_delay: Number($("spectator-delay").value) || 0,
  };
  const limit = Number($("time-limit").value);
  if (limit > 0) payload.time_limit = Math.round(limit * 60);
  if (deal === "code") payload.code = code;
  return payload;
}

async function createRoom(ev) {
  ev.preventDefault();
  const form = $("create-form");
  const deal = form.elements.deal.value;
  if (deal === "code") followDealCode();
  const payload = createPayload(form.elements.game.value, deal, $("deal-code").value.trim());
  state.daily = deal === "daily"; // the host knows; see isDailyRoom for everyone else
  await enter(payload, "create-error");
}

/** A room on today's deal of ``game``: of one's own and started at once (``solo``), or
 * one to race friends in (the daily lobby and pages, daily.js). */
async function playDaily(game, solo, errorBox) {
  const payload = { type: "create", game, deal: "daily", name: playerName() };
  if (solo) Object.assign(payload, { max_players: 1, spectators: false });
  state.daily = true;
  if (!(await enter(payload, errorBox))) return;
  if (!solo) return;
  const reply = await conn.request({ type: "start" });
  if (reply.type === "error") toast(errorText(reply.code, reply.message));
}

async function createOnSharedDeal() {
  const code = linkDeal();
  const game = gameOfDeal(code);
  await enter(createPayload(game, "code", code), "deal-error");
}

async function joinRoom(role, code, errorBox) {
  if (!code) {
    $(errorBox).textContent = t("lobby.need_code");
    return;
  }
  const payload = { type: "join", room: code, role, name: playerName() };
  if (state.key) payload.key = state.key;
  await enter(payload, errorBox);
}

/** Create or join; a refusal is shown in ``errorBox``, next to the form that asked. */
async function enter(payload, errorBox) {
  for (const id of ["create-error", "join-error", "invite-error", "deal-error"]) $(id).textContent = "";
  const routed = await routedForWatching(payload);
  let reply;
  try {
    reply = await conn.request(payload, routed ? routed.ws : undefined);
  } catch (e) {
    $(errorBox).textContent = errorText(e.code, e.message);
    return false;
  }
  if (routed) {
    if (reply.type === "joined") {
      conn.replace(routed.ws); // the lobby's socket closes: the room is watched on this one
    } else {
      conn.room = routed.before;
      routed.ws.close();
    }
  }
  if (reply.type !== "joined") {
    $(errorBox).textContent = errorText(reply.code, reply.message);
    return false;
  }
  takeJoined(await settleInRoom(reply));
  return true;
}

/** A spectator who typed a room's code in the lobby watches it on a socket routed by that
 * room (``?room=CODE``), opened before joining: behind a balancer hashing the hint, the
 * room's spectators reach its worker, as its players do (settleInRoom). Resolves with the
 * socket and the room the page's sockets were for, or null to join on the page's own
 * socket (already routed there, or the new one could not be opened). */
async function routedForWatching(payload) {
  if (payload.type !== "join" || payload.role !== "spectator") return null;
  const hint = roomHint(payload.room);
  if (!hint || hint === roomHint(conn.room)) return null;
  const before = conn.room;
  conn.room = payload.room;
  try {
    return { ws: await conn.open(), before };
  } catch {
    conn.room = before;
    return null;
  }
}

/** A seat taken on a socket not routed by its room (the room was just created, or its
 * code typed after the page connected) moves to a socket that is (``?room=CODE``), before
 * the page shows the room: behind a balancer hashing the hint, all of a room's sockets
 * reach one worker. Resolves with the ``joined`` to take: the new socket's, with the
 * seat's token and key; the first one if the move fails (the seat stays where it is). */
async function settleInRoom(joined) {
  if (!joined.token || roomHint(joined.room) === roomHint(conn.room)) return joined;
  conn.room = joined.room;
  let ws;
  try {
    ws = await conn.open();
  } catch {
    return joined;
  }
  // The server closes the seat's old socket once the new one has it: expected.
  const old = conn.ws;
  if (old) conn.retiring.add(old);
  const resume = conn.request({ type: "resume", room: joined.room, token: joined.token, last_seq: null }, ws);
  // a socket that dies unanswered must not hold the page back: the first seat then stays
  const late = new Promise((resolve) => setTimeout(() => resolve({ type: "error", code: "timeout" }), 5000));
  const reply = await Promise.race([resume, late]);
  if (reply.type !== "joined") {
    if (old) conn.retiring.delete(old);
    ws.close();
    return joined;
  }
  conn.replace(ws);
  return { ...reply, token: joined.token, key: joined.key ?? reply.key };
}

/** Take the room a ``joined`` reply gives (``keepPath``: stay at the page's address). */
function takeJoined(reply, { keepPath = false } = {}) {
  if (state.room && reply.room !== state.room) {
    Object.assign(state, { view: null, following: null, lastSeq: 0, results: null, names: new Map() });
  }
  state.role = reply.role;
  state.seat = reply.seat ?? null;
  state.token = reply.token ?? null;
  state.key = reply.key ?? state.key;
  if (reply.snapshot) applySnapshot(reply.snapshot);
  if (reply.view) setView(reply.view);
  if (state.token) {
    // Kept for this tab only, so a reload takes the seat back.
    sessionStorage.setItem(seatKey(state.room), JSON.stringify({ token: state.token, key: state.key }));
  }
  if (!keepPath) history.replaceState(null, "", roomPath());
  conn.request({ type: "live", limit: 0 }); // the lobby's list of live races is not needed now
  showScreen("room");
  render();
}

function seatKey(room) {
  return "samedeal.seat." + room.toUpperCase().replace(/[^A-Z0-9]/g, "");
}

/** After a reload: take back the seat this tab held in the linked room, if any. */
async function resumeSaved(code) {
  const saved = JSON.parse(sessionStorage.getItem(seatKey(code)) || "null");
  if (!saved || !saved.token) return false;
  state.room = code.toUpperCase();
  state.token = saved.token;
  state.key = saved.key || state.key;
  state.role = "player";
  try {
    await resumeSeat();
  } catch {
    sessionStorage.removeItem(seatKey(code));
    Object.assign(state, { room: null, token: null, role: null });
    return false;
  }
  showScreen("room");
  render();
  return true;
}

/** Leave the room: the server frees the seat at once (a running race is resigned
 * first); the tab forgets the seat and goes back to the lobby. */
async function leaveRoom() {
  try {
    const reply = await conn.request({ type: "leave" });
    if (reply.type === "error" && isPlaying()) await conn.request({ type: "resign" });
  } catch {
    // the connection is gone: the grace period frees the seat
  }
  if (state.room) sessionStorage.removeItem(seatKey(state.room));
  conn.close();
  location.assign("/");
}

function roomPath() {
  return `/r/${state.room}` + (state.key ? `?key=${encodeURIComponent(state.key)}` : "");
}

function roomLink() {
  return location.origin + roomPath();
}

function playerName() {
  const name = $("name").value.trim();
  localStorage.setItem("samedeal.name", name);
  return name;
}

/**
 * What an invitation shows before joining: the room's game, host, players and state, from
 * the server's ``GET /api/rooms/<CODE>[?key=…]`` (docs/protocol.md). Unknown (or private
 * without its key, or a server that cannot tell): the invitation names the room only.
 */
async function fetchRoomInfo(code, key) {
  try {
    const reply = await fetch(`/api/rooms/${encodeURIComponent(code)}` + (key ? `?key=${encodeURIComponent(key)}` : ""));
    if (!reply.ok || !(reply.headers.get("Content-Type") || "").includes("json")) return null;
    return await reply.json();
  } catch {
    return null;
  }
}

async function showInvite(code) {
  $("invite-panel").hidden = false;
  $("join-panel").hidden = true;
  $("create-panel").hidden = true;
  $("invite-title").textContent = t("invite.title", { room: code });
  $("invite-details").textContent = t("invite.unknown");
  const info = await fetchRoomInfo(code, state.key);
  if (!info) return;
  const host = info.host_name ? t("invite.host", { name: info.host_name }) : "";
  const phase = t(`invite.phase.${info.phase}`);
  const game = t(`game.${info.game}`) + (info.daily ? ` · ${t("room.daily")}` : "");
  const players = info.players || [];
  const full = players.length >= info.max_players;
  const details = [game, host, phase];
  if (full) details.push(t("invite.full"));
  $("invite-details").textContent = details.filter(Boolean).join(" · ");
  const list = $("invite-players");
  list.replaceChildren(...players.map((name) => el("li", null, name)));
  // a running race or a full room takes no new player: watching is the one thing to do
  const watchOnly = info.phase === "running" || full;
  $("invite-join").hidden = watchOnly;
  $("invite-watch").classList.toggle("primary", watchOnly);
  $("invite-watch").hidden = info.spectators === false;
}

// ---------------------------------------------------------------------- moves

async function sendMove(text, anchorPile) {
  if (!isPlaying()) return null;
  if (serverNow() < (state.startAt || 0)) return null;
  const reply = await conn.request({ type: "move", move: text });
  if (reply.type === "ack") {
    state.reminder = null;
    const before = state.view;
    setView(mergeView(state.view, reply.changes));
    noteAck(state.room, state.race, before, state.view, reply.move);
    sound("move");
    render();
  } else if (reply.type === "rejected") {
    sound("refused");
    refused(reply, anchorPile);
  } else if (reply.type === "error") {
    toast(errorText(reply.code, reply.message));
  }
  return reply;
}

function refused(reply, anchorPile) {
  const anchor = anchorPile ? pileTopCard(anchorPile) : null;
  if (anchor) {
    anchor.classList.remove("shake");
    void anchor.offsetWidth; // restart the animation
    anchor.classList.add("shake");
  }
  if (!settings.rules) return;
  state.reminder = { text: ruleText(reply.rule, reply.reminder), rule: reply.rule, pile: anchorPile, until: Date.now() + 6000 };
  placeReminder();
  setTimeout(placeReminder, 6100);
}

function pileTopCard(pile) {
  const node = document.querySelector(`#board [data-pile="${pile}"]`);
  if (!node) return null;
  const cards = node.querySelectorAll(".card.up");
  return cards.length ? cards[cards.length - 1] : node;
}

/** Show the current reminder next to its card (again after every drawing of the board),
 * with a way to the rule's section of the rules page. */
function placeReminder() {
  const board = $("board");
  for (const old of board.querySelectorAll(".reminder")) {
    if (!old.contains(document.activeElement)) old.remove();
  }
  const r = state.reminder;
  if (!r || Date.now() > r.until) {
    state.reminder = null;
    return;
  }
  if (board.querySelector(".reminder")) return; // the reader is on its link
  const anchor = (r.pile && pileTopCard(r.pile)) || board;
  const box = el("div", "reminder");
  box.setAttribute("role", "status");
  box.append(el("span", "text", r.text), " ");
  const more = el("a", "more", t("reminder.why"));
  more.href = `/rules/${rulesGame(state.game)}#${rulesGame(state.game)}-${ruleSection(state.game, r.rule)}`;
  more.addEventListener("click", (ev) => {
    ev.preventDefault();
    openRulesOverlay(r.rule);
  });
  box.append(more);
  const b = board.getBoundingClientRect();
  const a = anchor.getBoundingClientRect();
  const x = Math.max(0, Math.min(a.left - b.left, b.width - 270));
  const top = anchor === board ? 8 : Math.min(a.top - b.top + Math.min(a.height, 40) + 8, b.height);
  box.style.left = `${x}px`;
  box.style.top = `${top}px`;
  board.append(box);
}

async function typedMove(ev) {
  ev.preventDefault();
  const input = $("move-input");
  const text = input.value.trim();
  if (!text) return;
  const reply = await sendMove(text, null);
  const note = $("move-error");
  note.replaceChildren();
  if (reply && reply.type === "ack") {
    input.value = "";
  } else if (reply && reply.type === "rejected") {
    // a typed move is answered under its input, not over the stock
    state.reminder = null;
    placeReminder();
    note.append(`${reply.move}: ${ruleText(reply.rule, reply.reminder)} `);
    const more = el("a", "more", t("reminder.why"));
    more.href = `/rules/${rulesGame(state.game)}`;
    more.addEventListener("click", (e) => {
      e.preventDefault();
      openRulesOverlay(reply.rule);
    });
    note.append(more);
  }
}

/** Follow ``seats`` (up to four boards, side by side); the boards may come before the
 * reply, so the state is ready for them first. */
async function follow(seats) {
  const before = state.follows;
  setFollows(seats);
  render();
  const reply = await conn.request({ type: "follow", seats });
  if (reply.type !== "ok") {
    setFollows(before);
    toast(errorText(reply.code, reply.message));
    render();
  }
}

function setFollows(seats) {
  state.follows = seats.slice(0, MAX_FOLLOWED);
  state.following = state.follows.length ? state.follows[0] : null;
  for (const seat of [...state.boards.keys()]) if (!state.follows.includes(seat)) state.boards.delete(seat);
  state.view = state.following !== null && state.boards.has(state.following) ? state.boards.get(state.following) : null;
  state.viewVersion += 1;
}

/** "Watch" on a player: add their board (the oldest goes beyond four); again: remove it. */
function toggleFollow(seat) {
  if (state.follows.includes(seat)) {
    follow(state.follows.filter((s) => s !== seat));
  } else {
    const seats = [...state.follows, seat];
    follow(seats.slice(Math.max(0, seats.length - MAX_FOLLOWED)));
  }
}

async function react(reaction) {
  const seat = state.role === "spectator" ? state.following : null;
  const reply = await conn.request({ type: "react", reaction, seat });
  if (reply.type === "error") toast(errorText(reply.code, reply.message));
}

/** The lobby's short list of live races (the most watched), kept live by a subscription. */
function renderLobbyLive(msg) {
  const list = $("lobby-live");
  if (!list || state.room) return;
  list.replaceChildren(...msg.rooms.map((room) => liveRow(room, { now: msg.now, compact: true })));
  $("lobby-live-none").hidden = msg.rooms.length > 0;
}

/**
 * A rematch the host offers (the server's ``rematch_offered`` event): each player races it
 * or sits it out (or leaves); nobody is pulled into a race. The race starts once everyone
 * answered, or at the offer's deadline.
 */
function onRematchOffered(msg) {
  state.clockOffset = msg.now - Date.now();
  state.offer = msg;
}

/** Whether this player is asked to answer the pending offer now. */
function offerAsked() {
  const o = state.offer;
  if (!o || state.role !== "player" || state.seat === o.by || serverNow() > o.deadline) return false;
  return !(state.answered && state.answered.race === o.race);
}

async function answerRematch(accept) {
  const offer = state.offer;
  if (!offer) return;
  state.answered = { race: offer.race, accept };
  render();
  const reply = await conn.request({ type: "rematch_reply", race: offer.race, accept });
  if (reply.type === "error") {
    state.answered = null;
    if (reply.code === "no_offer") state.offer = null; // it started or lapsed meanwhile
    toast(errorText(reply.code, reply.message));
    render();
  }
}

async function rematch(deal) {
  const reply = await conn.request({ type: "rematch", deal });
  if (reply.type === "error") toast(errorText(reply.code, reply.message));
}

/** What the results say of a pending rematch: the one who offered it waits, a player who
 * answered is told what happens to them. */
function rematchStatus() {
  const o = state.offer;
  if (!o || state.role !== "player") return "";
  if (state.seat === o.by) return t("rematch.waiting");
  if (state.answered && state.answered.race === o.race) return t(state.answered.accept ? "rematch.accepted" : "rematch.sitting_out");
  return "";
}

// ---------------------------------------------------------------------- sound

let audio = null;

/** A short tone for a move, a refusal or a win: off unless the player turns it on. */
function sound(kind) {
  if (!settings.sound) return;
  try {
    audio = audio || new AudioContext();
    const notes = { move: [660], refused: [196], won: [523, 659, 784, 1047] }[kind] || [440];
    notes.forEach((freq, i) => {
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      const at = audio.currentTime + i * 0.11;
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.08, at);
      gain.gain.exponentialRampToValueAtTime(0.001, at + 0.1);
      osc.connect(gain).connect(audio.destination);
      osc.start(at);
      osc.stop(at + 0.11);
    });
  } catch {
    // no audio on this machine: silence is fine
  }
}

// ---------------------------------------------------------------------- rendering

function gameTitle() {
  return state.game ? t(`game.${state.game}`) : "";
}

let boardKey = "";

/** Draw the board when what it shows has changed (an opponent's progress does not
 * touch it), never under a drag: then it is drawn once the card lands. */
function drawBoard() {
  const seat = state.following !== null ? state.seats.get(state.following) : null;
  const key = [state.viewVersion, state.race, state.phase, state.role, state.follows.join(","), seat && seat.name, currentLang()].join("|");
  if (key === boardKey && !state.boardStale) return;
  if (dragging()) {
    state.boardStale = true;
    return;
  }
  state.boardStale = false;
  boardKey = key;
  const board = $("board");
  if (state.role === "spectator" && state.follows.length > 1) {
    drawBoards(board);
    return;
  }
  board.classList.remove("multi");
  const view = state.view;
  board.classList.toggle("readonly", state.role !== "player");
  board.classList.toggle("empty-board", !view && !(state.role === "spectator" && state.phase !== "lobby"));
  const same = board.dataset.version && Number(board.dataset.race) === state.race && board.dataset.seat === String(state.following);
  renderBoard(board, view, state.game, { animate: Boolean(same && view) });
  board.dataset.version = String(state.viewVersion);
  board.dataset.race = String(state.race);
  board.dataset.seat = String(state.following);
  if (state.role === "spectator" && state.phase !== "lobby") {
    const seat = state.following !== null ? state.seats.get(state.following) : null;
    let text = t("spectate.choose");
    if (seat) {
      const delay = state.options && state.options.spectator_delay;
      text = delay ? t("spectate.watching_delay", { name: seat.name, s: delay }) : t("spectate.watching", { name: seat.name });
    }
    board.prepend(el("p", "watching", text));
  }
  if (!view) {
    if (state.role === "player" && state.phase === "running") board.append(el("p", "watching", t("race.dealing")));
    return;
  }
  if (view.won) {
    board.append(wonBanner());
    if (state.celebrated !== state.race && state.role === "player") {
      state.celebrated = state.race;
      sound("won");
    }
  }
  markSelection();
  placeReminder();
}

/** A spectator's followed boards, side by side, each under its player's name. */
function drawBoards(board) {
  board.classList.add("multi", "readonly");
  board.classList.remove("empty-board");
  board.replaceChildren();
  const delay = state.options && state.options.spectator_delay;
  for (const seatNo of state.follows) {
    const seat = state.seats.get(seatNo);
    const name = seat ? seat.name : String(seatNo);
    const cell = el("section", "followed");
    cell.dataset.seat = String(seatNo);
    cell.setAttribute("aria-label", t("spectate.watching", { name }));
    cell.append(el("h3", "watching", delay ? t("spectate.watching_delay", { name, s: delay }) : name));
    const inner = el("div", "board readonly");
    cell.append(inner);
    board.append(cell);
    const view = state.boards.get(seatNo);
    renderBoard(inner, view, state.game);
    if (view && view.won) inner.append(wonBanner());
  }
}

function statusLabel(status) {
  return t(`status.${status}`);
}

function renderPlayers() {
  const list = $("players");
  list.replaceChildren();
  const seats = [...state.seats.values()].sort((a, b) => a.seat - b.seat);
  for (const s of seats) {
    const li = el("li", "player");
    li.dataset.seat = s.seat;
    li.dataset.onFoundations = s.on_foundations || 0;
    li.dataset.moves = s.moves || 0;
    li.dataset.status = s.status || "waiting";
    const me = s.seat === state.seat && state.role === "player";
    if (me) li.classList.add("me");
    if (!s.connected) li.classList.add("offline");
    if (s.status === "won") li.classList.add("won");
    if (state.follows.includes(s.seat)) li.classList.add("followed");
    const who = el("div", "who");
    who.append(el("span", "name", s.name));
    if (me) who.append(el("span", "you", t("players.you")));
    if (s.seat === state.host) who.append(el("span", "host-badge", t("players.host")));
    const popped = pops.node(s.seat);
    if (popped) who.append(popped);
    if (state.role === "spectator" && state.phase !== "lobby" && state.participants.includes(s.seat)) {
      const on = state.follows.includes(s.seat);
      const b = el("button", "small watch", on ? t("players.watching") : t("players.watch"));
      b.type = "button";
      b.setAttribute("aria-pressed", String(on));
      b.setAttribute("aria-label", t(on ? "players.unwatch_name" : "players.watch_name", { name: s.name }));
      b.addEventListener("click", () => toggleFollow(s.seat));
      who.append(b);
    }
    li.append(who);
    if (state.phase !== "lobby" && state.participants.includes(s.seat)) {
      const total = s.total || (state.game === "easy-harp" ? 104 : 52);
      const done = s.on_foundations || 0;
      const bar = el("div", "bar");
      bar.setAttribute("role", "progressbar");
      bar.setAttribute("aria-valuemin", "0");
      bar.setAttribute("aria-valuemax", String(total));
      bar.setAttribute("aria-valuenow", String(done));
      bar.setAttribute("aria-label", t("players.progress", { name: s.name }));
      const fill = el("div", "fill");
      fill.style.width = `${Math.round((100 * done) / total)}%`;
      bar.append(fill);
      li.append(bar);
      const stats = el("div", "stats");
      if (s.status === "won") stats.append(icon("trophy"), " ");
      let status = statusLabel(s.status);
      if (s.status === "won" && s.elapsed_ms !== null && s.elapsed_ms !== undefined) status = t("status.won_in", { time: formatTime(s.elapsed_ms) });
      stats.append(
        [`${done}/${total}`, tn("stats.points", s.score || 0), tn("stats.moves", s.moves || 0), status].join(" · "),
      );
      li.append(stats);
    } else {
      li.append(el("div", "stats", s.connected ? t("players.ready") : t("status.disconnected")));
    }
    list.append(li);
  }
  $("follow-hint").hidden = !(state.role === "spectator" && state.phase !== "lobby" && state.following === null);
  const crowd = pops.node("crowd");
  $("crowd-reactions").replaceChildren(...(crowd ? [crowd] : []));
  $("reaction-row").hidden = !(state.role === "player" || state.role === "spectator");
}

function resultName(r) {
  // a player who left is still named in the results by the name they raced under
  return /^Player \d+$/.test(r.name) && state.names.has(r.seat) ? state.names.get(r.seat) : r.name;
}

function renderResults() {
  const panel = $("results");
  const show = state.phase === "ended" && Boolean(state.results);
  const appearing = show && panel.hidden;
  panel.hidden = !show;
  if (!show) return;
  const body = $("results-table").querySelector("tbody");
  body.replaceChildren();
  for (const r of state.results) {
    const tr = el("tr");
    if (state.role === "player" && r.seat === state.seat) tr.classList.add("me");
    const cells = [r.rank, resultName(r), statusLabel(r.status), r.on_foundations, r.score, r.moves, formatTime(r.elapsed_ms)];
    cells.forEach((v, i) => {
      const td = el("td", i === 1 ? "name" : null, v);
      if (i === 2 && r.status === "won") td.prepend(icon("trophy"), " ");
      tr.append(td);
    });
    body.append(tr);
  }
  renderReplayLink();
  const share = $("share-text");
  share.value = shareText();
  share.rows = share.value.split("\n").length;
  const host = state.role === "player" && state.seat === state.host;
  // one offer at a time: its answers are awaited before another
  for (const id of ["rematch-same", "rematch-new", "rematch-daily"]) $(id).hidden = !host || Boolean(state.offer);
  const status = rematchStatus();
  $("rematch-status").hidden = !status;
  $("rematch-status").textContent = status;
  // A ghost replays a run of this race at its real pace in a rematch on the same deal.
  const ghosts = host && conn.welcome && conn.welcome.bots;
  $("add-ghost").hidden = !ghosts;
  if (ghosts) {
    const select = $("ghost-seat");
    const chosen = select.value;
    select.replaceChildren();
    for (const r of state.results) {
      const option = el("option", null, `${resultName(r)} (${statusLabel(r.status)})`);
      option.value = String(r.seat);
      select.append(option);
    }
    if (chosen) select.value = chosen;
  }
  if (appearing) panel.scrollIntoView({ block: "nearest" });
}

/** The race's replay, once the server says it is recorded (race_recorded); until then,
 * a note when the server said the record waits for its database (race_record_delayed). */
function renderReplayLink() {
  const recorded = state.recorded && state.recorded.race === state.race ? state.recorded : null;
  $("replay-link").hidden = !recorded;
  if (recorded) $("replay-anchor").href = `/g/${encodeURIComponent(recorded.game_id)}`;
  $("record-delayed").hidden = Boolean(recorded) || state.recordDelayed !== state.race;
}

/** A spoiler-free summary: the deal and how it went, never a move or a card; its link
 * opens a page that starts a room on the same deal. */
function shareText() {
  if (isDailyRoom()) {
    // the deal of the day: its code is secret until the day is over, and never shared
    const { room, race, seat, role, game, deadline, results, view } = state;
    return dailyRaceShare({ room, race, seat, role, game, deadline, results, view, now: serverNow() });
  }
  const lines = [`samedeal · ${gameTitle()} · ${t("share.deal", { deal: state.deal })}`];
  const mine = state.results && state.results.find((r) => r.seat === state.seat);
  const n = state.results ? state.results.length : 0;
  const total = state.game === "easy-harp" ? 104 : 52;
  if (state.role === "player" && mine) {
    const how = mine.status === "won"
      ? tn("share.cleared", mine.moves, { time: formatTime(mine.elapsed_ms) })
      : t("share.home", { cards: mine.on_foundations, total });
    lines.push(`${tOrdinal("share.place", { rank: mine.rank, n })}: ${how}`);
  } else if (n) {
    const best = state.results[0];
    const winner = best.status === "won"
      ? t("share.winner_time", { time: formatTime(best.elapsed_ms) })
      : t("share.winner_cards", { cards: best.on_foundations, total });
    lines.push(`${tn("share.racing", n)}; ${winner}`);
  }
  lines.push(t("share.link", { url: `${location.origin}/d/${state.deal}` }));
  return lines.join("\n");
}

function renderBar() {
  const me = state.role === "player" ? state.seats.get(state.seat) : state.seats.get(state.following);
  const v = state.view;
  $("score").textContent = v ? v.score : me ? me.score || 0 : 0;
  $("moves").textContent = v ? v.moves : me ? me.moves || 0 : 0;
  tickClock();
}

function statusText() {
  const me = state.role === "player" ? state.seats.get(state.seat) : null;
  if (state.phase === "lobby") return t("race.waiting_host");
  if (state.phase === "ended") return t("race.over");
  if (serverNow() < (state.startAt || 0)) return t("race.get_ready");
  if (state.role === "spectator") return t("race.watching");
  if (me && me.status === "won") return t("race.you_won");
  if (me && me.status !== "playing" && me.status !== "disconnected") return t("race.you_out");
  return t("race.on");
}

/** The time left to answer a rematch offer; an offer past its deadline (it started, or
 * lapsed with nobody to race) is dropped a little after. */
function tickOffer() {
  const o = state.offer;
  if (!o) return;
  const left = o.deadline - serverNow();
  if (left < -2000) {
    state.offer = null;
    render();
    return;
  }
  const text = t("rematch.time_left", { s: Math.max(0, Math.ceil(left / 1000)) });
  if ($("rematch-offer-time").textContent !== text) $("rematch-offer-time").textContent = text;
  if (left < 0 && !$("rematch-offer").hidden) render();
}

function tickClock() {
  tickOffer();
  const status = statusText();
  if ($("status-line").textContent !== status) $("status-line").textContent = status;
  let ms = 0;
  const seat = state.role === "player" ? state.seats.get(state.seat) : state.seats.get(state.following);
  const cd = $("countdown");
  if (state.phase !== "lobby" && state.startAt) {
    if (seat && seat.status && !["playing", "disconnected", "waiting"].includes(seat.status) && seat.elapsed_ms !== null) ms = seat.elapsed_ms;
    else if (state.phase === "ended") ms = seat && seat.elapsed_ms !== null && seat.elapsed_ms !== undefined ? seat.elapsed_ms : 0;
    else ms = Math.max(0, serverNow() - state.startAt);
  }
  let clock = formatTime(ms);
  if (state.deadline && state.phase === "running") {
    clock = t("race.time_left", { time: clock, left: formatTime(Math.max(0, state.deadline - serverNow())) });
  }
  $("clock").textContent = clock;
  const before = state.phase === "running" && state.startAt ? state.startAt - serverNow() : -1e9;
  if (before > 0) {
    cd.hidden = false;
    cd.textContent = String(Math.ceil(before / 1000));
  } else if (before > -700) {
    cd.hidden = false;
    cd.textContent = t("race.go");
  } else {
    cd.hidden = true;
  }
}

function roomOptionsText() {
  const o = state.options || {};
  const parts = [t("waiting.max_players", { n: o.max_players })];
  parts.push(o.time_limit ? t("waiting.time_limit", { time: formatTime(o.time_limit * 1000) }) : t("waiting.no_limit"));
  if (!o.spectators) parts.push(t("waiting.no_spectators"));
  else if (o.spectator_delay) parts.push(t("waiting.spectators_delay", { s: o.spectator_delay }));
  else parts.push(t("waiting.spectators"));
  if (o.private) parts.push(t("waiting.private"));
  return parts.join(" · ");
}

function render() {
  if (!state.room) return;
  $("roominfo").hidden = false;
  $("room-code").textContent = state.room;
  $("daily-badge").hidden = !isDailyRoom();
  $("game-title").textContent = gameTitle() + (state.deal ? ` · ${state.deal}` : "");
  $("room-heading").textContent = t("room.heading", { room: state.room, game: gameTitle() });
  const daily = isDailyRoom() ? ` · ${t("room.daily")}` : "";
  document.title = `${state.room} · ${gameTitle()}${daily} · samedeal`;
  const { room, race, seat, role, phase, game } = state;
  renderRoomDaily({ daily: isDailyRoom(), room, race, seat, role, phase, game, now: serverNow() }, render);
  $("spectator-count").textContent = typeof state.spectators === "number" && state.spectators ? tn("room.watching", state.spectators) : "";
  const waiting = state.phase === "lobby";
  $("waiting").hidden = !waiting;
  if (waiting) {
    const n = state.seats.size;
    const host = state.seats.get(state.host);
    $("waiting-text").textContent = tn("waiting.players", n) + (host ? " " + t("waiting.host_starts", { name: host.name }) : "");
    $("start").hidden = !(state.role === "player" && state.seat === state.host);
    // A server that can seat bots says so in welcome ("bots": true).
    $("add-bot").hidden = !(state.role === "player" && state.seat === state.host && conn.welcome && conn.welcome.bots);
    $("room-link").value = roomLink();
    $("room-options").textContent = roomOptionsText();
  }
  const asked = offerAsked();
  $("rematch-offer").hidden = !asked;
  if (asked) {
    const text = t("rematch.offer", { name: state.names.get(state.offer.by) || "", deal: t(`rematch.deal.${state.offer.deal}`) });
    if ($("rematch-offer-text").textContent !== text) $("rematch-offer-text").textContent = text;
  }
  $("controls").hidden = !(state.role === "player" && state.phase === "running" && state.participants.includes(state.seat));
  const playing = isPlaying();
  for (const id of ["btn-stock", "btn-undo", "btn-auto", "btn-resign", "move-input"]) $(id).disabled = !playing;
  $("btn-auto").hidden = !(state.view && state.view.auto_finish);
  if (state.view) $("btn-undo").disabled = !playing || !state.view.can_undo;
  drawBoard();
  renderPlayers();
  renderResults();
  renderBar();
}

function showScreen(name) {
  for (const id of ["lobby", "room", "rules", "notfound", "replay", "profile", "daily", "watch", "tv", "tournament"]) $(id).hidden = id !== name;
}

let toastTimer = null;
function toast(text) {
  const box = $("toast");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.hidden = true), 4000);
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    toast(t("toast.copied"));
  } catch {
    toast(t("toast.copy_by_hand"));
  }
}

// ---------------------------------------------------------------------- rules

function showRulesPage(game, section) {
  showScreen("rules");
  $("rules-close").hidden = true;
  $("rules-back").hidden = false;
  fillRules(game, section);
}

function fillRules(game, section) {
  const which = rulesGame(game);
  $("rules-title").textContent = t("rules.title", { game: t(`rules.${which}.name`) });
  for (const a of document.querySelectorAll(".rules-tabs a")) {
    if (a.dataset.game === which) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  renderRules($("rules-body"), which, section);
  if (!state.room) document.title = `${$("rules-title").textContent} · samedeal`;
}

/** The rules over the room (the race goes on underneath), at ``rule``'s section. */
function openRulesOverlay(rule) {
  $("rules").hidden = false;
  $("rules").classList.add("overlay");
  $("rules-close").hidden = false;
  $("rules-back").hidden = true;
  fillRules(state.game || "easy-harp", rule ? ruleSection(state.game, rule) : null);
  $("rules-close").focus();
}

function closeRulesOverlay() {
  $("rules").hidden = true;
  $("rules").classList.remove("overlay");
}

// ---------------------------------------------------------------------- start-up

/** What the address asks for: a room (/r/CODE), a deal to race (/d/CODE or ?deal=),
 * rules (/rules[/game]), the lobby (/), or nothing we know. */
function route() {
  const path = location.pathname;
  let m = path.match(/^\/r\/([A-Za-z0-9-]{1,16})\/?$/);
  if (m) return { screen: "room", code: m[1], key: new URLSearchParams(location.search).get("key") };
  const h = location.hash.match(/^#\/room\/([A-Za-z0-9-]+)(\?.*)?$/);
  if (h && path === "/") return { screen: "room", code: h[1], key: new URLSearchParams(h[2] || "").get("key") };
  m = path.match(/^\/rules(?:\/(easy-harp|klondike))?\/?$/);
  if (m) return { screen: "rules", game: m[1] || "easy-harp" };
  m = path.match(/^\/t\/([A-Za-z0-9-]{1,16})\/?$/);
  if (m) return { screen: m[1] === "new" ? "tournament-new" : "tournament", code: m[1], key: new URLSearchParams(location.search).get("key") };
  m = path.match(/^\/d\/([A-Za-z0-9-]{1,32})\/?$/);
  if (m) return { screen: "deal", deal: m[1].toUpperCase() };
  m = path.match(/^\/g\/([A-Za-z0-9]{1,16})\/?$/);
  if (m) return { screen: "replay", id: m[1].toLowerCase() };
  m = path.match(/^\/p\/([^/]{1,200})\/?$/);
  if (m) return { screen: "profile", handle: safeDecode(m[1]) };
  m = path.match(/^\/daily(?:\/(\d{4}-\d{2}-\d{2}))?\/?$/);
  if (m) return { screen: "daily", day: m[1] || null };
  if (/^\/watch\/?$/.test(path)) return { screen: "watch" };
  m = path.match(/^\/tv(?:\/(easy-harp|klondike|klondike-3))?\/?$/);
  if (m) return { screen: "tv", game: m[1] || null };
  if (path === "/" || path === "/index.html") {
    const deal = new URLSearchParams(location.search).get("deal");
    return deal ? { screen: "deal", deal: deal.toUpperCase() } : { screen: "lobby" };
  }
  return { screen: "notfound" };
}

function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function linkDeal() {
  const r = route();
  return r.screen === "deal" ? r.deal : "";
}

function showDealPanel(deal) {
  const game = gameOfDeal(deal);
  if (!game) {
    $("create-error").textContent = t("error.bad_deal");
    return;
  }
  $("deal-panel").hidden = false;
  $("deal-panel-title").textContent = t("lobby.deal_panel_title", { deal });
  $("deal-panel-text").textContent = t("lobby.deal_panel_text", { game: t(`game.${game}`) });
  // the ordinary form is ready on the same deal too, for other room options
  const form = $("create-form");
  form.querySelector(`input[name="game"][value="${game}"]`).checked = true;
  form.querySelector('input[name="deal"][value="code"]').checked = true;
  $("deal-code").disabled = false;
  $("deal-code").value = deal;
  $("create-on-deal").focus();
}

function settingsIcon() {
  // a cog drawn as a dashed ring: no glyph that a font may lack
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", "icon");
  svg.setAttribute("aria-hidden", "true");
  const ring = document.createElementNS(svg.namespaceURI, "circle");
  for (const [k, v] of Object.entries({ cx: 12, cy: 12, r: 8, fill: "none", stroke: "currentColor", "stroke-width": 4, "stroke-dasharray": "3.1 3.2" })) ring.setAttribute(k, v);
  const hub = document.createElementNS(svg.namespaceURI, "circle");
  for (const [k, v] of Object.entries({ cx: 12, cy: 12, r: 5, fill: "none", stroke: "currentColor", "stroke-width": 2.5 })) hub.setAttribute(k, v);
  svg.append(ring, hub);
  return svg;
}

async function changeLang(code) {
  await setLang(code, true);
  for (const id of ["lang-select", "lang-lobby"]) $(id).value = code;
  translateDom();
  const r = route();
  if (!$("rules").hidden) fillRules(state.game && $("rules").classList.contains("overlay") ? state.game : r.game || "easy-harp");
  if (!$("invite-panel").hidden && r.code) $("invite-title").textContent = t("invite.title", { room: r.code.toUpperCase() });
  if (!$("deal-panel").hidden) showDealPanel(r.deal);
  if (!state.room) document.title = t("page.title");
  refreshYou();
  refreshReplay();
  refreshProfile();
  refreshDaily();
  document.dispatchEvent(new Event("samedeal:lang")); // the watch and TV pages draw again
  render();
}

function bind() {
  $("settings-button").append(settingsIcon());
  $("settings-button").addEventListener("click", () => {
    const panel = $("settings");
    panel.hidden = !panel.hidden;
    $("settings-button").setAttribute("aria-expanded", String(!panel.hidden));
  });
  for (const [id, name] of [["opt-rules", "rules"], ["opt-double", "double"], ["opt-sound", "sound"]]) {
    $(id).checked = settings.flag(name, name !== "sound");
    $(id).addEventListener("change", (e) => settings.set(name, e.target.checked));
  }
  for (const id of ["lang-select", "lang-lobby"]) {
    $(id).value = currentLang();
    $(id).addEventListener("change", (e) => changeLang(e.target.value));
  }
  $("create-form").addEventListener("submit", createRoom);
  $("join-form").addEventListener("submit", (e) => {
    e.preventDefault();
    joinRoom("player", $("join-code").value.trim(), "join-error");
  });
  $("join-spectator").addEventListener("click", () => joinRoom("spectator", $("join-code").value.trim(), "join-error"));
  $("invite-join").addEventListener("click", () => joinRoom("player", route().code, "invite-error"));
  $("invite-watch").addEventListener("click", () => joinRoom("spectator", route().code, "invite-error"));
  $("create-on-deal").addEventListener("click", createOnSharedDeal);
  for (const r of document.querySelectorAll('input[name="deal"]')) {
    r.addEventListener("change", () => ($("deal-code").disabled = $("create-form").elements.deal.value !== "code"));
  }
  $("deal-code").addEventListener("input", followDealCode);
  $("start").addEventListener("click", async () => {
    const reply = await conn.request({ type: "start" });
    if (reply.type === "error") toast(errorText(reply.code, reply.message));
  });
  $("copy-link").addEventListener("click", () => copy(roomLink()));
  $("add-bot-button").addEventListener("click", async () => {
    const reply = await conn.request({ type: "add_bot", strength: $("bot-strength").value, pace: Number($("bot-pace").value) || 2 });
    if (reply.type === "error") toast(errorText(reply.code, reply.message));
  });
  $("add-ghost-button").addEventListener("click", async () => {
    const seat = Number($("ghost-seat").value);
    const reply = await conn.request({ type: "add_ghost", race: state.race, seat });
    if (reply.type === "error") toast(errorText(reply.code, reply.message));
    else toast(t("toast.ghost_added"));
  });
  $("room-link").addEventListener("focus", (e) => e.target.select());
  setupShareButton($("copy-share"));
  $("copy-share").addEventListener("click", () => shareOut($("share-text").value, toast));
  $("rematch-same").addEventListener("click", () => rematch("same"));
  $("rematch-new").addEventListener("click", () => rematch("random"));
  $("rematch-daily").addEventListener("click", () => rematch("daily"));
  $("rematch-accept").addEventListener("click", () => answerRematch(true));
  $("rematch-sit-out").addEventListener("click", () => answerRematch(false));
  $("rematch-decline").addEventListener("click", leaveRoom);
  $("leave").addEventListener("click", leaveRoom);
  $("btn-stock").addEventListener("click", () => sendMove("s", null));
  $("btn-undo").addEventListener("click", () => sendMove("u", null));
  $("btn-auto").addEventListener("click", () => sendMove("a", null));
  const resign = $("btn-resign");
  // the first click asks, a second within 3 s resigns; one timer at a time, so an earlier
  // question's timer never takes back a later one
  let disarm = null;
  const settleResign = (armed) => {
    clearTimeout(disarm);
    disarm = null;
    resign.dataset.armed = armed ? "1" : "";
    resign.textContent = t(armed ? "controls.resign_sure" : "controls.resign");
  };
  resign.addEventListener("click", async () => {
    if (resign.dataset.armed !== "1") {
      settleResign(true);
      disarm = setTimeout(() => settleResign(false), 3000);
      return;
    }
    settleResign(false);
    const reply = await conn.request({ type: "resign" });
    if (reply.type === "error") toast(errorText(reply.code, reply.message));
  });
  $("move-form").addEventListener("submit", typedMove);
  $("move-input").addEventListener("input", () => $("move-error").replaceChildren());
  $("rules-link").addEventListener("click", (ev) => {
    if (!state.room) return; // a page of its own from the lobby
    ev.preventDefault();
    openRulesOverlay(null);
  });
  $("rules-close").addEventListener("click", closeRulesOverlay);
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && $("rules").classList.contains("overlay") && !$("rules").hidden) closeRulesOverlay();
  });
  document.addEventListener("keydown", replayKey);
  setupInput($("board"), {
    view: () => state.view,
    game: () => state.game,
    playing: isPlaying,
    send: sendMove,
    version: () => state.viewVersion,
    redraw: () => state.boardStale && drawBoard(),
    doubleClick: () => settings.doubleClick,
  });
  setInterval(() => state.room && tickClock(), 250);
  $("reaction-row").prepend(reactionButtons(react));
}

async function init() {
  await setLang(detectLang());
  translateDom();
  document.title = t("page.title");
  $("name").value = localStorage.getItem("samedeal.name") || "";
  setupIdentity(conn); // every connection says who its player is, right after hello
  bind();
  setupDaily(playDaily);
  const r = route();
  if (r.screen === "daily") {
    showScreen("daily");
    await showDailyPage(r.day, $("daily"), conn);
    return;
  }
  if (r.screen === "replay" || r.screen === "profile") {
    showScreen(r.screen);
    if (r.screen === "replay") await showReplay(r.id, $("replay"));
    else await showProfile(r.handle, $("profile"));
    return;
  }
  if (r.screen === "rules") {
    const hash = decodeURIComponent(location.hash.slice(1));
    showRulesPage(r.game, hash.startsWith(`${r.game}-`) ? hash.slice(r.game.length + 1) : null);
    return;
  }
  if (r.screen === "notfound") {
    showScreen("notfound");
    return;
  }
  if (r.screen === "watch") {
    showScreen("watch");
    startWatch();
    return;
  }
  if (r.screen === "tv") {
    showScreen("tv");
    startTv(r.game);
    return;
  }
  if (r.screen === "tournament") {
    await tournament.open(r.code, r.key);
    return;
  }
  if (r.screen === "tournament-new") {
    await tournament.showCreate();
    return;
  }
  showScreen("lobby");
  if (r.screen === "lobby") showDailyLobby(); // today's two games first
  listTournaments($("lobby"));
  if (r.screen === "deal") showDealPanel(r.deal);
  if (r.screen === "room") {
    const code = r.code.toUpperCase();
    state.key = r.key;
    $("join-code").value = code;
    conn.room = code; // the page's sockets go to the room's worker
    if (await resumeSaved(code).catch(() => false)) return;
    showInvite(code);
    // "Watch" in the live directory: straight in as a spectator
    if (new URLSearchParams(location.search).has("watch")) joinRoom("spectator", code, "invite-error");
    else $("name").focus();
    return;
  }
  conn
    .ensure()
    .then(() => conn.request({ type: "live", sort: "watched", limit: 5 }))
    .catch((e) => ($("create-error").textContent = errorText(e.code, e.message)))
    .finally(() => r.screen === "lobby" && refreshDailyLobby(conn)); // the player is known now
}

init();
