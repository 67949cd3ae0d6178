// The daily challenge in the browser: "Today's Klondike" and "Today's Easy Harp" first in
// the lobby (one tap to play, the player's result once played), the day's pages (/daily and
// /daily/DATE: commitments, the countdown, reveals and how to check them, leaderboards),
// what a race on the deal of the day is for the player (ranked attempt, unranked, practice,
// guest) and its spoiler-free share text. The deal of the day is secret until its day is
// over: nothing here ever shows or shares its code while it is, nor any card.
// GET /api/daily… (docs/protocol.md, "HTTP: the daily challenge").

import { getJson } from "./api.js";
import { el } from "./board.js";
import { deckSize } from "./cards.js";
import { DAY_ONE, addDays, dayNumber, dayOf, dayOfRace } from "./days.js";
import { currentLang, errorText, formatTime, shownName, t, tn } from "./i18n.js";
import { becomePlayer, currentPlayer, identityRefusal, keptPlayerId, refusalText } from "./identity.js";
import { dailyShareText, dailyWatchText, deckTurnStep } from "./share.js";
import { tableWrap } from "./tables.js";

export const DAILY_GAMES = ["klondike", "easy-harp"];
const RACE_KEY = "samedeal.daily."; // + room: this tab's daily race, kept across a reload
const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------------- days

function longDate(day) {
  return new Intl.DateTimeFormat(currentLang(), { dateStyle: "long", timeZone: "UTC" }).format(new Date(`${day}T00:00:00Z`));
}

// ---------------------------------------------------------------------- sharing

/** Share ``text``: the system's share sheet where the browser has one (Web Share API),
 * else the clipboard; ``say`` tells the reader what happened. */
export async function shareOut(text, say) {
  if (navigator.share) {
    try {
      await navigator.share({ text });
      return;
    } catch (e) {
      if (e && e.name === "AbortError") return; // the reader closed the sheet
    }
  }
  try {
    await navigator.clipboard.writeText(text);
    say(t("toast.copied"));
  } catch {
    say(t("toast.copy_by_hand"));
  }
}

/** The results' share button says "Share" where the browser can share, "Copy" elsewhere. */
export function setupShareButton(button) {
  if (navigator.share) button.dataset.i18n = "results.share_button";
  button.textContent = t(button.dataset.i18n);
}

// ---------------------------------------------------------------------- a race on it

let race = null; // {room, race, day, attempts, deckTurns}: this tab's race on the deal of the day

function saveRace() {
  if (race) sessionStorage.setItem(RACE_KEY + race.room, JSON.stringify(race));
}

function raceOf(room, raceNo) {
  if (race && race.room === room && race.race === raceNo) return race;
  try {
    const kept = JSON.parse(sessionStorage.getItem(RACE_KEY + room) || "null");
    if (kept && kept.race === raceNo) race = kept;
    return race && race.room === room && race.race === raceNo ? race : null;
  } catch {
    return null;
  }
}

/** A race starts (``race_starting``): on the deal of the day, remember its day and what it
 * is for each racer (``attempts``, by seat). */
export function noteRaceStarting(room, msg) {
  if (!msg.daily) {
    if (race && race.room === room) race = null;
    sessionStorage.removeItem(RACE_KEY + room);
    return;
  }
  const day = msg.deadline ? dayOfRace(msg.deadline) : dayOf(msg.now);
  race = { room, race: msg.race, day, attempts: msg.attempts || {}, deckTurns: 0 };
  saveRace();
}

/** The player's action was acknowledged: count the deck turns the share text tells. */
export function noteAck(room, raceNo, before, after, move) {
  const r = raceOf(room, raceNo);
  const step = r ? deckTurnStep(before, after, move) : 0;
  if (step) {
    r.deckTurns = Math.max(0, r.deckTurns + step);
    saveRace();
  }
}

/**
 * The share text of a daily race once it is over. ``s``: {room, race, seat, role, game,
 * deadline, results, view, now (the server clock)}.
 */
