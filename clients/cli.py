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

__all__ = ["build_parser", "main"]

COMMAND_MODULES = (
    "clients.cmd_deal",
    "clients.cmd_solve",
    "clients.cmd_serve",
    "clients.cmd_play",
    "clients.cmd_db",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="samedeal", description="Race your friends on the same deal of patience."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``samedeal`` console command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
