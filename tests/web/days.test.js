// The daily challenge's days: numbered from 2026-01-01 (day 1), in UTC.

import assert from "node:assert/strict";
import test from "node:test";
import { addDays, dayNumber, dayOf, dayOfRace } from "../../clients/web/days.js";

test("day 1 is 2026-01-01; a year later (2026 has 365 days) is day 366", () => {
  assert.equal(dayNumber("2026-01-01"), 1);
  assert.equal(dayNumber("2026-01-31"), 31);
  assert.equal(dayNumber("2026-03-01"), 60); // 31 + 28 + 1
  assert.equal(dayNumber("2027-01-01"), 366);
  assert.equal(dayNumber("2025-12-31"), 0);
});

test("a moment's UTC date, and days added across months, years and a leap day", () => {
  assert.equal(dayOf(Date.UTC(2026, 4, 17, 23, 59, 59)), "2026-05-17");
  assert.equal(addDays("2026-01-31", 1), "2026-02-01");
  assert.equal(addDays("2026-01-01", -1), "2025-12-31");
  assert.equal(addDays("2028-02-28", 1), "2028-02-29");
  assert.equal(addDays("2028-03-01", -1), "2028-02-29");
});

test("a daily race's day is the one its deadline ends: a deadline at midnight belongs to the day before", () => {
  assert.equal(dayOfRace(Date.UTC(2026, 0, 13)), "2026-01-12");
  assert.equal(dayOfRace(Date.UTC(2026, 0, 12, 18, 30)), "2026-01-12");
});
