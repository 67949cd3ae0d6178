// The featured race (/tv, /tv/<game>): the server's pick of the most interesting public
// race of a game (docs/protocol.md, "Watching": the closest of the most watched), with up
// to four players' boards side by side. The page learns the featured race from a `live`
// subscription and watches it on a second connection, as a spectator; when the race ends
// the server features the next one, and the page moves to it by itself.

import { el, followedBoard } from "./board.js";
import { HiddenBoards } from "./hidden.js";
import { errorText, formatTime, shownName, t, tn } from "./i18n.js";
import { ReactionPops, progressLine, reactionButtons, watchLink } from "./live.js";
import { Connection } from "./net.js";

const MAX_BOARDS = 4;
const $ = (id) => document.getElementById(id);

let fixedGame = null; // /tv/<game>: that game only
let game = "klondike"; // the game shown
let featured = null; // the room shown (its display code), or null
let dir = null; // the directory subscription
let watcher = null; // the connection watching the featured room
let room = freshRoom();
const pops = new ReactionPops(() => drawPlayers());
const hidden = new HiddenBoards(); // the boards refused while the race ran, asked for again once it ends or they open

function freshRoom() {
  return { phase: "lobby", race: 0, seats: new Map(), follows: [], boards: new Map(), hidden: false, startAt: null, offset: 0, spectators: 0, delay: 0, lastSeq: 0 };
}

/** Show the featured race of ``g`` (null: of the game with a featured race). */
export function startTv(g) {
  fixedGame = g;
  game = g || "klondike";
  $("tv-reactions").append(reactionButtons(react));
  document.addEventListener("samedeal:lang", () => {
    $("tv-reactions").replaceChildren(reactionButtons(react)); // their labels too
    draw();
  });
  dir = new Connection(onDirectory, () => setTimeout(subscribe, 2000));
  subscribe();
  setInterval(drawStatus, 1000);
  draw();
}

async function subscribe() {
  try {
    await dir.request({ type: "live", sort: "watched", game: fixedGame, limit: 1 });
  } catch (e) {
    $("tv-status").textContent = errorText(e.code, e.message);
  }
}

function onDirectory(msg) {
  if (msg.type !== "live_rooms") return;
  // the same game while it has a featured race; else (on /tv) any game that has one
  const same = msg.featured.find((f) => f.game === game && f.room);
  const other = fixedGame ? null : msg.featured.find((f) => f.room);
  const pick = same || other;
  if (pick) game = pick.game;
  const code = pick ? pick.room : null;
  if (code !== featured) switchTo(code);
  draw();
}

/** Watch ``code`` instead of what was watched (null: nothing, until a race comes on). */
async function switchTo(code) {
  featured = code;
  if (watcher) watcher.close();
  watcher = null;
  room = freshRoom();
  draw();
  if (!code) return;
  const conn = new Connection((msg) => conn === watcher && onRoom(msg), () => {
    if (conn === watcher) setTimeout(() => featured === code && switchTo(code), 1000);
  });
  watcher = conn;
  conn.room = code; // routed to the room's worker
  let reply;
  try {
    reply = await conn.request({ type: "join", room: code, role: "spectator" });
  } catch (e) {
    reply = { type: "error", code: e.code, message: e.message };
  }
  if (conn !== watcher) return; // moved on meanwhile
  if (reply.type !== "joined") {
    $("tv-status").textContent = errorText(reply.code, reply.message);
    return;
  }
  applySnapshot(reply.snapshot);
  await followLeaders();
  draw();
}

function applySnapshot(snap) {
  room.phase = snap.phase;
  room.race = snap.race;
  room.startAt = snap.start_at;
  room.offset = snap.now - Date.now();
  room.spectators = snap.spectators;
  room.delay = snap.options.spectator_delay || 0;
  room.lastSeq = snap.seq;
  room.seats = new Map(snap.seats.map((s) => [s.seat, { ...s }]));
}

/** Follow the four players furthest ahead (all of them, in a smaller race). */
async function followLeaders() {
  const racing = [...room.seats.values()].filter((s) => s.status !== "waiting");
  racing.sort((a, b) => (b.on_foundations || 0) - (a.on_foundations || 0) || a.seat - b.seat);
  await followSeats(racing.slice(0, MAX_BOARDS).map((s) => s.seat).sort((a, b) => a - b));
}

/** Follow ``seats``; ``again``: asked again once the race ended, after a refusal. */
async function followSeats(seats, again = false) {
  room.follows = seats; // a board may come before the reply
  if (!again) room.hidden = false; // asked again, the page says they are hidden until let through
  const code = featured;
  if (!watcher || !seats.length) return;
  const reply = await watcher.request({ type: "follow", seats });
  if (code !== featured) return; // moved on meanwhile
  if (hidden.answered(code, seats, reply, again)) {
    // the race's boards are not shown (the day's deal, a tournament round, the host's
    // choice): the players' progress is, and the page says why the boards are missing
    room.follows = [];
    room.hidden = true;
    draw();
  } else if (room.hidden) {
    room.hidden = false;
    draw();
  }
}

