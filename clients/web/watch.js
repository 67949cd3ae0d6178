// The live directory (/watch): the public races being played now and those about to
// start, in the chosen order (closest race, most watched, newest) and of the chosen game,
// kept live by a subscription (`live` → `live_rooms`), not by polling. "Watch" opens a
// race as a spectator.

import { errorText, t, tn } from "./i18n.js";
import { liveRow } from "./live.js";
import { Connection } from "./net.js";

const SORTS = ["closest", "watched", "newest"];
const GAMES = ["easy-harp", "klondike", "klondike-3"];
const $ = (id) => document.getElementById(id);

const view = { sort: "closest", game: null, last: null, offset: 0 };
let conn = null;

/** Show the directory page (its section is in index.html). */
export function startWatch() {
  const params = new URLSearchParams(location.search);
  if (SORTS.includes(params.get("sort"))) view.sort = params.get("sort");
  if (GAMES.includes(params.get("game"))) view.game = params.get("game");
  $("watch-game").value = view.game || "";
  for (const b of document.querySelectorAll("#watch .sort-tabs button")) {
    b.addEventListener("click", () => choose(b.dataset.sort, view.game));
  }
  $("watch-game").addEventListener("change", (e) => choose(view.sort, e.target.value || null));
  document.addEventListener("samedeal:lang", draw);
  conn = new Connection(onMessage, () => {
    $("watch-count").textContent = t("live.lost");
    setTimeout(subscribe, 2000);
  });
  subscribe();
  setInterval(draw, 1000); // the races' clocks
  draw();
}

function choose(sort, game) {
  view.sort = sort;
  view.game = game;
  const query = new URLSearchParams({ sort });
  if (game) query.set("game", game);
  history.replaceState(null, "", `/watch?${query}`);
  subscribe();
  draw();
}

async function subscribe() {
  try {
    const reply = await conn.request({ type: "live", sort: view.sort, game: view.game, limit: 50 });
    if (reply.type === "error") $("watch-count").textContent = errorText(reply.code, reply.message);
  } catch (e) {
    $("watch-count").textContent = errorText(e.code, e.message);
  }
}

function onMessage(msg) {
  // a list of the order asked before may still come in: only the one asked for now counts
  if (msg.type !== "live_rooms" || msg.sort !== view.sort || (msg.game || null) !== view.game) return;
  view.last = msg;
  view.offset = msg.now - Date.now();
  draw();
}

function draw() {
  document.title = `${t("live.title")} · samedeal`;
  for (const b of document.querySelectorAll("#watch .sort-tabs button")) {
    b.setAttribute("aria-pressed", String(b.dataset.sort === view.sort));
  }
  const last = view.last;
  if (!last) return;
  const now = Date.now() + view.offset;
  const featured = new Set(last.featured.map((f) => f.room).filter(Boolean));
  $("watch-list").replaceChildren(...last.rooms.map((room) => liveRow(room, { now, featured: featured.has(room.room) })));
  $("watch-none").hidden = last.rooms.length > 0;
  $("watch-count").textContent = tn("live.count", last.total);
}
