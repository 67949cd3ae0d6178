// Play now (issue 32): the lobby's panel — game × room size × time limit, how many seek
// each pool, whether the race will be rated — the wait with its clock and the offers made
// after the player's chosen wait (a bot, a ghost, a room of 2), the seat the pool gives
// (an unasked ``joined``), and "Play again" after a pool's race. docs/protocol.md,
// "Quick play".

import { el } from "./board.js";
import { errorText, formatTime, t, tn } from "./i18n.js";
import { currentPlayer } from "./identity.js";
import { settleInRoom } from "./lobby.js";
import { $, conn, showScreen } from "./page.js";
import { shownRating } from "./ratingchart.js";
import { takeJoined } from "./room.js";
import { forgetSeat, state } from "./store.js";

const OFFERS = ["bot", "ghost", "smaller"];

let counts = new Map(); // pool id → players seeking it
let seeking = null; // the ``seeking`` reply while the player waits
let offers = []; // what the server offered instead (seek_offer)
let clock = null;
let lastSeek = null; // the last seek sent: "Play again" sends it again
let pooledRoom = null; // the room a seek gave, while the page is in it

/** A pool's id as the server names it (``klondike:2:300:rated``). */
export function poolId(game, players, limit, rated) {
  return `${game}:${players}:${limit || 0}:${rated ? "rated" : "casual"}`;
}

/** The pool the form asks for, as the server will read it: rated for an identified player
 * in a timed pool, casual otherwise. */
function chosen() {
  const form = $("quick-form");
  const game = form.elements["quick-game"].value;
  const players = Number(form.elements["quick-players"].value);
  const limit = Number(form.elements["quick-limit"].value);
  const rated = Boolean(currentPlayer()) && limit > 0;
  return { game, players, limit, rated, wait: Number($("quick-wait").value) || 20 };
}

function seekingIn(game, players, limit, rated) {
  return counts.get(poolId(game, players, limit, rated)) || 0;
}

/** Draw the form's counts and the line that says what the race will be. */
function drawForm() {
  const c = chosen();
  const label = (input, n) => {
    const span = input.parentElement.querySelector(".count");
    span.textContent = n ? tn("quick.seeking_count", n) : "";
  };
  for (const input of document.querySelectorAll('input[name="quick-game"]')) label(input, seekingIn(input.value, c.players, c.limit, c.rated));
  for (const input of document.querySelectorAll('input[name="quick-players"]')) label(input, seekingIn(c.game, Number(input.value), c.limit, c.rated));
  for (const input of document.querySelectorAll('input[name="quick-limit"]')) {
    const limit = Number(input.value);
    label(input, seekingIn(c.game, c.players, limit, Boolean(currentPlayer()) && limit > 0));
  }
  let kind;
  if (c.rated) kind = t("quick.rated");
  else if (!currentPlayer()) kind = t("quick.casual_guest");
  else kind = t("quick.casual_untimed");
  $("quick-kind").textContent = kind;
}

function drawWaiting() {
  const waiting = Boolean(seeking);
  $("quick-form").hidden = waiting;
  $("quick-waiting").hidden = !waiting;
  if (!waiting) return;
  const waited = Math.max(0, Date.now() - seeking.localSince);
  const rating = seeking.rating !== null ? ` · ${t("quick.your_rating", { rating: shownRating(seeking.rating, seeking.provisional) })}` : "";
  $("quick-status").textContent = t("quick.seeking", { pool: poolText(seeking), time: formatTime(waited) }) + rating;
  const row = $("quick-offers");
  row.replaceChildren();
  $("quick-offer-text").hidden = !offers.length;
  for (const offer of OFFERS.filter((o) => offers.includes(o))) {
    const b = el("button", "small", t(`quick.offer.${offer}`));
    b.type = "button";
    b.dataset.offer = offer;
    b.addEventListener("click", () => takeOffer(offer));
    row.append(b);
  }
}

/** A pool in words: "Klondike, draw one · 2 players · 5 min · rated". */
function poolText(p) {
  const limit = p.time_limit ? t("quick.minutes", { n: p.time_limit / 60 }) : t("quick.no_limit");
  const kind = t(p.rated ? "quick.kind.rated" : "quick.kind.casual");
  return [t(`game.${p.game}`), tn("quick.players_n", p.players), limit, kind].join(" · ");
}

