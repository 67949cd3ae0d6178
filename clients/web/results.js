// A race's results: the table, the replay once recorded, the share text, the host's
// rematch (same deal, new deal, the deal of the day), the other players' answers to it,
// and a ghost of a run to race again.

import { el, icon } from "./board.js";
import { DAILY_GAMES, dailyRaceShare, dayOfDailyRace, fetchStreak, setupShareButton, shareOut } from "./daily.js";
import { errorText, formatTime, shownName, t, tn } from "./i18n.js";
import { $, conn, render, toast } from "./page.js";
import { resultRating } from "./ratings.js";
import { leaveRoom, statusLabel } from "./room.js";
import { raceShareText, tournamentShareText } from "./share.js";
import { scrollBox } from "./tables.js";
import { deckSize } from "./cards.js";
import { progressBar } from "./live.js";
import { ranked } from "./ranking.js";
import { toggleFollow } from "./spectate.js";
import { dropOffer, finishedEarly, isDailyRoom, serverNow, state } from "./store.js";

let answered = null; // {race, accept}: this player's answer to the pending rematch offer

/** Whether this player is asked to answer the pending offer now. */
function offerAsked() {
  const o = state.offer;
  if (!o || state.role !== "player" || state.seat === o.by || serverNow() > o.deadline) return false;
  return !(answered && answered.race === o.race);
}

async function answerRematch(accept) {
  const offer = state.offer;
  if (!offer) return;
  answered = { race: offer.race, accept };
  render();
  const reply = await conn.request({ type: "rematch_reply", race: offer.race, accept });
  if (reply.type === "error") {
    answered = null;
    if (reply.code === "no_offer") dropOffer(); // it started or lapsed meanwhile
    toast(errorText(reply.code, reply.message));
    render();
  }
}

let proving = false; // a winnable-only room's new deal is being proven
let streak = null; // {race, figures}: the player's daily streak once a daily race is over

/** After a daily race: the player's days in a row (asked once per race), for the results
 * and the share text. */
function renderStreak() {
  const line = $("results-streak");
  const daily = isDailyRoom() && state.role === "player" && state.phase === "ended";
  if (daily && (!streak || streak.race !== state.race)) {
    const race = state.race;
    streak = { race, figures: null };
    const day = dayOfDailyRace(state.room, race, state.deadline, serverNow());
    fetchStreak(day, state.game).then((figures) => {
      if (streak && streak.race === race) {
        streak.figures = figures;
        render();
      }
    });
  }
  const f = daily && streak && streak.race === state.race ? streak.figures : null;
  line.hidden = !f;
  if (f) {
    const text = t("results.streak", { days: tn("share.daily_streak", f.played_streak), best: f.longest_played_streak, won: f.won_streak });
    if (line.textContent !== text) line.textContent = text;
  }
}
let queued = null; // a rematch the host asked for before the race was over: offered at its end

async function rematch(deal) {
  if (finishedEarly()) {
    queued = deal; // the others still race: it is offered the moment they are done
    render();
    return;
  }
  proving = deal === "random" && Boolean(state.options && state.options.winnable);
  render();
  try {
    const reply = await conn.request({ type: "rematch", deal });
    if (reply.type === "error") toast(errorText(reply.code, reply.message));
  } finally {
    proving = false;
    render();
  }
}

/** What the results say of a pending rematch: the one who offered it waits, a player who
 * answered is told what happens to them. */
function rematchStatus() {
  if (proving && state.phase === "ended") return t("lobby.proving");
  if (queued && finishedEarly()) {
    const racing = state.participants.map((n) => state.seats.get(n)).filter((s) => s && !FINAL.includes(s.status));
    return t("rematch.queued", { names: racing.map((s) => shownName(s.name)).join(", ") });
  }
  const o = state.offer;
  if (!o || state.role !== "player") return "";
  if (state.seat === o.by) return t("rematch.waiting");
  if (answered && answered.race === o.race) return t(answered.accept ? "rematch.accepted" : "rematch.sitting_out");
  return "";
}

function resultName(r) {
  // a player who left is still named in the results by the name they raced under
  return shownName(/^Player \d+$/.test(r.name) && state.names.has(r.seat) ? state.names.get(r.seat) : r.name);
}

