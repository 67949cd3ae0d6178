"""Alembic's entry point for the records store.

Migrations always run on a connection handed over by :func:`server.records.migrate.upgrade`
(in ``config.attributes["connection"]``), which opens it in a write transaction and calls
Alembic there: the server and ``samedeal db upgrade`` apply them the same way.
"""

from __future__ import annotations

from alembic import context

from server.records.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run the records migrations with `samedeal db upgrade`")

context.configure(
    connection=connection,
    target_metadata=metadata,
    # SQLite alters tables by copying them: ask Alembic to do so in later revisions
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
