// What every screen of the page shares: its elements by id, the one connection to the
// server, the toast, the switch between screens, the room's redraw (app.js's, handed in
// at start-up, so a screen that changed what the room shows can ask for it) and the
// records pages' tables.

import { el } from "./board.js";
import { t } from "./i18n.js";
import { Connection } from "./net.js";
import { tableWrap } from "./tables.js";

/** The page's element with this id. */
export const $ = (id) => document.getElementById(id);

/** The page's connection to the server; app.js gives it its handlers for events and for a
 * closed socket before the first socket opens. */
export const conn = new Connection(null, null);

let drawRoom = () => {};

/** Draw the room again (what app.js handed to :func:`onRender`). */
export function render() {
  drawRoom();
}

/** How the room is drawn: app.js's ``draw``, called by :func:`render`. */
export function onRender(draw) {
  drawRoom = draw;
}

/** Show the screen (a <section> of index.html) called ``name``, and hide the others. */
export function showScreen(name) {
  for (const id of ["lobby", "room", "rules", "notfound", "replay", "profile", "daily", "watch", "tv", "tournament", "leaderboard"]) $(id).hidden = id !== name;
}

let toastTimer = null;

/** Tell the reader ``text`` for a few seconds (an alert role: read out). */
export function toast(text) {
  const box = $("toast");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.hidden = true), 4000);
}

/** Copy ``text`` to the clipboard, and say whether it worked. */
export async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    toast(t("toast.copied"));
  } catch {
    toast(t("toast.copy_by_hand"));
  }
}

/** A records table in its scrolling box (tables.js: a named region reachable by keyboard,
 * since a table wider than a phone scrolls sideways): ``caption`` for screen readers, a
 * column per heading key, an empty body (its rows: ``querySelector("tbody")``). */
export function recordsTable(id, caption, headKeys) {
  const table = el("table", "records");
  table.id = id;
  table.append(el("caption", "visually-hidden", caption));
  const row = el("tr");
  for (const key of headKeys) {
    const th = el("th", null, t(key));
    th.scope = "col";
    row.append(th);
  }
  const head = el("thead");
  head.append(row);
  table.append(head, el("tbody"));
  return tableWrap(caption, table);
}