const FINAL = ["won", "resigned", "timeout", "left"];

/** The results' rows: the race's once it is over; while it runs — for a player who has
 * finished — the results so far: the finished, placed by the one ranking rule
 * (ranking.js), then those still racing, with their progress. */
function resultRows() {
  if (state.phase === "ended") return state.results.map((r) => ({ ...r, racing: false }));
  const seats = state.participants.map((n) => state.seats.get(n)).filter(Boolean);
  const rows = ranked(seats.filter((s) => FINAL.includes(s.status)), (s) => s.seat).map(({ place, row }) => ({ ...row, rank: place, racing: false }));
  for (const s of seats) if (!FINAL.includes(s.status)) rows.push({ ...s, rank: null, racing: true });
  return rows;
}

function resultRow(r) {
  const tr = el("tr");
  if (state.role === "player" && r.seat === state.seat) tr.classList.add("me");
  if (r.racing) tr.classList.add("racing");
  const status = el("td");
  if (r.racing) {
    // still racing: their progress, and a way to watch them
    const total = r.total || deckSize(state.game);
    status.append(progressBar(resultName(r), r.on_foundations || 0, total), statusLabel("playing"), " ");
    // a tournament round's boards are never shown to its own players (boards_hidden)
    if (!state.tournament) status.append(watchButton(r));
  } else {
    if (r.status === "won") status.append(icon("trophy"), " ");
    status.append(statusLabel(r.status));
  }
  const cells = [r.rank ?? "–", resultName(r), status, r.on_foundations || 0, r.score || 0, r.moves || 0, r.racing ? "–" : formatTime(r.elapsed_ms)];
  cells.forEach((v, i) => {
    const td = v instanceof Node ? v : el("td", i === 1 ? "name" : null, v);
    const rating = i === 1 ? resultRating(r.seat) : null; // a rated race's "1520 (+12)"
    if (rating) td.append(" ", rating);
    tr.append(td);
  });
  return tr;
}

/** "Watch" on a player still racing: follow their board (again: stop). */
function watchButton(r) {
  const on = state.follows.includes(r.seat);
  const b = el("button", "small watch", on ? t("players.watching") : t("players.watch"));
  b.type = "button";
  b.setAttribute("aria-pressed", String(on));
  b.setAttribute("aria-label", t(on ? "players.unwatch_name" : "players.watch_name", { name: resultName(r) }));
  b.addEventListener("click", () => toggleFollow(r.seat));
  return b;
}

/** The results once the race is over — or, for a player who finished while others race,
 * the results so far — with the replay, share text, rematch and ghost. */
export function renderResults() {
  const panel = $("results");
  const ended = state.phase === "ended" && Boolean(state.results);
  const early = finishedEarly();
  const show = ended || early;
  const appearing = show && panel.hidden;
  panel.hidden = !show;
  if (!show) return;
  const title = $("results").querySelector("h2");
  title.dataset.i18n = early ? "results.so_far" : "results.title";
  title.textContent = t(title.dataset.i18n);
  $("results-table").querySelector("tbody").replaceChildren(...resultRows().map(resultRow));
  // the share text, the replay and ghosts are the finished race's
  $("share-text").closest("label").hidden = early;
  $("copy-share").hidden = early;
  renderReplayLink();
  renderStreak();
  if (ended) {
    const share = $("share-text");
    share.value = shareText();
    share.rows = share.value.split("\n").length;
  }
  const host = state.role === "player" && state.seat === state.host;
  if (ended && queued && host && !state.offer) {
    const kind = queued;
    queued = null;
    rematch(kind); // offered now that everyone is done
  }
  // one offer at a time: its answers are awaited before another
  for (const [id, kind] of [["rematch-same", "same"], ["rematch-new", "new"], ["rematch-daily", "daily"]]) {
    $(id).hidden = !host || Boolean(state.offer) || (early && Boolean(queued));
    // a game of one's own deals again as the app's "New game" window does
    const key = state.solo ? `newgame.${kind}` : `rematch.${kind}`;
    if ($(id).dataset.i18n !== key) {
      $(id).dataset.i18n = key;
      $(id).textContent = t(key);
    }
  }
  if (state.solo && !DAILY_GAMES.includes(state.game)) $("rematch-daily").hidden = true;
  const status = rematchStatus();
  $("rematch-status").hidden = !status;
  $("rematch-status").textContent = status;
  // A ghost replays a run of this race at its real pace in a rematch on the same deal.
  const ghosts = ended && host && conn.welcome && conn.welcome.bots;
  $("add-ghost").hidden = !ghosts;
  if (ghosts) {
    const select = $("ghost-seat");
    const chosen = select.value;
    select.replaceChildren();
    for (const r of state.results) {
      const option = el("option", null, `${resultName(r)} (${statusLabel(r.status)})`);
      option.value = String(r.seat);
      select.append(option);
    }
    if (chosen) select.value = chosen;
  }
  if (appearing) panel.scrollIntoView({ block: "nearest" });
}

