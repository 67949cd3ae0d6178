// The leaderboard (/leaderboard, /leaderboard/<game>): a game's best ratings, from
// GET /api/leaderboard/GAME — players with a rated race in the last 30 days whose rating is
// settled — each name linking to the player's page (/p/HANDLE), and how ratings work.

import { getJson } from "./api.js";
import { el } from "./board.js";
import { errorText, t } from "./i18n.js";
import { recordsTable } from "./page.js";
import { howRatingsWork } from "./ratings.js";

const GAMES = ["easy-harp", "klondike", "klondike-3"];

let root = null;
let game = "klondike";
let board = null; // the server's answer for ``game``
let failure = null;

/** Open the leaderboard of ``name`` (a game; null: Klondike) in ``section``. */
export async function showLeaderboard(name, section) {
  root = section;
  game = GAMES.includes(name) ? name : "klondike";
  board = null;
  failure = null;
  draw();
  const reply = await getJson(`/api/leaderboard/${game}`);
  if (reply.ok) board = reply.data;
  else failure = reply;
  draw();
  if (location.hash === "#how") document.getElementById("how")?.scrollIntoView();
}

/** Draw the page again in the current language. */
export function refreshLeaderboard() {
  if (root && !root.hidden) draw();
}

function draw() {
  document.title = `${t("leaderboard.title")} · ${t(`game.${game}`)} · samedeal`;
  const head = el("div", "panel");
  head.append(el("h1", null, t("leaderboard.title")));
  const tabs = el("nav", "buttons");
  tabs.setAttribute("aria-label", t("leaderboard.games"));
  for (const g of GAMES) {
    const a = el("a", "button-like small" + (g === game ? " primary" : ""), t(`game.${g}`));
    a.href = `/leaderboard/${g}`;
    if (g === game) a.setAttribute("aria-current", "page");
    tabs.append(a);
  }
  head.append(tabs);
  const list = el("section", "panel");
  list.setAttribute("aria-labelledby", "leaderboard-caption");
  const caption = el("h2", null, t("leaderboard.caption", { game: t(`game.${game}`) }));
  caption.id = "leaderboard-caption";
  list.append(caption);
  if (failure) {
    const error = el("p", "error", errorText(failure.code, failure.message));
    error.setAttribute("role", "alert");
    list.append(error);
  } else if (!board) {
    list.append(el("p", "hint", t("profile.loading")));
  } else {
    list.append(el("p", "hint", t("leaderboard.intro", { days: board.active_days })));
    if (!board.entries.length) list.append(el("p", null, t("leaderboard.none")));
    else list.append(entriesTable(board.entries));
  }
  root.replaceChildren(head, list, howRatingsWork());
}

function entriesTable(entries) {
  const caption = t("leaderboard.caption", { game: t(`game.${game}`) });
  const keys = ["leaderboard.rank", "leaderboard.player", "ratings.rating", "ratings.races"];
  const wrap = recordsTable("leaderboard-table", caption, keys);
  const body = wrap.querySelector("tbody");
  for (const e of entries) {
    const tr = el("tr");
    tr.dataset.player = e.player;
    const name = el("td", "name");
    if (e.handle) {
      const a = el("a", null, e.name);
      a.href = `/p/${encodeURIComponent(e.handle)}`;
      name.append(a);
    } else {
      name.textContent = e.name;
    }
    tr.append(el("td", null, e.rank), name, el("td", null, e.rating), el("td", null, e.races));
    body.append(tr);
  }
  return wrap;
}
