// The replay of a finished race (/g/ID): the racers side by side, step by step.
//
// The browser has no engine: the server computes each racer's boards (GET
// /api/games/{id}/seats/{seat}/boards — the starting board and what each action changed,
// merged here as a live ack's changes are). The racers' actions are merged into one
// timeline in the order the server accepted them, so a step is one action of one racer and
// the boards side by side show the race as it stood then. Step first / back / forward /
// last, play at a chosen speed (the real pace times the speed; a pause longer than 3 s is
// shortened to 3 s), jump with the slider or the move list; keys ←/→, Home/End, Space.

import { formatDate, getJson } from "./api.js";
import { el, renderBoard } from "./board.js";
import { errorText, formatTime, shownName, t, tn, tOrdinal } from "./i18n.js";
import { mergeView } from "./views.js";
import { moveWords } from "./words.js";

export const SPEEDS = [0.5, 1, 2, 4, 8, 16];
const MAX_PAUSE_MS = 3000;
const SVG = "http://www.w3.org/2000/svg";
const CONTROL_PATHS = {
  first: "M6 5h2v14H6zM20 5v14L9 12z",
  back: "M18 5v14L7 12z",
  play: "M7 5v14l12-7z",
  pause: "M7 5h4v14H7zM13 5h4v14h-4z",
  forward: "M6 5v14l11-7z",
  last: "M16 5h2v14h-2zM4 5v14l11-7z",
};

let root = null;
let race = null; // {game, racers: [{seat, name, handle, deleted, rank, status, elapsed_ms, views, moves}], steps, counts}
let step = 0;
let speed = SPEEDS.indexOf(1);
let playing = false;
let timer = null;
let failure = null; // {code, message}: the race could not be shown

function controlIcon(name) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", "icon");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", CONTROL_PATHS[name]);
  path.setAttribute("fill", "currentColor");
  svg.append(path);
  return svg;
}

/** Every racer's boards, and the timeline of everyone's actions. */
function buildRace(game, boards) {
  const racers = game.seats.map((seat, order) => {
    const mine = boards[order];
    const views = [mine.start];
    for (const changes of mine.changes) views.push(mergeView(views[views.length - 1], changes));
    return {
      seat: seat.seat,
      order,
      name: seat.player && seat.player.deleted ? t("replay.deleted_player") : shownName(seat.name),
      handle: seat.player && !seat.player.deleted ? seat.player.handle : null,
      rank: seat.rank,
      status: seat.status,
      elapsed_ms: seat.elapsed_ms,
      moves: mine.moves,
      times: seat.action_times_ms,
      views,
    };
  });
  const steps = [];
  for (const r of racers) {
    r.moves.forEach((move, index) => steps.push({ seat: r.seat, order: r.order, index, at: r.times[index] || 0, move }));
  }
  steps.sort((a, b) => a.at - b.at || a.order - b.order || a.index - b.index);
  // counts[k][order]: how many of each racer's actions the first k steps hold
  const counts = [racers.map(() => 0)];
  for (const s of steps) {
    const next = counts[counts.length - 1].slice();
    next[s.order] += 1;
    counts.push(next);
  }
  return { game, racers, steps, counts };
}

/** A race time with tenths (m:ss.t): actions a fraction of a second apart stay apart. */
function clock(ms) {
  return `${formatTime(ms)}.${Math.floor((Math.max(0, ms) % 1000) / 100)}`;
}

function atMs(k) {
  return k > 0 ? race.steps[k - 1].at : 0;
}

/** Open the replay of race ``id`` in ``section``. */
export async function showReplay(id, section) {
  root = section;
  race = null;
  failure = null;
  step = 0;
  root.replaceChildren(el("p", "panel", t("replay.loading")));
  document.title = `${t("replay.heading")} · samedeal`;
  const game = await getJson(`/api/games/${encodeURIComponent(id)}`);
  if (!game.ok) {
    failure = game;
    draw();
    return;
  }
  const boards = await Promise.all(
    game.data.seats.map((s) => getJson(`/api/games/${encodeURIComponent(id)}/seats/${s.seat}/boards`)),
  );
  const bad = boards.find((b) => !b.ok);
  if (bad) {
    failure = bad;
    draw();
    return;
  }
  race = buildRace(game.data, boards.map((b) => b.data));
  draw();
  show(0);
}

/** Draw the page again in the current language (the step stays). */
export function refreshReplay() {
  if (!root || root.hidden) return;
  if (race) {
    // names of deleted players are the catalogue's
    for (const [i, seat] of race.game.seats.entries()) {
      if (seat.player && seat.player.deleted) race.racers[i].name = t("replay.deleted_player");
    }
  }
  draw();
  if (race) show(step);
}