export function dailyRaceShare(s) {
  const r = raceOf(s.room, s.race);
  // the race's day; one this tab did not see start: from its deadline, else today
  const day = r ? r.day : dayOfRace(s.deadline || s.now + 1);
  const url = `${location.origin}/daily/${day}`;
  const number = dayNumber(day);
  const mine = s.role === "player" && s.results ? s.results.find((x) => x.seat === s.seat) : null;
  if (!mine) return dailyWatchText(number, s.game, s.results ? s.results.length : 0, url);
  return dailyShareText({
    number,
    game: s.game,
    attempt: r ? r.attempts[String(s.seat)] || null : null,
    won: mine.status === "won",
    onFoundations: mine.on_foundations,
    total: deckSize(s.game),
    score: mine.score,
    moves: mine.moves,
    deckTurns: r ? r.deckTurns : 0,
    elapsedMs: mine.elapsed_ms,
    streak: s.streak ?? null,
    foundations: s.view ? s.view.foundations.map((f) => f.length) : null,
    url,
  });
}

/** The day of a race on the deal of the day that this tab saw (or from its deadline). */
export function dayOfDailyRace(room, raceNo, deadline, now) {
  const r = raceOf(room, raceNo);
  return r ? r.day : dayOfRace(deadline || now + 1);
}

/** The player's figures in ``game``'s daily as of ``day`` (GET /api/daily/{day}/{game}
 * ?player=ID: days played and won in a row, at most), or null. */
export async function fetchStreak(day, game) {
  const id = playerId();
  if (!id) return null;
  const board = await getJson(`/api/daily/${day}/${game}?player=${encodeURIComponent(id)}&limit=1`);
  return board.ok ? board.data.streak || null : null;
}

/**
 * Tell the player what a race in this daily room is for them: in the waiting room what it
 * will be (from their result today), from ``race_starting`` on what the server says it is.
 * ``s``: {daily, room, race, seat, role, phase, game, now (the server clock)}; ``redraw`` is
 * called when an answer the waiting room needs comes in.
 */
export function renderRoomDaily(s, redraw) {
  const badge = $("attempt-badge");
  const note = $("daily-note");
  if (!s.daily) {
    badge.hidden = note.hidden = true;
    return;
  }
  let kind = null;
  // watching the day's deal shows its cards: an identified spectator's attempt is used up
  if (s.role === "spectator") kind = currentPlayer() ? "watching" : null;
  else if (s.phase !== "lobby") {
    const r = raceOf(s.room, s.race);
    kind = r ? r.attempts[String(s.seat)] || null : null;
  }
  badge.hidden = !kind;
  if (kind) {
    const text = t("attempt.this_race", { kind: t(`attempt.${kind}`) });
    if (badge.textContent !== text) badge.textContent = text;
    badge.dataset.kind = kind;
  }
  const next = s.phase === "lobby" && s.role === "player" ? predictAttempt(s.game, s.now, redraw) : null;
  note.hidden = !next;
  if (next) note.textContent = next === "guest" && identityRefusal() ? refusalText() : t(`attempt.next.${next}`);
}

// ---------------------------------------------------------------------- today, for the player

const mine = new Map(); // "DAY/game" → the player's attempt that day (null: none), once asked
const streaks = new Map(); // "DAY/game" → the player's figures in that game as of that day
let lobbyDay = null; // the server's today, as the lobby shows it

function playerId() {
  const me = currentPlayer();
  return (me && me.player) || keptPlayerId();
}

/** The server's clock (ms), read with a ping (a test may move it; the local clock when the
 * server does not answer in 3 s). */
async function serverClock(conn) {
  try {
    const sent = Date.now();
    const pong = await Promise.race([conn.request({ type: "ping" }), new Promise((r) => setTimeout(r, 3000))]);
    if (pong && pong.now) return pong.now + (Date.now() - sent) / 2;
  } catch {
    // no connection: the local clock
  }
  return Date.now();
}

