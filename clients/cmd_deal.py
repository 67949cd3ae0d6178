"""``samedeal deal`` and ``samedeal replay``: look at a deal, replay a move list.

These command forms are a public interface that scripts depend on: keep them stable.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from engine import GAME_NAMES, DealCode, Game, GameError, IllegalMoveError, new_game
from engine.easyharp import SLOT_SUITS

__all__ = ["deal_title", "format_position", "register"]

_TITLES = {
    "easy-harp": "Easy Harp",
    "klondike": "Klondike, draw one",
    "klondike-3": "Klondike, draw three",
}
_SUIT_LETTER = "CDHS"


def register(sub: Any) -> None:
    """Add ``deal`` and ``replay`` to the subcommand parser."""
    deal = sub.add_parser("deal", help="show the layout of a deal code")
    what = deal.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "code",
        nargs="?",
        help="a deal code such as EH1-N-AAAAAAF, or a sealed one (26 letters) such as "
        "KL1-1-QXGMDZRAWCKTEPLNOHBSVYFJUI",
    )
    what.add_argument(
        "--random",
        metavar="GAME",
        choices=sorted(GAME_NAMES),
        help="pick a random sealed deal of GAME (easy-harp, klondike, klondike-3)",
    )
    deal.add_argument("--json", action="store_true", help="print the full position JSON")
    deal.set_defaults(run=run_deal)

    rep = sub.add_parser(
        "replay",
        help="apply moves to a deal and print the final position, or open a finished "
        "race's replay (http://HOST/g/ID)",
    )
    rep.add_argument("code", help="a deal code, or a replay link http://HOST/g/ID")
    rep.add_argument(
        "moves",
        nargs="*",
        metavar="MOVE",
        help="actions in move notation, or - to read a move list from stdin",
    )
    rep.add_argument("--json", action="store_true", help="print the position (or error) as JSON")
    rep.add_argument(
        "--lang", choices=["en", "ru", "sv"], help="the replay viewer's language (a link)"
    )
    rep.set_defaults(run=run_replay)


def _dump(obj: Any) -> None:
    sys.stdout.write(orjson.dumps(obj, option=orjson.OPT_INDENT_2).decode() + "\n")


def _parse_code(text: str) -> DealCode | None:
    try:
        return DealCode.parse(text)
    except GameError as exc:
        print(f"samedeal: {exc}", file=sys.stderr)
        return None


def run_deal(args: argparse.Namespace) -> int:
    """Print a deal's layout (or its position JSON)."""
    if args.random:
        code: DealCode | None = DealCode.random(args.random)
    else:
        code = _parse_code(args.code)
    if code is None:
        return 2
    game = new_game(code)
    if args.json:
        _dump(game.position())
    else:
        print(format_position(game))
    return 0


def run_replay(args: argparse.Namespace) -> int:
    """Apply the moves; exit 1 at the first refused one, 2 for a bad code. A replay link
    (``http://HOST/g/ID``) opens the replay viewer instead."""
    if "://" in args.code:
        from .cmd_history import run_replay_link

        return run_replay_link(args.code, args.moves, args.lang)
    code = _parse_code(args.code)
    if code is None:
        return 2
    moves: list[str] = []
    for arg in args.moves:
        if arg == "-":
            moves.extend(sys.stdin.read().split())
        else:
            moves.append(arg)
    game = new_game(code)
    for index, text in enumerate(moves):
        try:
            game.push(text)
        except GameError as exc:
            rule = exc.rule if isinstance(exc, IllegalMoveError) else "notation"
            message = exc.reminder if isinstance(exc, IllegalMoveError) else str(exc)
            if args.json:
                _dump({"error": {"index": index, "move": text, "rule": rule, "message": message}})
            else:
                print(
                    f"samedeal: move {index + 1} ({text!r}) refused [{rule}]: {message}",
                    file=sys.stderr,
                )
            return 1
    if args.json:
        _dump(game.position())
    else:
        print(format_position(game))
    return 0


def deal_title(code: DealCode) -> str:
    """``Klondike, draw one, deal 5``; a sealed deal has no number and is named by its code
    only (``Klondike, draw one, sealed deal``)."""
    number = code.number
    return f"{_TITLES[code.game_name]}, " + ("sealed deal" if number is None else f"deal {number}")


def format_position(game: Game) -> str:
    """The position laid out for a person; face-down cards in parentheses."""
    pos = game.position()
    lines = [
        f"{pos['code']}  {deal_title(game.code)}",
        f"score {pos['score']}   moves {pos['moves']}" + ("   WON" if pos["won"] else ""),
        "",
    ]
    slots = []
    for i, pile in enumerate(pos["foundations"]):
        label = f"f{i + 1}"
        if game.code.game == "EH":
            label += f"({_SUIT_LETTER[SLOT_SUITS[i]]})"
        slots.append(f"{label} {pile[-1] if pile else '--'}")
    lines.append("foundations  " + "  ".join(slots))
    stock = pos["stock"]
    lines.append(f"stock        {len(stock)} cards" + (f", next {stock[-1]}" if stock else ""))
    waste = pos["waste"]
    lines.append(
        f"waste        {' '.join(waste[-3:]) if waste else '--'}"
        + (f"  ({len(waste)} cards)" if len(waste) > 3 else "")
    )
    lines.append("")
    for i, col in enumerate(pos["tableau"]):
        cards = [f"({c})" for c in col["down"]] + col["up"]
        lines.append(f"t{i + 1:<2} " + (" ".join(cards) if cards else "--"))
    return "\n".join(lines)
