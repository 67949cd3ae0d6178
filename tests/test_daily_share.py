"""The share text of a race on the deal of the day (``clients/daily_share.py``): the right
numbers in every language, and never the deal code, a card or a ``/d/DEAL`` link; the deck
turns a client counts from its own boards agree with the engine's, undos included; the
race's day read from its deadline. (The browser's builder is compared with this one in
``tests/test_daily_browser.py``.)"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clients.daily_share import (
    DailyResult,
    daily_share_text,
    daily_url,
    daily_watch_text,
    day_number,
    day_of_race,
    deck_turn_step,
    format_time,
    foundation_line,
)
from clients.i18n import LANGUAGES, Catalogue
from engine import DealCode, new_game
from engine.fair import secret_daily

KEY = bytes(range(32))
URL = "http://127.0.0.1:8765/daily/2026-04-16"
WON = DailyResult(
    number=106,
    game="klondike",
    attempt="ranked",
    won=True,
    on_foundations=52,
    total=52,
    score=1187,
    moves=143,
    deck_turns=2,
    elapsed_ms=312_400,
    foundations=(13, 13, 13, 13),
    url=URL,
)
LOST = replace(
    WON,
    game="easy-harp",
    attempt="practice",
    won=False,
    on_foundations=37,
    total=104,
    score=415,
    moves=88,
    deck_turns=5,
    elapsed_ms=3_723_000,
    foundations=(7, 3, 0, 13, 9, 1, 4, 0),
)
# a deal code of any game, as `samedeal deal` reads them
DEAL_CODE = re.compile(r"\b(?:EH|KL)\d-[A-Z0-9]-[A-Z]{7}\b")
SUITS = "♠♥♦♣"


def card_words(cat: Catalogue) -> re.Pattern[str]:
    """Anything that names a card in ``cat``'s language: a rank or suit word (ace, king,
    spades…), a suit symbol, or a card in notation (AH, TS, 10D)."""
    words = [cat.t(f"rank.{r}") for r in "AJQK"] + [cat.t(f"suit.{s}") for s in "SHDC"]
    names = "|".join(re.escape(w) for w in words)
    return re.compile(rf"(?i)\b(?:{names})\b|[{SUITS}]|\b(?:[2-9TJQKA]|10)[SHDC]\b")


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("result", [WON, LOST], ids=["won", "lost"])
def test_the_share_text_tells_the_numbers_and_no_deal_or_card(
    lang: str, result: DailyResult
) -> None:
    cat = Catalogue(lang)
    text = daily_share_text(cat, result)
    head, facts, squares, link = text.split("\n")
    assert cat.t("daily.number", n=106)[-3:] == "106" and "106" in head
    assert cat.t(f"game.{result.game}") in head
    if result.attempt == "ranked":
        assert " · " + cat.t("attempt.ranked") not in head  # the ranked attempt goes unsaid
    else:
        assert head.endswith(cat.t(f"attempt.{result.attempt}"))
    won = cat.t("share.daily_won")
    if result.won:
        assert facts.startswith(won)
    else:
        assert facts.startswith(cat.t("share.daily_not_won", cards=37, total=104))
    assert cat.t("share.daily_score", score=result.score) in facts
    assert cat.tn("stats.moves", result.moves) in facts
    assert cat.t("share.daily_time", time=format_time(result.elapsed_ms)) in facts
    # deck turns: Klondike's passes through the stock; Easy Harp's share leaves them out
    turns = cat.tn("share.deck_turns", result.deck_turns)
    assert (turns in facts) == (result.game == "klondike")
    assert squares == foundation_line(result.foundations or ())
    assert link == cat.t("share.daily_link", url=URL) and link.endswith(URL)
    # spoiler-free: no code, no card, no link that starts a room on the deal
    assert not DEAL_CODE.search(text)
    assert not card_words(cat).search(text), text
    assert "/d/" not in text and "null" not in text and "None" not in text


def test_the_days_real_code_is_never_in_the_share_text() -> None:
    secret = secret_daily(KEY, "klondike", "2026-04-16")
    for lang in LANGUAGES:
        text = daily_share_text(Catalogue(lang), WON)
        assert str(secret.code) not in text and secret.salt.hex() not in text


def test_the_numbers_read_back_exactly() -> None:
    text = daily_share_text(Catalogue("en"), WON)
    assert text == (
        "samedeal · deal of the day #106 · Klondike, draw one\n"
        "Won · score 1187 · 143 moves · 2 deck turns · time 5:12\n"
        "████\n"
        f"The day's results: {URL}"
    )
    one = daily_share_text(Catalogue("en"), replace(WON, moves=1, deck_turns=1, foundations=None))
    assert "1 move ·" in one and "1 deck turn ·" in one and "█" not in one
    lost = daily_share_text(Catalogue("ru"), LOST)
    assert lost.split("\n")[1] == (
        "Не пройдено: 37/104 карт в домах · очки 415 · 88 ходов · время 1:02:03"
    )
    assert lost.split("\n")[0].endswith("Тренировка")


def test_a_spectator_shares_the_day_and_the_racers() -> None:
    text = daily_watch_text(Catalogue("sv"), 106, "easy-harp", 3, URL)
    assert text.split("\n") == [
        "samedeal · dagens giv #106 · Easy Harp",
        Catalogue("sv").tn("share.racing", 3),
        f"Dagens resultat: {URL}",
    ]


def test_the_foundation_squares_fill_in_proportion() -> None:
    assert foundation_line([0, 1, 4, 5, 8, 9, 12, 13]) == "□░░▒▒▓▓█"
    assert foundation_line([]) == ""


# Windows' WGL4 character set, which the fonts of every system cover (DejaVu, Liberation,
# Noto, Apple's): the share text's marks are drawn everywhere, with no emoji font
WGL4_SHAPES = set("□■▪▫▬▲►▼◄○●◘◙◦░▒▓█▀▄▌▐")


def test_the_marks_are_characters_every_font_has() -> None:
    """Issue 31: emoji squares showed as empty boxes where no colour-emoji font is
    installed; the marks come from the WGL4 set now, in both the terminal's and (the same
    code points) the browser's text."""
    marks = set(foundation_line(list(range(14))))
    assert marks <= WGL4_SHAPES and len(marks) == 5
    assert all(ord(c) < 0x2600 for c in marks)  # no emoji nor symbol block


