"""samedeal's wire protocol: message models, codec and JSON Schema — no I/O."""

from __future__ import annotations

from . import frames
from .codec import ProtocolError, decode_client, decode_server, encode, id_problem, request_id
from .messages import *  # noqa: F403
from .messages import __all__ as _messages_all
from .views import merge_view

__all__ = [
    "ProtocolError",
    "decode_client",
    "decode_server",
    "encode",
    "frames",
    "id_problem",
    "merge_view",
    "request_id",
    *_messages_all,
]
