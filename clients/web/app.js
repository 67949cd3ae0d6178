// samedeal browser client: start-up and wiring. The screens are modules of their own: the
// lobby (lobby.js) and its Play now panel (quickplay.js), the room around a race (room.js: seat, header, waiting room, players),
// the race (race.js), its results (results.js) and spectating (spectate.js), all reading one
// state (store.js); the rules (rules.js), the replay (replay.js), player (profile.js) and
// daily (daily.js) pages, the leaderboard (leaderboard.js), the player's identity (identity.js), the live directory (/watch,
// watch.js), the featured race (/tv, tv.js) and tournaments (tournament.js). Plain ES
// modules, no build step. Everything that comes from other users (names, room data) is put
// on the page with textContent, never as markup. Every word comes from the catalogues
// (i18n.js).

import {
  noteRaceStarting,
  refreshDaily,
  refreshDailyLobby,
  showDailyLobby,
  showDailyPage,
} from "./daily.js";
import { detectLang, errorText, setLang, t, translateDom } from "./i18n.js";
import { render as refreshYou, setupIdentity } from "./identity.js";
import { joinRoom, renderLobbyLive, setupLobby, showDealPanel, showInvite } from "./lobby.js";
import { refreshLeaderboard, showLeaderboard } from "./leaderboard.js";
import { $, conn, onRender, render, showScreen, toast } from "./page.js";
import { refreshProfile, showProfile } from "./profile.js";
import { onQuickMessage, refreshQuickPlay, renderPlayAgain, seekLost, setupQuickPlay, watchPools } from "./quickplay.js";
import { drawBoard, newRace, renderBar, renderControls, setupRace, tickClock } from "./race.js";
import { refreshReplay, replayKey, showReplay } from "./replay.js";
import { renderOffer, renderResults, setupResults } from "./results.js";
import {
  connectionLost,
  floatReactions,
  pops,
  renderHeader,
  renderPlayers,
  renderWaiting,
  resumeSaved,
  setupRoom,
  takeJoined,
} from "./room.js";
import { route } from "./routes.js";
import { rememberDeal, renderPlay, setupPlay } from "./play.js";
import { fillRules, setupRulesOverlay, showRulesPage } from "./rules.js";
import { setupSettings } from "./settings.js";
import { follow, followHidden, followOpened, keepFollowing } from "./spectate.js";
import { applyEvent, forgetSeat, serverNow, setRoomKey, setTournament, state, takeSeq } from "./store.js";
import { TournamentPage, listTournaments } from "./tournament.js";
import { startTv } from "./tv.js";
import { startWatch } from "./watch.js";

conn.onEvent = onFrameEvent;
conn.onClose = onClose;
onRender(draw);

// the tournament page (/t/CODE) shares the connection and the room view
const tournament = new TournamentPage({ conn, state, forgetSeat, takeJoined, setTournament, follow, followHidden, showScreen, toast, serverNow, render });

/** The page's socket closed: a tournament reopens itself, a room's seat is taken back. */
function onClose(code) {
  if (tournament.active && code !== 4000) {
    // the tournament is opened again on a new connection; it hands the seat back
    setTimeout(() => tournament.follow().catch(() => toast(t("net.lost_reload"))), 800);
    return;
  }
  if (code === 4000) toast(t("net.taken_elsewhere"));
  else if (!seekLost()) connectionLost();
}

let early = []; // a room's events that came before the page took its seat (a solo game's start)

/** A frame that is not a reply: the lobby's live races, a tournament's news, or a room
 * event not seen before. */
function onFrameEvent(msg) {
  if (msg.type === "live_rooms") {
    renderLobbyLive(msg);
    return;
  }
  if (onQuickMessage(msg)) return; // Play now: the counts, an offer, the seat a pool gave
  if (String(msg.type).startsWith("tournament") && tournament.onMessage(msg)) return;
  if (msg.room && !state.room) {
    early.push(msg); // taken once the seat is (samedeal:joined): before it, they have no room
    return;
  }
  if (takeSeq(msg)) onEvent(msg);
}

