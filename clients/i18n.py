"""Message catalogues for the clients: ``clients/web/i18n/<lang>.json``, the same files the
browser fetches, so both clients say the same things in English, Russian and Swedish.

>>> cat = Catalogue("ru")
>>> cat.tn("stats.moves", 1), cat.tn("stats.moves", 3), cat.tn("stats.moves", 5)
('1 ход', '3 хода', '5 ходов')
>>> Catalogue("en").rule_text("same-column", "…")
'A card cannot be moved onto its own column.'

Plural entries are objects of CLDR plural forms (``one``, ``few``, ``many``, ``other``…),
chosen by the count; placeholders are ``{name}``. Code holds keys, never text.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["CATALOGUE_DIR", "LANGUAGES", "Catalogue", "detect_lang"]

CATALOGUE_DIR = Path(__file__).resolve().parent / "web" / "i18n"
LANGUAGES = ("en", "ru", "sv")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _plural_en(n: int) -> str:
    return "one" if n == 1 else "other"


def _plural_ru(n: int) -> str:
    if n % 10 == 1 and n % 100 != 11:
        return "one"
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return "few"
    return "many"


def _ordinal_en(n: int) -> str:
    if n % 10 == 1 and n % 100 != 11:
        return "one"
    if n % 10 == 2 and n % 100 != 12:
        return "two"
    if n % 10 == 3 and n % 100 != 13:
        return "few"
    return "other"


def _ordinal_sv(n: int) -> str:
    return "one" if n % 10 in (1, 2) and n % 100 not in (11, 12) else "other"


# CLDR's integer rules for the languages we speak (the browser asks Intl.PluralRules).
_CARDINAL: dict[str, Callable[[int], str]] = {"en": _plural_en, "ru": _plural_ru, "sv": _plural_en}
_ORDINAL: dict[str, Callable[[int], str]] = {
    "en": _ordinal_en,
    "ru": lambda n: "other",
    "sv": _ordinal_sv,
}


@cache
def _load(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CATALOGUE_DIR / f"{lang}.json").read_text("utf-8"))
    return data


def detect_lang(environ: Mapping[str, str] | None = None) -> str:
    """The language of the terminal's locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``,
    ``LANGUAGE``), if we speak it; English otherwise."""
    env = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        for tag in env.get(name, "").split(":"):
            base = tag.split(".")[0].split("_")[0].split("-")[0].lower()
            if base in LANGUAGES:
                return base
    return "en"


class Catalogue:
    """The texts of one language, English for any key it lacks."""

    def __init__(self, lang: str = "en") -> None:
        self.lang = lang if lang in LANGUAGES else "en"
        self._messages = _load(self.lang)
        self._fallback = _load("en")

    def has(self, key: str) -> bool:
        """Whether ``key`` names a text."""
        return key in self._messages or key in self._fallback

    def _entry(self, key: str) -> Any:
        return self._messages.get(key, self._fallback.get(key))

    @staticmethod
    def _fill(text: str, params: Mapping[str, object]) -> str:
        return _PLACEHOLDER.sub(lambda m: str(params.get(m.group(1), m.group(0))), text)

    def t(self, key: str, **params: object) -> str:
        """The text for ``key`` with its placeholders filled (``key`` itself if unknown)."""
        entry = self._entry(key)
        if entry is None:
            return key
        if isinstance(entry, dict):
            n = params.get("n", 0)
            form = _CARDINAL[self.lang](int(n) if isinstance(n, int | str) else 0)
            entry = entry.get(form, entry["other"])
        return self._fill(str(entry), params)

    def tn(self, key: str, n: int, **params: object) -> str:
        """A plural text counted by ``n``."""
        return self.t(key, n=n, **params)

    def ordinal(self, key: str, rank: int, **params: object) -> str:
        """An ordinal text ("1st of 2"), its form chosen by ``rank``."""
        entry = self._entry(key)
        if isinstance(entry, dict):
            entry = entry.get(_ORDINAL[self.lang](rank), entry["other"])
        return self._fill(str(entry if entry is not None else key), {"rank": rank, **params})

    def rule_text(self, rule: str, english: str) -> str:
        """A refused move's reminder, by its rule id (the server's English otherwise)."""
        return self.t(f"rule.{rule}") if self.has(f"rule.{rule}") else english

    def error_text(self, error_code: str, english: str) -> str:
        """A server error, by its code (the server's English otherwise)."""
        return self.t(f"error.{error_code}") if self.has(f"error.{error_code}") else english
