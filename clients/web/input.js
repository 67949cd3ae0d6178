// Playing with the pointer and the keys: taps, double taps, click-then-click, drag and drop
// (mouse, pen and touch alike), and the keyboard. Everything ends in ctx.send(move, pile).
//
// ctx: { view(), game(), playing(), send(move, anchorPile), version(), redraw(),
//        doubleClick() }

import { foundationFor, tableTakes } from "./cards.js";
import { el } from "./board.js";
import { AUTO_FINISH, FOUNDATIONS, STOCK, TABLE, UNDO, destination, move, source } from "./notation.js";

// Two taps are one double tap only on the same card, unchanged in between, this close.
const DOUBLE_MS = 300;
// How long a tap waits for a second one, when a second one could mean something else.
const TAP_DELAY_MS = 230;

let ctx = null;
let board = null;
let selected = null; // {src, pile, count}
let lastTap = null; // {pile, card, depth, version, time}
let pending = null; // {pile, timer, fire}
let drag = null;
let suppressClick = false;
// A press is acted on when it is let go (pointerup), not on the click that may follow: a
// board drawn again under the finger (an ack arriving mid-tap, just after a drag) loses
// that click, so a tap just after a quick drag did nothing. Its click, if any, is ignored.
let press = null; // {target, x, y, id, moved}: a press on the board, not yet a tap or a drag
let tappedAt = -1e9; // when a press was taken as a tap (performance.now())
const CLICK_AFTER_TAP_MS = 800; // a tap's own click comes within this, if at all

export function selection() {
  return selected;
}

export function clearSelection() {
  selected = null;
  for (const c of board.querySelectorAll(".card.selected")) c.classList.remove("selected");
  for (const p of board.querySelectorAll(".pile.picked")) p.classList.remove("picked");
}

export function select(pile, count) {
  clearSelection();
  selected = { src: source(pile, count), pile, count };
  markSelection();
}

/** Mark the picked cards again (after every drawing of the board). */
export function markSelection() {
  const sel = selected;
  if (!sel) return;
  const node = board.querySelector(`[data-pile="${sel.pile}"]`);
  if (!node) return;
  node.classList.add("picked");
  const cards = [...node.querySelectorAll(".card.up")];
  for (const c of cards.slice(cards.length - sel.count)) c.classList.add("selected");
}

/** Whether a drag is under way: the board must not be drawn again under it. */
export function dragging() {
  return drag !== null;
}

