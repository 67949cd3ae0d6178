// A player's page (/p/HANDLE): the rating per game with its chart and the rated record
// (ratings.js); per game played, won, win %, best time, best score, current and longest
// streak; the deal of the day's streaks and best score; recent races, each
// linking to its replay (/g/ID). From the server's GET /api/players/HANDLE; names and
// handles are put on the page as text.

import { formatDate, getJson } from "./api.js";
import { badges } from "./badges.js";
import { el, icon } from "./board.js";
import { errorText, formatTime, shownName, t, tOrdinal } from "./i18n.js";
import { recordsTable } from "./page.js";
import { ratingsSection } from "./ratings.js";

const PAGE = 20;

let root = null;
let handle = "";
let player = null; // the first answer, with every race loaded since
let failure = null;
let more = false; // the server may have older races

/** Open ``name``'s page in ``section``. */
export async function showProfile(name, section) {
  root = section;
  handle = name;
  player = null;
  failure = null;
  root.replaceChildren(el("p", "panel", t("profile.loading")));
  const reply = await getJson(`/api/players/${encodeURIComponent(handle)}?limit=${PAGE}`);
  if (reply.ok) {
    player = reply.data;
    more = player.recent.length === PAGE;
  } else {
    failure = reply;
  }
  draw();
}

/** Draw the page again in the current language. */
export function refreshProfile() {
  if (root && !root.hidden && (player || failure)) draw();
}

async function older() {
  const before = player.recent.length;
  const reply = await getJson(`/api/players/${encodeURIComponent(handle)}?limit=${PAGE}&offset=${before}`);
  if (!reply.ok) {
    failure = reply;
  } else {
    player.recent.push(...reply.data.recent);
    more = reply.data.recent.length === PAGE;
  }
  draw();
  // the reader goes on from the first race just loaded
  const link = root.querySelectorAll("#profile-recent tbody tr a")[before];
  if (link) link.focus();
}

function table(id, captionKey, headKeys) {
  return recordsTable(id, t(captionKey), headKeys);
}

function cells(tr, values) {
  for (const v of values) {
    if (v instanceof Node) {
      const td = el("td");
      td.append(v);
      tr.append(td);
    } else {
      tr.append(el("td", null, v));
    }
  }
}

