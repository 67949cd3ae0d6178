"""Boards on the wire: merging an ``ack``'s ``changes`` into the board a client holds.

A player's board is :meth:`engine.game.Game.player_view` (face-up cards only). The server sends
it whole when a seat is taken or resumed, and with every accepted move only the parts that
move changed (:meth:`engine.game.Game.view_changes`): ``tableau`` and ``foundations`` as
objects keyed by the 1-based pile number, the other keys as in the board. No I/O here.
"""

from __future__ import annotations

from typing import Any

__all__ = ["merge_view"]


def merge_view(view: dict[str, Any] | None, changes: dict[str, Any]) -> dict[str, Any]:
    """The board ``view`` with ``changes`` applied (a new dict; ``view`` is not changed).

    Raises :class:`ValueError` if ``changes`` names a pile the board does not have, or if
    there is no board to merge into and ``changes`` is not a whole board.
    """
    out = dict(view) if view is not None else {}
    for key, value in changes.items():
        if key in ("tableau", "foundations"):
            piles = list(out.get(key) or [])
            if view is None:
                piles = [None] * max((int(n) for n in value), default=0)
            for number, pile in value.items():
                i = int(number) - 1
                if not 0 <= i < len(piles):
                    raise ValueError(f"the board has no {key} pile {number}")
                piles[i] = pile
            if any(p is None for p in piles):
                raise ValueError(f"changes without a board to merge into miss {key} piles")
            out[key] = piles
        else:
            out[key] = value
    return out
