"""A tournament's settings: one pydantic model with the ranges of issue 16.

Values out of range are refused with the field and the reason (:class:`SettingsError`),
never clamped: a host who asks for 25 rounds is told the limit, not given 20. Times are in
seconds, except ``starts_at`` (ms since the epoch, UTC, as every server timestamp).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from engine import DealCode, GameError

from .errors import TournamentError

__all__ = [
    "MAX_CO_HOSTS",
    "NAME_LENGTH",
    "SettingsError",
    "TournamentSettings",
    "parse_settings",
]

NAME_LENGTH: Final = 60
MAX_CO_HOSTS: Final = 10
IDENTITY_LENGTH: Final = 64


class SettingsError(TournamentError):
    """Settings the tournament refuses (code ``bad_settings``); ``field`` names the first
    wrong one, and the message starts with it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__("bad_settings", f"{field}: {message}")
        self.field = field


def _plain_text(text: str, what: str, limit: int) -> str:
    text = text.strip()
    if not text:
        raise ValueError(f"{what} is empty")
    if len(text) > limit:
        raise ValueError(f"{what} is {len(text)} characters long, at most {limit}")
    if any(not char.isprintable() for char in text):
        raise ValueError(f"{what} contains a control character")
    return text


class TournamentSettings(BaseModel):
    """What a host chooses at creation (and may edit before the start).

    ``late_join_until`` ``k``: a player may join until round ``k`` has started, so a late
    joiner plays round ``k`` at the latest (``None``: half the rounds, rounded up — see
    :attr:`late_join_round`). ``round_start`` ``manual`` makes the host start rounds 2 … n
    by hand; ``auto`` starts each ``pause`` seconds after the last ended. ``deals``:
    ``winnable`` (the first candidate the solver proves), ``any`` (candidate 0) or ``list``
    (``deal_codes``, one per round, named on the page as the host's). ``absences_to_withdraw``
    ``N``: N absences in a row withdraw a player (0: never). ``spectator_delay``: spectators
    who are not entered see a round's boards that many seconds late (0: once the round is
    over; nobody entered sees any board of it but their own while it runs —
    :func:`server.rooms.view.boards_shown`).
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str
    game: Literal["easy-harp", "klondike", "klondike-3"]
    rounds: Annotated[int, Field(ge=1, le=20)] = 3
    round_time_limit: Annotated[int, Field(ge=60, le=7200)] = 600
    round_start: Literal["auto", "manual"] = "auto"
    pause: Annotated[int, Field(ge=10, le=3600)] = 60
    starts_at: Annotated[int, Field(ge=0)] | None = None
    max_players: Annotated[int, Field(ge=2, le=1000)] = 100
    private: bool = False
    late_join_until: Annotated[int, Field(ge=1, le=20)] | None = None
    scoring: Literal["points", "time"] = "points"
    deals: Literal["winnable", "any", "list"] = "winnable"
    deal_codes: Annotated[tuple[str, ...] | None, Field(strict=False)] = None
    spectator_delay: Annotated[int, Field(ge=0, le=300)] = 0
    absences_to_withdraw: Annotated[int, Field(ge=0, le=20)] = 2
    co_hosts: Annotated[tuple[str, ...], Field(max_length=MAX_CO_HOSTS, strict=False)] = ()

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _plain_text(value, "the name", NAME_LENGTH)

    @field_validator("co_hosts")
    @classmethod
    def _co_hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for identity in value:
            _plain_text(identity, "a co-host's identity", IDENTITY_LENGTH)
        if len(set(value)) != len(value):
            raise ValueError("a co-host is named twice")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> TournamentSettings:
        if self.late_join_until is not None and self.late_join_until > self.rounds:
            raise ValueError(
                f"late_join_until: round {self.late_join_until} is after the last round "
                f"({self.rounds})"
            )
        if self.deals == "list":
            codes = self.deal_codes or ()
            if len(codes) != self.rounds:
                raise ValueError(f"deal_codes: {len(codes)} deals listed for {self.rounds} rounds")
            canonical = []
            for text in codes:
                try:
                    deal_code = DealCode.parse(text)
                except GameError as exc:
                    raise ValueError(f"deal_codes: {exc}") from None
                if deal_code.game_name != self.game:
                    raise ValueError(f"deal_codes: {deal_code} is a deal of {deal_code.game_name}")
                canonical.append(str(deal_code))
            # the model is frozen: store the canonical forms once, at validation
            object.__setattr__(self, "deal_codes", tuple(canonical))
        elif self.deal_codes is not None:
            raise ValueError(f"deal_codes: given, but deals is {self.deals!r}, not 'list'")
        return self

    @property
    def late_join_round(self) -> int:
        """The last round a late joiner can still play (``late_join_until`` or half the
        rounds, rounded up)."""
        return self.late_join_until or (self.rounds + 1) // 2


def parse_settings(data: Mapping[str, Any]) -> TournamentSettings:
    """Validate settings from JSON-like data; :class:`SettingsError` names the first wrong
    field and why (with the value given), e.g. ``rounds: must be ≤ 20 (got 25)``."""
    if not isinstance(data, Mapping):
        raise SettingsError("settings", "must be an object")
    try:
        return TournamentSettings.model_validate(dict(data))
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        field = ".".join(str(part) for part in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        if not field:  # a check across fields names its field first
            field, _, message = message.partition(": ")
        if error["type"] not in ("value_error", "missing") and "input" in error:
            message += f" (got {error['input']!r:.80})"
        raise SettingsError(field, message) from None
