"""`samedeal serve` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    """No commands yet."""
    _ = (sub, argparse)
