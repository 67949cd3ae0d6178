// The days of the daily challenge, by their UTC dates ("2026-01-01"): their numbers, and a
// race's day from its deadline.

export const DAY_ONE = Date.UTC(2026, 0, 1); // day 1, as the server counts (server/daily.py)
const DAY_MS = 86_400_000;

/** The day's number: 1 on 2026-01-01. */
export function dayNumber(day) {
  return Math.round((Date.parse(`${day}T00:00:00Z`) - DAY_ONE) / DAY_MS) + 1;
}

/** The UTC date of a moment (ms). */
export function dayOf(ms) {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The date ``n`` days after ``day`` (before, when negative). */
export function addDays(day, n) {
  return dayOf(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS);
}

/** The UTC day of a race on the deal of the day, from its deadline: the server ends such a
 * race at its day's end at the latest and starts it within the day. */
export function dayOfRace(deadline) {
  return dayOf(deadline - 1);
}