/** The player's attempt at ``game`` on ``day`` (null: none, or no player), asked once.
 * Only a player's own page of the leaderboard is asked: nothing for a page without one. */
async function loadMine(day, game) {
  const id = playerId();
  if (!id) {
    mine.set(`${day}/${game}`, null);
    return null;
  }
  const board = await getJson(`/api/daily/${day}/${game}?player=${encodeURIComponent(id)}&limit=1`);
  mine.set(`${day}/${game}`, board.ok ? board.data.you : null);
  if (board.ok) streaks.set(`${day}/${game}`, board.data.streak || null);
  return mine.get(`${day}/${game}`);
}

/** What the next race on ``game`` will be for this player (the server decides at the
 * start), from their result today and when their identity was made; null while it asks.
 * ``now``: the server clock. */
function predictAttempt(game, now, redraw) {
  const me = currentPlayer();
  if (!me) return "guest";
  const day = dayOf(now);
  const key = `${day}/${game}`;
  if (!mine.has(key)) {
    mine.set(key, undefined);
    loadMine(day, game).then(redraw, () => {});
    return null;
  }
  const entry = mine.get(key);
  if (entry === undefined) return null;
  if (entry) return "practice";
  return me.created_at >= Date.parse(`${day}T00:00:00Z`) ? "unranked" : "ranked";
}

// ---------------------------------------------------------------------- the lobby

let play = null; // (game, solo, errorBox) → Promise: a room on today's deal (app.js)

/** One line of a finished attempt: won or not, score, moves, deck turns, place. */
function attemptLine(game, e) {
  const total = deckSize(game);
  const parts = [
    e.won ? t("daily.result_won", { time: formatTime(e.elapsed_ms) }) : t("daily.result_not_won", { cards: e.on_foundations, total }),
    tn("stats.points", e.score),
    tn("stats.moves", e.moves),
  ];
  if (game === "klondike") parts.push(tn("share.deck_turns", e.deck_turns));
  if (!e.ranked) parts.push(e.rank > 0 ? t("daily.newcomer_rank", { rank: e.rank }) : t("daily.unranked"));
  else if (e.rank > 0) parts.push(t("daily.rank", { rank: e.rank }));
  return parts.join(" · ");
}

/** Whether the identified player was made on ``day`` (UTC): they rank from the next day,
 * and their first play goes on the newcomers' board. */
function newToday(day) {
  const me = currentPlayer();
  return Boolean(me && day && me.created_at >= Date.parse(`${day}T00:00:00Z`));
}

function lobbyResult(game) {
  // a player refused (too many new ones from this network): said, never a silent guest
  if (identityRefusal() && !currentPlayer()) return refusalText();
  const entry = lobbyDay ? mine.get(`${lobbyDay}/${game}`) : undefined;
  if (entry === undefined) return "";
  if (!entry) return !playerId() ? t("daily.not_played_guest") : newToday(lobbyDay) ? t("daily.not_played_new") : t("daily.not_played");
  if (entry.status === "playing") return t("daily.under_way");
  if (entry.status === "watched") return t("daily.watched");
  const streak = streaks.get(`${lobbyDay}/${game}`);
  const days = streak && streak.played_streak >= 2 ? ` · ${tn("share.daily_streak", streak.played_streak)}` : "";
  return t("daily.your_attempt", { result: attemptLine(game, entry) }) + days;
}

