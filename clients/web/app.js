// samedeal browser client: lobby, waiting room, race, results and spectating.
// Plain ES module, no build step. Everything that comes from other users (names, room
// data) is put on the page with textContent, never as markup.

const PROTOCOL_VERSION = 2;
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const RED = new Set(["H", "D"]);
const RANK_TEXT = { T: "10" };
const EH_SLOT_SUITS = ["S", "H", "C", "D", "S", "H", "C", "D"];
const GAME_TITLES = {
  "easy-harp": "Easy Harp",
  klondike: "Klondike, draw one",
  "klondike-3": "Klondike, draw three",
};
const TAP_DELAY_MS = 230;

const $ = (id) => document.getElementById(id);

/** Create an element with a class and (plain) text. */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function formatTime(ms) {
  if (ms === null || ms === undefined || ms < 0) return "–";
  const total = Math.floor(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

function ordinal(n) {
  const s = ["th", "st", "nd", "rd"];
  const v = n % 100;
  return n + (s[(v - 20) % 10] || s[v] || s[0]);
}

// ---------------------------------------------------------------------- state

const state = {
  ws: null,
  welcome: null,
  nextId: 1,
  waiting: new Map(), // request id → resolve
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
  startAt: null,
  deadline: null,
  clockOffset: 0, // server ms − local ms
  lastSeq: 0,
  seats: new Map(), // seat → {name, connected, status, on_foundations, total, score, moves, elapsed_ms, host}
  participants: [],
  results: null,
  view: null, // my board (player) or the followed board (spectator)
  following: null,
  spectators: null,
  selected: null, // {src, pile, count}
  tapTimer: null,
  retiring: new Set(),
  reminder: null, // {text, pile, until}: a refused move's rule, shown next to its card
  reconnects: 0,
};

const settings = {
  get rules() {
    return localStorage.getItem("samedeal.rules") !== "off";
  },
  set rules(on) {
    localStorage.setItem("samedeal.rules", on ? "on" : "off");
  },
};

function serverNow() {
  return Date.now() + state.clockOffset;
}

// ---------------------------------------------------------------------- connection

function wsUrl() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  return `${proto}//${location.host}/`;
}

/** Open a socket and say hello; resolves with the socket once welcomed. */
function openSocket() {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl());
    let welcomed = false;
    ws.onopen = () => ws.send(JSON.stringify({ type: "hello", v: PROTOCOL_VERSION, client: "web" }));
    ws.onmessage = (ev) => {
      const msg = JSON.parse(ev.data);
      if (!welcomed) {
        if (msg.type === "welcome") {
          welcomed = true;
          state.welcome = msg;
          ws.onmessage = (e) => onFrame(ws, e.data);
          resolve(ws);
        } else {
          reject(new Error(msg.message || "the server refused the connection"));
        }
      }
    };
    ws.onerror = () => {
      if (!welcomed) reject(new Error("cannot reach the server"));
    };
    ws.onclose = (ev) => onClose(ws, welcomed, ev.code);
  });
}

async function ensureSocket() {
  if (!state.ws || state.ws.readyState !== WebSocket.OPEN) state.ws = await openSocket();
  return state.ws;
}

/** Send a request and wait for its direct reply. */
async function request(payload, ws) {
  const socket = ws || (await ensureSocket());
  const id = state.nextId++;
  return new Promise((resolve) => {
    state.waiting.set(id, resolve);
    socket.send(JSON.stringify({ ...payload, id }));
  });
}

function onClose(ws, welcomed, code) {
  if (state.retiring.has(ws)) {
    state.retiring.delete(ws);
    return;
  }
  if (ws !== state.ws || !welcomed) return;
  state.ws = null;
  if (code === 4000) {
    toast("This seat is now played from another window.");
  } else if (state.room && state.token && state.reconnects < 5) {
    state.reconnects += 1;
    setTimeout(() => resumeSeat().catch(() => toast("Connection lost: reload the page")), 800);
  } else if (state.room && state.role === "spectator") {
    toast("Connection lost: reload the page to watch again");
  }
}

/** Take the seat again on a new connection (after a drop, or to get the board at the
 * start of a race); the old connection is retired. */
async function resumeSeat() {
  const ws = await openSocket();
  // The server closes the seat's old connection when the new one resumes: expected.
  const old = state.ws;
  if (old) state.retiring.add(old);
  const reply = await request(
    { type: "resume", room: state.room, token: state.token, last_seq: state.lastSeq || null },
    ws,
  );
  if (reply.type !== "joined") {
    if (old) state.retiring.delete(old);
    ws.close();
    throw new Error(reply.message || "could not resume");
  }
  state.ws = ws;
  if (old && old.readyState <= WebSocket.OPEN) old.close();
  if (reply.seat !== undefined && reply.seat !== null) state.seat = reply.seat;
  state.reconnects = 0;
  if (reply.snapshot) applySnapshot(reply.snapshot);
  if (reply.view) setView(reply.view);
  render();
}

