"""Identities in the database: Core statements on a connection the store opened, each
function one transaction's work (see :class:`server.records.db.Database`)."""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy import Connection, Row, delete, select, update
from sqlalchemy.exc import IntegrityError

from ..bucket import refill, wait_for_token
from . import identity as ids
from .models import (
    HandleTaken,
    Identity,
    Player,
    Profile,
    RateLimited,
    StaleIdentity,
    UnknownPlayer,
)
from .races import read_recent, read_stats
from .ratings import forget as forget_ratings
from .tables import dialect_insert, meta, player_stats, players, rate_buckets, seats

__all__ = [
    "address_secret",
    "authenticate",
    "create",
    "delete_player",
    "find",
    "profile",
    "recover",
    "shared_secret",
    "take_token",
    "update_player",
]

_ADDRESS_KEY = "address_key"


def shared_secret(conn: Connection, name: str) -> bytes:
    """A 32-byte secret kept in ``meta`` under ``name``, made on first use: the same for
    every worker and host of the database (the first to make it wins)."""
    conn.execute(
        dialect_insert(conn, meta)
        .values(key=name, value=secrets.token_hex(32))
        .on_conflict_do_nothing(index_elements=[meta.c.key])
    )
    value = conn.execute(select(meta.c.value).where(meta.c.key == name)).scalar()
    assert value is not None
    return bytes.fromhex(value)


def address_secret(conn: Connection) -> bytes:
    """The key of the address hashes, made on first use and shared by every worker."""
    return shared_secret(conn, _ADDRESS_KEY)


def take_token(conn: Connection, key: str, now: int, limit: int, window_s: float) -> None:
    """Take one identity creation from the bucket of the address hashed to ``key`` (at most
    ``limit``, refilled over ``window_s`` seconds); raises :class:`RateLimited`."""
    conn.execute(
        dialect_insert(conn, rate_buckets)
        .values(address_key=key, tokens=float(limit), updated_at=now)
        .on_conflict_do_nothing(index_elements=[rate_buckets.c.address_key])
    )
    # FOR UPDATE serializes PostgreSQL transactions on the row; on SQLite BEGIN IMMEDIATE
    # already serialized the whole transaction
    row = conn.execute(
        select(rate_buckets.c.tokens, rate_buckets.c.updated_at)
        .where(rate_buckets.c.address_key == key)
        .with_for_update()
    ).one()
    rate = limit / window_s  # a second
    tokens = refill(row.tokens, (now - row.updated_at) / 1000, rate, float(limit))
    if tokens < 1:
        wait = wait_for_token(tokens, rate) if rate else window_s
        raise RateLimited(
            f"too many new players from this address: try again in {wait:.0f} s", wait
        )
    conn.execute(
        update(rate_buckets)
        .where(rate_buckets.c.address_key == key)
        .values(tokens=tokens - 1, updated_at=now)
    )


def create(conn: Connection, identity: Identity, name: str, now: int) -> None:
    """Insert the new identity (hashes of its secret and recovery code only)."""
    recovery = ids.normalize_recovery_code(identity.recovery_code)
    assert recovery is not None
    conn.execute(
        players.insert().values(
            public_id=identity.player_id,
            secret_hash=ids.hash_secret(identity.secret),
            recovery_hash=ids.hash_secret(recovery),
            name=ids.clean_player_name(name),
            created_at=now,
        )
    )


def _player(row: Row[Any]) -> Player:
    return Player(
        player_id=row.public_id,
        name=row.name,
        handle=row.handle,
        created_at=row.created_at,
        deleted=row.deleted_at is not None,
    )


def authenticate(conn: Connection, player_id: str, secret: str) -> Player | None:
    """The player if ``secret`` is theirs (compared in constant time)."""
    row = conn.execute(select(players).where(players.c.public_id == player_id)).first()
    if row is None or row.secret_hash is None:
        return None
    if not secrets.compare_digest(row.secret_hash, ids.hash_secret(secret)):
        return None
    return _player(row)


def find(
    conn: Connection, *, player_id: str | None = None, key: str | None = None
) -> Player | None:
    """The player with this public id, or holding the handle with this key."""
    where = (
        players.c.public_id == player_id if player_id is not None else players.c.handle_key == key
    )
    row = conn.execute(select(players).where(where)).first()
    return _player(row) if row is not None else None


def _live(player_id: str, proof: str | None) -> list[Any]:
    """The conditions on a live player's row (and on its secret's hash, with ``proof``)."""
    where = [players.c.public_id == player_id, players.c.deleted_at.is_(None)]
    if proof is not None:
        where.append(players.c.secret_hash == proof)
    return where


def _missing(proof: str | None) -> Exception:
    if proof is not None:
        return StaleIdentity("this identity was recovered or deleted elsewhere: identify again")
    return UnknownPlayer("no such player")


def update_player(
    conn: Connection, player_id: str, values: dict[str, Any], proof: str | None = None
) -> Player:
    """Change a live player's row; raises :class:`UnknownPlayer`, :class:`HandleTaken`
    (a handle key another player holds), :class:`StaleIdentity` (``proof``, the hash of
    the caller's secret, is no longer the player's)."""
    try:
        row = conn.execute(
            update(players).where(*_live(player_id, proof)).values(**values).returning(*players.c)
        ).first()
    except IntegrityError:
        raise HandleTaken(f"the handle {values.get('handle')!r} is taken") from None
    if row is None:
        raise _missing(proof)
    return _player(row)


def recover(conn: Connection, recovery: str, secret: str, new_recovery: str) -> str | None:
    """Give the player whose normalized recovery code is ``recovery`` a new secret and a
    new (normalized) recovery code; their public id, or ``None`` if none has that code.
    The old secret and code stop working."""
    wanted = ids.hash_secret(recovery)
    row = conn.execute(
        select(players.c.id, players.c.public_id, players.c.recovery_hash).where(
            players.c.recovery_hash == wanted, players.c.deleted_at.is_(None)
        )
    ).first()
    if row is None or not secrets.compare_digest(row.recovery_hash, wanted):
        return None
    conn.execute(
        update(players)
        .where(players.c.id == row.id)
        .values(secret_hash=ids.hash_secret(secret), recovery_hash=ids.hash_secret(new_recovery))
    )
    return str(row.public_id)


def delete_player(conn: Connection, player_id: str, now: int, proof: str | None = None) -> None:
    """Anonymise the identity; its seats in past races keep their results, its stats and
    ratings go (``proof`` as for :func:`update_player`)."""
    row = conn.execute(select(players.c.id).where(*_live(player_id, proof))).first()
    if row is None:
        raise _missing(proof)
    conn.execute(
        update(players)
        .where(players.c.id == row.id)
        .values(
            name=ids.DELETED_NAME,
            handle=None,
            handle_key=None,
            secret_hash=None,
            recovery_hash=None,
            deleted_at=now,
        )
    )
    conn.execute(update(seats).where(seats.c.player_id == row.id).values(name=ids.DELETED_NAME))
    conn.execute(delete(player_stats).where(player_stats.c.player_id == row.id))
    forget_ratings(conn, row.id)


def profile(conn: Connection, key: str, limit: int, offset: int) -> Profile | None:
    """The player page of the handle with this key."""
    row = conn.execute(select(players).where(players.c.handle_key == key)).first()
    if row is None:
        return None
    return Profile(
        player=_player(row),
        stats=tuple(read_stats(conn, row.id)),
        recent=tuple(read_recent(conn, row.id, limit, offset)),
    )