function onRoom(msg) {
  if (typeof msg.seq === "number") {
    if (msg.seq <= room.lastSeq && msg.type !== "player_finished") return;
    room.lastSeq = Math.max(room.lastSeq, msg.seq);
  }
  switch (msg.type) {
    case "seat": {
      if (msg.left) room.seats.delete(msg.seat);
      else room.seats.set(msg.seat, { ...(room.seats.get(msg.seat) || { status: "waiting" }), seat: msg.seat, name: msg.name, connected: msg.connected });
      break;
    }
    case "spectators":
      room.spectators = msg.count;
      break;
    case "race_starting":
      room.phase = "running";
      room.race = msg.race;
      room.startAt = msg.start_at;
      room.offset = msg.now - Date.now();
      for (const [n, s] of room.seats) Object.assign(s, { status: msg.seats.includes(n) ? "playing" : "waiting", on_foundations: 0, moves: 0, elapsed_ms: null });
      room.boards.clear();
      followLeaders();
      break;
    case "progress": {
      const s = room.seats.get(msg.seat);
      if (s && msg.race === room.race) Object.assign(s, { on_foundations: msg.on_foundations, total: msg.total, moves: msg.moves, score: msg.score, status: msg.status, elapsed_ms: msg.elapsed_ms });
      break;
    }
    case "player_finished": {
      const s = room.seats.get(msg.seat);
      if (s) Object.assign(s, { status: msg.status, elapsed_ms: msg.elapsed_ms });
      break;
    }
    case "race_ended": {
      room.phase = "ended";
      // the boards hidden while it ran may open with its end (a host's progress-only race;
      // a tournament round's once the round is over — all of it, not only this room, and
      // then boards_open says so): the /tv shows them until the next race is featured,
      // asking once on this guess
      const seats = hidden.again(featured);
      if (seats.length) followSeats(seats, true);
      break;
    }
    case "boards_open": {
      // the server's word that a tournament round's boards are open (its race may have
      // ended long before, its refusal then spent): asked again for the seats refused
      const seats = msg.room === featured ? hidden.opened(featured) : [];
      if (seats.length) followSeats(seats, true);
      return;
    }
    case "board":
      if (room.follows.includes(msg.seat)) room.boards.set(msg.seat, msg.view);
      drawBoards();
      return;
    case "reactions":
      pops.add(msg);
      return;
    case "resync":
      applySnapshot(msg.snapshot);
      break;
    default:
      return;
  }
  draw();
}

async function react(reaction) {
  if (!watcher || !featured) return;
  const reply = await watcher.request({ type: "react", reaction, seat: null });
  if (reply.type === "error") $("tv-status").textContent = errorText(reply.code, reply.message);
}

// ---------------------------------------------------------------------- drawing

function draw() {
  const name = t(`game.${game}`);
  $("tv-title").textContent = t("tv.title", { game: name });
  document.title = `${t("tv.title", { game: name })} · samedeal`;
  for (const a of document.querySelectorAll("#tv .rules-tabs a")) {
    if (a.dataset.game === (fixedGame || game)) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  $("tv-room-link").href = featured ? watchLink(featured) : "/watch";
  $("tv-room-link").hidden = !featured;
  drawStatus();
  drawBoards();
  drawPlayers();
}

function drawStatus() {
  if (!featured) {
    $("tv-status").textContent = t("tv.waiting", { game: t(`game.${game}`) });
    return;
  }
  const parts = [t("tv.room", { room: featured })];
  if (room.phase === "ended") parts.push(t("race.over"));
  else if (room.startAt) parts.push(formatTime(Math.max(0, Date.now() + room.offset - room.startAt)));
  parts.push(tn("room.watching", room.spectators));
  if (room.delay) parts.push(t("live.delay", { s: room.delay }));
  $("tv-status").textContent = parts.join(" · ");
}

function drawBoards() {
  const boards = $("tv-boards");
  boards.replaceChildren();
  if (room.hidden) {
    boards.append(el("p", "hint", t("tv.boards_hidden")));
    return;
  }
  for (const seatNo of room.follows) {
    const seat = room.seats.get(seatNo);
    const name = seat ? shownName(seat.name) : String(seatNo);
    boards.append(followedBoard(seatNo, name, name, room.boards.get(seatNo), game));
  }
}

function drawPlayers() {
  const crowd = pops.node("crowd");
  $("tv-crowd").replaceChildren(...(crowd ? [crowd] : []));
  const list = $("tv-players");
  list.replaceChildren();
  for (const s of [...room.seats.values()].sort((a, b) => a.seat - b.seat)) {
    const li = el("li", "player");
    li.dataset.seat = String(s.seat);
    if (room.follows.includes(s.seat)) li.classList.add("followed");
    if (s.status === "won") li.classList.add("won");
    const who = el("div", "who");
    who.append(el("span", "name", shownName(s.name)));
    const popped = pops.node(s.seat);
    if (popped) who.append(popped);
    li.append(who);
    if (room.phase !== "lobby" && s.status !== "waiting") li.append(...progressLine(s, game));
    list.append(li);
  }
}
