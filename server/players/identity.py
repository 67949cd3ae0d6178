"""Player identities over the websocket: a device account, no password.

A client that has no identity asks for one (``new_player``) and keeps the player id and
secret it gets (the browser in localStorage, the terminal client in its config directory);
each time it connects it says who it is (``identify``). The server keeps only hashes of the
secret and of the recovery code, in the records store (:mod:`server.records`). The seats an
identified connection takes carry its player id, so its finished races go on its record.
Creating identities is rate-limited per client address (in the records database, for
every worker), and so are ``identify`` and ``recover`` attempts (per worker: a recovery
code is not to be guessed at speed, and a crowd of identifications not to load the
database); a wrong secret gets ``bad_identity`` and changes nothing. A connection changes
its identity (``rename``, ``set_handle``, ``forget_me``) only while the secret it proved is
still the player's: a ``recover`` elsewhere gives the player a new secret, and the old
connections are told ``bad_identity``.
"""

from __future__ import annotations

import logging
import math

from protocol import ForgetMe, Identify, NewPlayer, Recover, Rename, SetHandle, frames

from ..context import Context
from ..edge.connection import Conn
from ..edge.limits import AddressBuckets
from ..records.identity import hash_secret
from ..records.models import Identity, Player, RecordsError, RecordsUnavailable, StaleIdentity
from ..records.store import SqlRecordsStore
from ..rooms.room import Refusal

__all__ = ["Identities"]

logger = logging.getLogger("samedeal.server")


class Identities:
    """The identity layer of a worker (over the records store)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        config = ctx.config
        self._identify_tries = AddressBuckets(config.identify_rate, config.identify_burst)
        self._recover_tries = AddressBuckets(config.recover_rate, config.recover_burst)

    def _attempt(self, tries: AddressBuckets, conn: Conn, what: str) -> None:
        """Take an attempt of the connection's address, or refuse (``rate_limited``)."""
        wait = tries.take(conn.address)
        if wait:
            self.ctx.metrics.attempt_refusals_total += 1
            raise Refusal(
                "rate_limited",
                f"too many {what} attempts from your address: try again in {math.ceil(wait)} s",
            )

    def _store(self) -> SqlRecordsStore:
        if self.ctx.records is None:
            raise Refusal("no_records", "this server keeps no players: play as a guest")
        return self.ctx.records

    async def _reply(
        self, conn: Conn, rid: int | None, player: Player, identity: Identity | None = None
    ) -> None:
        await conn.send(
            frames.identity(
                id=rid,
                player=player.player_id,
                name=player.name,
                handle=player.handle,
                created_at=player.created_at,
                secret=identity.secret if identity is not None else None,
                recovery_code=identity.recovery_code if identity is not None else None,
            )
        )

    def _take(self, conn: Conn, player: Player, secret: str | None = None) -> None:
        conn.player_id, conn.player_name = player.player_id, player.name
        if secret is not None:
            conn.player_proof = hash_secret(secret)

    def _require(self, conn: Conn) -> str:
        if conn.player_id is None:
            raise Refusal("no_identity", "say who you are first (identify)")
        return conn.player_id

    def _forget(self, conn: Conn, exc: RecordsError) -> None:
        """The connection's identity is not its own any more (recovered or deleted
        elsewhere): it is a guest from now on."""
        if isinstance(exc, StaleIdentity):
            conn.player_id = conn.player_name = conn.player_proof = None

    async def on_new_player(self, conn: Conn, msg: NewPlayer) -> None:
        """``new_player``: a new identity, for this connection from now on."""
        store = self._store()
        try:
            identity = await store.create_player(msg.name, conn.address)
            player = await store.player(identity.player_id)
        except RecordsError as exc:
            raise _refusal(exc) from None
        assert player is not None
        self._take(conn, player, identity.secret)
        logger.info("player created player=%s conn=%s", player.player_id, conn.id)
        await self._reply(conn, msg.id, player, identity)

    async def on_identify(self, conn: Conn, msg: Identify) -> None:
        """``identify``: the connection is this player's."""
        store = self._store()
        self._attempt(self._identify_tries, conn, "identify")
        player = await store.authenticate(msg.player, msg.secret)
        if player is None:
            # the same answer for an unknown id, a wrong secret and a deleted identity
            raise Refusal("bad_identity", "no player has this id and secret")
        self._take(conn, player, msg.secret)
        await self._reply(conn, msg.id, player)

    async def on_recover(self, conn: Conn, msg: Recover) -> None:
        """``recover``: the identity of a recovery code, with a new secret and code."""
        store = self._store()
        self._attempt(self._recover_tries, conn, "recovery")
        identity = await store.recover(msg.code)
        player = await store.player(identity.player_id) if identity is not None else None
        if identity is None or player is None:
            raise Refusal("bad_recovery_code", "this recovery code moves no identity")
        self._take(conn, player, identity.secret)
        logger.info("identity recovered player=%s conn=%s", player.player_id, conn.id)
        await self._reply(conn, msg.id, player, identity)

    async def on_rename(self, conn: Conn, msg: Rename) -> None:
        """``rename``: the identified player's display name."""
        player_id = self._require(conn)
        try:
            player = await self._store().rename(player_id, msg.name, proof=conn.player_proof)
        except RecordsError as exc:
            self._forget(conn, exc)
            raise _refusal(exc) from None
        self._take(conn, player)
        await self._reply(conn, msg.id, player)

    async def on_set_handle(self, conn: Conn, msg: SetHandle) -> None:
        """``set_handle``: the identified player's handle (or none)."""
        player_id = self._require(conn)
        try:
            player = await self._store().set_handle(player_id, msg.handle, proof=conn.player_proof)
        except RecordsError as exc:
            self._forget(conn, exc)
            raise _refusal(exc) from None
        self._take(conn, player)
        await self._reply(conn, msg.id, player)

    async def on_forget_me(self, conn: Conn, msg: ForgetMe) -> None:
        """``forget_me``: delete the identity (answered ``ok``)."""
        player_id = self._require(conn)
        try:
            await self._store().delete_player(player_id, proof=conn.player_proof)
        except RecordsError as exc:
            self._forget(conn, exc)
            raise _refusal(exc) from None
        logger.info("identity deleted player=%s conn=%s", player_id, conn.id)
        conn.player_id = conn.player_name = conn.player_proof = None


def _refusal(exc: RecordsError) -> Refusal:
    """The error reply to a refusal of the records store (an outage's reason, which may
    name hosts, is for the operator's log only)."""
    if isinstance(exc, RecordsUnavailable):
        return Refusal(exc.error_code, exc.for_players)
    return Refusal(exc.error_code, str(exc))
