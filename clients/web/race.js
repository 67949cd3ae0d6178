// The race: the board (drawn when what it shows changes), moves by pointer, keys or typed
// notation, a refused move's reminder beside its card, the clock, the countdown and the
// sounds.

import { el, renderBoard, wonBanner } from "./board.js";
import { noteAck } from "./daily.js";
import { currentLang, errorText, formatTime, ruleText, shownName, t } from "./i18n.js";
import { dragging, markSelection, resetInput, setupInput } from "./input.js";
import { reminderPlace } from "./layout.js";
import { AUTO_FINISH, STOCK, UNDO } from "./notation.js";
import { $, conn, render, toast } from "./page.js";
import { tickOffer } from "./results.js";
import { openRulesOverlay, ruleSection, rulesGame } from "./rules.js";
import { settings } from "./settings.js";
import { drawBoards } from "./spectate.js";
import { finishedEarly, isPlaying, serverNow, setView, state } from "./store.js";
import { mergeView } from "./views.js";

let reminder = null; // {text, rule, pile, until}: a refused move's rule, shown next to its card
let boardStale = false; // a drawing put off until a drag ends
let celebrated = 0; // the race whose win was celebrated

/** A race starts: nothing of the last one's picks, taps or typed text is this one's. */
export function newRace() {
  resetInput();
  $("move-input").value = ""; // a bad text typed in the last race is not this one's
  $("move-error").textContent = "";
}

async function sendMove(text, anchorPile) {
  if (!isPlaying()) return null;
  if (serverNow() < (state.startAt || 0)) return null;
  const reply = await conn.request({ type: "move", move: text });
  if (reply.type === "ack") {
    reminder = null;
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
  reminder = { text: ruleText(reply.rule, reply.reminder), rule: reply.rule, pile: anchorPile, until: Date.now() + 6000 };
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
  const r = reminder;
  if (!r || Date.now() > r.until) {
    reminder = null;
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
  const place = reminderPlace(board.getBoundingClientRect(), anchor === board ? null : anchor.getBoundingClientRect());
  box.style.left = `${place.left}px`;
  box.style.top = `${place.top}px`;
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
    reminder = null;
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

let boardKey = "";

/** Draw the board when what it shows has changed (an opponent's progress does not
 * touch it), never under a drag: then it is drawn once the card lands. */
export function drawBoard() {
  const seat = state.following !== null ? state.seats.get(state.following) : null;
  const key = [state.viewVersion, state.race, state.phase, state.role, state.follows.join(","), seat && seat.name, currentLang()].join("|");
  if (key === boardKey && !boardStale) return;
  if (dragging()) {
    boardStale = true;
    return;
  }
  boardStale = false;
  boardKey = key;
  const board = $("board");
  // a spectator's boards side by side; a player who finished sees those they watch
  if ((state.role === "spectator" && state.follows.length > 1) || (state.role === "player" && state.follows.length && finishedEarly())) {
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
      text = delay ? t("spectate.watching_delay", { name: shownName(seat.name), s: delay }) : t("spectate.watching", { name: shownName(seat.name) });
    }
    board.prepend(el("p", "watching", text));
  }
  if (!view) {
    if (state.role === "player" && state.phase === "running") board.append(el("p", "watching", t("race.dealing")));
    return;
  }
  if (view.won) {
    board.append(wonBanner());
    if (celebrated !== state.race && state.role === "player") {
      celebrated = state.race;
      sound("won");
    }
  }
  markSelection();
  placeReminder();
}

/** Draw the board if a drawing was put off during a drag (the drag has ended). */
function drawPutOff() {
  if (boardStale) drawBoard();
}

/** The race bar: the shown board's score and moves, and the clock. */
export function renderBar() {
  const me = state.role === "player" ? state.seats.get(state.seat) : state.seats.get(state.following);
  const v = state.view;
  // a spectator's figures are the followed player's: say whose
  const whose = state.role === "spectator" && me ? shownName(me.name) : "";
  $("bar-name").hidden = !whose;
  if (whose) $("bar-name").textContent = t("race.bar_whose", { name: whose });
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

/** The status line, the race clock (with the time left) and the countdown to the start. */
export function tickClock() {
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
  } else if (before > -700 && state.counted) {
    cd.hidden = false;
    cd.textContent = t("race.go");
  } else {
    cd.hidden = true;
  }
}

/** The race's buttons and typed move, usable while this player races. */
export function renderControls() {
  $("controls").hidden = !(state.role === "player" && state.phase === "running" && state.participants.includes(state.seat));
  const playing = isPlaying();
  for (const id of ["btn-stock", "btn-undo", "btn-auto", "btn-resign", "move-input"]) $(id).disabled = !playing;
  $("btn-auto").hidden = !(state.view && state.view.auto_finish);
  if (state.view) $("btn-undo").disabled = !playing || !state.view.can_undo;
}

/** Wire the race's buttons, typed moves, and the board's pointer and keys. */
export function setupRace() {
  $("btn-stock").addEventListener("click", () => sendMove(STOCK, null));
  $("btn-undo").addEventListener("click", () => sendMove(UNDO, null));
  $("btn-auto").addEventListener("click", () => sendMove(AUTO_FINISH, null));
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
  setupInput($("board"), {
    view: () => state.view,
    game: () => state.game,
    playing: isPlaying,
    send: sendMove,
    version: () => state.viewVersion,
    redraw: drawPutOff,
    doubleClick: () => settings.doubleClick,
  });
}