function button(name, key, action) {
  const b = el("button", "icon-button");
  b.type = "button";
  b.id = `replay-${name}`;
  b.append(controlIcon(name));
  b.setAttribute("aria-label", t(key));
  b.title = t(key);
  b.addEventListener("click", action);
  return b;
}

function draw() {
  pause();
  if (!race) {
    const panel = el("div", "panel");
    panel.append(el("h1", null, t("replay.heading")));
    if (failure) {
      const error = el("p", "error", errorText(failure.code, failure.message));
      error.setAttribute("role", "alert");
      panel.append(error);
    }
    const back = el("a", "button-like primary", t("nav.lobby"));
    back.href = "/";
    panel.append(el("p"), back);
    root.replaceChildren(panel);
    return;
  }
  const { game, racers, steps } = race;
  const head = el("div", "panel replay-head");
  const title = t("replay.title", { game: t(`game.${game.game}`) });
  head.append(el("h1", null, title));
  document.title = `${title} · samedeal`;
  const about = el("p", "hint");
  about.append(`${t("replay.deal", { deal: game.deal })} · ${t("replay.ended", { date: formatDate(game.ended_at) })} · `);
  const again = el("a", null, t("replay.race_deal"));
  again.href = `/d/${encodeURIComponent(game.deal)}`;
  about.append(again);
  head.append(about);

  const controls = el("div", "buttons replay-controls");
  controls.setAttribute("role", "group");
  controls.setAttribute("aria-label", t("replay.controls"));
  controls.append(
    button("first", "replay.first", () => jump(0)),
    button("back", "replay.back", () => jump(step - 1)),
    button("play", "replay.play", () => (playing ? pause() : play())),
    button("forward", "replay.forward", () => jump(step + 1)),
    button("last", "replay.last", () => jump(steps.length)),
  );
  const speedLabel = el("label", "speed");
  const select = el("select");
  select.id = "replay-speed";
  for (const [i, s] of SPEEDS.entries()) {
    const option = el("option", null, t("replay.times", { speed: s.toLocaleString() }));
    option.value = String(i);
    select.append(option);
  }
  select.value = String(speed);
  select.addEventListener("change", () => {
    speed = Number(select.value);
    if (playing) {
      clearTimeout(timer);
      schedule();
    }
  });
  speedLabel.append(el("span", null, t("replay.speed")), " ", select);
  controls.append(speedLabel);
  head.append(controls);

  const slider = el("input");
  slider.type = "range";
  slider.id = "replay-slider";
  slider.min = "0";
  slider.max = String(steps.length);
  slider.step = "1";
  slider.value = "0";
  slider.setAttribute("aria-label", t("replay.jump"));
  slider.addEventListener("input", () => jump(Number(slider.value)));
  const pos = el("p", "replay-pos");
  pos.id = "replay-pos";
  pos.setAttribute("role", "status");
  head.append(slider, pos, el("p", "hint", t("replay.keys")));

  const grid = el("div", "replay-racers");
  for (const r of racers) {
    const box = el("section", "panel racer");
    box.dataset.seat = String(r.seat);
    const h = el("h2");
    h.id = `replay-racer-${r.seat}`;
    box.setAttribute("aria-labelledby", h.id);
    h.append(`${r.rank}. `);
    if (r.handle) {
      const a = el("a", null, r.name);
      a.href = `/p/${encodeURIComponent(r.handle)}`;
      h.append(a);
    } else {
      h.append(r.name);
    }
    let result = t(`status.${r.status}`);
    if (r.status === "won") result = t("status.won_in", { time: formatTime(r.elapsed_ms) });
    box.append(h, el("p", "hint", `${tOrdinal("share.place", { rank: r.rank, n: racers.length })} · ${result}`));
    const now = el("p", "now");
    now.dataset.role = "now";
    const last = el("p", "last-move");
    last.dataset.role = "last";
    const board = el("div", "board readonly");
    board.dataset.seat = String(r.seat);
    board.setAttribute("role", "group");
    board.setAttribute("aria-label", t("replay.board", { name: r.name }));
    box.append(now, last, board);
    grid.append(box);
  }

  const moves = el("section", "panel replay-moves");
  moves.setAttribute("aria-labelledby", "replay-moves-title");
  const movesTitle = el("h2", null, t("replay.moves"));
  movesTitle.id = "replay-moves-title";
  const list = el("ol", "replay-list");
  list.id = "replay-list";
  const names = new Map(racers.map((r) => [r.seat, r.name]));
  const entry = (k, text) => {
    const li = el("li");
    const b = el("button", "small", text);
    b.type = "button";
    b.dataset.step = String(k);
    b.addEventListener("click", () => jump(k));
    li.append(b);
    return li;
  };
  list.append(entry(0, t("replay.start")));
  steps.forEach((s, i) => list.append(entry(i + 1, `${clock(s.at)} · ${names.get(s.seat)} · ${stepWords(i)}`)));
  moves.append(movesTitle, list);
  root.replaceChildren(head, grid, moves);
}

