// Ratings where players look (docs/ratings.md): a seat's rating in a rated room, each
// racer's new rating and its change with the results ("1520 (+12)", "?" while
// provisional), the player page's ratings per game with their history drawn as a chart
// (SVG, no library: ratingchart.js computes it) and the rated record, and the rules in a
// player's words (the leaderboard page shows them).

import { formatDate, getJson } from "./api.js";
import { el } from "./board.js";
import { t } from "./i18n.js";
import { recordsTable } from "./page.js";
import { chartGeometry, shownChange, shownRating } from "./ratingchart.js";
import { state } from "./store.js";

const SVG = "http://www.w3.org/2000/svg";
/** The paragraphs of "How ratings work", in order (keys ``ratings.how.N``). */
const HOW = 6;

/** A seat's rating beside its name in a rated room (null in a casual one). */
export function seatRating(seat) {
  if (seat.rating === null || seat.rating === undefined) return null;
  const text = shownRating(seat.rating, seat.provisional);
  const badge = el("span", "rating", text);
  badge.setAttribute("aria-label", t("ratings.seat_label", { rating: text }));
  badge.title = seat.provisional ? t("ratings.provisional") : t("ratings.rating");
  return badge;
}

/** A racer's new rating and its change, once the race is recorded (null: not rated, or
 * not recorded yet). */
export function resultRating(seat) {
  const recorded = state.recorded && state.recorded.race === state.race ? state.recorded : null;
  const change = recorded && recorded.ratings ? recorded.ratings.find((r) => r.seat === seat) : null;
  if (!change) return null;
  const text = shownChange(change.rating, change.change, change.provisional);
  const badge = el("span", "rating", text + (change.abandoned ? ` · ${t("ratings.abandoned")}` : ""));
  badge.title = t("ratings.change_title");
  return badge;
}

/** "How ratings work": the rules of docs/ratings.md in a player's words. */
export function howRatingsWork() {
  const box = el("section", "panel ratings-how");
  box.id = "how";
  box.setAttribute("aria-labelledby", "ratings-how-title");
  const title = el("h2", null, t("ratings.how_title"));
  title.id = "ratings-how-title";
  box.append(title);
  for (let i = 1; i <= HOW; i += 1) box.append(el("p", null, t(`ratings.how.${i}`)));
  return box;
}

/** The player page's ratings: per game the rating, its chart and the rated record; null
 * for a player without a rated race. ``handle`` names the page (the charts' addresses). */
export function ratingsSection(ratings, handle) {
  if (!ratings || !ratings.length) return null;
  const box = el("section", "panel");
  box.setAttribute("aria-labelledby", "profile-ratings-title");
  const title = el("h2", null, t("profile.ratings"));
  title.id = "profile-ratings-title";
  box.append(title);
  const keys = ["profile.game", "ratings.rating", "ratings.races", "ratings.ahead", "ratings.level", "ratings.behind", "ratings.abandoned_count"];
  const wrap = recordsTable("profile-ratings", t("profile.ratings"), keys);
  const body = wrap.querySelector("tbody");
  for (const r of ratings) {
    const tr = el("tr");
    tr.dataset.game = r.game;
    for (const v of [t(`game.${r.game}`), shownRating(r.rating, r.provisional), r.races, r.won, r.drawn, r.lost, r.abandoned]) tr.append(el("td", null, v));
    body.append(tr);
  }
  box.append(wrap);
  if (ratings.some((r) => r.provisional)) box.append(el("p", "hint", t("ratings.provisional_note")));
  for (const r of ratings) {
    const figure = el("figure", "rating-chart");
    figure.dataset.game = r.game;
    const caption = el("figcaption", null, t("ratings.chart_caption", { game: t(`game.${r.game}`) }));
    figure.append(caption, el("p", "hint", t("profile.loading")));
    box.append(figure);
    drawHistory(figure, handle, r.game);
  }
  const how = el("p", "hint");
  const link = el("a", null, t("ratings.how_link"));
  link.href = "/leaderboard#how";
  const board = el("a", null, t("nav.leaderboard"));
  board.href = "/leaderboard";
  how.append(link, " · ", board);
  box.append(how);
  return box;
}

/** Fetch a game's rating history and draw it in ``figure``. */
async function drawHistory(figure, handle, game) {
  const reply = await getJson(`/api/players/${encodeURIComponent(handle)}/ratings/${game}`);
  const note = figure.querySelector("p");
  if (!reply.ok) {
    note.textContent = t("ratings.no_chart");
    return;
  }
  const svg = ratingChart(reply.data.points, t("ratings.chart_caption", { game: t(`game.${game}`) }));
  if (!svg) {
    note.textContent = t("ratings.no_chart");
    return;
  }
  note.replaceWith(svg);
}

function svgNode(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

/** The chart of a rating history (RatingPoint list, oldest first) as an SVG element with
 * ``label`` for screen readers; each point's tooltip tells the race's date, the rating and
 * its change. Null for no point. */
export function ratingChart(points, label) {
  const chart = chartGeometry(points, { width: 600, height: 200, pad: 36 });
  if (!chart) return null;
  const svg = svgNode("svg", { viewBox: `0 0 ${chart.width} ${chart.height}`, role: "img", class: "chart" });
  svg.setAttribute("aria-label", label);
  const right = chart.width - chart.pad;
  for (const tick of chart.ticks) {
    svg.append(svgNode("line", { x1: chart.pad, x2: right, y1: tick.y, y2: tick.y, class: "grid" }));
    const text = svgNode("text", { x: chart.pad - 6, y: tick.y + 4, "text-anchor": "end", class: "tick" });
    text.textContent = String(tick.value);
    svg.append(text);
  }
  svg.append(svgNode("path", { d: chart.path, class: "line" }));
  for (const dot of chart.dots) {
    const circle = svgNode("circle", { cx: dot.x, cy: dot.y, r: 4, class: dot.provisional ? "dot provisional" : "dot" });
    const tip = svgNode("title", {});
    tip.textContent = `${formatDate(dot.at)}: ${shownChange(dot.rating, dot.change, dot.provisional)}`;
    circle.append(tip);
    svg.append(circle);
  }
  return svg;
}