function draw() {
  if (!player) {
    const panel = el("div", "panel");
    panel.append(el("h1", null, t("profile.heading")));
    const error = el("p", "error", errorText(failure.code, failure.message));
    error.setAttribute("role", "alert");
    const back = el("a", "button-like primary", t("nav.lobby"));
    back.href = "/";
    panel.append(error, el("p"), back);
    root.replaceChildren(panel);
    document.title = `${t("profile.heading")} · samedeal`;
    return;
  }
  document.title = `${shownName(player.name)} · samedeal`;
  const head = el("div", "panel");
  head.append(el("h1", null, shownName(player.name)));
  head.append(el("p", "hint", `@${player.handle} · ${t("profile.since", { date: formatDate(player.since) })}`));
  if (failure) {
    const error = el("p", "error", errorText(failure.code, failure.message));
    error.setAttribute("role", "alert");
    head.append(error);
  }

  const stats = el("section", "panel");
  stats.setAttribute("aria-labelledby", "profile-stats-title");
  const statsTitle = el("h2", null, t("profile.stats"));
  statsTitle.id = "profile-stats-title";
  stats.append(statsTitle);
  if (!player.stats.length) {
    stats.append(el("p", null, t("profile.none")));
  } else {
    const wrap = table("profile-stats", "profile.stats", [
      "profile.game",
      "profile.played",
      "profile.won",
      "profile.win_pct",
      "profile.best_time",
      "profile.best_score",
      "profile.streak",
      "profile.longest",
    ]);
    const body = wrap.querySelector("tbody");
    for (const s of player.stats) {
      const tr = el("tr");
      tr.dataset.game = s.game;
      cells(tr, [
        t(`game.${s.game}`),
        s.played,
        s.won,
        `${s.win_pct.toLocaleString()} %`,
        formatTime(s.best_time_ms),
        s.best_score,
        s.current_streak,
        s.longest_streak,
      ]);
      body.append(tr);
    }
    stats.append(wrap);
  }

  const daily = dailySection(player.daily || []);

  const recent = el("section", "panel");
  recent.setAttribute("aria-labelledby", "profile-recent-title");
  const recentTitle = el("h2", null, t("profile.recent"));
  recentTitle.id = "profile-recent-title";
  recent.append(recentTitle);
  if (!player.recent.length) {
    recent.append(el("p", null, t("profile.none")));
  } else {
    const wrap = table("profile-recent", "profile.recent", [
      "profile.date",
      "profile.game",
      "profile.place",
      "results.result",
      "results.cards",
      "results.score",
      "results.moves",
      "profile.replay",
    ]);
    const body = wrap.querySelector("tbody");
    for (const r of player.recent) {
      const tr = el("tr");
      tr.dataset.id = r.id;
      let result = t(`status.${r.status}`);
      if (r.status === "won") result = t("status.won_in", { time: formatTime(r.elapsed_ms) });
      // a race on a deal of the day still secret opens once its day is over: no link yet
      let link = el("span", "hint", t("daily.replay_after"));
      if (r.deal !== null) {
        link = el("a", null, t("profile.watch"));
        link.href = `/g/${encodeURIComponent(r.id)}`;
        link.setAttribute("aria-label", t("profile.watch_race", { date: formatDate(r.ended_at) }));
      }
      cells(tr, [
        formatDate(r.ended_at),
        t(`game.${r.game}`),
        tOrdinal("share.place", { rank: r.rank, n: r.racers }),
        result,
        r.on_foundations,
        r.score,
        r.moves,
        link,
      ]);
      body.append(tr);
    }
    recent.append(wrap);
    if (more) {
      const b = el("button", null, t("profile.more"));
      b.type = "button";
      b.id = "profile-more";
      b.addEventListener("click", older);
      const row = el("div", "buttons");
      row.append(b);
      recent.append(row);
    }
  }
  const ratings = ratingsSection(player.ratings, player.handle);
  root.replaceChildren(...[head, ratings, badgeSection(), stats, daily, recent].filter(Boolean));
}

/** The player's badges: each earned one, and how far they are from the others — with
 * the rule that earns it, so none is a mystery. */
function badgeSection() {
  const box = el("section", "panel badges");
  box.setAttribute("aria-labelledby", "profile-badges-title");
  const title = el("h2", null, t("badges.title"));
  title.id = "profile-badges-title";
  const list = el("ul", "badge-list");
  list.id = "profile-badges";
  for (const b of badges(player)) {
    const item = el("li", b.earned ? "earned" : "not-yet");
    item.dataset.badge = b.id;
    item.append(icon(b.earned ? "trophy" : "star", "icon big"));
    const words = el("div");
    words.append(el("strong", null, t(`badges.${b.id}`)), el("span", "hint", t(`badges.${b.id}.rule`)));
    words.append(el("span", "badge-state", b.earned ? t("badges.earned") : t("badges.progress", { have: b.have, need: b.need })));
    item.append(words);
    list.append(item);
  }
  box.append(title, list);
  return box;
}

/** The deal of the day: days played and won, in a row and at most, the best score. */
function dailySection(rows) {
  if (!rows.length) return null;
  const box = el("section", "panel");
  box.setAttribute("aria-labelledby", "profile-daily-title");
  const title = el("h2", null, t("profile.daily"));
  title.id = "profile-daily-title";
  box.append(title);
  const wrap = table("profile-daily", "profile.daily", [
    "profile.game",
    "profile.daily_played",
    "profile.daily_won",
    "profile.daily_streak",
    "profile.daily_won_streak",
    "profile.daily_longest",
    "profile.daily_longest_won",
    "profile.daily_best",
  ]);
  const body = wrap.querySelector("tbody");
  for (const d of rows) {
    const tr = el("tr");
    tr.dataset.game = d.game;
    cells(tr, [
      t(`game.${d.game}`),
      d.days_played,
      d.days_won,
      d.played_streak,
      d.won_streak,
      d.longest_played_streak,
      d.longest_won_streak,
      d.best_score === null ? "–" : d.best_score,
    ]);
    body.append(tr);
  }
  box.append(wrap);
  return box;
}
