// Watching, shared by the lobby, the live directory (/watch), the featured race (/tv) and
// the room: a live race as a list row, the reactions (drawn icons, never emoji), a player's
// progress line. Everything from other users goes on the page with textContent.

import { el } from "./board.js";
import { deckSize } from "./cards.js";
import { formatTime, shownName, t, tn } from "./i18n.js";
import { progressPercent } from "./layout.js";

export const REACTIONS = ["clap", "wow", "fire", "gg"];
const SVG = "http://www.w3.org/2000/svg";
const REACTION_PATHS = {
  clap: "M8.6 3.2l1.7 1 -2 5.4 4.9-6.2 1.6 1.1-3.9 5.6 5.4-4.5 1.3 1.4-5.2 5 5.5-2.9.9 1.7-6.3 4c-2.6 1.7-5.6 1.4-7.4-.6L3 14.7c-1.4-1.7-1.2-3.8.3-5.2z",
  wow: "M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zM8.5 7.5a1.6 1.6 0 1 1 0 3.2 1.6 1.6 0 0 1 0-3.2zm7 0a1.6 1.6 0 1 1 0 3.2 1.6 1.6 0 0 1 0-3.2zM12 12.5c1.5 0 2.6 1.4 2.6 3.1S13.5 18.7 12 18.7s-2.6-1.4-2.6-3.1 1.1-3.1 2.6-3.1z",
  fire: "M12.5 2c.8 3.6 5.5 6 5.5 11.5A6 6 0 0 1 6 13.6c0-2.7 1.5-4.6 2.8-5.8 0 2 .9 3.2 2 3.4-.4-3.2.2-6.6 1.7-9.2z",
};

/** A reaction's picture: a drawn icon, or the letters "gg". */
export function reactionIcon(reaction) {
  if (!(reaction in REACTION_PATHS)) return el("span", "gg", t("react.gg_short"));
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", "icon");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", REACTION_PATHS[reaction]);
  path.setAttribute("fill", "currentColor");
  path.setAttribute("fill-rule", "evenodd");
  svg.append(path);
  return svg;
}

/** The row of reaction buttons; ``send(reaction)`` is called on a press. */
export function reactionButtons(send) {
  const bar = el("div", "reaction-bar");
  bar.setAttribute("role", "group");
  bar.setAttribute("aria-label", t("react.title"));
  for (const reaction of REACTIONS) {
    const b = el("button", "small reaction");
    b.type = "button";
    b.dataset.reaction = reaction;
    // a name that holds the visible text ("gg") as well as what it means
    const name = reaction in REACTION_PATHS ? t(`react.${reaction}`) : `${t("react.gg_short")}, ${t(`react.${reaction}`)}`;
    b.setAttribute("aria-label", name);
    b.title = t(`react.${reaction}`);
    b.append(reactionIcon(reaction));
    b.addEventListener("click", () => send(reaction));
    bar.append(b);
  }
  return bar;
}

/** Reactions being shown: seat (or "crowd") → [{reaction, n, until}], kept a few seconds. */
export class ReactionPops {
  constructor(redraw, ms = 3500) {
    this.pops = new Map();
    this.redraw = redraw;
    this.ms = ms;
  }

  /** Take a ``reactions`` frame; the pops go away by themselves. */
  add(msg) {
    const until = Date.now() + this.ms;
    for (const r of msg.reactions) {
      const key = r.seat === null ? "crowd" : String(r.seat);
      const list = (this.pops.get(key) || []).filter((p) => p.until > Date.now());
      const same = list.find((p) => p.reaction === r.reaction);
      if (same) {
        same.n += r.n;
        same.until = until;
      } else {
        list.push({ reaction: r.reaction, n: r.n, until });
      }
      this.pops.set(key, list);
    }
    this.redraw();
    setTimeout(() => this.redraw(), this.ms + 50);
  }

