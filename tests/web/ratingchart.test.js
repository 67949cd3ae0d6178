// A rating as players see it and the chart of its history, by hand-worked values: the "?"
// of a provisional rating, the sign of a change, the rating marks and where each race's
// point goes.

import assert from "node:assert/strict";
import test from "node:test";
import { chartGeometry, ratingTicks, shownChange, shownRating } from "../../clients/web/ratingchart.js";

test("a rating is whole points, with a ? while provisional", () => {
  assert.equal(shownRating(1520, false), "1520");
  assert.equal(shownRating(1500, true), "1500?");
});

test("a change shows its sign, a loss with a minus sign", () => {
  assert.equal(shownChange(1520, 12, false), "1520 (+12)");
  assert.equal(shownChange(1338, -162, true), "1338? (\u2212162)");
  assert.equal(shownChange(1500, 0, false), "1500 (±0)");
});

test("rating marks take the smallest step that needs at most six marks", () => {
  assert.deepEqual(ratingTicks(1490, 1530), [1475, 1500, 1525, 1550]);
  assert.deepEqual(ratingTicks(1338, 1662), [1300, 1400, 1500, 1600, 1700]);
  assert.deepEqual(ratingTicks(1500, 1500), [1500]);
  assert.deepEqual(ratingTicks(800, 2600), [500, 1000, 1500, 2000, 2500, 3000]);
});

test("each race's point: evenly spaced, higher ratings up, the range the marks'", () => {
  const points = [
    { rating: 1500, change: 0 },
    { rating: 1600, change: 100 },
    { rating: 1550, change: -50 },
  ];
  const chart = chartGeometry(points, { width: 240, height: 140, pad: 20 });
  // marks every 25 points from 1500 to 1600: the plot is 100 high for 100 points
  assert.deepEqual(chart.ticks.map((tick) => [tick.value, tick.y]), [
    [1500, 120],
    [1525, 95],
    [1550, 70],
    [1575, 45],
    [1600, 20],
  ]);
  assert.deepEqual(chart.dots.map((d) => [d.x, d.y]), [
    [20, 120],
    [120, 20],
    [220, 70],
  ]);
  assert.equal(chart.path, "M20 120 L120 20 L220 70");
});

test("one race sits in the middle; no race draws no chart", () => {
  const chart = chartGeometry([{ rating: 1512 }], { width: 100, height: 100, pad: 10 });
  assert.equal(chart.dots[0].x, 50);
  assert.equal(chartGeometry([]), null);
});
