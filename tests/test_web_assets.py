"""The browser client's files and the message catalogues, read as files: every word in
three languages, rule reminders for every rule the engine and server name, error texts for
every error code, no emoji a font may lack, no markup built from strings."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from clients.i18n import LANGUAGES, Catalogue, detect_lang
from engine.game import REMINDERS

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "clients" / "web"
PLURAL_FORMS = {
    "en": {"one", "other"},
    "ru": {"one", "few", "many", "other"},
    "sv": {"one", "other"},
}
# the server's own refusals of a move (server/app.py) besides the engine's rules
SERVER_RULES = {"no-race", "finished", "not-started", "time-up", "notation"}


def load(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((WEB / "i18n" / f"{lang}.json").read_text("utf-8"))
    return data


def placeholders(entry: Any) -> set[str]:
    texts = entry.values() if isinstance(entry, dict) else [entry]
    return {name for text in texts for name in re.findall(r"\{(\w+)\}", text)}


@pytest.mark.parametrize("lang", [x for x in LANGUAGES if x != "en"])
def test_every_language_says_everything_english_says(lang: str) -> None:
    english, other = load("en"), load(lang)
    assert set(other) == set(english)
    for key, entry in english.items():
        assert placeholders(other[key]) == placeholders(entry), key
        assert isinstance(other[key], dict) == isinstance(entry, dict), key


@pytest.mark.parametrize("lang", LANGUAGES)
def test_plural_entries_have_the_language_s_forms(lang: str) -> None:
    for key, entry in load(lang).items():
        if isinstance(entry, dict) and not key.startswith("share.place"):
            assert PLURAL_FORMS[lang] <= set(entry), (lang, key)


def test_every_rule_and_error_has_a_text() -> None:
    english = load("en")
    for rule, reminder in REMINDERS.items():
        assert english[f"rule.{rule}"] == reminder  # the engine's English, word for word
    for rule in SERVER_RULES:
        assert f"rule.{rule}" in english
    server = "\n".join(p.read_text("utf-8") for p in (ROOT / "server").rglob("*.py"))
    codes = set(re.findall(r'(?:Refusal|RoomError)\(\s*"([a-z_]+)"', server))
    codes |= set(re.findall(r'_error\(conn, \w+, "([a-z_]+)"', server))
    assert codes, "no error codes found in server/"
    missing = sorted(c for c in codes if f"error.{c}" not in english)
    assert not missing


def test_every_key_the_pages_use_exists() -> None:
    english = load("en")
    html = (WEB / "index.html").read_text("utf-8")
    used = set(re.findall(r'data-i18n[a-z-]*="([^"]+)"', html))
    for js in WEB.glob("*.js"):
        used |= set(re.findall(r'\b(?:t|tn|tOrdinal)\("([^"]+)"', js.read_text("utf-8")))
    for game in ("easy-harp", "klondike", "klondike-3"):
        used.add(f"game.{game}")
    for status in ("waiting", "playing", "won", "resigned", "timeout", "disconnected"):
        used.add(f"status.{status}")
    used |= {f"rank.{r}" for r in "A23456789TJQK"} | {f"suit.{s}" for s in "SHDC"}
    assert sorted(k for k in used if k not in english) == []


def test_no_emoji_and_no_markup_from_strings() -> None:
    """A machine without an emoji font draws boxes: icons are SVG. Names are text."""
    emoji = re.compile("[\U0001f000-\U0001faff\u2699\u2705\u274c\u2b50]")
    for path in [*WEB.rglob("*.js"), *WEB.rglob("*.html"), *WEB.rglob("*.json")]:
        text = path.read_text("utf-8")
        assert not emoji.search(text), path.name
        if path.suffix == ".js":
            assert "innerHTML" not in text and "insertAdjacentHTML" not in text, path.name
    html = (WEB / "index.html").read_text("utf-8")
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)  # the CSP allows no inline script


def test_the_terminal_reads_the_same_catalogues() -> None:
    ru, sv = Catalogue("ru"), Catalogue("sv")
    assert ru.tn("stats.moves", 21) == "21 ход" and ru.tn("stats.moves", 12) == "12 ходов"
    assert sv.ordinal("share.place", 2, n=3) == "2:a av 3"
    assert Catalogue("en").ordinal("share.place", 11, n=12) == "11th of 12"
    assert ru.rule_text("not-a-rule-id", "as sent") == "as sent"
    assert Catalogue("xx").lang == "en"
    assert detect_lang({"LANG": "sv_SE.UTF-8"}) == "sv"
    assert detect_lang({"LC_ALL": "", "LANG": "ru_RU.UTF-8"}) == "ru"
    assert detect_lang({"LANG": "de_DE.UTF-8"}) == "en"