def test_a_streak_of_two_days_or_more_is_told() -> None:
    en, ru = Catalogue("en"), Catalogue("ru")
    assert "in a row" not in daily_share_text(en, replace(WON, streak=1))
    facts = daily_share_text(en, replace(WON, streak=5)).split("\n")[1]
    assert facts.endswith(" · time 5:12 · 5 days in a row")
    assert daily_share_text(ru, replace(WON, streak=3)).split("\n")[1].endswith("3 дня подряд")


def test_the_day_of_a_race_and_its_number() -> None:
    end_of_day = 1_776_384_000_000  # 2026-04-17 00:00 UTC
    assert day_of_race(end_of_day) == "2026-04-16"  # the deadline is the day's end
    assert day_of_race(end_of_day - 3_600_000) == "2026-04-16"  # a time limit ends it sooner
    assert day_of_race(end_of_day + 1) == "2026-04-17"
    assert day_number("2026-01-01") == 1 and day_number("2026-04-16") == 106
    assert day_number("2027-01-01") == 366
    assert daily_url("ws://host:8765", "2026-04-16") == "http://host:8765/daily/2026-04-16"
    assert daily_url("wss://host/", "2026-04-16") == "https://host/daily/2026-04-16"
    assert format_time(None) == "–" and format_time(59_999) == "0:59"


def played_views(
    data: st.DataObject, game_name: str, steps: int
) -> list[tuple[Any, Any, str, int]]:
    """A random playthrough leaning on the stock (redeals) with undos mixed in: each action
    as (board before, board after, the action as resolved, the engine's deck turns after)."""
    number = data.draw(st.integers(1, 999_999), label="deal")
    game = new_game(DealCode.for_game(game_name, number))
    out = []
    for _ in range(steps):
        legal = [str(m) for m in game.legal_moves]
        if game.can_undo:
            legal.append("u")
        if not legal or game.won:
            break
        stock = [m for m in legal if m == "s"]
        roll = data.draw(st.integers(0, 99), label="roll")
        if stock and roll < 55:
            move = "s"
        elif "u" in legal and roll < 75:
            move = "u"
        else:
            move = data.draw(st.sampled_from(legal), label="move")
        before = game.player_view()
        outcome = game.push(move)
        out.append((before, game.player_view(), str(outcome.move), game.deck_turns))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), game_name=st.sampled_from(["klondike", "easy-harp"]))
def test_deck_turns_counted_from_the_boards_are_the_engines(
    data: st.DataObject, game_name: str
) -> None:
    counted = 0
    for before, after, move, engine_turns in played_views(data, game_name, 160):
        counted += deck_turn_step(before, after, move)
        assert counted == engine_turns, (move, before["stock"], after["stock"])
