"""The durable records store: player identities and finished races (issue 14).

:mod:`.tables` declares the schema, :mod:`.migrations` builds it (Alembic; :mod:`.migrate`
applies it), :mod:`.store` is the one interface (``RecordsStore``) and its SQLAlchemy
implementation for SQLite and PostgreSQL (statements in :mod:`.players` and :mod:`.races`,
run by :mod:`.db`; the ratings rated races change in :mod:`.ratings`, asked for through
:mod:`.rating_store`), :mod:`.identity` makes and checks ids, secrets and handles,
:mod:`.models` holds the values in and out, :mod:`.writer` batches finished races in the
background, :mod:`.views` turns what the store returns into the HTTP JSON models of
:mod:`protocol.api`.
"""

from __future__ import annotations

__all__: list[str] = []