/** The race's replay, once the server says it is recorded (race_recorded); until then,
 * a note when the server said the record waits for its database (race_record_delayed). */
function renderReplayLink() {
  const recorded = state.recorded && state.recorded.race === state.race ? state.recorded : null;
  $("replay-link").hidden = !recorded;
  if (recorded) $("replay-anchor").href = `/g/${encodeURIComponent(recorded.game_id)}`;
  $("record-delayed").hidden = Boolean(recorded) || state.recordDelayed !== state.race;
}

/** A spoiler-free summary: the deal and how it went, never a move or a card; its link
 * opens a page that starts a room on the same deal. */
function shareText() {
  if (isDailyRoom()) {
    // the deal of the day: its code is secret until the day is over, and never shared
    const { room, race, seat, role, game, deadline, results, view } = state;
    const days = streak && streak.race === race && streak.figures ? streak.figures.played_streak : null;
    return dailyRaceShare({ room, race, seat, role, game, deadline, results, view, now: serverNow(), streak: days });
  }
  const { game, deal, role, seat, results, tournament } = state;
  if (tournament) return tournamentShareText({ game, tournament, role, seat, results });
  return raceShareText({ game, deal, role, seat, results, origin: location.origin });
}

/** The time left to answer a rematch offer; an offer past its deadline (it started, or
 * lapsed with nobody to race) is dropped a little after. */
export function tickOffer() {
  const o = state.offer;
  if (!o) return;
  const left = o.deadline - serverNow();
  if (left < -2000) {
    dropOffer();
    render();
    return;
  }
  const text = t("rematch.time_left", { s: Math.max(0, Math.ceil(left / 1000)) });
  if ($("rematch-offer-time").textContent !== text) $("rematch-offer-time").textContent = text;
  if (left < 0 && !$("rematch-offer").hidden) render();
}

/** The question of a rematch someone offered, while this player is asked it. */
export function renderOffer() {
  const asked = offerAsked();
  $("rematch-offer").hidden = !asked;
  if (asked) {
    const text = t("rematch.offer", { name: state.names.get(state.offer.by) || "", deal: t(`rematch.deal.${state.offer.deal}`) });
    if ($("rematch-offer-text").textContent !== text) $("rematch-offer-text").textContent = text;
  }
}

/** Wire the results' buttons: share, rematch, ghost, and the answers to an offer. */
export function setupResults() {
  scrollBox($("results-wrap"), t("results.title"));
  $("add-ghost-button").addEventListener("click", async () => {
    const seat = Number($("ghost-seat").value);
    const reply = await conn.request({ type: "add_ghost", race: state.race, seat });
    if (reply.type === "error") toast(errorText(reply.code, reply.message));
    else toast(t("toast.ghost_added"));
  });
  setupShareButton($("copy-share"));
  $("copy-share").addEventListener("click", () => shareOut($("share-text").value, toast));
  $("rematch-same").addEventListener("click", () => rematch("same"));
  $("rematch-new").addEventListener("click", () => rematch("random"));
  $("rematch-daily").addEventListener("click", () => rematch("daily"));
  $("rematch-accept").addEventListener("click", () => answerRematch(true));
  $("rematch-sit-out").addEventListener("click", () => answerRematch(false));
  $("rematch-decline").addEventListener("click", leaveRoom);
}
