"""Tournaments as plain values: settings, a state machine, scoring, exports — no I/O.

A tournament is kept apart from the races it schedules (as Lichess keeps swiss and arena
tournaments apart from their games): the server feeds its acts in and publishes the events
they return, and starts a race for each round. :mod:`.settings` — what a host chooses;
:mod:`.state` — the state and its queries; :mod:`.acts` — the players' acts and the round
cycle; :mod:`.host` — the host's acts; :mod:`.scoring` — standings and tie-breaks;
:mod:`.export` — results as JSON, NDJSON, CSV, the full export and its verification.
"""

from __future__ import annotations

from .acts import (
    COUNTDOWN_MS,
    end_round,
    join,
    next_round_deal,
    rejoin,
    round_result,
    start,
    start_round,
    withdraw,
)
from .errors import TournamentError
from .export import (
    EXPORT_FORMAT,
    ExportError,
    full_export,
    load_export,
    results_csv,
    results_json,
    results_ndjson,
    verify,
)
from .host import announce, ban, disqualify, edit_settings, end_early, kick, pause, restore, resume
from .scoring import TIEBREAKS, Standing, round_ranking, standings, standings_key
from .settings import SettingsError, TournamentSettings, parse_settings
from .state import (
    SYSTEM,
    Event,
    PlayerState,
    RoundResult,
    RoundState,
    TournamentState,
    create,
    due,
    public_view,
    role_of,
)

__all__ = [
    "COUNTDOWN_MS",
    "EXPORT_FORMAT",
    "SYSTEM",
    "TIEBREAKS",
    "Event",
    "ExportError",
    "PlayerState",
    "RoundResult",
    "RoundState",
    "SettingsError",
    "Standing",
    "TournamentError",
    "TournamentSettings",
    "TournamentState",
    "announce",
    "ban",
    "create",
    "disqualify",
    "due",
    "edit_settings",
    "end_early",
    "end_round",
    "full_export",
    "join",
    "kick",
    "load_export",
    "next_round_deal",
    "parse_settings",
    "pause",
    "public_view",
    "rejoin",
    "restore",
    "results_csv",
    "results_json",
    "results_ndjson",
    "resume",
    "role_of",
    "round_ranking",
    "round_result",
    "standings",
    "standings_key",
    "start",
    "start_round",
    "verify",
    "withdraw",
]