/** Step ``i`` (0-based) of the race in words, from its mover's board before it. */
function stepWords(i) {
  const s = race.steps[i];
  const r = race.racers.find((x) => x.seat === s.seat);
  return moveWords(s.move, r ? r.views[s.index] : null); // views[k]: after k of their actions
}

/** Show the race after its first ``k`` steps. */
function show(k) {
  step = Math.max(0, Math.min(race.steps.length, k));
  const n = race.steps.length;
  const counts = race.counts[step];
  const last = step > 0 ? race.steps[step - 1] : null;
  for (const r of race.racers) {
    const box = root.querySelector(`.racer[data-seat="${r.seat}"]`);
    const done = counts[r.order];
    const view = r.views[done];
    const board = box.querySelector(".board");
    renderBoard(board, view, race.game.game, { animate: true });
    // a replay is read, not played: its piles are not tab stops
    for (const pile of board.querySelectorAll("[data-pile]")) pile.removeAttribute("tabindex");
    board.dataset.done = String(done);
    box.querySelector('[data-role="now"]').textContent = [
      tn("stats.points", view.score),
      tn("stats.moves", view.moves),
      t("replay.actions", { done, n: r.moves.length }),
    ].join(" · ");
    const mine = last && last.seat === r.seat;
    box.classList.toggle("moved", Boolean(mine));
    box.querySelector('[data-role="last"]').textContent = mine ? t("replay.just_played", { move: stepWords(step - 1) }) : "";
  }
  const pos = root.querySelector("#replay-pos");
  pos.setAttribute("aria-live", playing ? "off" : "polite");
  pos.textContent = `${t("replay.step", { k: step, n })} · ${clock(atMs(step))}`;
  const slider = root.querySelector("#replay-slider");
  slider.value = String(step);
  slider.setAttribute("aria-valuetext", pos.textContent);
  root.querySelector("#replay-first").disabled = step === 0;
  root.querySelector("#replay-back").disabled = step === 0;
  root.querySelector("#replay-forward").disabled = step === n;
  root.querySelector("#replay-last").disabled = step === n;
  const playButton = root.querySelector("#replay-play");
  playButton.replaceChildren(controlIcon(playing ? "pause" : "play"));
  playButton.setAttribute("aria-label", t(playing ? "replay.pause" : "replay.play"));
  playButton.title = playButton.getAttribute("aria-label");
  const list = root.querySelector("#replay-list");
  for (const b of list.querySelectorAll("[aria-current]")) b.removeAttribute("aria-current");
  const current = list.querySelector(`button[data-step="${step}"]`);
  if (current) {
    current.setAttribute("aria-current", "step");
    // keep the current move in sight inside the list, without scrolling the page
    const item = current.parentElement;
    if (item.offsetTop < list.scrollTop || item.offsetTop + item.offsetHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = item.offsetTop - list.clientHeight / 2;
    }
  }
  root.dataset.step = String(step);
}

function jump(k) {
  pause();
  show(k);
}

function play() {
  if (!race) return;
  if (step >= race.steps.length) step = 0;
  playing = true;
  show(step);
  schedule();
}

function schedule() {
  if (step >= race.steps.length) {
    pause();
    return;
  }
  const gap = Math.min(Math.max(atMs(step + 1) - atMs(step), 0), MAX_PAUSE_MS);
  timer = setTimeout(() => {
    timer = null;
    if (!playing) return;
    show(step + 1);
    schedule();
  }, gap / SPEEDS[speed]);
}

function pause() {
  const was = playing;
  playing = false;
  clearTimeout(timer);
  timer = null;
  if (was && race && root.querySelector("#replay-pos")) show(step);
}

/** Keys on the replay page: ←/→ one step, Home/End the start or the end, Space plays. */
export function replayKey(ev) {
  if (!race || !root || root.hidden || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const target = ev.target;
  if (target.closest && target.closest("select, textarea, input:not([type=range]), #you, #settings")) return;
  const onSlider = target.id === "replay-slider"; // the slider moves itself: its input event jumps
  const onButton = target.closest && target.closest("button, a, summary");
  let handled = true;
  if (ev.key === "ArrowRight" && !onSlider) jump(step + 1);
  else if (ev.key === "ArrowLeft" && !onSlider) jump(step - 1);
  else if (ev.key === "Home" && !onSlider) jump(0);
  else if (ev.key === "End" && !onSlider) jump(race.steps.length);
  else if (ev.key === " " && !onButton) playing ? pause() : play();
  else handled = false;
  if (handled) ev.preventDefault();
}
