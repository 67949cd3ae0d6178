// The room around the race: taking a seat (and taking it back after a drop or a reload),
// leaving, the header, the waiting room and the players beside the board, with their
// reactions.

import { el, icon } from "./board.js";
import { deckSize } from "./cards.js";
import { renderRoomDaily } from "./daily.js";
import { errorText, formatTime, shownName, t, tn } from "./i18n.js";
import { ReactionPops, progressBar, reactionButtons, reactionIcon } from "./live.js";
import { $, conn, copy, render, showScreen, toast } from "./page.js";
import { seatRating } from "./ratings.js";
import { toggleFollow } from "./spectate.js";
import {
  finishedEarly,
  forgetSeat,
  isDailyRoom,
  isPlaying,
  rememberSeat,
  seatResumed,
  serverNow,
  state,
  takeSeat,
} from "./store.js";

/** The reactions shown beside the players (and the crowd's) for a few seconds. */
export const pops = new ReactionPops(() => state.room && renderPlayers());

/** Reactions as they come, large over the table for a moment — what, for whom, how many —
 * beside the small tally by each name: seen from the board, not only from the list. */
export function floatReactions(msg) {
  const box = $("reaction-float");
  for (const r of msg.reactions) {
    const seat = r.seat === null ? null : state.seats.get(r.seat);
    const what = t(`react.${r.reaction}`);
    // for a player, or the crowd's own (a spectator's without a seat)
    const text = r.seat === null ? t("react.float_crowd", { what }) : t("react.float", { what, who: seat ? shownName(seat.name) : "" });
    const node = el("div", "reaction-float");
    node.dataset.reaction = r.reaction;
    node.append(reactionIcon(r.reaction), el("span", null, text + (r.n > 1 ? ` ×${r.n}` : "")));
    box.append(node);
    setTimeout(() => node.remove(), 2600);
  }
}
let reconnects = 0; // tries to take the seat back since it was last taken

/** The room's connection closed under the page: take the seat back on a new one (a few
 * tries), or tell a spectator the room is lost. */
