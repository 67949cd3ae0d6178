// The lobby: the player's name, create a room (or one on a shared deal, /d/CODE), join one
// by code or by invitation (/r/CODE), and the short list of live races.

import { el } from "./board.js";
import { setupDaily } from "./daily.js";
import { getJson } from "./api.js";
import { errorText, shownName, t } from "./i18n.js";
import { liveRow } from "./live.js";
import { roomHint } from "./net.js";
import { $, conn } from "./page.js";
import { takeJoined } from "./room.js";
import { gameOfDeal, route } from "./routes.js";
import { setDaily, state } from "./store.js";

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
    spectator_boards: $("spectator-boards").checked,
  };
  const limit = Number($("time-limit").value);
  if (limit > 0) payload.time_limit = Math.round(limit * 60);
  if (deal === "code") payload.code = code;
  // the room's random deals (this one, a rematch's) proven winnable before each race
  if (deal === "random" && $("winnable").checked) payload.winnable = true;
  return payload;
}

async function createRoom(ev) {
  ev.preventDefault();
  const form = $("create-form");
  const deal = form.elements.deal.value;
  if (deal === "code") followDealCode();
  const payload = createPayload(form.elements.game.value, deal, $("deal-code").value.trim());
  setDaily(deal === "daily"); // the host knows; see isDailyRoom for everyone else
  const button = $("create");
  if (payload.winnable) {
    // the server proves the deal first: a second or so, said while it lasts
    button.disabled = true;
    button.textContent = t("lobby.proving");
    $("deal-note").textContent = t("lobby.proving_note");
  }
  try {
    await enter(payload, "create-error");
  } finally {
    button.disabled = false;
    button.textContent = t("lobby.create");
    if (payload.winnable) $("deal-note").textContent = "";
  }
}

/** A room on today's deal of ``game``: a game of one's own, started at once (``solo``), or
 * one to race friends in (the daily lobby and pages, daily.js). */
async function playDaily(game, solo, errorBox) {
  const payload = { type: "create", game, deal: "daily", name: playerName(), solo };
  setDaily(true);
  await enter(payload, errorBox);
}

async function createOnSharedDeal() {
  const code = linkDeal();
  const game = gameOfDeal(code);
  await enter(createPayload(game, "code", code), "deal-error");
}

/** Join room ``code`` as ``role`` ("player" or "spectator"); a refusal shows in ``errorBox``. */
export async function joinRoom(role, code, errorBox) {
  if (!code) {
    $(errorBox).textContent = t("lobby.need_code");
    return;
  }
  const payload = { type: "join", room: code, role, name: playerName() };
  if (state.key) payload.key = state.key;
  await enter(payload, errorBox);
}

/** Create or join; a refusal is shown in ``errorBox``, next to the form that asked;
 * whether the room was entered. */
export async function enterRoom(payload, errorBox) {
  return enter(payload, errorBox);
}