function buildLobby(panel) {
  const title = el("h2");
  title.id = "daily-lobby-title";
  panel.setAttribute("aria-labelledby", title.id);
  const games = el("div", "daily-games");
  for (const game of DAILY_GAMES) {
    const card = el("section", "daily-game");
    card.dataset.game = game;
    const h = el("h3");
    h.id = `daily-title-${game}`;
    card.setAttribute("aria-labelledby", h.id);
    const result = el("p", "daily-result");
    result.id = `daily-result-${game}`;
    result.setAttribute("role", "status");
    const row = el("div", "buttons");
    const solo = el("button", "primary");
    solo.type = "button";
    solo.id = `daily-play-${game}`;
    solo.addEventListener("click", () => play(game, true, `daily-error-${game}`));
    const friends = el("button");
    friends.type = "button";
    friends.id = `daily-race-${game}`;
    friends.addEventListener("click", () => play(game, false, `daily-error-${game}`));
    row.append(solo, friends);
    const error = el("p", "error");
    error.id = `daily-error-${game}`;
    error.setAttribute("role", "alert");
    card.append(h, result, row, error);
    games.append(card);
  }
  const text = el("p", "hint");
  text.id = "daily-lobby-text";
  const foot = el("p", "hint");
  const hint = el("span");
  hint.id = "daily-lobby-hint";
  const link = el("a");
  link.id = "daily-lobby-link";
  link.href = "/daily";
  foot.append(hint, " ", link);
  panel.append(title, text, games, foot);
}

/** Fill the lobby's daily panel in the current language. */
function drawLobby() {
  const panel = $("daily-lobby");
  if (!panel || !panel.firstChild) return;
  const number = lobbyDay ? dayNumber(lobbyDay) : null;
  $("daily-lobby-title").textContent = t("daily.heading") + (number ? ` · ${t("daily.number", { n: number })}` : "");
  $("daily-lobby-text").textContent = t("daily.lobby_text");
  $("daily-lobby-hint").textContent = t("daily.play_hint");
  $("daily-lobby-link").textContent = t("daily.leaderboards");
  for (const game of DAILY_GAMES) {
    $(`daily-title-${game}`).textContent = t(`daily.today.${game}`);
    $(`daily-result-${game}`).textContent = lobbyResult(game);
    const played = lobbyDay && mine.get(`${lobbyDay}/${game}`);
    const guest = identityRefusal() && !currentPlayer();
    $(`daily-play-${game}`).textContent = t(played ? "daily.play_again" : guest ? "daily.refused_play" : "daily.play");
    $(`daily-race-${game}`).textContent = t("daily.race_friends");
  }
}

/** Today's deal is played by players only: make this page's guest a player first, in the
 * same tap (asked again after a refusal: the server may make one now). False, with why in
 * the element ``errorBox``, when the page still has none. */
export async function readyForDaily(errorBox) {
  if (await becomePlayer()) return true;
  // refused a player (too many new ones from this network): why, and that the deal waits
  $(errorBox).textContent = identityRefusal() ? refusalText() : errorText("daily_needs_player");
  return false;
}

/** How the lobby and the day's pages make a room on today's deal: ``start(game, solo,
 * errorBox)`` (solo: a room of one's own, started at once; else a room to race friends
 * in; a refusal is shown in the element ``errorBox``). */
export function setupDaily(start) {
  // the player's first game is their attempt
  play = async (game, solo, errorBox) => {
    if (!(await readyForDaily(errorBox))) return;
    mine.clear(); // who "you" are may have changed: ask for the attempt again
    await start(game, solo, errorBox);
  };
}

/** Put today's two games first in the lobby. */
export function showDailyLobby() {
  const panel = $("daily-lobby");
  buildLobby(panel);
  panel.hidden = false;
  drawLobby();
  document.addEventListener("samedeal:identity", drawLobby);
}

/** Ask the server for its day and the player's results today (once the player is known:
 * ``conn`` has said who they are). */
export async function refreshDailyLobby(conn) {
  lobbyDay = dayOf(await serverClock(conn));
  drawLobby();
  await Promise.all(DAILY_GAMES.map((g) => loadMine(lobbyDay, g)));
  drawLobby();
}

// ---------------------------------------------------------------------- the day's pages

let page = null; // {section, day, info, boards, conn, offset, timer}

/** Open the page of ``day`` (null: today, with yesterday's reveal) in ``section``;
 * ``conn`` gives the server clock for the countdown. */
