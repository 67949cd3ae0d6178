"""The JSON Schema of the wire protocol, generated from the message models.

``python -m protocol.schema`` rewrites ``protocol/schema.json``; a test fails when the
checked-in file differs from what the models generate.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
from pydantic import TypeAdapter

from .messages import PROTOCOL_VERSION, ClientMessage, ServerMessage

__all__ = ["SCHEMA_PATH", "build_schema", "schema_text"]

SCHEMA_PATH = Path(__file__).with_name("schema.json")


def build_schema() -> dict[str, Any]:
    """One JSON Schema document: ``ClientMessage`` and ``ServerMessage`` with shared
    definitions."""
    defs: dict[str, Any] = {}
    roots: dict[str, Any] = {}
    for name, union in (("ClientMessage", ClientMessage), ("ServerMessage", ServerMessage)):
        schema = TypeAdapter(union).json_schema(ref_template="#/$defs/{model}")
        defs.update(schema.pop("$defs", {}))
        roots[name] = schema
    defs.update(roots)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://samedeal.invalid/protocol/schema.json",
        "title": f"samedeal wire protocol, version {PROTOCOL_VERSION}",
        "oneOf": [{"$ref": "#/$defs/ClientMessage"}, {"$ref": "#/$defs/ServerMessage"}],
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    """The schema as the exact text checked in."""
    return orjson.dumps(build_schema(), option=orjson.OPT_INDENT_2).decode() + "\n"


def main() -> int:
    """Write ``schema.json`` next to this module."""
    SCHEMA_PATH.write_text(schema_text())
    print(f"wrote {SCHEMA_PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