/** The lobby's name (kept for the next visit, as a room's creator's is). */
function playerName() {
  const name = $("name").value.trim();
  localStorage.setItem("samedeal.name", name);
  return name;
}

async function seek(payload) {
  $("quick-error").textContent = "";
  lastSeek = payload;
  let reply;
  try {
    reply = await conn.request({ type: "seek", ...payload, name: playerName() });
  } catch (e) {
    $("quick-error").textContent = errorText(e.code, e.message);
    return;
  }
  if (reply.type !== "seeking") {
    $("quick-error").textContent = errorText(reply.code, reply.message);
    return;
  }
  took(reply);
}

function took(reply) {
  // the clock counts from the server's ``since`` as this page's clock reads it
  seeking = { ...reply, localSince: Date.now() - Math.max(0, reply.now - reply.since) };
  offers = offers.filter((o) => o !== "smaller" || reply.players === 4);
  clearInterval(clock);
  clock = setInterval(drawWaiting, 500);
  drawWaiting();
}

function stopWaiting() {
  seeking = null;
  offers = [];
  clearInterval(clock);
  clock = null;
  drawWaiting();
  drawForm();
}

async function cancel() {
  await conn.request({ type: "cancel_seek" }).catch(() => null);
  stopWaiting();
}

async function takeOffer(offer) {
  const reply = await conn.request({ type: "take_offer", offer }).catch((e) => ({ type: "error", ...e }));
  if (reply.type === "seeking") {
    offers = offers.filter((o) => o !== "smaller");
    took(reply);
  } else if (reply.type === "joined") {
    stopWaiting();
    enterRoom(reply, false);
  } else {
    $("quick-error").textContent = errorText(reply.code, reply.message);
  }
}

async function enterRoom(joined, pooled) {
  conn.request({ type: "pools", watch: false }).catch(() => null);
  const settled = await settleInRoom(joined);
  pooledRoom = pooled ? settled.room : null;
  takeJoined(settled);
}

/** A frame for quick play (false: not one): the counts, an offer, the seat a pool gave. */
export function onQuickMessage(msg) {
  if (msg.type === "pool_counts") {
    counts = new Map(msg.pools.map((p) => [p.pool, p.seeking]));
    drawForm();
    return true;
  }
  if (msg.type === "seek_offer" && seeking) {
    offers = msg.offers;
    drawWaiting();
    return true;
  }
  if (msg.type === "joined" && seeking) {
    stopWaiting();
    enterRoom(msg, true);
    return true;
  }
  return false;
}

/** The connection closed: a seek ends with it. */
export function seekLost() {
  if (!seeking) return false;
  stopWaiting();
  $("quick-error").textContent = t("quick.lost");
  return true;
}

/** Receive the counts (the lobby is shown). */
export function watchPools() {
  return conn.request({ type: "pools", watch: true });
}

/** After a pool's race: "Play again" (the room has no host to offer a rematch). */
export function renderPlayAgain() {
  const show = Boolean(lastSeek) && state.room === pooledRoom && state.phase === "ended";
  $("quick-again").hidden = !show;
}

async function playAgain() {
  const payload = lastSeek;
  await conn.request({ type: "leave" }).catch(() => null);
  forgetSeat();
  pooledRoom = null;
  history.pushState(null, "", "/");
  document.title = t("page.title");
  showScreen("lobby");
  conn.request({ type: "live", sort: "watched", limit: 5 }).catch(() => null);
  watchPools().catch(() => null);
  await seek(payload);
}

/** Draw the panel again in the current language. */
export function refreshQuickPlay() {
  drawForm();
  drawWaiting();
}

/** Wire the panel. */
export function setupQuickPlay() {
  $("quick-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const c = chosen();
    seek({ game: c.game, players: c.players, time_limit: c.limit || null, wait: c.wait });
  });
  $("quick-form").addEventListener("change", drawForm);
  $("quick-cancel").addEventListener("click", cancel);
  $("quick-again").addEventListener("click", playAgain);
  drawForm();
}
