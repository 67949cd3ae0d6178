"""Identities without passwords: random ids, secrets, recovery codes, handles (no I/O).

* A **player id** is public: 16 characters of Crockford's base-32, lower case (80 bits).
* A **secret** is 32 URL-safe characters (192 random bits). The store keeps its SHA-256
  only: a secret of that much entropy needs no slow hash, and hashes are compared with
  :func:`secrets.compare_digest`.
* A **recovery code** is 24 characters of Crockford's base-32 in six groups of four
  (``7K2M-Q9XD-…``, 120 bits), read and typed by people: case, spaces and dashes are
  ignored, ``O`` reads as ``0`` and ``I``/``L`` as ``1``.
* A **handle** has 3 to 20 characters: letters of any script (with their combining marks),
  decimal digits, ``_`` and ``-``, starting with a letter or a digit. Two handles are the
  same when their *keys* are: NFKC, case folded, accents dropped, and look-alike letters
  mapped to one (Cyrillic ``а`` and Latin ``a``; ``0``/``o``; ``1``/``l``/``i``; ``rn``/``m``;
  ``vv``/``w``). Reserved words (:data:`RESERVED`) are refused by their key, so ``Admin``,
  ``ADM1N`` and ``аdmin`` (Cyrillic ``а``) are all refused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import unicodedata

from server.codes import clean_name, hash_token

from .models import BadHandle

__all__ = [
    "DELETED_NAME",
    "HANDLE_MAX",
    "HANDLE_MIN",
    "RESERVED",
    "address_key",
    "check_handle",
    "clean_player_name",
    "handle_key",
    "hash_secret",
    "is_player_id",
    "is_race_id",
    "is_secret",
    "new_player_id",
    "new_race_id",
    "new_recovery_code",
    "new_secret",
    "normalize_recovery_code",
]

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford's base 32: no i, l, o, u
PLAYER_ID_LENGTH = 16
RACE_ID_LENGTH = 12
SECRET_RE = re.compile(r"[A-Za-z0-9_-]{32}")
RECOVERY_LENGTH = 24
HANDLE_MIN = 3
HANDLE_MAX = 20
DELETED_NAME = "deleted player"
"""The name a deleted identity keeps, in its own row and in its seats of past races."""
DEFAULT_NAME = "Player"

RESERVED = frozenset(
    {
        "admin",
        "administrator",
        "anonymous",
        "api",
        "bot",
        "deleted",
        "deleted-player",
        "deleted_player",
        "guest",
        "help",
        "mod",
        "moderator",
        "null",
        "official",
        "root",
        "samedeal",
        "server",
        "staff",
        "support",
        "system",
    }
)
"""Handles nobody may take (compared by key, so their look-alikes are refused too)."""

# look-alikes of Latin letters and digits, after case folding and with accents removed
_LOOK_ALIKES = str.maketrans(
    {
        # Cyrillic
        "а": "a",
        "в": "b",
        "е": "e",
        "һ": "h",
        "і": "l",
        "ӏ": "l",
        "ј": "j",
        "к": "k",
        "м": "m",
        "н": "h",
        "о": "o",
        "р": "p",
        "с": "c",
        "т": "t",
        "у": "y",
        "х": "x",
        "ѕ": "s",
        "ԁ": "d",
        "ԛ": "q",
        "ԝ": "w",
        # Greek
        "α": "a",
        "β": "b",
        "γ": "y",
        "ε": "e",
        "η": "n",
        "ι": "l",
        "κ": "k",
        "ν": "v",
        "ο": "o",
        "ρ": "p",
        "τ": "t",
        "υ": "u",
        "χ": "x",
        "ω": "w",
        # Latin and digits
        "ı": "l",
        "i": "l",
        "1": "l",
        "|": "l",
        "0": "o",
        "ɡ": "g",
    }
)
_LOOK_ALIKE_PAIRS = (("rn", "m"), ("vv", "w"))


# --------------------------------------------------------------------- ids and secrets


_FROM_RFC4648 = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", ALPHABET)


def _random_base32(length: int) -> str:
    # base64's base-32 encoder, its alphabet mapped to Crockford's: 10× faster than
    # choosing characters one by one, which shows when a batch of races is written
    raw = base64.b32encode(secrets.token_bytes((length * 5 + 7) // 8)).decode("ascii")
    return raw[:length].translate(_FROM_RFC4648)


def new_player_id() -> str:
    """A fresh public player id."""
    return _random_base32(PLAYER_ID_LENGTH)


def new_race_id() -> str:
    """A fresh public race id (60 bits: a finished private race is not found by guessing)."""
    return _random_base32(RACE_ID_LENGTH)


def is_player_id(text: object) -> bool:
    """Whether ``text`` has the form of a player id (a cheap check before any query)."""
    return (
        isinstance(text, str)
        and len(text) == PLAYER_ID_LENGTH
        and all(char in ALPHABET for char in text)
    )


def is_race_id(text: object) -> bool:
    """Whether ``text`` has the form of a race id."""
    return (
        isinstance(text, str)
        and len(text) == RACE_ID_LENGTH
        and all(char in ALPHABET for char in text)
    )


def new_secret() -> str:
    """A fresh secret: 192 random bits, URL-safe text."""
    return secrets.token_urlsafe(24)


def is_secret(text: object) -> bool:
    """Whether ``text`` has the form of a secret."""
    return isinstance(text, str) and SECRET_RE.fullmatch(text) is not None


def hash_secret(text: str) -> str:
    """What the store keeps of a secret or a normalized recovery code: SHA-256, hex."""
    return hash_token(text)


def new_recovery_code() -> str:
    """A fresh recovery code: ``XXXX-XXXX-XXXX-XXXX-XXXX-XXXX`` (120 random bits)."""
    raw = _random_base32(RECOVERY_LENGTH).upper()
    return "-".join(raw[i : i + 4] for i in range(0, RECOVERY_LENGTH, 4))


def normalize_recovery_code(text: object) -> str | None:
    """The canonical form of a typed recovery code, or ``None`` if it cannot be one."""
    if not isinstance(text, str) or len(text) > 64:
        return None
    raw = "".join(char for char in text.upper() if char not in " -\t")
    raw = raw.replace("O", "0").replace("I", "1").replace("L", "1").lower()
    if len(raw) != RECOVERY_LENGTH or any(char not in ALPHABET for char in raw):
        return None
    return raw


def address_key(key: bytes, address: str) -> str:
    """The keyed hash under which a client address is rate-limited (HMAC-SHA256, hex): the
    address itself is never stored."""
    return hmac.new(key, address.encode("utf-8", "replace"), hashlib.sha256).hexdigest()


def clean_player_name(name: object) -> str:
    """A display name as the rooms clean it (:func:`server.codes.clean_name`)."""
    return clean_name(name if isinstance(name, str) else "", DEFAULT_NAME)


# --------------------------------------------------------------------- handles


def handle_key(handle: str) -> str:
    """The folded form under which handles are unique (see the module docstring)."""
    text = unicodedata.normalize("NFKC", handle).casefold()
    text = unicodedata.normalize("NFKD", text)
    text = "".join(char for char in text if not unicodedata.combining(char))
    text = text.translate(_LOOK_ALIKES)
    for pair, one in _LOOK_ALIKE_PAIRS:
        text = text.replace(pair, one)
    return unicodedata.normalize("NFC", text)


_RESERVED_KEYS = frozenset(handle_key(word) for word in RESERVED)


def _allowed(char: str, first: bool) -> bool:
    cat = unicodedata.category(char)
    if cat[0] == "L" or cat == "Nd":
        return True
    if first:
        return False
    return cat in ("Mn", "Mc") or char in "_-"


def check_handle(handle: object) -> tuple[str, str]:
    """``(handle, key)``: the handle as it will be shown (NFC) and its key; raises
    :class:`BadHandle` with a sentence saying what is wrong."""
    if not isinstance(handle, str):
        raise BadHandle("a handle is text")
    text = unicodedata.normalize("NFC", handle.strip())
    if not HANDLE_MIN <= len(text) <= HANDLE_MAX:
        raise BadHandle(f"a handle has {HANDLE_MIN} to {HANDLE_MAX} characters")
    for i, char in enumerate(text):
        if not _allowed(char, i == 0):
            where = "start a handle" if i == 0 else "be in a handle"
            raise BadHandle(f"{char!r} cannot {where}: use letters, digits, _ and -")
    key = handle_key(text)
    if key in _RESERVED_KEYS:
        raise BadHandle(f"the handle {text!r} is reserved")
    return text, key