/** Forget a half-made tap or pick (a new race, a new board). */
export function resetInput() {
  if (pending) clearTimeout(pending.timer);
  pending = null;
  lastTap = null;
  selected = null;
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

function topCard(pile) {
  const node = board.querySelector(`[data-pile="${pile}"]`);
  if (!node) return null;
  const ups = node.querySelectorAll(".card.up");
  return ups.length ? ups[ups.length - 1] : null;
}

function flushPending() {
  if (!pending) return;
  clearTimeout(pending.timer);
  const fire = pending.fire;
  pending = null;
  fire();
}

/** A click or tap on ``pile`` (on ``card``, a face-up card node, or on the pile). */
function tapPile(pile, card) {
  const now = performance.now();
  const name = card ? card.dataset.card : null;
  const ups = card ? [...card.closest("[data-pile]").querySelectorAll(".card.up")] : [];
  const depth = card ? ups.length - 1 - ups.indexOf(card) : -1;
  const version = ctx.version();
  // Chromium counts any two taps within ~300 ms as a double click (event.detail), even on
  // two different cards: only the same card, on an unchanged board, makes a double tap.
  const double =
    ctx.doubleClick() &&
    lastTap !== null &&
    lastTap.pile === pile &&
    lastTap.card === name &&
    lastTap.depth === depth &&
    lastTap.version === version &&
    now - lastTap.time < DOUBLE_MS;
  lastTap = double ? null : { pile, card: name, depth, version, time: now };

  if (pile === "s") {
    flushPending();
    clearSelection();
    ctx.send(STOCK, null);
    return;
  }
  if (pending && pending.pile === pile && double) {
    clearTimeout(pending.timer);
    pending = null;
    ctx.send(move(pile, TABLE), pile);
    return;
  }
  flushPending();
  const sel = selected;
  if (sel) {
    clearSelection();
    if (pile === sel.pile) {
      if (double && sel.count === 1) ctx.send(move(sel.src, TABLE), pile);
    } else {
      ctx.send(move(sel.src, destination(pile)), sel.pile);
    }
    return;
  }
  if (!card) return;
  const src = sourceOf(card);
  if (!src) return;
  if (src.count > 1 || pile.startsWith("f")) {
    select(src.pile, src.count); // a run, or a card to take back: where to, is the next click
    return;
  }
  const view = ctx.view();
  const harp = ctx.game() === "easy-harp";
  const home = foundationFor(view, name, harp) >= 0;
  const table = ctx.doubleClick() && tableTakes(view, name, pile);
  if (home && table) {
    // both a tap and a double tap would move it: wait (briefly) to know which
    const fire = () => ctx.send(move(pile, FOUNDATIONS), pile);
    pending = { pile, fire, timer: setTimeout(() => ((pending = null), fire()), TAP_DELAY_MS) };
  } else if (home) {
    lastTap = null; // it is on its way: a second tap is on whatever it uncovers
    ctx.send(move(pile, FOUNDATIONS), pile);
  } else {
    select(pile, 1); // no foundation takes it: keep it in hand for a click on its destination
  }
}

function onBoardClick(ev) {
  if (suppressClick) {
    suppressClick = false;
    return;
  }
  if (performance.now() - tappedAt < CLICK_AFTER_TAP_MS) {
    tappedAt = -1e9; // the click of a tap already taken on pointerup
    return;
  }
  tapTarget(ev.target);
}

/** A tap (or a click without a press before it) on ``target``, a node of the board (it may
 * have been drawn over since: its pile and card are read from it). */
function tapTarget(target) {
  if (!ctx.playing()) return;
  const pileNode = target.closest("[data-pile]");
  if (!pileNode) {
    if (selected && target.closest('[data-area="f"]')) {
      const sel = selected;
      clearSelection();
      ctx.send(move(sel.src, FOUNDATIONS), sel.pile);
    } else {
      clearSelection();
    }
    return;
  }
  tapPile(pileNode.dataset.pile, target.closest(".card.up"));
}

// ---------------------------------------------------------------------- drag and drop

function onPointerDown(ev) {
  if (ev.button > 0 || !ev.isPrimary) return;
  press = { target: ev.target, x: ev.clientX, y: ev.clientY, id: ev.pointerId, moved: false };
  if (!ctx.playing()) return;
  const card = ev.target.closest(".card.up");
  if (!card || !board.contains(card)) return;
  const src = sourceOf(card);
  if (!src) return;
  drag = { src, card, x: ev.clientX, y: ev.clientY, ghost: null, moved: false };
}

function dropTarget(x, y) {
  const over = document.elementFromPoint(x, y);
  return over ? over.closest("[data-pile], [data-area]") : null;
}

function onPointerMove(ev) {
  if (press && ev.pointerId === press.id && Math.hypot(ev.clientX - press.x, ev.clientY - press.y) >= 6) press.moved = true;
  if (!drag) return;
  if (!drag.moved) {
    if (Math.hypot(ev.clientX - drag.x, ev.clientY - drag.y) < 6) return;
    drag.moved = true;
    flushPending();
    clearSelection();
    const pileNode = drag.card.closest("[data-pile]");
    const ups = [...pileNode.querySelectorAll(".card.up")];
    const moving = ups.slice(ups.length - drag.src.count);
    const first = moving[0].getBoundingClientRect();
    const ghost = el("div", "drag-ghost");
    ghost.setAttribute("aria-hidden", "true");
    ghost.style.setProperty("--cw", getComputedStyle(board).getPropertyValue("--cw"));
    for (const c of moving) {
      const r = c.getBoundingClientRect();
      const copy = c.cloneNode(true);
      copy.classList.remove("selected");
      copy.style.left = "0px";
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
  for (const p of board.querySelectorAll(".drop-ok")) p.classList.remove("drop-ok");
  const target = dropTarget(ev.clientX, ev.clientY);
  if (target && board.contains(target) && target.dataset.pile !== drag.src.pile) {
    const area = target.closest('[data-area="f"]') || target;
    if (area.dataset.area === "f" || /^t/.test(area.dataset.pile || "")) area.classList.add("drop-ok");
  }
}

function onPointerUp(ev) {
  const p = press && ev.pointerId === press.id ? press : null;
  if (p) press = null;
  if (p && !p.moved && ev.type === "pointerup" && (!drag || !drag.moved)) {
    drag = null;
    tappedAt = performance.now();
    tapTarget(p.target);
    setTimeout(ctx.redraw, 0); // what arrived during the press
    return;
  }
  if (!drag) return;
  const d = drag;
  drag = null;
  if (d.moved) {
    suppressClick = true;
    setTimeout(() => (suppressClick = false), 0);
    d.ghost.remove();
    for (const c of d.moving) c.classList.remove("dragging");
    for (const p of board.querySelectorAll(".drop-ok")) p.classList.remove("drop-ok");
    const target = ev.type === "pointerup" ? dropTarget(ev.clientX, ev.clientY) : null;
    if (target && board.contains(target)) {
      const home = target.closest('[data-area="f"]');
      const dest = home ? FOUNDATIONS : target.dataset.pile;
      if (dest && dest !== d.src.pile && /^[tf]/.test(dest)) {
        ctx.send(move(source(d.src.pile, d.src.count), dest), d.src.pile);
      }
    }
  }
  // whatever arrived during the drag, drawn after this press's click has been dispatched
  setTimeout(ctx.redraw, 0);
}

// ---------------------------------------------------------------------- keys

/** Enter or Space on a focused pile: pick its top card, or drop the picked cards there. */
function keyPile(pile) {
  if (pile === "s") {
    clearSelection();
    ctx.send(STOCK, null);
    return;
  }
  const sel = selected;
  if (sel) {
    clearSelection();
    if (pile !== sel.pile) ctx.send(move(sel.src, destination(pile)), sel.pile);
    return;
  }
  if (topCard(pile)) select(pile, 1);
}

/** ↑/↓ with a column picked: one card more or fewer of it (picking a run by keyboard). */
function growSelection(step) {
  const sel = selected;
  if (!sel || !sel.pile.startsWith("t")) return false;
  const ups = board.querySelectorAll(`[data-pile="${sel.pile}"] .card.up`).length;
  const count = Math.max(1, Math.min(ups, sel.count + step));
  select(sel.pile, count);
  return true;
}

function focusNextPile(step) {
  const piles = [...board.querySelectorAll("[data-pile]")];
  const i = piles.indexOf(document.activeElement);
  const next = piles[(i + step + piles.length) % piles.length];
  if (next) next.focus();
}

function onKey(ev) {
  if (ev.target.closest && ev.target.closest("input, textarea, select, dialog, .rules-page")) return;
  const k = ev.key.toLowerCase();
  // Enter and Space keep their meaning on a focused control
  if ((k === "enter" || k === " ") && ev.target.closest && ev.target.closest("button, a, summary")) return;
  if (!ctx.playing()) return;
  const onPile = ev.target.closest && ev.target.closest("#board [data-pile]");
  const sel = selected;
  let handled = true;
  if (onPile && (k === "enter" || k === " ")) keyPile(onPile.dataset.pile);
  else if ((ev.ctrlKey || ev.metaKey) && k === "z") ctx.send(UNDO, null);
  else if (ev.ctrlKey || ev.metaKey || ev.altKey) handled = false;
  else if (k === "escape") clearSelection();
  else if (k === "arrowup") handled = growSelection(1);
  else if (k === "arrowdown") handled = growSelection(-1);
  else if (k === "arrowright" && onPile) focusNextPile(1);
  else if (k === "arrowleft" && onPile) focusNextPile(-1);
  else if (k === "s" || k === " ") ctx.send(STOCK, null);
  else if (k === "u" || k === "backspace") ctx.send(UNDO, null);
  else if (k === "a") ctx.send(AUTO_FINISH, null);
  else if (k === "w" && !sel) select("w", 1);
  else if (/^[1-9]$/.test(k)) {
    const column = Number(k);
    const view = ctx.view();
    if (!view || column > view.tableau.length) handled = false;
    else if (sel) {
      clearSelection();
      if (sel.pile !== `t${column}`) ctx.send(move(sel.src, `t${column}`), sel.pile);
    } else if (view.tableau[column - 1].up.length) select(`t${column}`, 1);
  } else if ((k === "f" || k === "t") && sel) {
    clearSelection();
    ctx.send(move(sel.src, k), sel.pile);
  } else handled = false;
  if (handled) ev.preventDefault();
}

/** Wire the board's pointer and the page's keys to ``context``. */
export function setupInput(boardNode, context) {
  board = boardNode;
  ctx = context;
  board.addEventListener("click", onBoardClick);
  board.addEventListener("pointerdown", onPointerDown);
  document.addEventListener("pointermove", onPointerMove);
  document.addEventListener("pointerup", onPointerUp);
  document.addEventListener("pointercancel", onPointerUp);
  document.addEventListener("keydown", onKey);
}
