"""The durable records store: player identities and finished races (issue 14).

:mod:`.tables` declares the schema, :mod:`.migrations` builds it (Alembic; :mod:`.migrate`
applies it), :mod:`.store` is the one interface (:class:`RecordsStore`) and its SQLAlchemy
implementation for SQLite and PostgreSQL, :mod:`.writer` batches finished races in the
background, :mod:`.views` turns what the store returns into the HTTP JSON models of
:mod:`protocol.api`.
"""

from __future__ import annotations

__all__: list[str] = []
