"""A solver for Klondike (draw one and three) and Easy Harp, with full knowledge of the cards.

>>> from engine.solver import solve
>>> result = solve("KL1-1-AAAAAAF", nodes=200_000)
>>> result.verdict in ("winnable", "unwinnable", "unknown")
True

``solve`` answers **winnable** with a solution — a move list in the notation of ``moves.md``
that :func:`engine.replay` plays from the position to a won game (it is replayed before the
answer is given) — **unwinnable** only when the search was exhaustive, or **unknown** when the
budget ran out. A node budget makes the answer deterministic; a time budget does not.

How the search works
--------------------
A search over a compact abstract position (its own columns, talon and foundation heights;
the engine's ``push()`` validates, it does not search) with a transposition set: every
position is stored once and expanded at most once, and when no admitted position is left
unexpanded the deal is unwinnable. Three orders are used:

* *best-first*: the open position with the lowest score is expanded first (the
  ``priority`` methods: fewer face-down cards, more cards home and shorter lines first;
  Klondike takes two such orders in turns, the second of draw three also counting
  *blockers* — cards lying in a column above a lower card of their suit, which must move
  before that one can go home);
* *depth-first*: the first untried move of the newest position is played, and moves are
  taken back when a position has nothing new below it. It plays moves forward and back
  instead of saving and restoring positions, so a node is cheaper, and it commits to a
  line, which finds some wins the best-first order misses (and misses others);
* *restart dives* (Easy Harp; Klondike on request): depth-first dives from the start, each
  with a fresh transposition set, a node cap that grows by a factor from dive to dive, and
  its own move order — the usual one with a random term of fixed seed added to each move's
  score. A depth-first search that commits to a wrong early move can spend its whole budget
  below it; the many short dives in different orders find the wins of many deals that both
  other orders miss. A dive that ends below its cap has exhausted the graph (a proof like
  any other), so this search too is complete. Every other dive is *streamlined*;
* *streamlined* searches (Easy Harp; Klondike on request) look for wins in a part of the
  graph only: every card that can go home from a column (Easy Harp: or the talon) goes home
  at once, and no card is taken back from a foundation. Their graph is much smaller, and
  many deals are won in it, some that the complete searches take millions of nodes to win
  (draw three deal 160 in tens of thousands); but a win may need a card kept on the table or
  taken back, so a streamlined search that runs dry proves nothing, and it only ever answers
  "winnable". (A streamlined restart dive that runs dry has seen the whole streamlined
  graph: the dives after it are all complete.)
* *aimed* searches (Easy Harp, ``Member.order`` 1) aim at the goal, which is only that no
  card be face down: the best-first order also counts *buried* cards (face up on a
  face-down card, each of which must leave before that card turns), and the move order
  puts a card rather on a column with fewer face-down cards. A best-first or depth-first
  aimed search keeps its own transposition set, so it is complete on its own like any
  search with one. Of the twelve of deals 1-100 the four other orders leave unknown after a
  million nodes, the aimed best-first search alone wins all within 140,000 nodes, the
  aimed depth-first search 5 within 300,000.

Both games run best-first and depth-first side by side (``HARP_PORTFOLIO``,
``KLONDIKE_PORTFOLIO``); Klondike draw one adds the restart dives, and Easy Harp the restart
dives and a streamlined best-first search too, without an end, as its deals are nearly all
won (none of deals 1-100 is proven lost), and the two aimed searches from 20,480 nodes on
(so that budgets up to 20,000 nodes, a winnable-only round's in the tests, prove what they
proved before). (Klondike draw three ran the dives and the streamlined search as well, for
the first 80,000 and 200,000 nodes, until reduction 10 made its complete searches win what
they won, and its proofs shorter without them.) The searches take turns in slices of nodes
(best-first alone for the first few thousand, which keeps the quick wins and their short
solutions); the first to reach a goal gives the solution.
The best-first and the depth-first search share one transposition set (``Shared``): a
position is admitted once, by either, and expanded by the one that admitted it — except
that the depth-first search, meeting a position the best-first search admitted and has not
expanded yet, takes it over (the best-first search then skips it), so that it can still
follow its line; and once it has nothing new left below the start, it takes over the best
open position of the best-first search and dives from there, and so on (``Shared.take``),
which keeps the cheaper depth-first nodes at work on the proofs of lost deals. Every
admitted position is thus expanded by one of the two, and the deal is unwinnable once both
have nothing left; together they search the graph once instead of
twice, which halves the time of most proofs. (Without the shared set, each is complete on
its own and the first to exhaust its space decides: ``KLONDIKE_SHARED``; Easy Harp always
shares.) Dead-end answers
(rule 7) are shared by all searches, as they depend on the columns alone. The order only
decides how fast a win is found, never whether one is: a search that exhausts a finite
graph has seen everything reachable. The slices are counted in nodes and the random terms
have fixed seeds, so a node budget still gives a deterministic answer. The solver plays in
an *abstract graph*: a talon move takes a card within reach in one step, and the stock
actions that reach it are added when the solution is written out; each solution is then
replayed by the engine.

Soundness of every reduction
----------------------------
"Unwinnable" must never be wrong, so the search only leaves out moves and positions that
provably cannot be needed. Write ``d(P)`` for the length of a shortest winning line from ``P``
in the full abstract graph. Each reduction comes with a rewriting that turns a shortest
winning line from ``P`` into one no longer whose first step the reduced search tries at ``P``
(or, for a forced move, into a strictly shorter line from the position it moves to). By
induction on ``d``, a winnable position keeps a winning path through the reduced graph.

1. **Talon.** Draw one (Klondike draw one, Easy Harp): passes are unlimited and free, so any
   talon card can be brought to the waste top, and taking one leaves the others within reach.
   The talon is therefore a *set* (a multiset in Easy Harp); its order and the stock/waste
   split are not part of the position. Draw three: the talon is its card sequence and the
   waste size ``p``. The sizes 0, 3, 6, … and "stock empty" form one cycle of stock actions,
   so these positions reach each other and are one position; a size off the cycle is kept (it
   can reach the cycle but not come back). The cards in reach are those on top of the waste
   after ``p``, ``p+3``, … and after each size of the cycle.
2. **Symmetry.** Columns are interchangeable, so a position is keyed with its columns sorted;
   the foundations are left out of the key (every card not in a column or the talon is home,
   and per suit the home cards fix the pile heights). A move into an empty column is tried
   for one empty column only. Moving a king (with its run) that already lies at the bottom
   of its column into another empty column only swaps two columns: never tried. In Easy Harp
   the two piles of a suit are interchangeable (a card playable on both is tried on one).
3. **Closed foundations** (which cards never need to leave home). Let ``λ`` be levels per
   suit, each at most the height of every pile of that suit, with ``λ[t] ≥ λ[s] − 1`` for
   suits ``s``, ``t`` of different colours (``closed_levels`` computes the largest). The set
   ``L`` of home cards below those levels is *closed*: a card built on a rank-``k`` card is
   of the other colour and rank ``k − 1``, so whatever can be built on an ``L`` card is in
   ``L``. Deleting from a winning line every move of an ``L`` card leaves a legal winning
   line: ``L`` cards come back only face up onto fitting cards, nothing outside ``L`` is ever
   built on them, so they always form the top part of a column and every other move sees the
   same tops (a run that carried them moves without them), the same empty columns or more,
   the same face-down cards and the same foundation tops for cards outside ``L``. So a
   shortest line never takes back a card of ``L``. Likewise an ace is never built on a two
   in a shortest line (it could go home instead, and nothing is ever built on an ace), so a
   two is never taken back either.
4. **Safe foundation moves** (forced, no branching). A card ``c`` of rank ``r`` and suit
   ``s`` that is playable home is played at once when the other colour's piles all hold
   ``r`` cards or more, the other piles of ``c``'s colour ``r − 1`` or more, and (Easy Harp)
   the other pile of suit ``s`` ``r`` or more — the classical rule "other colour ``r − 1``
   home, same colour ``r − 2`` home", which is exactly the condition for the levels
   ``λ = r`` (other colour and suit ``s``) and ``r − 1`` (the other suit of ``c``'s colour) to
   be closed. It is taken from a column top, or from the talon in draw one; never from the
   talon in draw three, where removing a card changes which others are in reach. Proof: by 3
   a winning line need not move a card of that set; then nothing is ever built on ``c`` (its
   children are in the set) and the card under it at home is never taken back, so deleting
   every move of ``c`` gives a legal winning line from the position with ``c`` home, shorter
   by at least ``c``'s last move. In Easy Harp, if the line plays the other copy of ``c`` home
   on the pile we used, it is played on the other pile of the suit instead, which then also
   holds ``r`` cards (both piles hold at least ``r`` and cannot hold more while both copies
   are out): the piles of a suit are interchangeable.
5. **Talon chains** (draw one). Since every talon card is always in reach, putting one on the
   table or home can be postponed until it is needed. A talon card put on a column matters
   only when a card from elsewhere (another column, or a foundation) is built on it; until
   then it can stay in the talon (if it or its run is moved on, it can be moved there straight
   from the talon; if it goes home, from the talon). A talon card sent home matters only when
   its successor from the table follows it. So in a rewritten winning line every talon move is
   part of one of two blocks, which are the only talon moves searched: *talon cards onto a
   column (or a king and more into an empty column), then a card or run from another column,
   or a foundation top, onto them*; and *talon cards of one suit home, then a column top home
   on them*. Talon cards left over once every other card is home are covered by the goal test.
   Draw three keeps plain talon moves, and its talon cards are never played home by rule 4.
   With rule 10 the blocks are those of its graph, where a card moved that is not a base
   changes nothing: a talon card put on the table matters only when a base with the cards on
   it, a foundation top or another talon card of the block is put on it, or the cards on a
   covered card next home move onto it, that card's twin, for it to go home (the move of two
   steps of rule 10); and the column card that follows talon cards home may be that covered
   card, by the same move.
6. **Postponement.** Some moves change nothing but which card is exposed: a run (Klondike) or
   top card (Easy Harp) leaving a *face-up* card ``a`` for another column, a top card leaving
   a face-up ``a`` for home, a card taken back from a foundation. Such a move can be postponed,
   in any winning line, to just before the first later move that *uses* what it exposed —
   meanwhile the cards stay where they were and every other move is unaffected (a move that
   carried them along, or built on them, does the same from the old place). So the search
   tries such a move only if a use is possible right after it: ``a`` can go home (or its
   predecessor can go home first), or another card that fits on ``a`` is face up, on a
   foundation top or in the talon within reach (draw one: with cards to build on the chain),
   or (Easy Harp) ``a`` itself can move onto a top; a card going home is also useful when its
   successor can follow at once; a card taken back when a card can be built on it or the card
   under it taken back too. Two such moves can need each other (``a`` moves onto the card
   exposed by the other): the tests that accept one of the pair are kept loose (a card only
   needs to be face up somewhere), so that one of the two is always tried first. In Klondike
   "``a`` moves on with the run under it" is not a use: the move of that longer run, block
   included, followed by the block's move, reaches the same position in as many moves, and
   repeating this walks down the column to a move that uncovers or empties it.
7. **Dead ends** (Klondike). A position is abandoned when some card can provably never go
   home, by an optimistic relaxation computed as a least fixed point: a card can go home if
   its predecessor can and it can be reached; a card can leave the card under it if it can
   go home, or a card it fits on can be built on then, or it is a king; a face-down card
   only after the cards on it have left. A card can be built on if it lies in a column and
   the cards on it can leave, or — a talon card, or a card home at the start — if it is a
   king or a card it fits on can be built on: such a card must first be put on the table,
   onto a fitting card (a card on a foundation cannot be built on; going home and coming
   back needs that same put-back). By induction over a real line, every card that goes
   home, leaves the card under it or is built on does so after what it needed, so it is in
   the fixed point; a card that never gets home in it is stuck, and the position is lost.
   *Kings wait for an empty column*: when no column is empty, a king moves (off a card, or
   from the talon or a foundation) only once some column can be emptied — its bottom card
   can go home, or is not a king and can leave for a card it fits on. Columns only grow and
   shrink at the top, so until a column is first emptied the bottom cards are today's, and
   the first emptying is such a bottom card leaving (a king moves only into an empty
   column); the induction goes through. *Draw three: talon cards in reach* (a second test,
   for positions being expanded, cached by position): a talon card counts (can go home or be
   put on the table) only once it can be reached. Number the talon cards 1, 2, … in drawing
   order. Within one pass through the stock, taking a card never changes which later cards
   the next draws show (the later cards and the waste size both move down by one), so a card
   at position ``i`` turns up on the waste top only when it is in reach now, or ``i − k`` is
   a multiple of 3 where ``k`` cards before it have left the talon by the start of a pass,
   or the card above it in the waste is taken (the card after it, ``i + 1``, has left). So it
   is reached only if it is in reach now, or the card after it can leave the talon, or for
   some ``k`` from 1 to the number of cards before it that can leave, ``i − k`` is a multiple
   of 3; a card can leave the talon if it can be reached and then go home or onto a card (or
   a king into an empty column). These are monotone rules of the same fixed point, and the
   induction over a real line goes through as before.
8. **Goal.** In draw one (Klondike, Easy Harp) a position with no face-down card is won: every
   column's face-up part is a run, so the lowest card not yet home is a column top or in the
   talon, and its predecessor is home (in Easy Harp a pile of its suit has exactly its rank).
   The search stops there and plays the rest home, lowest first. Draw three needs the talon
   empty as well.
9. **Twins** (Klondike, part of the dead-end test of rule 7). Let ``x`` and ``y`` be two
   cards of one rank and colour, both in columns; they fit on the same two cards ``p`` and
   ``q``. Say a card *moves* when it is the lowest card of a move (a card carried along on
   a run does not). Suppose that ``p`` cannot be built on before both ``x`` and ``y`` have
   moved: in the relaxation of rule 7 with ``x`` *frozen* (it never moves) ``p`` cannot be
   built on, nor with ``y`` frozen — the part of a line before ``x`` first moves is a line
   of that relaxation, so by the induction of rule 7 ``p`` is not built on in it. Take a
   winning line and its first move that puts ``x`` or ``y`` onto a card (not home), say
   ``x``. From then on ``x`` lies on ``p`` or ``q`` until it goes home (it can leave one only
   for the other, or for home; a card moving ``p`` or ``q`` carries it along). Meanwhile
   ``y`` never leaves the card under it for a card: before ``y`` has moved, ``p`` cannot be
   built on and ``x`` takes ``q`` (or ``p``, which it can take only after ``y`` has moved,
   and so gone home); after ``y`` has gone home it can come back only onto the one of ``p``
   and ``q`` that ``x`` leaves free, and leave it only for home. So up to the moment ``x``
   goes home the line is a line of the relaxation with ``y`` *pinned* (it leaves the card
   under it only to go home), and by the induction of rule 7 ``x`` can go home in that
   relaxation. If neither twin is ever put onto a card, both relaxations apply. Hence when
   ``x`` cannot go home with ``y`` pinned, nor ``y`` with ``x`` pinned, no line wins and the
   position is lost. (The usual case: both twins lie above ``p`` in its column, each face
   down or on a card it does not fit on, so that no run carries it; draw three tests only
   that case, as the rest costs it more time than it saves. In draw one's deal 85, ``2D``
   lies on ``2H`` on the ``8C`` that alone can take the ``7H`` lying on ``p = 3S``: both
   twins need ``3C``, and the deal is lost from the start.)

10. **Arrangement** (Klondike). Call a column's *base* its lowest face-up card, unless
    that is a king with nothing under it; the base and the face-down cards are the column's
    *fixed* cards, every other card on the table is *loose*. The face-up part of a column is
    a run, so a loose card lies on one of the two cards it fits, a *pair* (one rank up, of
    the other colour), and each card holds at most one: the number of *free* cards of a
    pair (face up on the table, nothing on them) is the number of its cards face up on the
    table less the loose cards that fit on it, whatever the arrangement. A move of a run
    whose lowest card is loose (a king with nothing under it included) changes no fixed card
    and no loose set: a *rearrangement*. Every other move — a base with the cards on it
    onto a free card (or a king into an empty column), turning the card under it or
    emptying the column; a card home; a talon card onto a free card or home; a foundation
    card onto a free card — changes the fixed cards, the loose set, the talon and the
    foundations the same way in every arrangement, and can be played in every arrangement
    of them after at most one rearrangement: it needs a free card of a pair (or an empty
    column), which they all have alike, except a card going home, which must itself be
    free; if it is covered and its twin is free (the other card of its rank and colour, which
    fits on the same pair), the run on it first moves onto the twin (its lowest card fits
    there). So every winning line from one arrangement maps, move by move, to one from any
    other, with the same moves other than rearrangements: positions with the same fixed
    cards per column (up to the order of the columns), loose cards, talon and waste size
    are won or lost alike, and are one position of the search (``KlondikeSearch.key``). The
    search counts a line by its moves other than rearrangements (``d`` above) and tries no
    rearrangement (it would reach the same key), but the move of two steps "the cards on a
    covered card next home onto its twin, then that card home"; it puts a card onto one free
    card of a pair only (the other gives the same key). Rules 3 and 4 delete moves of a line
    and rule 6 postpones them, which holds in this graph as well (a rearrangement that made
    a card free for the move goes with it); rule 6's moves of runs that uncover nothing are
    the rearrangements, gone, and a card going home that turns nothing over is used right
    after when its successor goes home, or a card of the pair it leaves goes home (or that
    card's predecessor first: loosely, any face-up or reachable one), or its twin comes onto
    the card it leaves, from its foundation, the talon, or as the base of its column. The
    dead-end answers are cached by the key: one arrangement proven lost proves them all.
    (The day's proof keeps the draw one search of before this rule: ``Member.arranged``.)

These arguments are backed by tests that compare the solver with an exact, unreduced search
of the engine's own legal moves on small positions.

Scoring, the move counter, undo and the order of moves never matter for winnability.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NamedTuple

from ..dealcode import DealCode
from ..game import Game, new_game, replay
from ._common import Budget, OutOfBudget, Shared, drive

__all__ = ["VERDICTS", "Member", "SolveResult", "Verdict", "solve"]

Verdict = Literal["winnable", "unwinnable", "unknown"]
VERDICTS: Final = ("winnable", "unwinnable", "unknown")


@dataclass(frozen=True, slots=True)
class SolveResult:
    """What :func:`solve` found.

    ``solution`` is the winning move list (canonical notation, shorthands resolved) when the
    verdict is ``winnable``, else ``None``. ``nodes`` counts the positions the search generated,
    ``seconds`` the wall-clock time, ``positions`` the distinct positions stored.
    """

    code: str | None
    verdict: Verdict
    solution: tuple[str, ...] | None
    nodes: int
    seconds: float
    positions: int = 0
    note: str | None = field(default=None, compare=False)

    def __reduce__(self) -> tuple[Any, ...]:
        # (compiled, a frozen dataclass does not unpickle by itself; results cross processes)
        return (
            SolveResult,
            (
                self.code,
                self.verdict,
                self.solution,
                self.nodes,
                self.seconds,
                self.positions,
                self.note,
            ),
        )

    @property
    def solution_text(self) -> str | None:
        """The solution as one line of notation, or ``None``."""
        return None if self.solution is None else " ".join(self.solution)

    def as_json(self) -> dict[str, Any]:
        """The JSON object of ``samedeal solve --json``."""
        return {
            "code": self.code,
            "verdict": self.verdict,
            "solution": self.solution_text,
            "nodes": self.nodes,
            "seconds": round(self.seconds, 3),
        }


def solve(
    position: DealCode | str | Game,
    *,
    nodes: int | None = None,
    seconds: float | None = None,
    portfolio: Sequence[Member] | None = None,
) -> SolveResult:
    """Decide whether ``position`` — a deal code or a game in progress — can be won.

    ``nodes`` bounds the positions generated (deterministic), ``seconds`` the wall-clock time;
    with neither the search runs until it decides. ``portfolio`` replaces the game's searches
    (``KLONDIKE_PORTFOLIO``, ``HARP_PORTFOLIO``): the deal of the day pins its own, so that
    a new portfolio does not move past days. Raises
    :class:`~engine.errors.InvalidDealCodeError` for a bad code, ``ValueError`` for an empty
    portfolio or an unknown mode.
    """
    started = time.perf_counter()
    if isinstance(position, Game):
        game = position.copy()
        code: DealCode | None = None
    else:
        code = position if isinstance(position, DealCode) else DealCode.parse(position)
        game = new_game(code)
    code_text = str(game.code)
    if game.won:
        return SolveResult(code_text, "winnable", (), 0, time.perf_counter() - started)
    searches = _searches_for(game, portfolio)
    budget = Budget(nodes, seconds)
    # The search makes millions of small tuples and lists and no reference cycles, and keeps
    # most of them until it ends: the cycle collector would trace them again and again for
    # nothing (about a tenth of the time, by perf), so it is off meanwhile.
    collecting = gc.isenabled()
    gc.disable()
    try:
        search, found = drive(searches, budget)
    except OutOfBudget:
        positions = max(run[0].positions for run in searches)
        return SolveResult(code_text, "unknown", None, budget.nodes, budget.elapsed(), positions)
    finally:
        if collecting:
            gc.enable()
    if not found:
        return SolveResult(
            code_text, "unwinnable", None, budget.nodes, budget.elapsed(), search.positions
        )
    note: str | None = None
    try:
        search.finish()
        moves = _write_out(game.copy(), search.trail)
        won = (replay(code, moves) if code is not None else _replayed(game, moves)).won
    except (ValueError, AssertionError) as exc:  # a solver bug: never report a wrong line
        won, moves, note = False, [], f"solution failed verification: {exc}"
    if not won and note is None:
        note = "solution failed verification: the game is not won"
    if not won:
        return SolveResult(
            code_text, "unknown", None, budget.nodes, budget.elapsed(), search.positions, note
        )
    return SolveResult(
        code_text, "winnable", tuple(moves), budget.nodes, budget.elapsed(), search.positions
    )


def _replayed(game: Game, moves: list[str]) -> Game:
    other = game.copy()
    other.push_all(moves)
    return other


class Member(NamedTuple):
    """One search of a portfolio (see "How the search works")."""

    #: ``"best"``, ``"depth"`` or ``"restart"`` (see ``Search.search``)
    mode: str
    #: slices of nodes per round
    share: int = 1
    #: nodes spent in all before it starts
    start: int = 0
    #: nodes spent in all after which it no longer runs (None: never)
    stop: int | None = None
    #: a search that only looks for wins, in a part of the graph ("streamlined" above)
    streamline: bool = False
    #: ``"restart"`` mode: every ``streamline_every``-th dive is streamlined (0: none)
    streamline_every: int = 0
    #: the game's order of moves and positions (0: the usual; Easy Harp's 1: aimed at the
    #: face-down cards, see ``HarpSearch.order``); a member of another order keeps its own
    #: transposition set
    order: int = 0
    #: Klondike draw one: False for the search without reduction 10 ("arrangement"), kept
    #: for the day's proof (``engine.daily.DAILY_PORTFOLIO``), which must not move when the
    #: solver learns; such members share a transposition set only with each other
    arranged: bool = True


#: the searches Klondike runs side by side, per draw
KLONDIKE_PORTFOLIO: Final[dict[int, tuple[Member, ...]]] = {
    # draw one adds restart dives (every other one streamlined), taking a third of the nodes
    # from 8,192 on: on deals 1-1,000 at 800,000 nodes they win 4 deals the two leave unknown
    # (11 -> 7) with a quarter less CPU in all, and proofs of lost deals take up to 1.5x the
    # nodes (the longest 296,000 -> 440,000); measured before reduction 10 reached draw one
    1: (
        Member("best"),
        Member("depth", start=4096),
        Member("restart", 1, 8192, streamline_every=2),
    ),
    # draw three no longer adds the restart dives and a streamlined best-first search (for
    # the first 80,000 and 200,000 nodes): with reduction 10 ("arrangement") they won
    # nothing the other two did not on deals 1-200 and 200 sealed deals at 500,000 nodes
    # (392 decided without them, 391 with), and took nodes from every proof
    3: (Member("best"), Member("depth", start=4096)),
}

#: the modes of a ``Member``
_MODES: Final = ("best", "depth", "restart")
#: the orders of a ``Member``, per game
_ORDERS: Final = {"KL": (0,), "EH": (0, 1)}

#: the searches Easy Harp runs side by side: on deals 1-100 the depth-first search wins 14
#: deals within 20 s that the best-first search does not (most in under a thousand nodes),
#: and loses 3 that best-first alone won in 12-19 s; a streamlined best-first search and
#: restart dives (every other one streamlined) then win 15 of the 25 deals those two leave
#: unknown after 20 s, each within 400,000 nodes of the four (alone at 100,000 nodes: 12 and
#: 8, together 15); the aimed best-first and depth-first searches (from 20,480 nodes, the
#: best-first one with two shares) then win the 12 those four leave unknown after a million
#: nodes: deals 1-100 and 100 sealed deals all won within 20 s, 101-200 all but 128
HARP_PORTFOLIO: Final[tuple[Member, ...]] = (
    Member("best"),
    Member("depth", start=4096),
    Member("restart", 1, 8192, streamline_every=2),
    Member("best", 1, 2048, streamline=True),
    Member("best", 2, 20_480, order=1),
    Member("depth", 1, 20_480, order=1),
)

#: whether the best-first and depth-first searches of a Klondike portfolio share one
#: transposition set (see "How the search works")
KLONDIKE_SHARED = True


def _searches_for(
    game: Game, portfolio: Sequence[Member] | None = None
) -> list[tuple[Any, int, int, int | None]]:
    """One search per member of the portfolio, each on its own copy of the position: the
    complete ones share a transposition set (``Shared``), the streamlined ones and the
    restart dives keep their own."""
    make: Callable[[bool], Any]
    if game.code.game == "KL":
        from ._klondike import KlondikeSearch
        from ._klondike_pinned import PinnedDrawOneSearch

        found = [0, 0, 0, 0]
        for pile in game.foundations:
            if pile:
                found[pile[-1] // 13] = len(pile)
        cache: dict[Any, bool] = {}
        talon_cache: dict[Any, list[tuple[int, bool]]] = {}

        def make(arranged: bool = True) -> Any:
            kind = KlondikeSearch if arranged else PinnedDrawOneSearch
            search = kind(game.columns, game.down, found, game.waste, game.stock, game.draw)
            search.dead_cache = cache
            search.talon_cache = talon_cache
            return search

        members = KLONDIKE_PORTFOLIO[game.draw] if portfolio is None else portfolio
        shared = {True: Shared(), False: Shared()} if KLONDIKE_SHARED else None
    else:
        from ._harp import HarpSearch

        def make(arranged: bool = True) -> Any:
            slots = [len(f) for f in game.foundations]
            return HarpSearch(game.columns, game.down, slots, game.waste + game.stock)

        members = HARP_PORTFOLIO if portfolio is None else portfolio
        shared = {True: Shared()}
    if not members:
        raise ValueError("a portfolio needs at least one search")
    out: list[tuple[Any, int, int, int | None]] = []
    for member in members:
        if member.mode not in _MODES:
            raise ValueError(f"unknown search mode {member.mode!r}: one of {', '.join(_MODES)}")
        if member.order not in _ORDERS[game.code.game]:
            raise ValueError(f"no search order {member.order!r} in this game")
        if not member.arranged and (game.code.game != "KL" or game.draw != 1):
            raise ValueError("only Klondike draw one has a search without reduction 10")
        search = make(member.arranged)
        search.mode = member.mode
        search.streamline_every = member.streamline_every
        if member.order:
            search.order = member.order
        if member.streamline:
            search.streamline = True
        elif member.mode != "restart" and not member.order and shared is not None:
            search.shared = shared[member.arranged]
        out.append((search, member.share, member.start, member.stop))
    return out


def _write_out(game: Game, trail: list[Any]) -> list[str]:
    """Turn the solver's primitive actions into notation by playing them on ``game``: stock
    actions are added to bring each talon card to the waste top, foundation piles resolved."""
    out: list[str] = []

    def push(text: str) -> None:
        out.append(str(game.push(text).move))

    for step in trail:
        kind = step[0]
        if kind == "run":
            _, x, count, y = step
            push(f"t{x + 1}:{count}-t{y + 1}" if count > 1 else f"t{x + 1}-t{y + 1}")
        elif kind == "colf":
            push(f"t{step[1] + 1}-f")
        elif kind == "talon":
            _, card, q, y = step
            _bring(game, card, q, push)
            push("w-f" if y < 0 else f"w-t{y + 1}")
        elif kind == "back":
            _, card, y = step
            slot = next(i for i, f in enumerate(game.foundations) if f and f[-1] == card)
            push(f"f{slot + 1}-t{y + 1}")
        else:  # pragma: no cover
            raise AssertionError(f"unknown step {step!r}")
    return out


def _bring(game: Game, card: int, q: int, push: Any) -> None:
    """Press the stock until ``card`` is the waste top (draw three: with ``q`` waste cards)."""
    limit = 2 * (len(game.stock) + len(game.waste)) + 4
    for _ in range(limit):
        waste = game.waste
        if waste and waste[-1] == card and (game.draw == 1 or len(waste) == q):
            return
        push("s")
    raise AssertionError(f"card {card} is not in reach in the talon")
