"""Small values a room is known by: room codes (typed, read aloud, stored), seat session
tokens and what the store keeps of them, player names as plain text. Pure: no I/O."""

from __future__ import annotations

import hashlib
import secrets
import unicodedata

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "NAME_LENGTH",
    "clean_name",
    "display_code",
    "hash_token",
    "new_room_code",
    "new_token",
    "normalize_code",
]

CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
"""Room code letters: no 0/O, 1/I/L or U, so a code read aloud is typed right."""
CODE_LENGTH = 6
NAME_LENGTH = 24


def new_room_code() -> str:
    """A fresh 6-letter room code (30**6 ≈ 7·10**8 codes)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def display_code(code: str) -> str:
    """``K7QF2M`` → ``K7QF-2M``: the form people read aloud."""
    return f"{code[:4]}-{code[4:]}"


def normalize_code(text: str) -> str | None:
    """The stored form of a typed room code (case, spaces and dashes ignored), or None."""
    code = "".join(char for char in text.upper() if char not in " -\t")
    if len(code) != CODE_LENGTH or any(char not in CODE_ALPHABET for char in code):
        return None
    return code


def new_token() -> str:
    """A session token: 192 random bits, URL-safe text."""
    return secrets.token_urlsafe(24)


def hash_token(token: str) -> str:
    """What the store keeps of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def clean_name(text: str, fallback: str) -> str:
    """A player name as plain text: control and format characters removed, white space
    collapsed, at most :data:`NAME_LENGTH` characters."""
    kept = []
    for char in unicodedata.normalize("NFC", text):
        cat = unicodedata.category(char)
        if cat[0] == "C":
            continue
        kept.append(" " if cat[0] == "Z" else char)
    name = " ".join("".join(kept).split())[:NAME_LENGTH].strip()
    return name or fallback