export async function showDailyPage(day, section, conn) {
  if (page && page.timer) clearInterval(page.timer);
  page = { section, day, info: null, yesterday: null, boards: {}, failure: null, conn, offset: 0, timer: null };
  section.replaceChildren(el("p", "panel", t("daily.loading")));
  const answer = await getJson(day ? `/api/daily/${encodeURIComponent(day)}` : "/api/daily");
  if (!answer.ok) {
    page.failure = answer;
    drawPage();
    return;
  }
  page.info = day ? answer.data : answer.data.today;
  if (!day) page.yesterday = answer.data.yesterday;
  const id = playerId();
  await Promise.all(
    DAILY_GAMES.map(async (game) => {
      const query = id ? `?player=${encodeURIComponent(id)}` : "";
      page.boards[game] = await getJson(`/api/daily/${page.info.day}/${game}${query}`);
    }),
  );
  // the countdown runs on the server's clock (a test may move it)
  if (!page.info.over) page.offset = (await serverClock(conn)) - Date.now();
  drawPage();
}

/** Draw the day's page again in the current language. */
export function refreshDaily() {
  if (page && !page.section.hidden && (page.info || page.failure)) drawPage();
  if ($("daily-lobby") && !$("daily-lobby").hidden) drawLobby();
}

function drawPage() {
  const { section } = page;
  if (page.timer) clearInterval(page.timer);
  if (!page.info) {
    const panel = el("div", "panel");
    panel.append(el("h1", null, t("daily.heading")));
    const error = el("p", "error", errorText(page.failure.code, page.failure.message));
    error.setAttribute("role", "alert");
    const back = el("a", "button-like primary", t("nav.lobby"));
    back.href = "/";
    panel.append(error, el("p"), back);
    section.replaceChildren(panel);
    document.title = `${t("daily.heading")} · samedeal`;
    return;
  }
  const info = page.info;
  const head = el("div", "panel daily-head");
  const title = t("daily.day_title", { n: info.number, date: longDate(info.day) });
  head.append(el("h1", null, title));
  document.title = `${title} · samedeal`;
  head.append(dayNav(info));
  head.append(el("p", null, t(info.over ? "daily.over_text" : "daily.secret_text")));
  if (!info.over) {
    const countdown = el("p", "daily-countdown");
    countdown.id = "daily-countdown";
    head.append(countdown);
    const tick = () => {
      if (section.hidden) {
        clearInterval(page.timer); // the reader went to a room
        return;
      }
      const left = info.ends_at - (Date.now() + page.offset);
      countdown.textContent = t("daily.ends_in", { time: formatTime(Math.max(0, left)) });
      if (left <= -1000) {
        // the day is over: its reveal is due (the server tells it from now on)
        clearInterval(page.timer);
        showDailyPage(page.day, section, page.conn);
      }
    };
    tick();
    page.timer = setInterval(tick, 1000);
  }
  const parts = [head];
  for (const game of DAILY_GAMES) parts.push(gameSection(info, game));
  if (page.yesterday) parts.push(yesterdaySection(page.yesterday));
  section.replaceChildren(...parts);
}

function dayNav(info) {
  const nav = el("p", "daily-nav");
  const links = [];
  if (info.day > dayOf(DAY_ONE)) links.push(["daily.earlier", `/daily/${addDays(info.day, -1)}`]);
  if (info.over) {
    links.push(["daily.later", `/daily/${addDays(info.day, 1)}`]);
    links.push(["daily.today_link", "/daily"]);
  }
  links.forEach(([key, href], i) => {
    if (i) nav.append(" · ");
    const a = el("a", null, t(key));
    a.href = href;
    nav.append(a);
  });
  return nav;
}

function gameOf(info, game) {
  return info.games.find((g) => g.game === game) || { game, commitment: null, code: null, salt: null, proven: null };
}

