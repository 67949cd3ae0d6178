// The one ranking rule (server/rooms/ranking.py, docs/protocol.md "Ranking"), for what the
// page ranks itself: the results so far of a race still under way. A race's key — winners
// first by time (then fewer moves), then the rest by cards home, score, fewer moves — and
// places where equal keys share one (1, 1, 3). tests/test_ranking_mirror.py holds it equal
// to the server's. No DOM.

/** A result's key in its race (``{status, elapsed_ms, moves, on_foundations, score}``):
 * compare with :func:`compareKeys`; equal keys are tied. */
export function raceKey(p) {
  if (p.status === "won") return [0, p.elapsed_ms || 0, p.moves || 0, 0];
  return [1, -(p.on_foundations || 0), -(p.score || 0), p.moves || 0];
}

/** Order two keys (arrays of numbers): negative when ``a`` ranks first. */
export function compareKeys(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i] - b[i];
  }
  return 0;
}

/** The places of keys given in ranking order: a key equal to the one before shares its
 * place, any other is placed after everyone ahead ([a, b, b, c] → [1, 2, 2, 4]). */
export function places(keys) {
  const out = [];
  keys.forEach((key, i) => out.push(i && compareKeys(key, keys[i - 1]) === 0 ? out[i - 1] : i + 1));
  return out;
}

/** ``rows`` best first by their race key (ties by ``then``, a number), each as
 * ``{place, row}``. */
export function ranked(rows, then = () => 0) {
  const order = [...rows].sort((a, b) => compareKeys(raceKey(a), raceKey(b)) || then(a) - then(b));
  const shared = places(order.map(raceKey));
  return order.map((row, i) => ({ place: shared[i], row }));
}
