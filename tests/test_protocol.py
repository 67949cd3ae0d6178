"""Wire messages: decoding, encoding, the documented examples and the checked-in schema.

No event loop, no sockets: these run in milliseconds.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path

import orjson
import pytest

from engine import new_game
from protocol import (
    Ack,
    ClientMessage,
    Hello,
    MoveRequest,
    ProtocolError,
    ServerMessage,
    decode_client,
    decode_server,
    encode,
    merge_view,
)
from protocol.schema import SCHEMA_PATH, schema_text

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"


def types_of(union: object) -> set[str]:
    members = typing.get_args(typing.get_args(union)[0])
    return {m.model_fields["type"].default for m in members}


def doc_examples() -> list[tuple[str, dict[str, object]]]:
    """(section, message) for every ```json block of docs/protocol.md."""
    text = DOC.read_text()
    out = []
    section = ""
    for part in re.split(r"(^## .*$)", text, flags=re.M):
        if part.startswith("## "):
            section = part
            continue
        for block in re.findall(r"```json\n(.*?)```", part, flags=re.S):
            out.append((section, orjson.loads(block)))
    return out


def test_schema_is_up_to_date() -> None:
    assert SCHEMA_PATH.read_text() == schema_text(), (
        "protocol/schema.json is out of date: run python -m protocol.schema"
    )


def test_every_message_is_documented_with_an_example() -> None:
    client, server = set(), set()
    for section, example in doc_examples():
        data = orjson.dumps(example)
        if "Client" in section:
            client.add(decode_client(data).type)
        else:
            server.add(decode_server(data).type)
    assert client == types_of(ClientMessage)
    assert server == types_of(ServerMessage)


def test_encode_decode_round_trip() -> None:
    for _, example in doc_examples():
        data = orjson.dumps(example)
        try:
            msg = decode_client(data)
        except ProtocolError:
            back = decode_server(encode(decode_server(data)))
            assert back == decode_server(data)
        else:
            assert decode_client(encode(msg)) == msg


def test_moves_travel_as_text() -> None:
    assert decode_client('{"type":"move","move":"t6:4-t2","id":3}') == MoveRequest(
        move="t6:4-t2", id=3
    )
    ack = Ack(id=1, move="t2-f1", revealed=["9C"], changes={"stock": 3})
    assert orjson.loads(encode(ack))["move"] == "t2-f1"


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("", "malformed_json"),
        ("{", "malformed_json"),
        (b"\x80", "malformed_json"),
        ("null", "invalid_message"),
        ('"hello"', "invalid_message"),
        ("{}", "unknown_type"),
        ('{"type": 3}', "unknown_type"),
        (
            '{"type": "welcome", "v": 1, "worker": "x", "max_frame": 1, "rate": 1, "burst": 1}',
            "unknown_type",
        ),
        ('{"type": "hello"}', "invalid_message"),
        ('{"type": "hello", "v": "1"}', "invalid_message"),
        ('{"type": "hello", "v": 1.5}', "invalid_message"),
        ('{"type": "hello", "v": true}', "invalid_message"),
        ('{"type": "hello", "v": 1, "x": 1}', "invalid_message"),
        ('{"type": "move", "move": ""}', "invalid_message"),
        ('{"type": "move", "move": "' + "s" * 17 + '"}', "invalid_message"),
        ('{"type": "move", "move": "s", "id": -1}', "invalid_message"),
        ('{"type": "create", "game": "klondike", "deal": "lucky"}', "invalid_message"),
        ('{"type": "create", "game": "klondike", "time_limit": 0}', "invalid_message"),
        ('{"type": "join", "room": ""}', "invalid_message"),
        ('{"type": "join", "room": "K7QF-2M", "role": "referee"}', "invalid_message"),
        ('{"type": "resume", "room": "K7QF-2M", "token": ""}', "invalid_message"),
        ('{"type": "follow", "seat": "2"}', "invalid_message"),
    ],
)
def test_bad_frames_raise_protocol_error(frame: str | bytes, code: str) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_client(frame)
    assert info.value.error_code == code
    assert info.value.message


def test_error_message_names_the_field() -> None:
    with pytest.raises(ProtocolError) as info:
        decode_client('{"type": "create", "game": "klondike", "max_players": "four"}')
    assert "max_players" in info.value.message


def test_hello_and_defaults() -> None:
    assert decode_client('{"type":"hello","v":1}') == Hello(v=1)
    msg = decode_client('{"type":"create","game":"easy-harp"}')
    assert msg.type == "create" and msg.deal == "random" and msg.max_players == 8


def test_merge_view_applies_changes_and_refuses_unknown_piles() -> None:
    board = new_game("KL1-1-AAAAAAF").player_view()
    changes = {"tableau": {"7": {"down": 5, "up": ["AS"]}}, "stock": 23, "moves": 1}
    merged = merge_view(board, changes)
    assert merged["tableau"][6] == {"down": 5, "up": ["AS"]} and merged["stock"] == 23
    assert merged["tableau"][:6] == board["tableau"][:6] and merged["moves"] == 1
    assert board["stock"] == 24  # the board merged into is left as it was
    with pytest.raises(ValueError, match="tableau pile 8"):
        merge_view(board, {"tableau": {"8": {"down": 0, "up": []}}})
    with pytest.raises(ValueError, match="miss tableau"):
        merge_view(None, changes)