function gameSection(info, game) {
  const deal = gameOf(info, game);
  const box = el("section", "panel daily-game-page");
  box.dataset.game = game;
  const h = el("h2", null, t(`game.${game}`));
  h.id = `daily-page-${game}`;
  box.setAttribute("aria-labelledby", h.id);
  box.append(h);
  if (!info.over && page.yesterday) {
    // today: one tap to play it, as in the lobby
    const row = el("div", "buttons");
    const solo = el("button", "primary", t("daily.play"));
    solo.type = "button";
    solo.addEventListener("click", () => play(game, true, `daily-page-error-${game}`));
    const friends = el("button", null, t("daily.race_friends"));
    friends.type = "button";
    friends.addEventListener("click", () => play(game, false, `daily-page-error-${game}`));
    row.append(solo, friends);
    const error = el("p", "error");
    error.id = `daily-page-error-${game}`;
    error.setAttribute("role", "alert");
    box.append(row, error);
  }
  box.append(proof(info, deal, 3));
  const board = page.boards[game];
  if (!board || !board.ok) {
    const error = el("p", "error", board ? errorText(board.code, board.message) : "");
    box.append(error);
    return box;
  }
  const data = board.data;
  const id = playerId();
  box.append(el("h3", null, t("daily.you")));
  box.append(el("p", "daily-you", youText(data.you)));
  if (data.you) box.append(entryTable(`daily-you-${game}`, t("daily.you"), game, [data.you], info.over, id));
  box.append(el("h3", null, t("daily.leaderboard")));
  if (!data.entries.length) box.append(el("p", null, t("daily.no_entries")));
  else {
    const caption = t("daily.leaderboard_caption", { game: t(`game.${game}`), date: longDate(info.day) });
    box.append(entryTable(`daily-board-${game}`, caption, game, data.entries, info.over, id));
  }
  if (data.newcomers && data.newcomers.length) {
    // players made that day: shown, marked, apart; they rank from their next day
    const h = el("h3", null, t("daily.newcomers"));
    h.id = `daily-newcomers-title-${game}`;
    box.append(h, el("p", "hint", t("daily.newcomers_text")));
    const caption = t("daily.newcomers_caption", { game: t(`game.${game}`), date: longDate(info.day) });
    box.append(entryTable(`daily-newcomers-${game}`, caption, game, data.newcomers, info.over, id, true));
  }
  if (data.raced_with.length) {
    box.append(el("h3", null, t("daily.raced_with")));
    box.append(entryTable(`daily-friends-${game}`, t("daily.raced_with"), game, data.raced_with, info.over, id));
  }
  return box;
}

function youText(you) {
  if (!you) return t("daily.you_none");
  if (you.status === "playing") return t("daily.you_open");
  if (you.status === "watched") return t("daily.watched");
  if (!you.ranked && you.rank) return t("daily.you_newcomer", { rank: you.rank });
  if (!you.ranked || !you.rank) return t("daily.you_unranked");
  return t("daily.rank", { rank: you.rank });
}

/** The commitment, and once the day is over the code, the salt and how to check them. */
function proof(info, deal, level) {
  const wrap = el("div", "daily-proof");
  const list = el("dl");
  const item = (key, value, className) => {
    list.append(el("dt", null, t(key)));
    const dd = el("dd");
    if (value === null) dd.append(t("daily.commitment_pending"));
    else dd.append(el("code", className, value));
    list.append(dd);
  };
  item("daily.commitment", deal.commitment, "commitment");
  if (info.over && deal.code) {
    item("daily.code", deal.code, "deal-code");
    item("daily.salt", deal.salt, "salt");
    list.append(el("dt", null, t("daily.proven")), el("dd", null, t(deal.proven ? "daily.proven_yes" : "daily.proven_no")));
  }
  wrap.append(list);
  if (info.over && deal.code && deal.commitment) wrap.append(checkBox(info.day, deal, level));
  return wrap;
}