  /** The pops beside ``seat`` (a number, or "crowd"), as an element (null: none). */
  node(seat) {
    const list = (this.pops.get(String(seat)) || []).filter((p) => p.until > Date.now());
    if (!list.length) return null;
    const box = el("span", "reaction-pops");
    box.setAttribute("role", "status");
    for (const p of list) {
      const pop = el("span", "reaction-pop");
      pop.dataset.reaction = p.reaction;
      pop.setAttribute("aria-label", t(`react.${p.reaction}`) + (p.n > 1 ? ` ×${p.n}` : ""));
      pop.append(reactionIcon(p.reaction));
      if (p.n > 1) pop.append(el("span", "times", `×${p.n}`));
      box.append(pop);
    }
    return box;
  }
}

/** ``name``'s progress bar: ``done`` of ``total`` cards on the foundations. */
export function progressBar(name, done, total) {
  const bar = el("div", "bar");
  bar.setAttribute("role", "progressbar");
  bar.setAttribute("aria-valuemin", "0");
  bar.setAttribute("aria-valuemax", String(total));
  bar.setAttribute("aria-valuenow", String(done));
  bar.setAttribute("aria-label", t("players.progress", { name }));
  const fill = el("div", "fill");
  fill.style.width = `${progressPercent(done, total)}%`;
  bar.append(fill);
  return bar;
}

/** A player's progress bar and figures, as the live directory and TV show them. */
export function progressLine(p, game) {
  const total = p.total || deckSize(game);
  const done = p.on_foundations || 0;
  const bar = progressBar(shownName(p.name), done, total);
  let status = t(`status.${p.status}`);
  if (p.status === "won" && p.elapsed_ms !== null && p.elapsed_ms !== undefined) {
    status = t("status.won_in", { time: formatTime(p.elapsed_ms) });
  }
  const stats = el("div", "stats", [`${done}/${total}`, tn("stats.moves", p.moves || 0), status].join(" · "));
  return [bar, stats];
}

/** The link that opens a room as a spectator. */
export function watchLink(room) {
  return `/r/${encodeURIComponent(room)}?watch=1`;
}

/**
 * One race of the directory as a list item: game, phase or time, spectators, players with
 * their progress, and a Watch link. ``now`` is the server clock; ``featured`` marks the
 * race on TV.
 */
export function liveRow(room, { now, featured = false, compact = false }) {
  const li = el("li", "live-room");
  li.dataset.room = room.room;
  li.dataset.phase = room.phase;
  const head = el("div", "live-head");
  head.append(el("strong", "live-game", t(`game.${room.game}`)), " ");
  head.append(el("span", "live-code", room.room));
  if (featured) head.append(" ", el("span", "badge", t("live.featured")));
  const when = room.phase === "running" && room.start_at ? formatTime(Math.max(0, now - room.start_at)) : t("live.waiting");
  const facts = [when, tn("room.watching", room.spectators)];
  if (room.spectator_delay) facts.push(t("live.delay", { s: room.spectator_delay }));
  // the board rule (a deal of the day, a tournament round, a host's choice): progress only
  if (room.boards === "progress") facts.push(t("live.progress_only"));
  head.append(" ", el("span", "live-facts", facts.join(" · ")));
  li.append(head);
  const players = el("ul", "live-players");
  for (const p of room.players) {
    const item = el("li", "live-player");
    item.dataset.seat = String(p.seat);
    item.append(el("span", "name", shownName(p.name)));
    if (room.phase === "running" && p.status !== "waiting" && !compact) item.append(...progressLine(p, room.game));
    else if (room.phase === "running" && p.status !== "waiting") item.append(el("span", "stats", ` ${p.on_foundations}/${p.total || deckSize(room.game)}`));
    players.append(item);
  }
  li.append(players);
  const a = el("a", "button-like small live-watch", t("live.watch"));
  a.href = watchLink(room.room);
  a.setAttribute("aria-label", t("live.watch_room", { room: room.room }));
  li.append(a);
  return li;
}
