"""What the store raises when it cannot do what was asked, whichever part was asked: one
hierarchy under :class:`StoreUnavailable` (a :class:`ConnectionError`), from "certainly not
done" to "maybe done"."""

from __future__ import annotations

__all__ = ["NotDurable", "OutcomeUnknown", "StoreUnavailable", "StoreUnsuitable"]


class StoreUnavailable(ConnectionError):
    """The store cannot be reached now. Nothing was changed: the request may be sent
    again."""


class OutcomeUnknown(StoreUnavailable):
    """A write reached the store, which then stopped answering, and did not answer again
    before the time allowed: it may or may not have been done. Only a fresh read (after a
    reconnect) tells."""


class NotDurable(OutcomeUnknown):
    """The store did the write but could not confirm, in the time allowed, that it is kept
    as durably as asked (no replica acknowledged it, the file was not synced): it may be
    lost if the store fails now. Never an acknowledgement."""


class StoreUnsuitable(StoreUnavailable):
    """The store answers but is not set up for what was asked of it (a durability it does
    not provide): the server does not start on it."""