export function connectionLost() {
  if (state.room && state.token && reconnects < 5) {
    reconnects += 1;
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
  reconnects = 0;
  seatResumed(reply);
  render();
}

/** Take the room a ``joined`` reply gives (``keepPath``: stay at the page's address). */
export function takeJoined(reply, { keepPath = false } = {}) {
  takeSeat(reply);
  if (state.token) {
    // Kept for this tab only, so a reload takes the seat back.
    sessionStorage.setItem(seatKey(state.room), JSON.stringify({ token: state.token, key: state.key }));
  }
  if (!keepPath) history.replaceState(null, "", roomPath());
  conn.request({ type: "live", limit: 0 }); // the lobby's list of live races is not needed now
  showScreen("room");
  render();
  document.dispatchEvent(new Event("samedeal:joined")); // the room's events that came first
}

function seatKey(room) {
  return "samedeal.seat." + room.toUpperCase().replace(/[^A-Z0-9]/g, "");
}

/** After a reload: take back the seat this tab held in the linked room, if any. */
export async function resumeSaved(code) {
  const saved = JSON.parse(sessionStorage.getItem(seatKey(code)) || "null");
  if (!saved || !saved.token) return false;
  rememberSeat(code, saved.token, saved.key);
  try {
    await resumeSeat();
  } catch {
    sessionStorage.removeItem(seatKey(code));
    forgetSeat();
    return false;
  }
  showScreen("room");
  render();
  return true;
}

/** Leave the room: the server frees the seat at once (a running race is resigned
 * first); the tab forgets the seat and goes back to the lobby. */
export async function leaveRoom() {
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

/** The room's link, as a friend opens it (with a private room's key). */
export function roomLink() {
  return location.origin + roomPath();
}

async function react(reaction) {
  const seat = state.role === "spectator" ? state.following : null;
  const reply = await conn.request({ type: "react", reaction, seat });
  if (reply.type === "error") toast(errorText(reply.code, reply.message));
}

/** The room's game, in words. */
export function gameTitle() {
  return state.game ? t(`game.${state.game}`) : "";
}

/** A seat's status (playing, won, resigned, …), in words. */
export function statusLabel(status) {
  return t(`status.${status}`);
}

/** The players beside the board: name, host, progress and figures, and for a spectator a
 * Watch button on each racer. */
export function renderPlayers() {
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
    who.append(el("span", "name", shownName(s.name)));
    const rating = seatRating(s);
    if (rating) who.append(rating);
    if (me) who.append(el("span", "you", t("players.you")));
    if (s.seat === state.host) who.append(el("span", "host-badge", t("players.host")));
    const popped = pops.node(s.seat);
    if (popped) who.append(popped);
    // a spectator may watch any racer; a player who finished, those still racing
    const racing = !["won", "resigned", "timeout", "left"].includes(s.status);
    const watcher = state.role === "spectator" || (finishedEarly() && s.seat !== state.seat && racing);
    if (watcher && state.phase !== "lobby" && state.participants.includes(s.seat)) {
      const on = state.follows.includes(s.seat);
      const b = el("button", "small watch", on ? t("players.watching") : t("players.watch"));
      b.type = "button";
      b.setAttribute("aria-pressed", String(on));
      b.setAttribute("aria-label", t(on ? "players.unwatch_name" : "players.watch_name", { name: shownName(s.name) }));
      b.addEventListener("click", () => toggleFollow(s.seat));
      who.append(b);
    }
    li.append(who);
    if (state.phase !== "lobby" && state.participants.includes(s.seat)) {
      const total = s.total || deckSize(state.game);
      const done = s.on_foundations || 0;
      li.append(progressBar(shownName(s.name), done, total));
      const stats = el("div", "stats");
      if (s.status === "won") stats.append(icon("trophy"), " ");
      let status = statusLabel(s.status);
      if (s.status === "won" && s.elapsed_ms !== null && s.elapsed_ms !== undefined) status = t("status.won_in", { time: formatTime(s.elapsed_ms) });
      stats.append(
        [`${done}/${total}`, tn("stats.points", s.score || 0), tn("stats.moves", s.moves || 0), status].join(" · "),
      );
      li.append(stats);
    } else {
      const ready = state.solo && state.phase === "running" ? t("players.next_deal") : t("players.ready");
      li.append(el("div", "stats", s.connected ? ready : t("status.disconnected")));
    }
    list.append(li);
  }
  $("follow-hint").hidden = !(state.role === "spectator" && state.phase !== "lobby" && state.following === null);
  const crowd = pops.node("crowd");
  $("crowd-reactions").replaceChildren(...(crowd ? [crowd] : []));
  $("reaction-row").hidden = !(state.role === "player" || state.role === "spectator");
}

function roomOptionsText() {
  const o = state.options || {};
  const parts = [t("waiting.max_players", { n: o.max_players })];
  parts.push(o.time_limit ? t("waiting.time_limit", { time: formatTime(o.time_limit * 1000) }) : t("waiting.no_limit"));
  if (!o.spectators) parts.push(t("waiting.no_spectators"));
  else if (o.spectator_delay) parts.push(t("waiting.spectators_delay", { s: o.spectator_delay }));
  else parts.push(t("waiting.spectators"));
  if (o.spectators && o.spectator_boards === false) parts.push(t("live.progress_only"));
  if (o.private) parts.push(t("waiting.private"));
  if (o.winnable) parts.push(t("waiting.winnable"));
  return parts.join(" · ");
}

/** The header's room, game and watchers (and what a daily race is for the player). */
export function renderHeader() {
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
}

/** The waiting room: who is in, who starts, the link and the options. */
export function renderWaiting() {
  // a solo game starts at once: no waiting room for the moment before its race_starting
  const waiting = state.phase === "lobby" && !state.solo;
  $("waiting").hidden = !waiting;
  if (waiting) {
    const n = state.seats.size;
    const host = state.seats.get(state.host);
    $("waiting-text").textContent = tn("waiting.players", n) + (host ? " " + t("waiting.host_starts", { name: shownName(host.name) }) : "");
    $("start").hidden = !(state.role === "player" && state.seat === state.host);
    // A server that can seat bots says so in welcome ("bots": true).
    $("add-bot").hidden = !(state.role === "player" && state.seat === state.host && conn.welcome && conn.welcome.bots);
    $("room-link").value = roomLink();
    $("room-options").textContent = roomOptionsText();
  }
}

/** Wire the waiting room's and the side panel's buttons. */
export function setupRoom() {
  $("start").addEventListener("click", async () => {
    const reply = await conn.request({ type: "start" });
    if (reply.type === "error") toast(errorText(reply.code, reply.message));
  });
  $("copy-link").addEventListener("click", () => copy(roomLink()));
  $("add-bot-button").addEventListener("click", async () => {
    const reply = await conn.request({ type: "add_bot", strength: $("bot-strength").value, pace: Number($("bot-pace").value) || 2 });
    if (reply.type === "error") toast(errorText(reply.code, reply.message));
  });
  $("room-link").addEventListener("focus", (e) => e.target.select());
  $("leave").addEventListener("click", leaveRoom);
  const bar = () => $("reaction-row").querySelector(".reaction-bar");
  $("reaction-row").prepend(reactionButtons(react));
  // built once, so their labels are drawn again in a new language
  document.addEventListener("samedeal:lang", () => bar().replaceWith(reactionButtons(react)));
}