document.addEventListener("samedeal:joined", () => {
  const queued = early;
  early = [];
  for (const msg of queued) if (msg.room === state.room) onFrameEvent(msg);
});

/** A room event goes to the store, then the room is drawn (reactions draw themselves). */
function onEvent(msg) {
  if (msg.type === "reactions") {
    pops.add(msg); // drawn by the pops themselves
    floatReactions(msg);
    return;
  }
  if (msg.type === "error") {
    toast(errorText(msg.code, msg.message));
    render();
    return;
  }
  if (msg.type === "boards_open") {
    followOpened(msg.room); // the boards refused while the round ran (docs/protocol.md)
    return;
  }
  if (msg.type === "race_starting") noteRaceStarting(state.room, msg); // the deal of the day: what the race is for whom
  const newcomer = msg.type === "seat" && !msg.left && !state.seats.has(msg.seat);
  if (!applyEvent(msg)) return;
  if (msg.type === "race_ended" && state.solo && !state.daily) rememberDeal(state.game, msg.deal); // "Same deal" in the lobby
  if (newcomer && state.solo && state.role === "player" && msg.seat !== state.seat) {
    toast(t("newgame.joined", { names: msg.name })); // they race from the host's next deal
  }
  if (msg.type === "race_starting") {
    newRace();
    if (state.role === "spectator") keepFollowing(msg.seats);
    else if (state.follows.length) follow([]); // a racer watches nobody (nor is sent boards)
  }
  render();
}

/** Draw the room from the state (after every update), each screen its part. */
function draw() {
  if (!state.room) return;
  renderHeader();
  renderWaiting();
  renderOffer();
  renderPlay();
  renderControls();
  drawBoard();
  renderPlayers();
  renderResults();
  renderPlayAgain();
  renderBar();
}

/** Switch the page's language and draw everything shown in it again. */
async function changeLang(code) {
  await setLang(code, true);
  for (const id of ["lang-select", "lang-lobby"]) $(id).value = code;
  translateDom();
  const r = route();
  if (!$("rules").hidden) fillRules(state.game && $("rules").classList.contains("overlay") ? state.game : r.game || "easy-harp");
  if (!$("deal-panel").hidden) showDealPanel(r.deal);
  if (!state.room) document.title = t("page.title");
  refreshYou();
  refreshReplay();
  refreshProfile();
  refreshLeaderboard();
  refreshQuickPlay();
  refreshDaily();
  document.dispatchEvent(new Event("samedeal:lang")); // the watch and TV pages draw again
  render();
}

/** Each screen wires its own controls; the room's clock ticks four times a second. */
function bind() {
  setupSettings(changeLang);
  setupLobby();
  setupQuickPlay();
  setupRoom();
  setupResults();
  setupRulesOverlay();
  document.addEventListener("keydown", replayKey);
  setupRace();
  setupPlay();
  setInterval(() => state.room && tickClock(), 250);
}

/** Start: the language, the controls, then the screen the address asks for. */
async function init() {
  await setLang(detectLang());
  translateDom();
  document.title = t("page.title");
  $("name").value = localStorage.getItem("samedeal.name") || "";
  setupIdentity(conn); // every connection says who its player is, right after hello
  bind();
  const r = route();
  if (r.screen === "daily") {
    showScreen("daily");
    await showDailyPage(r.day, $("daily"), conn);
    return;
  }
  if (r.screen === "leaderboard") {
    showScreen("leaderboard");
    await showLeaderboard(r.game, $("leaderboard"));
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
    .then(() => watchPools()) // Play now: how many seek each pool
    .catch((e) => ($("create-error").textContent = errorText(e.code, e.message)))
    .finally(() => r.screen === "lobby" && refreshDailyLobby(conn)); // the player is known now
}

init();
