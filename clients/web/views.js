// Boards on the wire. A move's changes (a live ack's, or a replay's from
// GET /api/games/{id}/seats/{seat}/boards) hold `tableau` and `foundations` keyed by the
// 1-based pile number, the other keys as in the board (protocol.views.merge_view).

/** The board ``view`` with ``changes`` applied (a new object). */
export function mergeView(view, changes) {
  const out = { ...(view || {}) };
  for (const [key, value] of Object.entries(changes)) {
    if (key === "tableau" || key === "foundations") {
      const piles = [...(out[key] || [])];
      for (const [number, pile] of Object.entries(value)) piles[Number(number) - 1] = pile;
      out[key] = piles;
    } else {
      out[key] = value;
    }
  }
  return out;
}
