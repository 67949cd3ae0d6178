// A game in one tap: the Easy Harp app's "New game" window. From the lobby, a game of one's
// own — a new deal, the deal of the day, or the last deal again — that starts at once, with
// no waiting room, no Start button and no countdown (``create`` with ``solo``). It is a
// room like any other (every move checked by the server, the result kept), so in it the
// host deals again at any moment — a new deal, the same deal from the start, the deal of
// the day (``rematch``, mid-race too) — and turns it into a race by sending the room's
// link: a friend who opens it joins at once and races from the host's next deal.

import { DAILY_GAMES, readyForDaily, shareOut } from "./daily.js";
import { errorText, shownName, t } from "./i18n.js";
import { enterRoom, playerName } from "./lobby.js";
import { $, conn, render, toast } from "./page.js";
import { roomLink } from "./room.js";
import { setDaily, state, waitsForNextDeal } from "./store.js";

const LAST = "samedeal.last."; // + game: the last deal played in a game of one's own
const GAME = "samedeal.play_game"; // the game chosen last in the lobby

/** The last deal of ``game`` played in a game of one's own (told once its race ended). */
export function lastDeal(game) {
  return localStorage.getItem(LAST + game);
}

/** A solo game's race ended with its deal told: "Same deal" in the lobby plays it again. */
export function rememberDeal(game, deal) {
  if (game && deal) localStorage.setItem(LAST + game, deal);
}

function chosenGame() {
  const checked = document.querySelector('input[name="play-game"]:checked');
  return checked ? checked.value : "easy-harp";
}

/** The lobby's buttons for the chosen game: the deal of the day only where there is one,
 * the same deal only once one was played. */
function drawLobbyPlay() {
  const game = chosenGame();
  $("play-daily").hidden = !DAILY_GAMES.includes(game);
  $("play-same").hidden = !lastDeal(game);
}

/** A game of one's own from the lobby: ``kind`` is ``random``, ``daily`` or ``same``. */
async function playFromLobby(kind) {
  const game = chosenGame();
  localStorage.setItem(GAME, game);
  if (kind === "daily" && !(await readyForDaily("play-error"))) return; // players only
  const payload = { type: "create", game, deal: kind, name: playerName(), solo: true };
  if (kind === "same") Object.assign(payload, { deal: "code", code: lastDeal(game) });
  setDaily(kind === "daily");
  await enterRoom(payload, "play-error");
}

/** Whether this page's player may deal again now: the host of a solo game who races alone
 * (or whose race is over, or not begun). */
function mayDeal() {
  if (!(state.solo && state.role === "player" && state.seat === state.host)) return false;
  if (state.phase !== "running") return true;
  return state.participants.length === 1 && state.participants[0] === state.seat;
}

async function dealAgain(kind) {
  showWindow(false);
  if (kind === "random" && state.options && state.options.winnable) toast(t("lobby.proving"));
  const reply = await conn.request({ type: "rematch", deal: kind });
  if (reply.type === "error") toast(errorText(reply.code, reply.message));
}

function showWindow(open) {
  $("new-game").hidden = !open;
  $("new-game-button").setAttribute("aria-expanded", String(open));
  if (open) {
    render();
    $("new-game-title").focus();
  }
}

/** Who else sits in the room (a friend who joined), by name. */
function others() {
  return [...state.seats.values()].filter((s) => s.seat !== state.seat).map((s) => shownName(s.name));
}

/** The solo game's parts of the room: the "New game" button and window (the host's), and
 * for a player who joined during a race, that they race from the next deal. */
export function renderPlay() {
  const host = state.solo && state.role === "player" && state.seat === state.host;
  $("new-game-button").hidden = !host;
  if (!host) $("new-game").hidden = true;
  if (host && !$("new-game").hidden) {
    const deal = mayDeal();
    for (const id of ["new-game-new", "new-game-same", "new-game-daily"]) $(id).disabled = !deal;
    $("new-game-daily").hidden = !DAILY_GAMES.includes(state.game);
    const names = others();
    const note = !deal ? t("newgame.racing", { names: names.join(", ") }) : names.length ? t("newgame.joined", { names: names.join(", ") }) : "";
    $("new-game-note").textContent = note;
    $("new-game-note").hidden = !note;
    $("new-game-link").value = roomLink();
  }
  const waits = state.solo && waitsForNextDeal();
  $("solo-wait").hidden = !waits;
  if (waits) {
    const host = state.seats.get(state.host);
    $("solo-wait-text").textContent = t("solo.wait_text", { name: host ? shownName(host.name) : "" });
  }
}

/** Wire the lobby's one-tap buttons and the room's "New game" window. */
export function setupPlay() {
  const saved = localStorage.getItem(GAME);
  const radio = saved && document.querySelector(`input[name="play-game"][value="${saved}"]`);
  if (radio) radio.checked = true;
  for (const r of document.querySelectorAll('input[name="play-game"]')) r.addEventListener("change", drawLobbyPlay);
  drawLobbyPlay();
  $("play-new").addEventListener("click", () => playFromLobby("random"));
  $("play-daily").addEventListener("click", () => playFromLobby("daily"));
  $("play-same").addEventListener("click", () => playFromLobby("same"));
  $("new-game-title").tabIndex = -1;
  $("new-game-button").addEventListener("click", () => showWindow($("new-game").hidden));
  $("new-game-new").addEventListener("click", () => dealAgain("random"));
  $("new-game-same").addEventListener("click", () => dealAgain("same"));
  $("new-game-daily").addEventListener("click", () => dealAgain("daily"));
  $("new-game-share").addEventListener("click", () => shareOut(roomLink(), toast));
  $("new-game-link").addEventListener("focus", (e) => e.target.select());
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && !$("new-game").hidden) {
      showWindow(false);
      $("new-game-button").focus();
    }
  });
}
