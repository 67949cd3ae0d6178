"""Ratings (issue 32): Glicko-2 per game from identified players' rated races.

:mod:`.glicko` is the rating system (Glickman's Glicko-2, one rating period per race),
:mod:`.rules` what a race counts as (its pairwise results by final place, abandonment, the
provisional bound, the cooldown on seeking after abandoning) — both pure; the records store
keeps the ratings and every change (:mod:`server.records.ratings`), and :mod:`.service`
answers the HTTP routes and the questions of other parts (a player's rating in a game).
docs/ratings.md says the rules in a player's words.
"""

from __future__ import annotations

__all__: list[str] = []
