// A race's results: the table, the replay once recorded, the share text, the host's
// rematch (same deal, new deal, the deal of the day), the other players' answers to it,
// and a ghost of a run to race again.

import { el, icon } from "./board.js";
import { dailyRaceShare, setupShareButton, shareOut } from "./daily.js";
import { errorText, formatTime, t } from "./i18n.js";
import { $, conn, render, toast } from "./page.js";
import { leaveRoom, statusLabel } from "./room.js";
import { raceShareText } from "./share.js";
import { dropOffer, isDailyRoom, serverNow, state } from "./store.js";

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

async function rematch(deal) {
  const reply = await conn.request({ type: "rematch", deal });
  if (reply.type === "error") toast(errorText(reply.code, reply.message));
}

/** What the results say of a pending rematch: the one who offered it waits, a player who
 * answered is told what happens to them. */
function rematchStatus() {
  const o = state.offer;
  if (!o || state.role !== "player") return "";
  if (state.seat === o.by) return t("rematch.waiting");
  if (answered && answered.race === o.race) return t(answered.accept ? "rematch.accepted" : "rematch.sitting_out");
  return "";
}

function resultName(r) {
  // a player who left is still named in the results by the name they raced under
  return /^Player \d+$/.test(r.name) && state.names.has(r.seat) ? state.names.get(r.seat) : r.name;
}

/** The results once the race is over: the table, replay, share text, rematch and ghost. */
export function renderResults() {
  const panel = $("results");
  const show = state.phase === "ended" && Boolean(state.results);
  const appearing = show && panel.hidden;
  panel.hidden = !show;
  if (!show) return;
  const body = $("results-table").querySelector("tbody");
  body.replaceChildren();
  for (const r of state.results) {
    const tr = el("tr");
    if (state.role === "player" && r.seat === state.seat) tr.classList.add("me");
    const cells = [r.rank, resultName(r), statusLabel(r.status), r.on_foundations, r.score, r.moves, formatTime(r.elapsed_ms)];
    cells.forEach((v, i) => {
      const td = el("td", i === 1 ? "name" : null, v);
      if (i === 2 && r.status === "won") td.prepend(icon("trophy"), " ");
      tr.append(td);
    });
    body.append(tr);
  }
  renderReplayLink();
  const share = $("share-text");
  share.value = shareText();
  share.rows = share.value.split("\n").length;
  const host = state.role === "player" && state.seat === state.host;
  // one offer at a time: its answers are awaited before another
  for (const id of ["rematch-same", "rematch-new", "rematch-daily"]) $(id).hidden = !host || Boolean(state.offer);
  const status = rematchStatus();
  $("rematch-status").hidden = !status;
  $("rematch-status").textContent = status;
  // A ghost replays a run of this race at its real pace in a rematch on the same deal.
  const ghosts = host && conn.welcome && conn.welcome.bots;
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
    return dailyRaceShare({ room, race, seat, role, game, deadline, results, view, now: serverNow() });
  }
  const { game, deal, role, seat, results } = state;
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
