"""The moves' path to Redis: each move one call of the append script, packed by us and
pipelined on the connection of the room's shard (:class:`~.pipe.RespPipe`).

A seat's constant arguments (script, keys, seat, race, caps) are packed once; a move adds
its own few. The call is sent to the primary of the room's slot and, until Redis tells
whether it ran, sent again:

* never written (no connection could be opened): :class:`StoreUnavailable` at once — it
  certainly did not run;
* refused unrun by the cluster (``MOVED``: the slot map is read again and the call sent
  where the slot is now; ``ASK``: sent to the migration's target after ``ASKING``;
  ``TRYAGAIN``, ``CLUSTERDOWN``, ``NOREPLICAS`` …): :class:`StoreUnavailable`, or sent
  again when an earlier try may have run;
* its connection failed after it was written (maybe run): sent again — on a cluster to
  the slot's primary as it is then, a replica promoted by a failover — for
  ``write_timeout`` at most, then :class:`OutcomeUnknown`. A move that ran twice is refused
  the second time by its index in the log (the room store looks it up);
* run, but not confirmed by the durability barrier: :class:`NotDurable`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Callable
from typing import Any

import orjson
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from protocol.frames import EventBody

from ...rooms.room import ProgressState
from ..errors import NotDurable, OutcomeUnknown, StoreUnavailable
from .pipe import NotSent, NotSettled
from .scripts import resp_args
from .shards import Router, Shard, not_run, redirection

__all__ = ["MoveWriter"]

_ASKING = b"*1\r\n$6\r\nASKING\r\n"


class MoveWriter:
    """Packs and sends the append script's calls of one worker's room store."""

    def __init__(
        self,
        router: Router,
        script: str,
        key: Callable[[str, str], str],
        event_cap: int,
        active_ttl: float,
        trouble: Callable[[], None],
        durability: str,
    ) -> None:
        self.router = router
        self.script = script
        self._sha = hashlib.sha1(script.encode()).hexdigest().encode()
        self._key = key
        self._event_cap = event_cap
        self._active_ttl = int(active_ttl)
        #: called when Redis could not be reached (the link checks its health at once)
        self._trouble = trouble
        self._durability = durability
        self._heads: dict[tuple[str, int, int], bytes] = {}

    def pack(
        self,
        room_code: str,
        race: int,
        seat: int,
        entry: str,
        progress: ProgressState | None,
        events: list[EventBody],
        index: int | None,
        epoch: int | None,
    ) -> bytes:
        """The call storing one action of a seat (see ``RoomStore.append``)."""
        head = self._heads.get((room_code, race, seat))
        if head is None:
            # the arguments that are the same for every call of a seat, packed once
            head = resp_args(
                [
                    b"EVALSHA",
                    self._sha,
                    5,
                    self._key(room_code, "progress"),
                    self._key(room_code, "seq"),
                    self._key(room_code, "events"),
                    self._key(room_code, f"moves:{race}:{seat}"),
                    self._key(room_code, "epochs"),
                    seat,
                    race,
                    self._event_cap,
                    self._key(room_code, "ch"),
                    self._active_ttl,
                ]
            )
            if len(self._heads) >= 100_000:
                self._heads.clear()  # bounded: rebuilt on the next call of each seat
            self._heads[room_code, race, seat] = head
        state = b"" if progress is None else progress.to_json()
        log = entry.encode()
        number = b"-1" if index is None else b"%d" % index
        fence = b"" if epoch is None else b"%d" % epoch
        packed = b"*%d\r\n%s$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
            17 + len(events),
            head,
            len(state),
            state,
            len(log),
            log,
            len(number),
            number,
            len(fence),
            fence,
        )
        if events:
            packed += resp_args([orjson.dumps(e) for e in events])
        return packed

    async def send(self, room_code: str, packed: bytes) -> tuple[Any, bool]:
        """Send a call until Redis answers it; the reply, and whether an earlier try may
        have run."""
        maybe_ran = reloaded = False
        deadline: float | None = None
        pause = 0.05
        redirects = 0
        router = self.router
        loop = asyncio.get_running_loop()
        asking: Shard | None = None
        shard: Shard | None = None
        while True:
            try:
                if asking is not None:
                    # ASK: the slot is being migrated and the keys are on the target already
                    shard, asking = asking, None
                    shard.store.send(_ASKING).add_done_callback(_retrieved)
                else:
                    shard = router.shard(room_code)
                return await shard.store.send(packed), maybe_ran
            except NoScriptError:
                if reloaded or shard is None:
                    raise
                reloaded = True  # not run: Redis restarted or its scripts were flushed
                with contextlib.suppress(RedisConnectionError, RedisTimeoutError, OSError):
                    await shard.redis.script_load(self.script)
                continue
            except NotSettled as exc:
                if isinstance(exc.reply, list):  # ran, and stored what it was given
                    raise NotDurable(
                        f"the move was stored; Redis did not confirm it as {self._durability}"
                    ) from None
                return exc.reply, maybe_ran  # refused by the script: nothing written
            except NotSent as exc:
                self._trouble()
                if not maybe_ran:
                    raise StoreUnavailable(f"Redis cannot be reached: {exc}") from exc
            except (RedisConnectionError, RedisTimeoutError):
                # whether Redis ran it is unknown: it is sent again; a move run twice is
                # refused the second time by its index (see RedisRooms.append)
                self._trouble()
                maybe_ran = True
            except ResponseError as exc:
                if not not_run(exc):
                    raise
                moved = redirection(exc)
                if moved is not None and redirects < 5:
                    redirects += 1  # not run: sent again at once where the slot is now
                    if moved[0] == "ASK":
                        asking = router.shard_at(moved[2])
                        continue
                    try:
                        await router.refresh()
                        continue
                    except (RedisConnectionError, OSError):
                        self._trouble()
                if not maybe_ran:
                    self._trouble()
                    raise StoreUnavailable(f"Redis did not run the move: {exc}") from exc
            now = loop.time()
            deadline = (
                deadline
                if deadline is not None
                else now + router.pipe_options.get("reply_timeout", 10.0)
            )
            if now >= deadline:
                raise OutcomeUnknown("Redis stopped answering: the write may have been done")
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.5)


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # an ASKING's reply: what matters is the command after it
