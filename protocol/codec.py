"""Decoding and encoding wire messages: the one place where bytes become messages.

>>> decode_client('{"type": "hello", "v": 1}')
Hello(type='hello', v=1, client=None)
"""

from __future__ import annotations

import json

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError

from .messages import ClientMessage, ServerMessage

__all__ = [
    "ID_MAX",
    "ProtocolError",
    "decode_client",
    "decode_server",
    "encode",
    "id_problem",
    "request_id",
]

ID_MAX = 2**53
"""The largest request ``id`` (what every JSON number reader keeps exact)."""

_CLIENT: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)
_SERVER: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)


class ProtocolError(ValueError):
    """A frame that is not a valid message. ``error_code`` is one of ``malformed_json``,
    ``unknown_type``, ``invalid_message``; the message names the problem."""

    def __init__(self, error_code: str, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


def _explain(exc: ValidationError) -> ProtocolError:
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    first = errors[0]
    kind = first["type"]
    if kind == "json_invalid":
        return ProtocolError("malformed_json", "the frame is not valid JSON")
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return ProtocolError("unknown_type", "unknown or missing message type")
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return ProtocolError("invalid_message", "a message must be a JSON object")
    parts = []
    for err in errors[:3]:
        loc = ".".join(str(p) for p in err["loc"][1:]) or "message"
        parts.append(f"{loc}: {err['msg']}")
    return ProtocolError("invalid_message", "; ".join(parts))


def decode_client(data: str | bytes) -> ClientMessage:
    """Parse one client → server frame; raises :class:`ProtocolError` for anything else."""
    try:
        return _CLIENT.validate_json(data)
    except ValidationError as exc:
        raise _explain(exc) from None


def request_id(data: str | bytes) -> int | None:
    """The ``id`` of a frame that is not a valid message, when it can be read (a JSON
    object whose ``id`` is an integer a request may carry), so that the ``error`` reply
    carries it; otherwise None."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    rid = obj.get("id") if isinstance(obj, dict) else None
    if isinstance(rid, int) and not isinstance(rid, bool) and 0 <= rid <= ID_MAX:
        return rid
    return None


def id_problem(data: str | bytes) -> str | None:
    """Why the ``error`` reply to a frame that is not a valid message carries no ``id``
    though the frame has an integer one (out of range, however large), or None. The
    standard library reads the frame: orjson takes an integer past 64 bits for a float."""
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        return None
    rid = obj.get("id") if isinstance(obj, dict) else None
    if isinstance(rid, int) and not isinstance(rid, bool) and not 0 <= rid <= ID_MAX:
        shown = str(rid) if len(str(rid)) <= 40 else f"{str(rid)[:37]}..."
        return f"its id {shown} is not an integer from 0 to 2^53, so this reply carries none"
    return None


def decode_server(data: str | bytes) -> ServerMessage:
    """Parse one server → client frame (for clients); raises :class:`ProtocolError`."""
    try:
        return _SERVER.validate_json(data)
    except ValidationError as exc:
        raise _explain(exc) from None


def encode(message: BaseModel) -> bytes:
    """The frame for ``message``: compact JSON bytes, encoded once with orjson."""
    return orjson.dumps(message.model_dump(mode="json"))