function checkBox(day, deal, level) {
  const box = el("div", "daily-check");
  box.append(el(`h${level}`, null, t("daily.check_title")));
  box.append(el("p", null, t("daily.check_text")));
  const result = el("p", "daily-check-result");
  result.setAttribute("role", "status");
  const button = el("button", null, t("daily.check_button"));
  button.type = "button";
  button.addEventListener("click", () => check(deal, result));
  const row = el("div", "buttons");
  row.append(button);
  box.append(row, result);
  box.append(el("p", null, t("daily.check_command")));
  const command = `samedeal daily verify --game ${deal.game} --date ${day} --code ${deal.code} --salt ${deal.salt} --commitment ${deal.commitment}`;
  box.append(el("pre", "daily-command", command));
  return box;
}

/** SHA-256 of ``CODE|hex(salt)`` computed here, compared with the commitment. */
async function check(deal, out) {
  if (!(window.crypto && crypto.subtle)) {
    out.textContent = t("daily.check_unavailable");
    return;
  }
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${deal.code}|${deal.salt}`));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const ok = hex === String(deal.commitment).toLowerCase();
  out.dataset.ok = String(ok);
  out.textContent = t(ok ? "daily.check_ok" : "daily.check_bad");
}

function entryTable(id, caption, game, entries, over, me, newcomersTable = false) {
  const heads = ["results.rank", "results.player", "results.result", "results.score", "results.moves"];
  if (game === "klondike") heads.push("daily.deck_turns");
  heads.push("results.time", "profile.replay");
  const table = el("table", "records");
  table.id = id;
  table.append(el("caption", "visually-hidden", caption));
  const row = el("tr");
  for (const key of heads) {
    const th = el("th", null, t(key));
    th.scope = "col";
    row.append(th);
  }
  const thead = el("thead");
  thead.append(row);
  const body = el("tbody");
  for (const e of entries) {
    const tr = el("tr");
    tr.dataset.player = e.player;
    if (e.player === me) tr.classList.add("me");
    const name = e.handle ? el("a", null, shownName(e.name)) : el("span", null, shownName(e.name));
    if (e.handle) name.href = `/p/${encodeURIComponent(e.handle)}`;
    let replay;
    if (e.game_id) {
      replay = el("a", null, t("profile.watch"));
      replay.href = `/g/${encodeURIComponent(e.game_id)}`;
      replay.setAttribute("aria-label", t("daily.replay_label", { name: shownName(e.name) }));
    } else {
      replay = el("span", null, over ? "–" : t("daily.replay_after"));
    }
    const result = e.status === "won" ? t("status.won_in", { time: formatTime(e.elapsed_ms) }) : t(`status.${e.status}`);
    // a newcomer's place is among the newcomers: said so outside their own table
    const rank = !e.rank ? "–" : !e.ranked && !newcomersTable ? t("daily.newcomer_cell", { rank: e.rank }) : e.rank;
    const cells = [rank, name, result, e.score, e.moves];
    if (game === "klondike") cells.push(e.deck_turns);
    cells.push(formatTime(e.elapsed_ms), replay);
    for (const v of cells) {
      const td = el("td");
      td.append(v instanceof Node ? v : String(v));
      tr.append(td);
    }
    body.append(tr);
  }
  table.append(thead, body);
  return tableWrap(caption, table);
}

function yesterdaySection(info) {
  const box = el("section", "panel daily-yesterday");
  const h = el("h2", null, t("daily.yesterday"));
  h.id = "daily-yesterday-title";
  box.setAttribute("aria-labelledby", h.id);
  const link = el("a", null, t("daily.yesterday_link"));
  link.href = `/daily/${info.day}`;
  const p = el("p");
  p.append(link);
  box.append(h, p);
  for (const game of DAILY_GAMES) {
    const part = el("div", "daily-reveal");
    part.dataset.game = game;
    part.append(el("h3", null, t(`game.${game}`)));
    part.append(proof(info, gameOf(info, game), 4));
    box.append(part);
  }
  return box;
}
