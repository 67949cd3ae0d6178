"""Wire messages: one pydantic discriminated union per direction.

Every message is a JSON object with a ``type`` field. Client → server messages may carry an
``id`` (an integer the client picks); the server echoes it in the direct reply (``joined``,
``ack``, ``rejected``, ``error``, ``pong``) so a client can match replies to requests.

Room events (``seat``, ``spectators``, ``rematch_offered``, ``race_starting``, ``progress``,
``player_finished``, ``race_ended``) carry ``room`` and a rising ``seq``: the room's event
number. A client remembers the last ``seq`` it saw and sends it in ``resume`` after a
reconnect.

Watching: ``live`` subscribes to the directory of public races (``live_rooms`` frames, the
same models as ``GET /api/live``), ``follow`` takes up to :data:`MAX_FOLLOWED` boards,
``react`` sends one of :data:`REACTIONS` (``reactions`` frames tally them).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .api import EntrantStatus, ResultStatus, StandingRow, TournamentPage
from .live import (
    FeaturedRace,
    FinalStatus,
    GameName,
    LivePlayer,
    LiveRoom,
    LiveSort,
    Phase,
    RaceStatus,
    RatingChange,
    Role,
    SeatStatus,
)

__all__ = [
    "EVENT_TYPES",
    "LIVE_LIMIT",
    "MAX_FOLLOWED",
    "PROTOCOL_VERSION",
    "REACTIONS",
    "Ack",
    "AddBot",
    "AddGhost",
    "Board",
    "BoardsOpen",
    "CancelSeek",
    "ClientMessage",
    "Create",
    "DealKind",
    "Error",
    "FeaturedRace",
    "FinalStatus",
    "Follow",
    "ForgetMe",
    "GameName",
    "Hello",
    "Identify",
    "IdentityReply",
    "Join",
    "Joined",
    "Leave",
    "Live",
    "LivePlayer",
    "LiveRoom",
    "LiveRooms",
    "LiveSort",
    "MoveRequest",
    "NewPlayer",
    "Ok",
    "Phase",
    "Ping",
    "PlayerFinished",
    "Pong",
    "PoolCount",
    "PoolCounts",
    "Pools",
    "Progress",
    "RaceEnded",
    "RaceRecordDelayed",
    "RaceRecorded",
    "RaceStarting",
    "RaceStatus",
    "RatingChange",
    "React",
    "Reaction",
    "ReactionCount",
    "Reactions",
    "Recover",
    "Rejected",
    "Rematch",
    "RematchOffer",
    "RematchOffered",
    "RematchReply",
    "Rename",
    "Resign",
    "ResultRow",
    "Resume",
    "Resync",
    "Role",
    "RoomOptions",
    "RoomSnapshot",
    "SeatEvent",
    "SeatInfo",
    "SeatStatus",
    "Seek",
    "SeekOffer",
    "SeekOfferKind",
    "Seeking",
    "ServerMessage",
    "SetHandle",
    "Spectators",
    "Start",
    "TakeOffer",
    "TournamentClose",
    "TournamentCreate",
    "TournamentEvent",
    "TournamentHost",
    "TournamentJoin",
    "TournamentLiveRound",
    "TournamentLiveRow",
    "TournamentOpen",
    "TournamentRejoin",
    "TournamentReply",
    "TournamentSeat",
    "TournamentStandings",
    "TournamentWithdraw",
    "TournamentYou",
    "Welcome",
]

PROTOCOL_VERSION = 2
"""The protocol version this code speaks; sent in ``hello`` and ``welcome``."""

DealKind = Literal["code", "random", "daily", "same"]
Reaction = Literal["clap", "wow", "fire", "gg"]
"""The reactions a player or spectator may send: a fixed set, no free text."""

REACTIONS: tuple[str, ...] = ("clap", "wow", "fire", "gg")
MAX_FOLLOWED = 4
"""Boards a spectator may follow at once."""
LIVE_LIMIT = 50
"""The most races a ``live`` subscription (or ``GET /api/live``) lists."""

RequestId = Annotated[int | None, Field(default=None, ge=0, le=2**53)]
Name = Annotated[str, Field(max_length=200)]
RoomCode = Annotated[str, Field(min_length=1, max_length=16)]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# --------------------------------------------------------------------- client → server


class Hello(_Message):
    """The first message on every connection: the protocol version the client speaks
    (``welcome`` echoes ``id``, as every reply does)."""

    type: Literal["hello"] = "hello"
    id: RequestId = None
    v: int
    client: Annotated[str | None, Field(default=None, max_length=64)] = None


#: a typed deal code: a sealed one is 32 characters, and the parser takes white space around
#: it (the engine's parser says what is wrong with a code; this only bounds its length)
_DealCodeText = Annotated[str | None, Field(default=None, max_length=40)]


class Create(_Message):
    """Create a room and take its first seat as the host.

    ``deal``: ``code`` (give ``code``), ``random``, or ``daily`` (the deal of the day).
    ``time_limit`` and ``spectator_delay`` are in seconds. ``spectator_boards``: false to
    show spectators the racers' progress only, never a board, while a race runs.
    ``rated``: the room's races change the racers' ratings (its creator and every player
    who joins need an identity; no robots; not with the deal of the day). ``solo``: a game
    in one tap — the race starts at once, with no countdown; others may join it by its link
    while it runs, and race from the next deal. ``winnable``: the room's random deals (this
    one, and a rematch's) are proven winnable by the solver before the race starts.
    """

    type: Literal["create"] = "create"
    id: RequestId = None
    game: GameName
    deal: DealKind = "random"
    code: _DealCodeText = None
    name: Name = ""
    max_players: Annotated[int, Field(ge=1, le=16)] = 8
    time_limit: Annotated[int | None, Field(default=None, ge=1, le=86_400)] = None
    spectators: bool = True
    private: bool = False
    spectator_delay: Annotated[int, Field(ge=0, le=600)] = 0
    spectator_reactions: bool = True
    spectator_boards: bool = True
    rated: bool = False
    solo: bool = False
    winnable: bool = False


class Join(_Message):
    """Join a room by its code as a player (with a name) or as a spectator.

    A private room also needs the ``key`` from its join link.
    """

    type: Literal["join"] = "join"
    id: RequestId = None
    room: RoomCode
    role: Role = "player"
    name: Name = ""
    key: Annotated[str | None, Field(default=None, max_length=64)] = None


class Resume(_Message):
    """Take a seat back after a reconnect with its session token; ``last_seq`` is the last
    room event seen (``null``: send a snapshot)."""

    type: Literal["resume"] = "resume"
    id: RequestId = None
    room: RoomCode
    token: Annotated[str, Field(min_length=1, max_length=128)]
    last_seq: Annotated[int | None, Field(default=None, ge=0)] = None


class Start(_Message):
    """Host only: start the race (everyone gets a countdown and the same start time)."""

    type: Literal["start"] = "start"
    id: RequestId = None


class MoveRequest(_Message):
    """Play one action in move notation (``s``, ``u``, ``a``, ``t2-f``, ``t6:4-t2`` …)."""

    type: Literal["move"] = "move"
    id: RequestId = None
    move: Annotated[str, Field(min_length=1, max_length=16)]


class Resign(_Message):
    """Give up the current race."""

    type: Literal["resign"] = "resign"
    id: RequestId = None


class Rematch(_Message):
    """Host only, after a race: offer the players a new race in the room on the ``same``
    deal or a new one (``random``, ``daily`` or ``code``). Each player answers with
    ``rematch_reply``; the race starts with those who accept."""

    type: Literal["rematch"] = "rematch"
    id: RequestId = None
    deal: DealKind = "same"
    code: _DealCodeText = None


class RematchReply(_Message):
    """A player's answer to the rematch offered for race ``race``: ``accept`` races it,
    otherwise the player sits it out, seated."""

    type: Literal["rematch_reply"] = "rematch_reply"
    id: RequestId = None
    race: Annotated[int, Field(ge=1)]
    accept: bool


class Leave(_Message):
    """Leave the room at once: a player's seat is freed (a running race is resigned first),
    a spectator stops watching. The connection stays open for another room."""

    type: Literal["leave"] = "leave"
    id: RequestId = None


SeatNumber = Annotated[int, Field(ge=0, le=1000)]


class Follow(_Message):
    """Spectators only: follow players' boards live (``board`` messages). ``seats``: up to
    :data:`MAX_FOLLOWED` seats, shown side by side (``[]`` stops); ``seat``: one seat
    (``null`` stops), for clients that follow one board. ``seats`` wins when both are given.
    Each ``follow`` replaces what was followed before."""

    type: Literal["follow"] = "follow"
    id: RequestId = None
    seat: Annotated[int | None, Field(default=None, ge=0, le=1000)] = None
    seats: Annotated[list[SeatNumber], Field(max_length=MAX_FOLLOWED)] | None = None

    def followed(self) -> list[int]:
        """The seats asked for, in order, without repeats."""
        seats = self.seats if self.seats is not None else [] if self.seat is None else [self.seat]
        return list(dict.fromkeys(seats))


class Live(_Message):
    """Subscribe to the live directory: the ``limit`` first public races in ``sort`` order
    (of ``game`` only, when given), sent as ``live_rooms`` now and whenever the list changes
    (at most twice a second). ``limit: 0`` ends the subscription; another ``live`` replaces
    it."""

    type: Literal["live"] = "live"
    id: RequestId = None
    sort: LiveSort = "closest"
    game: GameName | None = None
    limit: Annotated[int, Field(ge=0, le=LIVE_LIMIT)] = 20


class React(_Message):
    """Players and spectators of a room: a reaction, shown briefly beside the player at
    ``seat`` (a player's own seat when left out; a spectator's without a seat is the
    crowd's). Rate-limited; the set is fixed, there is no free text."""

    type: Literal["react"] = "react"
    id: RequestId = None
    reaction: Reaction
    seat: Annotated[int | None, Field(default=None, ge=1, le=1000)] = None


class AddBot(_Message):
    """Host only, between races: seat a bot the server plays (``greedy`` plays by sight;
    ``solver`` plays a winning line from the deal code when it finds one) at ``pace``
    actions a second."""

    type: Literal["add_bot"] = "add_bot"
    id: RequestId = None
    strength: Literal["greedy", "solver"] = "greedy"
    pace: Annotated[float, Field(ge=0.2, le=10.0)] = 2.0


class AddGhost(_Message):
    """Host only, between races of the same deal: seat a ghost that replays the run of
    ``seat`` in race ``race`` of this room at its recorded times."""

    type: Literal["add_ghost"] = "add_ghost"
    id: RequestId = None
    race: Annotated[int, Field(ge=1)]
    seat: Annotated[int, Field(ge=1, le=1000)]


PlayerName = Annotated[str, Field(max_length=200)]
PlayerId = Annotated[str, Field(min_length=1, max_length=32)]
Secret = Annotated[str, Field(min_length=1, max_length=128)]


class NewPlayer(_Message):
    """Ask for a new identity (the first time a client connects): a player id and a
    secret to keep, and a recovery code, shown once. Rate-limited per client address."""

    type: Literal["new_player"] = "new_player"
    id: RequestId = None
    name: PlayerName = ""


class Identify(_Message):
    """Say who this connection's player is: the id and secret of an identity. The seats
    taken from now on are theirs, and their finished races go on their record."""

    type: Literal["identify"] = "identify"
    id: RequestId = None
    player: PlayerId
    secret: Secret


class Recover(_Message):
    """Move an identity to this device with its recovery code: a new secret and a new
    recovery code come back; the old ones stop working."""

    type: Literal["recover"] = "recover"
    id: RequestId = None
    code: Annotated[str, Field(min_length=1, max_length=64)]


class Rename(_Message):
    """The identified player's display name."""

    type: Literal["rename"] = "rename"
    id: RequestId = None
    name: PlayerName


class SetHandle(_Message):
    """The identified player's handle (3–20 letters, digits, ``_`` or ``-``; unique,
    case-blind; it names their page ``/p/HANDLE``), or ``null`` to drop it."""

    type: Literal["set_handle"] = "set_handle"
    id: RequestId = None
    handle: Annotated[str | None, Field(max_length=64)] = None


class ForgetMe(_Message):
    """Delete the identified player's identity: their name becomes "deleted player" in
    the races they played (others' results stay whole) and the secret stops working."""

    type: Literal["forget_me"] = "forget_me"
    id: RequestId = None


TournamentCode = Annotated[str, Field(min_length=1, max_length=16)]
HostAct = Literal[
    "start",
    "start_round",
    "pause",
    "resume",
    "end_early",
    "edit_settings",
    "kick",
    "ban",
    "disqualify",
    "restore",
    "announce",
]


class TournamentCreate(_Message):
    """Create a tournament; the identified player is its host (who need not play). The
    ``settings`` are checked whole (``bad_settings`` names the first wrong field, never
    clamped): see docs/tournaments.md."""

    type: Literal["tournament_create"] = "tournament_create"
    id: RequestId = None
    settings: dict[str, Any]


class TournamentOpen(_Message):
    """Receive a tournament's events and standings on this connection (one tournament at a
    time); a private one needs its link's ``key``."""

    type: Literal["tournament_open"] = "tournament_open"
    id: RequestId = None
    tournament: TournamentCode
    key: Annotated[str | None, Field(default=None, max_length=64)] = None


class TournamentJoin(_Message):
    """Enter the tournament as a player (identified), and open it."""

    type: Literal["tournament_join"] = "tournament_join"
    id: RequestId = None
    tournament: TournamentCode
    name: Name = ""
    key: Annotated[str | None, Field(default=None, max_length=64)] = None


class TournamentWithdraw(_Message):
    """Leave the tournament (past results stay; a race being played is resigned)."""

    type: Literal["tournament_withdraw"] = "tournament_withdraw"
    id: RequestId = None
    tournament: TournamentCode


class TournamentRejoin(_Message):
    """Enter again after withdrawing (not after a kick or a ban)."""

    type: Literal["tournament_rejoin"] = "tournament_rejoin"
    id: RequestId = None
    tournament: TournamentCode


class TournamentHost(_Message):
    """A host's (or co-host's) act. ``act`` and what it takes: ``start``, ``start_round``,
    ``pause``, ``resume``, ``end_early`` (``reason``), ``edit_settings`` (``settings``: the
    fields to change), ``kick`` (``player``, ``reason``), ``ban`` (``player``, ``reason``,
    ``name`` for an identity not joined), ``disqualify`` (``player``, ``round``,
    ``reason``), ``restore`` (``player``, ``round``), ``announce`` (``text``)."""

    type: Literal["tournament_host"] = "tournament_host"
    id: RequestId = None
    tournament: TournamentCode
    act: HostAct
    player: Annotated[str | None, Field(default=None, max_length=64)] = None
    round: Annotated[int | None, Field(default=None, ge=1, le=20)] = None
    reason: Annotated[str | None, Field(default=None, max_length=1000)] = None
    text: Annotated[str | None, Field(default=None, max_length=2000)] = None
    name: Name | None = None
    settings: dict[str, Any] | None = None


class TournamentClose(_Message):
    """Stop receiving the open tournament's events."""

    type: Literal["tournament_close"] = "tournament_close"
    id: RequestId = None


SeekOfferKind = Literal["bot", "ghost", "smaller"]
"""What a player who has waited may race instead (``seek_offer``): a labelled bot, the
ghost of another player's run, or a room of 2 instead of 4."""


class Seek(_Message):
    """Play now: wait in the quick-play pool of ``game`` × ``players`` (2 or 4) ×
    ``time_limit`` (null, 300 or 600 seconds) until the server fills a room with players of
    close ratings and starts the race (``joined``, then the room's events, as any racer).
    ``rated``: null races rated when the player has an identity and the pool a time limit
    (races without one are casual), casual otherwise; true asks for a rated pool (an
    identity and a time limit needed), false for a casual one. After ``wait`` seconds the
    server offers something else to race (``seek_offer``). Answered with ``seeking``; refused
    with ``no_such_pool``, ``bad_time_limit``, ``rated_needs_time_limit``,
    ``rated_needs_identity``, ``already_seeking``, ``already_in_room`` or
    ``seek_cooldown`` (docs/protocol.md)."""

    type: Literal["seek"] = "seek"
    id: RequestId = None
    game: Annotated[str, Field(max_length=32)]
    players: int
    time_limit: int | None = None
    rated: bool | None = None
    wait: Annotated[int, Field(ge=5, le=300)] = 20
    name: Name = ""


class CancelSeek(_Message):
    """Leave the pool (answered with ``ok``; ``not_seeking`` without a seek). A seek also
    ends when its connection closes or enters a room."""

    type: Literal["cancel_seek"] = "cancel_seek"
    id: RequestId = None


class TakeOffer(_Message):
    """Race what ``seek_offer`` offered instead of waiting on: ``bot`` or ``ghost`` (a
    casual room of one's own with it, answered with ``joined``), ``smaller`` (the pool of
    rooms of 2, the wait so far kept, answered with ``seeking``)."""

    type: Literal["take_offer"] = "take_offer"
    id: RequestId = None
    offer: SeekOfferKind


class Pools(_Message):
    """``watch``: receive how many seek in each pool (``pool_counts``, now and whenever
    the counts change, at most once a second); false stops."""

    type: Literal["pools"] = "pools"
    id: RequestId = None
    watch: bool = True


class Ping(_Message):
    """Ask for a ``pong`` (with the server clock)."""

    type: Literal["ping"] = "ping"
    id: RequestId = None


ClientMessage = Annotated[
    Hello
    | Create
    | Join
    | Resume
    | Start
    | MoveRequest
    | Resign
    | Rematch
    | RematchReply
    | Leave
    | Follow
    | Live
    | React
    | AddBot
    | AddGhost
    | Ping
    | NewPlayer
    | Identify
    | Recover
    | Rename
    | SetHandle
    | ForgetMe
    | TournamentCreate
    | TournamentOpen
    | TournamentJoin
    | TournamentWithdraw
    | TournamentRejoin
    | TournamentHost
    | TournamentClose
    | Seek
    | CancelSeek
    | TakeOffer
    | Pools,
    Field(discriminator="type"),
]
"""Any client → server message."""


# --------------------------------------------------------------------- server → client


class RoomOptions(_Message):
    """A room's options as chosen at creation (the defaults are ``create``'s)."""

    max_players: int = 8
    time_limit: int | None = None
    spectators: bool = True
    private: bool = False
    spectator_delay: int = 0
    #: False: the racers do not see the spectators' reactions while they race
    spectator_reactions: bool = True
    #: False: spectators see the racers' progress only, no board, while a race runs
    spectator_boards: bool = True
    #: the room's races change the racers' ratings (identified players only, no robots)
    rated: bool = False
    #: the room's random deals are proven winnable by the solver before their race
    winnable: bool = False


class SeatInfo(_Message):
    """One player seat in a snapshot, with its progress in the current race. ``rating``: in
    a rated room, the player's rating in its game as shown (``provisional``: shown with a
    "?", as "1500?"); null in a casual room."""

    seat: int
    name: str
    connected: bool
    rating: int | None = None
    provisional: bool = False
    status: SeatStatus
    on_foundations: int = 0
    total: int = 0
    score: int = 0
    moves: int = 0
    elapsed_ms: int | None = None


class ResultRow(_Message):
    """One line of a race's ranking."""

    rank: int
    seat: int
    name: str
    status: SeatStatus
    on_foundations: int
    score: int
    moves: int
    elapsed_ms: int | None


class RematchOffer(_Message):
    """A rematch the host offered and the players are answering: race ``race`` on a deal of
    kind ``deal`` (never its code), starting once everyone asked has answered or at
    ``deadline`` (server ms). ``by`` is the seat that offered it (it races unasked)."""

    race: int
    deal: DealKind
    deadline: int
    by: int


class RoomSnapshot(_Message):
    """Everything a client needs to draw a room, as of event ``seq``. ``daily``: the room's
    deal is the deal of the day; ``rematch_offer``: a rematch waiting for answers; ``solo``:
    a game in one tap (``create`` with ``solo``): its races start at once, players may join
    during one and race from the next."""

    room: str
    link: str
    game: GameName
    options: RoomOptions
    host: int | None
    phase: Phase
    race: int
    deal: str | None = None
    start_at: int | None
    deadline: int | None
    seats: list[SeatInfo]
    results: list[ResultRow] | None
    seq: int
    now: int
    spectators: int = 0
    daily: bool = False
    rematch_offer: RematchOffer | None = None
    solo: bool = False


class Welcome(_Message):
    """Reply to ``hello``: the server speaks this version; limits the client must respect."""

    type: Literal["welcome"] = "welcome"
    id: int | None = None
    v: int
    worker: str
    max_frame: int
    rate: float
    burst: int
    bots: bool = False


class Joined(_Message):
    """Reply to ``create``, ``join``, ``resume`` and ``take_offer`` (a bot or a ghost); sent
    unasked (``id`` null) when a seek is paired: the seat in the pool's room.

    ``token`` (create and join only) is the seat's session token: keep it, it is the only
    way to act for the seat and to resume it. ``view`` is the player's own board when a
    race is running.
    """

    type: Literal["joined"] = "joined"
    id: int | None = None
    room: str
    link: str
    role: Role
    seat: int | None = None
    token: str | None = None
    key: str | None = None
    snapshot: RoomSnapshot | None = None
    view: dict[str, Any] | None = None


class Resync(_Message):
    """The events a resuming client missed are no longer kept: start again from this
    snapshot."""

    type: Literal["resync"] = "resync"
    snapshot: RoomSnapshot


class Ack(_Message):
    """A move was accepted and stored: the move as resolved, the cards it uncovered, and the
    parts of the player's board (face-up cards only) that it changed — merge them into the
    board held with :func:`protocol.views.merge_view`."""

    type: Literal["ack"] = "ack"
    id: int | None = None
    move: str
    revealed: list[str]
    changes: dict[str, Any]


class Rejected(_Message):
    """A move was refused: the rule it broke (``notation`` for bad syntax) and a reminder."""

    type: Literal["rejected"] = "rejected"
    id: int | None = None
    move: str
    rule: str
    reminder: str


class Error(_Message):
    """A request could not be served; ``code`` names the problem, ``message`` explains."""

    type: Literal["error"] = "error"
    id: int | None = None
    code: str
    message: str


class Ok(_Message):
    """Reply to ``start``, ``resign``, ``rematch``, ``rematch_reply``, ``leave``, ``follow``,
    ``live``, ``react``, ``add_bot``, ``add_ghost``, ``tournament_withdraw``,
    ``tournament_rejoin``, ``tournament_host``, ``tournament_close``, ``cancel_seek`` and
    ``pools`` when done."""

    type: Literal["ok"] = "ok"
    id: int | None = None


class IdentityReply(_Message):
    """Reply to ``new_player``, ``identify``, ``recover``, ``rename`` and ``set_handle``: the
    player as the server knows them. ``secret`` and ``recovery_code`` come only in the reply
    to ``new_player`` and ``recover``, once: keep the secret (it is the only way to be this
    player again), show the recovery code to the player."""

    type: Literal["identity"] = "identity"
    id: int | None = None
    player: str
    name: str
    handle: str | None = None
    created_at: int
    secret: str | None = None
    recovery_code: str | None = None


class Pong(_Message):
    """Reply to ``ping``; ``now`` is the server clock in ms since the epoch."""

    type: Literal["pong"] = "pong"
    id: int | None = None
    now: int


class Board(_Message):
    """For a spectator following ``seat``: that player's board, face-up cards only."""

    type: Literal["board"] = "board"
    room: str
    seat: int
    race: int
    view: dict[str, Any]


class BoardsOpen(_Message):
    """The boards of the room's race that were hidden from spectators (a tournament round
    while it runs) may be shown now: its round is over. A ``follow`` refused with
    ``boards_hidden`` may be asked again. Not a room event: no ``seq``, not kept, not
    resumed (a snapshot shows the room as it is)."""

    type: Literal["boards_open"] = "boards_open"
    room: str


class _Event(_Message):
    room: str
    seq: int


class SeatEvent(_Event):
    """A seat was taken, left, (dis)connected or became the host. ``rating``: in a rated
    room, the player's rating in its game as shown (``provisional``: with a "?"); null in a
    casual room."""

    type: Literal["seat"] = "seat"
    seat: int
    name: str
    connected: bool
    left: bool = False
    host: bool = False
    rating: int | None = None
    provisional: bool = False


class RaceStarting(_Event):
    """The host started race ``race``: moves are accepted from ``start_at`` (server ms).

    ``view`` is the starting board (face-up cards only, the same for every player); ``null``
    for a viewer who may not see this race's boards (as ``player_finished``'s ``board``).
    ``deal`` is withheld (``null``) from everyone but the player who typed the code: it
    tells every face-down card. ``daily``: the race is on the deal of the day; then
    ``attempts`` says what the race is for each racer (by seat): their ``ranked`` attempt of
    the day, ``unranked`` (an identity made after the day began), ``practice`` (they had
    their attempt), ``guest`` (no identity).
    """

    type: Literal["race_starting"] = "race_starting"
    race: int
    deal: str | None = None
    start_at: int
    deadline: int | None
    now: int
    seats: list[int]
    view: dict[str, Any] | None = None
    daily: bool = False
    attempts: dict[str, Literal["ranked", "unranked", "practice", "guest"]] | None = None


class RematchOffered(_Event):
    """The host offers race ``race`` on a deal of kind ``deal`` (``same``, ``random``,
    ``daily``, ``code``: never the code). Every player but the host (``by``) answers with
    ``rematch_reply``; the race starts with those who accepted once all have answered, or
    at ``deadline`` (server ms; ``now`` is the server clock as it was offered)."""

    type: Literal["rematch_offered"] = "rematch_offered"
    race: int
    deal: DealKind
    deadline: int
    now: int
    by: int


class Progress(_Event):
    """A player's progress after an accepted action or a change of status."""

    type: Literal["progress"] = "progress"
    race: int
    seat: int
    on_foundations: int
    total: int
    score: int
    moves: int
    status: SeatStatus
    elapsed_ms: int


class PlayerFinished(_Event):
    """A player won, resigned or ran out of time; their move list and board (face-up cards
    only). Not sent to players still racing. ``deal`` is given to the finished player only
    (the others get it in ``race_ended``). ``times_ms``: when each move was accepted, in ms
    since the race's start (server clock). ``move_list`` and ``board`` are ``null`` for a
    viewer who may not see this race's boards (the day's deal before their own attempt is
    over, a tournament round while it runs, a room showing progress only)."""

    type: Literal["player_finished"] = "player_finished"
    race: int
    seat: int
    status: SeatStatus
    elapsed_ms: int
    move_list: str | None
    board: dict[str, Any] | None
    deal: str | None = None
    times_ms: list[int] | None = None


class Spectators(_Event):
    """The number of spectators watching the room changed."""

    type: Literal["spectators"] = "spectators"
    count: int


class RaceEnded(_Event):
    """Every player has finished: the ranking."""

    type: Literal["race_ended"] = "race_ended"
    race: int
    deal: str | None = None
    results: list[ResultRow]


class RaceRecorded(_Event):
    """Race ``race`` of the room is in the records store: ``game_id`` names its replay
    (``/g/GAME_ID``, ``GET /api/games/GAME_ID``). Sent once the database has the race, a
    moment after ``race_ended``; never by a server that keeps no records. ``ratings``:
    each racer's new rating and its change, by seat (``null``: the race was not rated)."""

    type: Literal["race_recorded"] = "race_recorded"
    race: int
    game_id: str
    ratings: list[RatingChange] | None = None


class RaceRecordDelayed(_Event):
    """Race ``race`` of the room could not be written to the records store yet (its
    database cannot be reached): it is kept, and written once the database is back —
    ``race_recorded`` follows then. Sent at most once per race by its worker; never for a
    race on the deal of the day (whose replay is not linked before the day is over)."""

    type: Literal["race_record_delayed"] = "race_record_delayed"
    race: int


class LiveRooms(_Message):
    """The live directory, for a ``live`` subscription: the first ``rooms`` in ``sort``
    order out of ``total`` listed, and the featured race of each game. ``now``: server
    clock."""

    type: Literal["live_rooms"] = "live_rooms"
    sort: LiveSort
    game: GameName | None = None
    total: int
    now: int
    rooms: list[LiveRoom]
    featured: list[FeaturedRace]


class ReactionCount(_Message):
    """``n`` reactions ``reaction`` beside the player at ``seat`` (null: the crowd's), sent
    by players or by spectators (``by``)."""

    seat: int | None
    reaction: Reaction
    by: Literal["player", "spectator"]
    n: int


class Reactions(_Message):
    """The reactions sent in a room since the last ``reactions`` (at most two a second;
    not a room event: no ``seq``, not kept, not resumed)."""

    type: Literal["reactions"] = "reactions"
    room: str
    reactions: list[ReactionCount]


class TournamentSeat(_Message):
    """A participant's seat in round ``round``: take it with ``resume`` (``room``,
    ``token``), leaving the room of the last round first. Sent as the round starts (and
    in ``tournament`` while it is played)."""

    type: Literal["tournament_seat"] = "tournament_seat"
    tournament: str
    round: int
    room: str
    seat: int
    token: str
    start_at: int
    deadline: int
    now: int


class TournamentYou(_Message):
    """Who this connection is in the tournament: ``role`` host, co_host, player or
    spectator (anyone else: the page); a player's ``status`` and the host's ``reason`` for a
    kick or a ban; ``seat`` their seat in the round being played, if they play it."""

    player: str | None
    role: Literal["host", "co_host", "player", "spectator"]
    status: EntrantStatus | None = None
    reason: str | None = None
    seat: TournamentSeat | None = None


class TournamentReply(_Message):
    """Reply to ``tournament_create``, ``tournament_open`` and ``tournament_join``: the
    tournament's page as of event ``seq`` (later events follow as ``tournament_event``) and
    who you are in it."""

    type: Literal["tournament"] = "tournament"
    id: int | None = None
    page: TournamentPage
    you: TournamentYou
    seq: int


class TournamentEvent(_Message):
    """Something happened in the tournament (``kind`` and its ``data``: see
    docs/protocol.md); ``seq`` rises with each."""

    type: Literal["tournament_event"] = "tournament_event"
    tournament: str
    seq: int
    kind: str
    data: dict[str, Any]


class TournamentLiveRow(_Message):
    """A finished race of the round being played, in the round's ranking so far."""

    player: str
    name: str
    place: int
    status: ResultStatus
    on_foundations: int
    score: int
    moves: int
    elapsed_ms: int | None


class TournamentLiveRound(_Message):
    """The round being played: how many play it and have finished, the top of its
    ranking so far, and your own line once you have finished."""

    round: int
    participants: int
    finished: int
    top: list[TournamentLiveRow]
    you: TournamentLiveRow | None


class TournamentStandings(_Message):
    """The standings, pushed when they change (coalesced: at most two a second): the top
    rows (the first 200 for hosts and spectators, the first 10 for players), your own row,
    and the round being played."""

    type: Literal["tournament_standings"] = "tournament_standings"
    tournament: str
    version: int
    players: int
    top: list[StandingRow]
    you: StandingRow | None
    live: TournamentLiveRound | None


class Seeking(_Message):
    """Reply to ``seek`` (and to ``take_offer`` ``smaller``): the player waits in ``pool``
    (``GAME:PLAYERS:SECONDS:rated|casual``), since ``since`` (server ms; ``now`` is the
    server clock), and is offered something else at ``offer_at`` if still waiting.
    ``rating``: the player's rating in the game as the pairing uses it (shown with a "?"
    while ``provisional``; null for a guest)."""

    type: Literal["seeking"] = "seeking"
    id: int | None = None
    pool: str
    game: GameName
    players: int
    time_limit: int | None
    rated: bool
    since: int
    offer_at: int
    now: int
    rating: int | None = None
    provisional: bool = False


class SeekOffer(_Message):
    """The player has waited as long as they chose: what they may race instead
    (``take_offer``), while they keep waiting in ``pool``. ``bot``: a labelled bot (a casual
    race); ``ghost``: the ghost of another player's run of a deal new to them (casual);
    ``smaller``: a room of 2 instead of 4 (the wait so far kept)."""

    type: Literal["seek_offer"] = "seek_offer"
    pool: str
    offers: list[SeekOfferKind]


class PoolCount(_Message):
    """How many seek in one pool."""

    pool: str
    game: GameName
    players: int
    time_limit: int | None
    rated: bool
    seeking: int


class PoolCounts(_Message):
    """How many seek in each pool (for a ``pools`` watch)."""

    type: Literal["pool_counts"] = "pool_counts"
    pools: list[PoolCount]


ServerMessage = Annotated[
    Welcome
    | Joined
    | Resync
    | Ack
    | Rejected
    | Error
    | Ok
    | Pong
    | Board
    | BoardsOpen
    | SeatEvent
    | RematchOffered
    | RaceStarting
    | Progress
    | PlayerFinished
    | RaceEnded
    | RaceRecorded
    | RaceRecordDelayed
    | Spectators
    | IdentityReply
    | LiveRooms
    | Reactions
    | TournamentReply
    | TournamentEvent
    | TournamentStandings
    | TournamentSeat
    | Seeking
    | SeekOffer
    | PoolCounts,
    Field(discriminator="type"),
]
"""Any server → client message."""

EVENT_TYPES = frozenset(
    {
        "seat",
        "rematch_offered",
        "race_starting",
        "progress",
        "player_finished",
        "race_ended",
        "race_recorded",
        "race_record_delayed",
        "spectators",
    }
)
"""Message types that are room events (they carry ``room`` and ``seq``)."""
