// samedeal browser client: start-up and wiring. The screens are modules of their own: the
// lobby (lobby.js), the room around a race (room.js: seat, header, waiting room, players),
// the race (race.js), its results (results.js) and spectating (spectate.js), all reading one
// state (store.js); the rules (rules.js), the replay (replay.js), player (profile.js) and
// daily (daily.js) pages, the player's identity (identity.js), the live directory (/watch,
// watch.js), the featured race (/tv, tv.js) and tournaments (tournament.js). Plain ES
// modules, no build step. Everything that comes from other users (names, room data) is put
// on the page with textContent, never as markup. Every word comes from the catalogues
// (i18n.js).

import {
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
import { currentLang, detectLang, errorText, setLang, t, tn, translateDom } from "./i18n.js";
import { render as refreshYou, setupIdentity } from "./identity.js";
import { setupInput } from "./input.js";
import { reactionButtons } from "./live.js";
import {
  createOnSharedDeal,
  createRoom,
  followDealCode,
  joinRoom,
  playDaily,
  renderLobbyLive,
  showDealPanel,
  showInvite,
} from "./lobby.js";
import { $, conn, copy, onRender, render, showScreen, toast } from "./page.js";
import { refreshProfile, showProfile } from "./profile.js";
import {
  drawBoard,
  drawPutOff,
  newRace,
  renderBar,
  sendMove,
  tickClock,
  typedMove,
} from "./race.js";
import { refreshReplay, replayKey, showReplay } from "./replay.js";
import { answerRematch, offerAsked, rematch, renderResults } from "./results.js";
import {
  connectionLost,
  gameTitle,
  leaveRoom,
  pops,
  react,
  renderPlayers,
  resumeSaved,
  roomLink,
  roomOptionsText,
  takeJoined,
} from "./room.js";
import { route } from "./routes.js";
import { closeRulesOverlay, fillRules, openRulesOverlay, showRulesPage } from "./rules.js";
import { settings, settingsIcon } from "./settings.js";
import { follow, keepFollowing } from "./spectate.js";
import {
  applyEvent,
  forgetSeat,
  isDailyRoom,
  isPlaying,
  serverNow,
  setRoomKey,
  state,
  takeSeq,
} from "./store.js";
import { TournamentPage, listTournaments } from "./tournament.js";
import { startTv } from "./tv.js";
import { startWatch } from "./watch.js";

conn.onEvent = onFrameEvent;
conn.onClose = onClose;
onRender(draw);

// the tournament page (/t/CODE) shares the connection and the room view
const tournament = new TournamentPage({ conn, state, forgetSeat, takeJoined, follow, showScreen, toast, serverNow, render });

function onClose(code) {
  if (tournament.active && code !== 4000) {
    // the tournament is opened again on a new connection; it hands the seat back
    setTimeout(() => tournament.follow().catch(() => toast(t("net.lost_reload"))), 800);
    return;
  }
  if (code === 4000) toast(t("net.taken_elsewhere"));
  else connectionLost();
}

function onFrameEvent(msg) {
  if (msg.type === "live_rooms") {
    renderLobbyLive(msg);
    return;
  }
  if (String(msg.type).startsWith("tournament") && tournament.onMessage(msg)) return;
  if (takeSeq(msg)) onEvent(msg);
}

/** A frame that is not a reply: a room event goes to the store, then the room is drawn. */
function onEvent(msg) {
  if (msg.type === "reactions") {
    pops.add(msg); // drawn by the pops themselves
    return;
  }
  if (msg.type === "error") {
    toast(errorText(msg.code, msg.message));
    render();
    return;
  }
  if (msg.type === "race_starting") noteRaceStarting(state.room, msg); // the deal of the day: what the race is for whom
  if (!applyEvent(msg)) return;
  if (msg.type === "race_starting") {
    newRace();
    if (state.role === "spectator") keepFollowing(msg.seats);
  }
  render();
}

function draw() {
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
    redraw: drawPutOff,
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
    setRoomKey(r.key);
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
