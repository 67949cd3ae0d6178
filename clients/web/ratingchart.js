// A rating history as a chart's geometry, pure (no DOM): where each rated race's point
// goes, the line through them and the rating marks on the side. ratings.js draws it as
// SVG; tests/web/ratingchart.test.js checks it by hand-worked values.

/** How a rating is shown: whole points, "?" while provisional ("1520?"). */
export function shownRating(rating, provisional) {
  return `${rating}${provisional ? "?" : ""}`;
}

/** A rating and what a race changed, as results show it: "1520 (+12)", "1488? (−12)". */
export function shownChange(rating, change, provisional) {
  const sign = change > 0 ? "+" : change < 0 ? "\u2212" : "±";
  return `${shownRating(rating, provisional)} (${sign}${Math.abs(change)})`;
}

/** Rating marks every ``step`` points covering [low, high], ``step`` the smallest of 25,
 * 50, 100, 200, 500 that needs at most ``most`` marks. */
export function ratingTicks(low, high, most = 6) {
  const span = Math.max(1, high - low);
  const step = [25, 50, 100, 200, 500, 1000].find((s) => span / s <= most - 1) || 1000;
  const first = Math.floor(low / step) * step;
  const last = Math.ceil(high / step) * step;
  const ticks = [];
  for (let v = first; v <= last; v += step) ticks.push(v);
  return ticks;
}

/**
 * The chart of ``points`` ({rating, at, provisional, change, game_id}, oldest first) in a
 * box of ``width`` × ``height`` with ``pad`` around the plot: each point's x (races evenly
 * spaced, the first at the left, a single one in the middle) and y (higher ratings up;
 * the range is the ticks'), the line's path data, and the ticks with their y. Null for no
 * point.
 */
export function chartGeometry(points, { width = 600, height = 200, pad = 36 } = {}) {
  if (!points || !points.length) return null;
  const ratings = points.map((p) => p.rating);
  const ticks = ratingTicks(Math.min(...ratings), Math.max(...ratings));
  const low = ticks[0];
  const high = ticks[ticks.length - 1] === low ? low + 1 : ticks[ticks.length - 1];
  const plotW = width - 2 * pad;
  const plotH = height - 2 * pad;
  const x = (i) => (points.length === 1 ? pad + plotW / 2 : pad + (plotW * i) / (points.length - 1));
  const y = (r) => pad + plotH * (1 - (r - low) / (high - low));
  const round = (v) => Math.round(v * 10) / 10;
  const dots = points.map((p, i) => ({ ...p, x: round(x(i)), y: round(y(p.rating)) }));
  const path = dots.map((d, i) => `${i ? "L" : "M"}${d.x} ${d.y}`).join(" ");
  return { dots, path, ticks: ticks.map((v) => ({ value: v, y: round(y(v)) })), width, height, pad };
}