function onFrame(ws, data) {
  let msg;
  try {
    msg = JSON.parse(data);
  } catch {
    return;
  }
  if (msg.id !== undefined && msg.id !== null && state.waiting.has(msg.id)) {
    const resolve = state.waiting.get(msg.id);
    state.waiting.delete(msg.id);
    resolve(msg);
    return;
  }
  if (ws !== state.ws) return; // a retiring connection
  if (typeof msg.seq === "number") {
    if (msg.seq <= state.lastSeq) return;
    state.lastSeq = msg.seq;
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
  state.startAt = snap.start_at;
  state.deadline = snap.deadline;
  state.results = snap.results;
  state.clockOffset = snap.now - Date.now();
  state.lastSeq = Math.max(state.lastSeq, snap.seq);
  if (typeof snap.spectators === "number") state.spectators = snap.spectators;
  state.seats = new Map();
  for (const s of snap.seats) state.seats.set(s.seat, { ...s });
  state.participants = snap.phase === "lobby" ? [] : snap.seats.map((s) => s.seat);
}

function onEvent(msg) {
  switch (msg.type) {
    case "seat": {
      if (msg.left) {
        state.seats.delete(msg.seat);
      } else {
        const seat = state.seats.get(msg.seat) || { status: "waiting", on_foundations: 0, total: 0, score: 0, moves: 0 };
        seat.name = msg.name;
        seat.connected = msg.connected;
        seat.seat = msg.seat;
        state.seats.set(msg.seat, seat);
      }
      if (msg.host) state.host = msg.seat;
      break;
    }
    case "race_starting":
      state.phase = "running";
      state.race = msg.race;
      state.deal = msg.deal || "";
      state.startAt = msg.start_at;
      state.deadline = msg.deadline;
      state.clockOffset = msg.now - Date.now();
      state.participants = msg.seats;
      state.results = null;
      state.view = null;
      clearSelection();
      for (const [n, s] of state.seats) {
        Object.assign(s, { status: msg.seats.includes(n) ? "playing" : "waiting", on_foundations: 0, score: 0, moves: 0, elapsed_ms: null });
      }
      if (state.role === "player" && msg.seats.includes(state.seat)) {
        if (msg.view) setView(msg.view); // the starting board, the same for every player
      } else if (state.role === "spectator" && state.following !== null) {
        follow(state.following);
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
    case "board":
      if (state.role === "spectator" && msg.seat === state.following) setView(msg.view);
      break;
    case "resync":
      applySnapshot(msg.snapshot);
      break;
    case "spectators":
      state.spectators = msg.count;
      break;
    case "error":
      toast(msg.message);
      break;
    default:
      return;
  }
  render();
}

// An ack carries only what the move changed: `tableau` and `foundations` keyed by the
// 1-based pile number, the other keys as in the board (protocol.views.merge_view).
function mergeView(view, changes) {
  const out = { ...(view || {}) };
  for (const [key, value] of Object.entries(changes)) {
    if (key === "tableau" || key === "foundations") {
      const piles = [...(out[key] || [])];
      for (const [number, pile] of Object.entries(value)) piles[Number(number) - 1] = pile;
      out[key] = piles;
    } else {
      out[key] = value;
    }
  }
  return out;
}

function setView(view) {
  state.view = view;
}

function isPlaying() {
  if (state.role !== "player" || state.phase !== "running") return false;
  if (!state.participants.includes(state.seat)) return false;
  const me = state.seats.get(state.seat);
  return !me || me.status === "playing" || me.status === "disconnected";
}

// ---------------------------------------------------------------------- actions

async function createRoom(ev) {
  ev.preventDefault();
  const form = $("create-form");
  const deal = form.elements.deal.value;
  const payload = {
    type: "create",
    game: form.elements.game.value,
    deal,
    name: playerName(),
    max_players: Number($("max-players").value) || 8,
    spectators: $("allow-spectators").checked,
    private: $("private-room").checked,
    spectator_delay: Number($("spectator-delay").value) || 0,
  };
  const limit = Number($("time-limit").value);
  if (limit > 0) payload.time_limit = Math.round(limit * 60);
  if (deal === "code") payload.code = $("deal-code").value.trim();
  await enter(payload);
}

async function joinRoom(role) {
  const code = $("join-code").value.trim();
  if (!code) {
    $("lobby-error").textContent = "Type a room code first.";
    return;
  }
  const payload = { type: "join", room: code, role, name: playerName() };
  if (state.key) payload.key = state.key;
  await enter(payload);
}

async function enter(payload) {
  $("lobby-error").textContent = "";
  let reply;
  try {
    reply = await request(payload);
  } catch (e) {
    $("lobby-error").textContent = e.message;
    return;
  }
  if (reply.type !== "joined") {
    $("lobby-error").textContent = reply.message || "Refused.";
    return;
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
  const path = `/r/${state.room}` + (state.key ? `?key=${encodeURIComponent(state.key)}` : "");
  history.replaceState(null, "", path);
  showRoom();
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
  const me = [...state.seats.values()].find((s) => s.seat === state.seat);
  showRoom();
  render();
  return Boolean(me || state.seat !== null);
}

function roomLink() {
  return `${location.origin}/r/${state.room}` + (state.key ? `?key=${encodeURIComponent(state.key)}` : "");
}

function playerName() {
  const name = $("name").value.trim();
  localStorage.setItem("samedeal.name", name);
  return name;
}

async function sendMove(text, anchorPile) {
  if (!isPlaying()) return null;
  if (serverNow() < (state.startAt || 0)) return null;
  const reply = await request({ type: "move", move: text });
  if (reply.type === "ack") {
    state.reminder = null;
    setView(mergeView(state.view, reply.changes));
    render();
  } else if (reply.type === "rejected") {
    refused(reply, anchorPile);
  } else if (reply.type === "error") {
    toast(reply.message);
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
  state.reminder = { text: reply.reminder, pile: anchorPile, until: Date.now() + 3500 };
  placeReminder();
  setTimeout(placeReminder, 3600);
}

/** Show the current reminder next to its card (again after every redraw of the board). */
function placeReminder() {
  const board = $("board");
  for (const old of board.querySelectorAll(".reminder")) old.remove();
  const r = state.reminder;
  if (!r || Date.now() > r.until) {
    state.reminder = null;
    return;
  }
  const anchor = (r.pile && pileTopCard(r.pile)) || board;
  const box = el("div", "reminder", r.text);
  box.setAttribute("role", "status");
  const b = board.getBoundingClientRect();
  const a = anchor.getBoundingClientRect();
  const x = Math.max(0, Math.min(a.left - b.left, b.width - 260));
  const top = anchor === board ? 8 : Math.min(a.top - b.top + Math.min(a.height, 40) + 8, b.height);
  box.style.left = `${x}px`;
  box.style.top = `${top}px`;
  board.append(box);
}

async function follow(seat) {
  // The board may arrive before the reply: be ready for it first.
  const before = state.following;
  state.following = seat;
  state.view = null;
  render();
  const reply = await request({ type: "follow", seat });
  if (reply.type !== "ok") {
    state.following = before;
    toast(reply.message || "cannot follow this player now");
    render();
  }
}

// ---------------------------------------------------------------------- selection & input

function pileTopCard(pile) {
  const node = document.querySelector(`#board [data-pile="${pile}"]`);
  if (!node) return null;
  const cards = node.querySelectorAll(".card.up");
  return cards.length ? cards[cards.length - 1] : node;
}

function clearSelection() {
  state.selected = null;
  for (const c of document.querySelectorAll("#board .card.selected")) c.classList.remove("selected");
}

function select(pile, count) {
  clearSelection();
  const src = pile.startsWith("t") && count > 1 ? `${pile}:${count}` : pile;
  state.selected = { src, pile, count };
  markSelection();
}

function markSelection() {
  const sel = state.selected;
  if (!sel) return;
  const node = document.querySelector(`#board [data-pile="${sel.pile}"]`);
  if (!node) return;
  const cards = [...node.querySelectorAll(".card.up")];
  for (const c of cards.slice(cards.length - sel.count)) c.classList.add("selected");
}

/** The source a face-up card can be moved from: {pile, count}, or null. */
function sourceOf(card) {
  const pileNode = card.closest("[data-pile]");
  if (!pileNode) return null;
  const pile = pileNode.dataset.pile;
  const ups = [...pileNode.querySelectorAll(".card.up")];
  const index = ups.indexOf(card);
  if (index < 0) return null;
  if (pile.startsWith("t")) return { pile, count: ups.length - index };
  if (index !== ups.length - 1) return null; // only the top of the waste or a foundation
  return { pile, count: 1 };
}

let suppressClick = false;

function onBoardClick(ev) {
  if (suppressClick) {
    suppressClick = false;
    return;
  }
  if (!isPlaying()) return;
  const pileNode = ev.target.closest("[data-pile]");
  if (!pileNode) {
    clearSelection();
    return;
  }
  const pile = pileNode.dataset.pile;
  if (pile === "s") {
    clearSelection();
    sendMove("s", null);
    return;
  }
  const card = ev.target.closest(".card.up");
  const sel = state.selected;
  if (sel) {
    if (pile === sel.pile) {
      if (ev.detail >= 2 && sel.count === 1) {
        clearSelection();
        sendMove(`${sel.src}-t`, pile);
      } else {
        clearSelection();
      }
      return;
    }
    clearSelection();
    sendMove(`${sel.src}-${pile}`, sel.pile);
    return;
  }
  if (!card) return;
  const src = sourceOf(card);
  if (!src) return;
  if (src.count > 1) {
    select(src.pile, src.count);
    return;
  }
  if (ev.detail >= 2) {
    clearTimeout(state.tapTimer);
    state.tapTimer = null;
    sendMove(`${src.pile}-t`, src.pile);
    return;
  }
  clearTimeout(state.tapTimer);
  state.tapTimer = setTimeout(async () => {
    state.tapTimer = null;
    const reply = await request({ type: "move", move: `${src.pile}-f` });
    if (reply.type === "ack") {
      setView(mergeView(state.view, reply.changes));
      render();
    } else if (reply.type === "rejected") {
      // Nothing takes it on a foundation: keep it in hand for a click on its destination.
      select(src.pile, 1);
    }
  }, TAP_DELAY_MS);
}

// Drag and drop with pointer events (mouse, pen and touch alike).
let drag = null;

function onPointerDown(ev) {
  if (!isPlaying() || ev.button > 0) return;
  const card = ev.target.closest(".card.up");
  if (!card) return;
  const src = sourceOf(card);
  if (!src) return;
  drag = { src, card, x: ev.clientX, y: ev.clientY, ghost: null, moved: false };
}

function onPointerMove(ev) {
  if (!drag) return;
  if (!drag.moved) {
    if (Math.hypot(ev.clientX - drag.x, ev.clientY - drag.y) < 6) return;
    drag.moved = true;
    clearTimeout(state.tapTimer);
    clearSelection();
    const pileNode = drag.card.closest("[data-pile]");
    const ups = [...pileNode.querySelectorAll(".card.up")];
    const moving = ups.slice(ups.length - drag.src.count);
    const first = moving[0].getBoundingClientRect();
    const ghost = el("div", "drag-ghost");
    ghost.style.setProperty("--cw", getComputedStyle($("board")).getPropertyValue("--cw"));
    for (const c of moving) {
      const r = c.getBoundingClientRect();
      const copy = c.cloneNode(true);
      copy.classList.remove("selected");
      copy.style.top = `${r.top - first.top}px`;
      copy.style.width = `${r.width}px`;
      copy.style.height = `${r.height}px`;
      ghost.append(copy);
      c.classList.add("dragging");
    }
    drag.dx = drag.x - first.left;
    drag.dy = drag.y - first.top;
    document.body.append(ghost);
    drag.ghost = ghost;
    drag.moving = moving;
  }
  drag.ghost.style.left = `${ev.clientX - drag.dx}px`;
  drag.ghost.style.top = `${ev.clientY - drag.dy}px`;
  for (const p of document.querySelectorAll("#board .drop-ok")) p.classList.remove("drop-ok");
  const over = document.elementFromPoint(ev.clientX, ev.clientY);
  const target = over && over.closest("#board [data-pile]");
  if (target && target.dataset.pile !== drag.src.pile && /^[tf]/.test(target.dataset.pile)) {
    target.classList.add("drop-ok");
  }
}

function onPointerUp(ev) {
  if (!drag) return;
  const d = drag;
  drag = null;
  if (!d.moved) return;
  suppressClick = true;
  setTimeout(() => (suppressClick = false), 0);
  d.ghost.remove();
  for (const c of d.moving) c.classList.remove("dragging");
  for (const p of document.querySelectorAll("#board .drop-ok")) p.classList.remove("drop-ok");
  const over = document.elementFromPoint(ev.clientX, ev.clientY);
  const target = over && over.closest("#board [data-pile]");
  if (!target) return;
  const dest = target.dataset.pile;
  if (dest === d.src.pile || !/^[tf]/.test(dest)) return;
  const src = d.src.pile.startsWith("t") && d.src.count > 1 ? `${d.src.pile}:${d.src.count}` : d.src.pile;
  sendMove(`${src}-${dest}`, d.src.pile);
}

function onKey(ev) {
  if (ev.target.closest && ev.target.closest("input, textarea, select")) return;
  if (ev.key === "/" || ev.key === ":") {
    if (!$("controls").hidden) {
      ev.preventDefault();
      $("move-input").focus();
    }
    return;
  }
  if (!isPlaying()) return;
  const k = ev.key.toLowerCase();
  const sel = state.selected;
  let handled = true;
  if ((ev.ctrlKey || ev.metaKey) && k === "z") sendMove("u", null);
  else if (ev.ctrlKey || ev.metaKey || ev.altKey) handled = false;
  else if (k === "escape") clearSelection();
  else if (k === "s" || k === " ") sendMove("s", null);
  else if (k === "u" || k === "backspace") sendMove("u", null);
  else if (k === "a") sendMove("a", null);
  else if (k === "w" && !sel) select("w", 1);
  else if (/^[1-9]$/.test(k)) {
    const column = Number(k);
    const n = state.view ? state.view.tableau.length : 0;
    if (column > n) handled = false;
    else if (sel) {
      clearSelection();
      sendMove(`${sel.src}-t${column}`, sel.pile);
    } else if (state.view.tableau[column - 1].up.length) select(`t${column}`, 1);
  } else if ((k === "f" || k === "t") && sel) {
    clearSelection();
    sendMove(`${sel.src}-${k}`, sel.pile);
  } else handled = false;
  if (handled) ev.preventDefault();
}

// ---------------------------------------------------------------------- rendering

function cardNode(name, faceUp = true) {
  if (!faceUp) return el("div", "card back");
  const rank = name[0];
  const suit = name[1];
  const node = el("div", `card up${RED.has(suit) ? " red" : ""}`);
  node.dataset.card = name;
  const corner = el("span", "corner", RANK_TEXT[rank] || rank);
  corner.append(el("span", "s", SUITS[suit]));
  node.append(corner, el("span", "pip", SUITS[suit]));
  node.title = name;
  return node;
}

function renderBoard() {
  const board = $("board");
  board.replaceChildren();
  const view = state.view;
  board.classList.toggle("readonly", state.role !== "player");
  board.classList.toggle("empty-board", !view && !(state.role === "spectator" && state.phase !== "lobby"));
  if (state.role === "spectator") {
    const seat = state.following !== null ? state.seats.get(state.following) : null;
    let text = "Choose a player to watch.";
    if (seat) text = `Watching ${seat.name}` + (state.options && state.options.spectator_delay ? ` (${state.options.spectator_delay} s behind)` : "");
    if (state.phase !== "lobby") board.append(el("p", "watching", text));
  }
  if (!view) {
    if (state.role === "player" && state.phase === "running") board.append(el("p", "watching", "Dealing…"));
    return;
  }
  const harp = state.game === "easy-harp";
  const nCols = view.tableau.length;
  const nFound = view.foundations.length;
  board.style.setProperty("--n", harp ? 10 : Math.max(nCols, 7));

  const top = el("div", "row top");
  // stock
  const stock = el("div", `pile slot stock${view.stock ? "" : " empty"}`);
  stock.dataset.pile = "s";
  stock.title = "Stock (s)";
  if (view.stock) {
    stock.append(cardNode(null, false));
    stock.append(el("span", "count", view.stock));
  } else if (view.waste.count) {
    stock.append(el("span", "redeal", "↻"));
  }
  top.append(stock);
  // waste: up to three fanned cards, only the top plays
  const waste = el("div", `pile slot waste${state.game === "klondike-3" ? " three" : ""}`);
  waste.dataset.pile = "w";
  view.waste.top.forEach((name, i) => {
    const c = cardNode(name);
    c.style.left = `calc(var(--cw) * var(--fan, 0.36) * ${i})`;
    waste.append(c);
  });
  if (view.waste.count) waste.append(el("span", "count", view.waste.count));
  top.append(waste);
  if (!harp) top.append(el("div", "spacer grow"));
  for (let i = 0; i < nFound; i++) {
    const pileCards = view.foundations[i];
    const f = el("div", "pile slot foundation");
    f.dataset.pile = `f${i + 1}`;
    if (harp) {
      const suit = EH_SLOT_SUITS[i];
      f.title = `Foundation ${i + 1} (${SUITS[suit]})`;
      f.append(el("span", `slot-mark${RED.has(suit) ? " red" : ""}`, SUITS[suit]));
    } else {
      f.title = `Foundation ${i + 1}`;
      f.append(el("span", "slot-mark", "A"));
    }
    if (pileCards.length) f.append(cardNode(pileCards[pileCards.length - 1]));
    top.append(f);
  }
  board.append(top);

  const tableau = el("div", "row tableau");
  view.tableau.forEach((col, i) => {
    const pile = el("div", "pile slot column");
    pile.dataset.pile = `t${i + 1}`;
    let offset = 0;
    const parts = [];
    for (let d = 0; d < col.down; d++) {
      const c = cardNode(null, false);
      c.style.top = `calc(${offset} * var(--down))`;
      parts.push(c);
      offset += 1;
    }
    const downPart = offset;
    col.up.forEach((name, j) => {
      const c = cardNode(name);
      c.style.top = `calc(${downPart} * var(--down) + ${j} * var(--up))`;
      parts.push(c);
    });
    pile.append(...parts);
    const ups = Math.max(col.up.length - 1, 0);
    pile.style.height = `calc(var(--ch) + ${downPart} * var(--down) + ${ups} * var(--up))`;
    tableau.append(pile);
  });
  board.append(tableau);
  if (view.won) board.append(el("div", "won-banner", "Cleared! 🎉"));
  markSelection();
  placeReminder();
}

function renderPlayers() {
  const list = $("players");
  list.replaceChildren();
  const seats = [...state.seats.values()].sort((a, b) => a.seat - b.seat);
  for (const s of seats) {
    const li = el("li", "player");
    li.dataset.seat = s.seat;
    li.dataset.onFoundations = s.on_foundations || 0;
    li.dataset.status = s.status || "waiting";
    if (s.seat === state.seat && state.role === "player") li.classList.add("me");
    if (!s.connected) li.classList.add("offline");
    if (s.status === "won") li.classList.add("won");
    if (s.seat === state.following) li.classList.add("followed");
    const who = el("div", "who");
    who.append(el("span", "name", s.name));
    if (s.seat === state.host) who.append(el("span", "host-badge", "host"));
    if (state.role === "spectator" && state.phase !== "lobby" && state.participants.includes(s.seat)) {
      const b = el("button", "small watch", s.seat === state.following ? "Watching" : "Watch");
      b.type = "button";
      b.addEventListener("click", () => follow(s.seat));
      who.append(b);
    }
    li.append(who);
    if (state.phase !== "lobby" && state.participants.includes(s.seat)) {
      const total = s.total || (state.game === "easy-harp" ? 104 : 52);
      const bar = el("div", "bar");
      const fill = el("div", "fill");
      fill.style.width = `${Math.round((100 * (s.on_foundations || 0)) / total)}%`;
      bar.append(fill);
      bar.title = `${s.on_foundations || 0} of ${total} cards on the foundations`;
      li.append(bar);
      let status = { won: "🏆 won", resigned: "resigned", timeout: "out of time", disconnected: "offline", playing: "playing" }[s.status] || s.status;
      if (s.status === "won" && s.elapsed_ms !== null && s.elapsed_ms !== undefined) status += ` in ${formatTime(s.elapsed_ms)}`;
      li.append(el("div", "stats", `${s.on_foundations || 0}/${total} · ${s.score || 0} pts · ${s.moves || 0} moves · ${status}`));
    } else {
      li.append(el("div", "stats", s.connected ? "ready" : "offline"));
    }
    list.append(li);
  }
  $("follow-hint").hidden = !(state.role === "spectator" && state.phase !== "lobby" && state.following === null);
}

function renderResults() {
  const panel = $("results");
  panel.hidden = !(state.phase === "ended" && state.results);
  if (panel.hidden) return;
  const body = $("results-table").querySelector("tbody");
  body.replaceChildren();
  const labels = { won: "won", resigned: "resigned", timeout: "out of time" };
  for (const r of state.results) {
    const tr = el("tr");
    if (state.role === "player" && r.seat === state.seat) tr.classList.add("me");
    for (const v of [r.rank, r.name, labels[r.status] || r.status, r.on_foundations, r.score, r.moves, formatTime(r.elapsed_ms)]) {
      tr.append(el("td", null, v));
    }
    body.append(tr);
  }
  $("share-text").value = shareText();
  const host = state.role === "player" && state.seat === state.host;
  $("rematch-same").hidden = !host;
  $("rematch-new").hidden = !host;
  // A ghost replays a run of this race at its real pace in a rematch on the same deal.
  const ghosts = host && state.welcome && state.welcome.bots;
  $("add-ghost").hidden = !ghosts;
  if (ghosts) {
    const select = $("ghost-seat");
    const chosen = select.value;
    select.replaceChildren();
    for (const r of state.results) {
      const option = el("option", null, `${r.name} (${labels[r.status] || r.status})`);
      option.value = String(r.seat);
      select.append(option);
    }
    if (chosen) select.value = chosen;
  }
}

/** A spoiler-free summary: the deal and how it went, never a move or a card. */
function shareText() {
  const title = GAME_TITLES[state.game] || state.game;
  const lines = [`samedeal · ${title} · deal ${state.deal}`];
  const mine = state.results && state.results.find((r) => r.seat === state.seat);
  const n = state.results ? state.results.length : 0;
  const total = state.game === "easy-harp" ? 104 : 52;
  if (state.role === "player" && mine) {
    const how = mine.status === "won"
      ? `cleared it in ${formatTime(mine.elapsed_ms)} with ${mine.moves} moves`
      : `${mine.on_foundations}/${total} cards home`;
    lines.push(`${ordinal(mine.rank)} of ${n}: ${how}`);
  } else if (state.results && state.results.length) {
    const best = state.results[0];
    lines.push(`${n} racing; winner ${best.status === "won" ? "in " + formatTime(best.elapsed_ms) : "with " + best.on_foundations + "/" + total}`);
  }
  lines.push(`Race the same deal: ${location.origin}/`);
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
  let status = "";
  if (state.phase === "lobby") status = "Waiting for the host to start";
  else if (state.phase === "ended") status = "Race over";
  else if (serverNow() < (state.startAt || 0)) status = "Get ready…";
  else if (state.role === "spectator") status = "Watching the race";
  else if (me && me.status === "won") status = "You cleared the table! Waiting for the others…";
  else if (me && me.status !== "playing" && me.status !== "disconnected") status = "You are out of this race";
  else status = "Race on!";
  return status;
}

function tickClock() {
  $("status-line").textContent = statusText();
  let ms = 0;
  const seat = state.role === "player" ? state.seats.get(state.seat) : state.seats.get(state.following);
  if (state.phase !== "lobby" && state.startAt) {
    if (seat && seat.status && !["playing", "disconnected", "waiting"].includes(seat.status) && seat.elapsed_ms !== null) ms = seat.elapsed_ms;
    else if (state.phase === "ended") ms = seat && seat.elapsed_ms !== null && seat.elapsed_ms !== undefined ? seat.elapsed_ms : 0;
    else ms = Math.max(0, serverNow() - state.startAt);
    if (state.deadline && state.phase === "running") {
      const left = state.deadline - serverNow();
      $("clock").textContent = `${formatTime(ms)} (${formatTime(Math.max(0, left))} left)`;
      return;
    }
  }
  $("clock").textContent = formatTime(ms);
  const cd = $("countdown");
  const before = state.phase === "running" && state.startAt ? state.startAt - serverNow() : -1e9;
  if (before > 0) {
    cd.hidden = false;
    cd.textContent = String(Math.ceil(before / 1000));
  } else if (before > -700) {
    cd.hidden = false;
    cd.textContent = "Go!";
  } else {
    cd.hidden = true;
  }
}

function render() {
  if (!state.room) return;
  $("roominfo").hidden = false;
  $("room-code").textContent = state.room;
  $("game-title").textContent = (GAME_TITLES[state.game] || "") + (state.deal ? ` · ${state.deal}` : "");
  $("spectator-count").textContent = typeof state.spectators === "number" ? `${state.spectators} watching` : "";
  const waiting = state.phase === "lobby";
  $("waiting").hidden = !waiting;
  if (waiting) {
    const n = state.seats.size;
    const host = state.seats.get(state.host);
    $("waiting-text").textContent = `${n} player${n === 1 ? "" : "s"} in the room. ` + (host ? `${host.name} starts the race.` : "");
    $("start").hidden = !(state.role === "player" && state.seat === state.host);
    // A server that can seat bots says so in welcome ("bots": true).
    $("add-bot").hidden = !(state.role === "player" && state.seat === state.host && state.welcome && state.welcome.bots);
    $("room-link").value = roomLink();
    const o = state.options || {};
    const parts = [`up to ${o.max_players} players`];
    parts.push(o.time_limit ? `time limit ${formatTime(o.time_limit * 1000)}` : "no time limit");
    parts.push(o.spectators ? "spectators welcome" + (o.spectator_delay ? ` (${o.spectator_delay} s delay)` : "") : "no spectators");
    if (o.private) parts.push("private");
    $("room-options").textContent = parts.join(" · ");
  }
  $("controls").hidden = !(state.role === "player" && state.phase === "running" && state.participants.includes(state.seat));
  const playing = isPlaying();
  for (const id of ["btn-stock", "btn-undo", "btn-auto", "btn-resign", "move-input"]) $(id).disabled = !playing;
  $("btn-auto").hidden = !(state.view && state.view.auto_finish);
  if (state.view) $("btn-undo").disabled = !playing || !state.view.can_undo;
  renderBoard();
  renderPlayers();
  renderResults();
  renderBar();
}

function showRoom() {
  $("lobby").hidden = true;
  $("room").hidden = false;
}

let toastTimer = null;
function toast(text) {
  const t = $("toast");
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (t.hidden = true), 4000);
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    toast("Copied");
  } catch {
    toast("Select the text and copy it");
  }
}

// ---------------------------------------------------------------------- start-up

function readLink() {
  // /r/K7QF-2M?key=… (our links) or /#/room/K7QF-2M?key=… (the server's links)
  let code = null;
  let query = location.search;
  const m = location.pathname.match(/^\/r\/([A-Za-z0-9-]+)/);
  if (m) code = m[1];
  const h = location.hash.match(/^#\/room\/([A-Za-z0-9-]+)(\?.*)?$/);
  if (h) {
    code = h[1];
    query = h[2] || query;
  }
  const key = new URLSearchParams(query).get("key");
  return { code, key };
}

function init() {
  $("name").value = localStorage.getItem("samedeal.name") || "";
  $("opt-rules").checked = settings.rules;
  $("opt-rules").addEventListener("change", (e) => (settings.rules = e.target.checked));
  $("settings-button").addEventListener("click", () => ($("settings").hidden = !$("settings").hidden));
  $("create-form").addEventListener("submit", createRoom);
  $("join-form").addEventListener("submit", (e) => {
    e.preventDefault();
    joinRoom("player");
  });
  $("join-spectator").addEventListener("click", () => joinRoom("spectator"));
  for (const r of document.querySelectorAll('input[name="deal"]')) {
    r.addEventListener("change", () => ($("deal-code").disabled = $("create-form").elements.deal.value !== "code"));
  }
  $("start").addEventListener("click", async () => {
    const reply = await request({ type: "start" });
    if (reply.type === "error") toast(reply.message);
  });
  $("copy-link").addEventListener("click", () => copy(roomLink()));
  $("add-bot-button").addEventListener("click", async () => {
    const reply = await request({ type: "add_bot", strength: $("bot-strength").value, pace: Number($("bot-pace").value) || 2 });
    if (reply.type === "error") toast(reply.message);
  });
  $("add-ghost-button").addEventListener("click", async () => {
    const seat = Number($("ghost-seat").value);
    const reply = await request({ type: "add_ghost", race: state.race, seat });
    if (reply.type === "error") toast(reply.message);
    else toast("The ghost races the rematch on the same deal.");
  });
  $("room-link").addEventListener("focus", (e) => e.target.select());
  $("copy-share").addEventListener("click", () => copy($("share-text").value));
  $("rematch-same").addEventListener("click", () => request({ type: "rematch", deal: "same" }));
  $("rematch-new").addEventListener("click", () => request({ type: "rematch", deal: "random" }));
  $("btn-stock").addEventListener("click", () => sendMove("s", null));
  $("btn-undo").addEventListener("click", () => sendMove("u", null));
  $("btn-auto").addEventListener("click", () => sendMove("a", null));
  const resign = $("btn-resign");
  resign.addEventListener("click", async () => {
    if (resign.dataset.armed !== "1") {
      resign.dataset.armed = "1";
      resign.textContent = "Sure? Resign";
      setTimeout(() => {
        resign.dataset.armed = "";
        resign.textContent = "Resign";
      }, 3000);
      return;
    }
    resign.dataset.armed = "";
    resign.textContent = "Resign";
    const reply = await request({ type: "resign" });
    if (reply.type === "error") toast(reply.message);
  });
  $("move-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const input = $("move-input");
    const text = input.value.trim();
    if (!text) return;
    const reply = await sendMove(text, null);
    if (reply && reply.type === "ack") input.value = "";
  });
  const board = $("board");
  board.addEventListener("click", onBoardClick);
  board.addEventListener("pointerdown", onPointerDown);
  document.addEventListener("pointermove", onPointerMove);
  document.addEventListener("pointerup", onPointerUp);
  document.addEventListener("pointercancel", onPointerUp);
  document.addEventListener("keydown", onKey);
  setInterval(() => state.room && tickClock(), 250);

  const link = readLink();
  if (link.code) {
    $("join-code").value = link.code.toUpperCase();
    state.key = link.key;
    $("join-panel").classList.add("invited");
    $("join-player").textContent = `Join room ${link.code.toUpperCase()}`;
    $("name").focus();
    resumeSaved(link.code).catch(() => {});
    return;
  }
  ensureSocket().catch((e) => ($("lobby-error").textContent = e.message));
}

init();
