"""The ``samedeal`` command.

Each subcommand lives in its own module (``clients.cmd_*``) exposing ``register(subparsers)``;
heavy imports (the server, the solver) happen inside the command, so ``samedeal deal`` starts
fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any, NoReturn

__all__ = ["OneLineParser", "VersionAction", "build_parser", "main"]


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2 (argparse
    prints the whole usage first); ``--help`` still shows everything."""

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: MESSAGE`` and exit with 2."""
        self.exit(2, f"{self.prog}: {message}\n")


class VersionAction(argparse.Action):
    """``--version``: the package's version and which build of the engine runs (compiled
    or pure Python, ``engine.BUILD``), found only when asked, so that other commands do not
    pay for the import."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and the build")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> NoReturn:
        import engine

        try:
            number = version("samedeal")
        except PackageNotFoundError:  # (a checkout that is not installed)
            number = "(not installed)"
        print(f"samedeal {number}, engine {engine.BUILD}")
        parser.exit(0)


COMMAND_MODULES = (
    "clients.cmd_deal",
    "clients.cmd_solve",
    "clients.cmd_serve",
    "clients.cmd_play",
    "clients.cmd_history",
    "clients.cmd_watch",
    "clients.cmd_tournament",
    "clients.cmd_db",
    "clients.cmd_ratings",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = OneLineParser(
        prog="samedeal", description="Race your friends on the same deal of patience."
    )
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``samedeal`` console command; returns the exit status."""
    parser = build_parser()
    from .cmd_tournament import normalize_argv

    # ``samedeal tournament URL`` is ``samedeal tournament play URL``
    args = parser.parse_args(normalize_argv(sys.argv[1:] if argv is None else argv))
    try:
        status: int = args.run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