async function enter(payload, errorBox) {
  for (const id of ["create-error", "join-error", "invite-error", "deal-error", "play-error"]) $(id).textContent = "";
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
export async function settleInRoom(joined) {
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
  // from the first socket's snapshot: what happened since (a solo game's start) follows
  const seq = joined.snapshot ? joined.snapshot.seq : null;
  const resume = conn.request({ type: "resume", room: joined.room, token: joined.token, last_seq: seq }, ws);
  // a socket that dies unanswered must not hold the page back: the first seat then stays
  const late = new Promise((resolve) => setTimeout(() => resolve({ type: "error", code: "timeout" }), 5000));
  const reply = await Promise.race([resume, late]);
  if (reply.type !== "joined") {
    if (old) conn.retiring.delete(old);
    ws.close();
    return joined;
  }
  conn.replace(ws);
  return { ...reply, snapshot: reply.snapshot || joined.snapshot, token: joined.token, key: joined.key ?? reply.key };
}

/** The lobby's name (kept for the next visit). */
export function playerName() {
  const name = $("name").value.trim();
  localStorage.setItem("samedeal.name", name);
  return name;
}

/**
 * What an invitation shows before joining: the room's game, host, players and state, from
 * the server's ``GET /api/rooms/<CODE>[?key=…]`` (docs/protocol.md); ``{missing: true}``
 * when the server knows no such room (a mistyped code, a room gone — or a private room
 * without its key: the same answer); null when it cannot tell (the invitation names the
 * room only).
 */
async function fetchRoomInfo(code, key) {
  const answer = await getJson(`/api/rooms/${encodeURIComponent(code)}` + (key ? `?key=${encodeURIComponent(key)}` : ""));
  if (answer.ok) return answer.data;
  return answer.code === "unknown_room" ? { missing: true } : null;
}

let invited = null; // {code, info}: the invitation shown (info: the room's summary, or null)

/** The invitation to room ``code`` (/r/CODE): what the room is, Join or Watch. */
export async function showInvite(code) {
  $("invite-panel").hidden = false;
  $("join-panel").hidden = true;
  $("create-panel").hidden = true;
  invited = { code, info: null };
  drawInvite();
  invited.info = await fetchRoomInfo(code, state.key);
  drawInvite();
}

function drawInvite() {
  const { code, info } = invited;
  const missing = Boolean(info && info.missing);
  // a code that names no room is not an invitation: it says so, with nothing to press
  $("invite-title").textContent = t(missing ? "invite.missing_title" : "invite.title", { room: code });
  $("invite-details").textContent = t(missing ? "invite.missing" : "invite.unknown");
  $("invite-join").hidden = missing;
  $("invite-watch").hidden = missing;
  if (missing) $("invite-players").replaceChildren();
  if (!info || missing) return;
  const host = info.host_name ? t("invite.host", { name: shownName(info.host_name) }) : "";
  const phase = t(`invite.phase.${info.phase}`);
  const game = t(`game.${info.game}`) + (info.daily ? ` · ${t("room.daily")}` : "");
  const players = info.players || [];
  const full = players.length >= info.max_players;
  const details = [game, host, phase];
  if (info.solo && info.phase === "running" && !full) details.push(t("invite.solo"));
  if (full) details.push(t("invite.full"));
  $("invite-details").textContent = details.filter(Boolean).join(" · ");
  const list = $("invite-players");
  list.replaceChildren(...players.map((name) => el("li", null, shownName(name))));
  // a running race or a full room takes no new player: watching is the one thing to do —
  // but a solo game's race takes one for its next deal
  const watchOnly = (info.phase === "running" && !info.solo) || full;
  $("invite-join").hidden = watchOnly;
  $("invite-watch").classList.toggle("primary", watchOnly);
  $("invite-watch").hidden = info.spectators === false;
}

let lastLive = null; // the last live_rooms, drawn again in a new language

/** The lobby's short list of live races (the most watched), kept live by a subscription. */
export function renderLobbyLive(msg) {
  lastLive = msg;
  const list = $("lobby-live");
  if (!list || state.room) return;
  list.replaceChildren(...msg.rooms.map((room) => liveRow(room, { now: msg.now, compact: true })));
  $("lobby-live-none").hidden = msg.rooms.length > 0;
}

function linkDeal() {
  const r = route();
  return r.screen === "deal" ? r.deal : "";
}

/** A shared deal (/d/CODE): one tap to a room on it, and the create form set to it. */
export function showDealPanel(deal) {
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

/** Wire the lobby's forms and buttons. */
export function setupLobby() {
  setupDaily(playDaily); // the daily's "Play" and "Race friends on it" make their rooms here
  $("create-form").addEventListener("submit", createRoom);
  $("join-form").addEventListener("submit", (e) => {
    e.preventDefault();
    joinRoom("player", $("join-code").value.trim(), "join-error");
  });
  $("join-spectator").addEventListener("click", () => joinRoom("spectator", $("join-code").value.trim(), "join-error"));
  $("invite-join").addEventListener("click", () => joinRoom("player", route().code, "invite-error"));
  $("invite-watch").addEventListener("click", () => joinRoom("spectator", route().code, "invite-error"));
  $("create-on-deal").addEventListener("click", createOnSharedDeal);
  const dealChosen = () => {
    const deal = $("create-form").elements.deal.value;
    $("deal-code").disabled = deal !== "code";
    $("winnable").disabled = deal !== "random"; // only a random deal needs proving
  };
  for (const r of document.querySelectorAll('input[name="deal"]')) r.addEventListener("change", dealChosen);
  dealChosen();
  $("deal-code").addEventListener("input", followDealCode);
  document.addEventListener("samedeal:lang", () => {
    if (lastLive) renderLobbyLive(lastLive);
    if (invited && !$("invite-panel").hidden) drawInvite();
  });
}
