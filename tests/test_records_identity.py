"""Player identities: secrets, recovery, handles, rate limits, deletion — on SQLite and on
a real PostgreSQL (``records_url``)."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st
from records_helpers import make_race, query, seat, store
from sqlalchemy import select

from server.records import identity as ids
from server.records.models import BadHandle, HandleTaken, RateLimited, UnknownPlayer
from server.records.store import SqlRecordsStore
from server.records.tables import players, rate_buckets

__all__ = ["store"]

ADDRESS = "203.0.113.9"

# --------------------------------------------------------------------- pure helpers


def test_ids_and_secrets_have_their_form_and_entropy() -> None:
    assert ids.is_player_id(ids.new_player_id()) and len(ids.new_player_id()) * 5 == 80
    secret = ids.new_secret()
    assert ids.is_secret(secret) and len(secret) * 6 == 192
    code = ids.new_recovery_code()
    assert len(code.replace("-", "")) * 5 >= 100
    assert [len(g) for g in code.split("-")] == [4] * 6
    assert len({ids.new_secret() for _ in range(100)}) == 100


@pytest.mark.parametrize(
    "bad", [None, 5, "", "x" * 31, "x" * 33, "a" * 31 + "!", "' OR 1=1 --" + "x" * 21]
)
def test_malformed_secrets_are_not_secrets(bad: object) -> None:
    assert not ids.is_secret(bad)


def test_recovery_codes_are_read_as_people_type_them() -> None:
    code = ids.new_recovery_code()
    canonical = ids.normalize_recovery_code(code)
    assert canonical is not None
    typed = code.lower().replace("-", " ").replace("0", "o").replace("1", "l")
    assert ids.normalize_recovery_code(typed) == canonical
    assert ids.normalize_recovery_code(code[:-1]) is None
    assert ids.normalize_recovery_code(code[:-1] + "U") is None
    assert ids.normalize_recovery_code("x" * 10_000) is None


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Ada_L", "ada_l"),
        ("Ａｄａ", "Ada"),  # fullwidth: NFKC
        ("Аda", "Ada"),  # Cyrillic А
        ("0scar", "Oscar"),
        ("bill", "BIll"),
        ("Straße", "STRASSE"),  # case folding
        ("José", "Jose"),
        ("modern", "modem"),
    ],
)
def test_look_alike_handles_share_a_key(one: str, other: str) -> None:
    assert ids.check_handle(one)[1] == ids.check_handle(other)[1]


BAD_HANDLES = ["ab", "x" * 21, "a b", "a!b", "_abc", "-abc", "x' OR '1'='1", "a\u200bb", "ab\n"]
RESERVED_LOOK_ALIKES = ["Admin", "ADM1N", "аdmin", "SameDeal", "deleted", "api", "ROOT"]


@pytest.mark.parametrize("handle", [*BAD_HANDLES, *RESERVED_LOOK_ALIKES])
def test_bad_and_reserved_handles_are_refused(handle: str) -> None:
    with pytest.raises(BadHandle) as err:
        ids.check_handle(handle)
    assert str(err.value)


@pytest.mark.parametrize("handle", ["Ada", "иван_42", "李小龍", "नमस्ते", "a-b_c", "x" * 20, "007"])
def test_handles_of_any_script_are_accepted(handle: str) -> None:
    shown, _ = ids.check_handle(handle)
    assert shown == handle


@given(st.text(max_size=30))
def test_check_handle_accepts_or_refuses_with_bad_handle(text: str) -> None:
    try:
        shown, key = ids.check_handle(text)
    except BadHandle:
        return
    assert ids.HANDLE_MIN <= len(shown) <= ids.HANDLE_MAX and key == ids.handle_key(shown)


# --------------------------------------------------------------------- the store


async def test_the_secret_authenticates_and_nothing_else_does(store: SqlRecordsStore) -> None:
    ada = await store.create_player("Ada", ADDRESS)
    bob = await store.create_player("Bob", ADDRESS)
    me = await store.authenticate(ada.player_id, ada.secret)
    assert me is not None and me.name == "Ada" and me.player_id == ada.player_id
    flipped = ada.secret[:-1] + ("A" if ada.secret[-1] != "A" else "B")
    for pid, secret in [
        (ada.player_id, flipped),
        (ada.player_id, bob.secret),
        (bob.player_id, ada.secret),
        (ada.player_id, ada.secret[:-1]),
        (ada.player_id, ""),
        (ada.player_id, "x" * 1_000_000),
        ("' OR 1=1 --", ada.secret),
        (ada.player_id, "' OR '1'='1' --" + "x" * 17),
        (ids.new_player_id(), ada.secret),
        (None, None),
    ]:
        assert await store.authenticate(pid, secret) is None  # type: ignore[arg-type]


async def test_secrets_appear_in_no_repr_or_str(store: SqlRecordsStore) -> None:
    ada = await store.create_player("Ada", ADDRESS)
    me = await store.authenticate(ada.player_id, ada.secret)
    recovered = await store.recover(ada.recovery_code)
    assert recovered is not None
    shown = [repr(ada), str(ada), repr(me), str(me), repr(recovered), str(recovered), repr(store)]
    for text in shown:
        for secret in (ada.secret, ada.recovery_code, recovered.secret, recovered.recovery_code):
            assert secret not in text
            assert secret.replace("-", "") not in text
    (row,) = await query(store, select(players))
    assert ada.secret not in repr(tuple(row)) and ada.recovery_code not in repr(tuple(row))


async def test_names_are_cleaned_and_sql_looking_text_is_only_text(store: SqlRecordsStore) -> None:
    evil = "Robert'); DROP TABLE players;--"
    bob = await store.create_player(evil, ADDRESS)
    long = await store.create_player("x" * 100_000, ADDRESS)
    ctrl = await store.create_player("\x00\u202eAda\n\tL", ADDRESS)
    blank = await store.create_player("  \u200b ", ADDRESS)
    got = [await store.player(p.player_id) for p in (bob, long, ctrl, blank)]
    assert [p.name for p in got if p] == [evil[:24].strip(), "x" * 24, "AdaL", "Player"]
    assert await store.player_by_handle("' OR 1=1 --") is None
    assert await store.player_by_handle("x" * 10_000) is None
    with pytest.raises(BadHandle):
        await store.set_handle(bob.player_id, "x'; DELETE FROM players;--")
    assert len(await query(store, select(players.c.id))) == 4


async def test_handles_are_unique_by_key(store: SqlRecordsStore) -> None:
    ada = await store.create_player("Ada", ADDRESS)
    eve = await store.create_player("Eve", ADDRESS)
    assert (await store.set_handle(ada.player_id, "Ada_L")).handle == "Ada_L"
    for copy in ["ada_l", "ADA_L", "Ａｄａ_L", "Аda_L", "Ada_1"]:
        with pytest.raises(HandleTaken):
            await store.set_handle(eve.player_id, copy)
    assert (await store.player(eve.player_id)).handle is None  # type: ignore[union-attr]
    # the holder may change the case of its own handle
    assert (await store.set_handle(ada.player_id, "ADA_l")).handle == "ADA_l"
    found = await store.player_by_handle("ada_L")
    assert found is not None and found.player_id == ada.player_id
    with pytest.raises(BadHandle):
        await store.set_handle(eve.player_id, "Admin")
    # giving a handle up frees it
    await store.set_handle(ada.player_id, None)
    assert (await store.set_handle(eve.player_id, "ada_l")).handle == "ada_l"
    with pytest.raises(UnknownPlayer):
        await store.set_handle(ids.new_player_id(), "Nobody")


async def test_two_players_racing_for_one_handle_one_wins(store: SqlRecordsStore) -> None:
    a = await store.create_player("A", ADDRESS)
    b = await store.create_player("B", ADDRESS)
    outcomes = await asyncio.gather(
        store.set_handle(a.player_id, "Winner"),
        store.set_handle(b.player_id, "WINNER"),
        return_exceptions=True,
    )
    assert sum(isinstance(o, HandleTaken) for o in outcomes) == 1


async def test_recovery_moves_the_identity_and_voids_the_old_keys(store: SqlRecordsStore) -> None:
    ada = await store.create_player("Ada", ADDRESS)
    await store.set_handle(ada.player_id, "ada")
    typed = ada.recovery_code.lower().replace("-", " ")
    moved = await store.recover(typed)
    assert moved is not None and moved.player_id == ada.player_id
    assert moved.secret != ada.secret and moved.recovery_code != ada.recovery_code
    assert await store.authenticate(ada.player_id, ada.secret) is None
    me = await store.authenticate(moved.player_id, moved.secret)
    assert me is not None and me.handle == "ada"
    assert await store.recover(ada.recovery_code) is None
    for bad in ["", "garbage", "A" * 24, ids.new_recovery_code(), "x" * 100_000]:
        assert await store.recover(bad) is None
    assert await store.recover(moved.recovery_code) is not None


async def test_identity_creation_is_rate_limited_across_store_instances(
    records_url: str,
) -> None:
    one = await SqlRecordsStore.open(records_url, create_limit=3)
    two = await SqlRecordsStore.open(records_url, create_limit=3)
    try:
        await one.create_player("a", ADDRESS)
        await two.create_player("b", ADDRESS)
        await one.create_player("c", ADDRESS)
        for s in (one, two):
            with pytest.raises(RateLimited) as err:
                await s.create_player("d", ADDRESS)
            assert 0 < err.value.retry_after <= 3600 / 3
        await two.create_player("e", "198.51.100.7")  # another address has its own budget
        keys = [row.address_key for row in await query(one, select(rate_buckets))]
        assert len(keys) == 2 and all(ADDRESS not in k and "198.51" not in k for k in keys)
        # the budget refills with time: a purge an hour later forgets the full bucket
        assert await one.purge(now=10**15) == 0
        await one.create_player("f", ADDRESS)
    finally:
        await one.close()
        await two.close()


async def test_concurrent_creations_respect_the_limit(records_url: str) -> None:
    stores = [await SqlRecordsStore.open(records_url, create_limit=5) for _ in range(2)]
    try:
        outcomes = await asyncio.gather(
            *(stores[i % 2].create_player(f"p{i}", ADDRESS) for i in range(12)),
            return_exceptions=True,
        )
    finally:
        for s in stores:
            await s.close()
    assert sum(isinstance(o, RateLimited) for o in outcomes) == 7
    assert not [o for o in outcomes if isinstance(o, Exception) and not isinstance(o, RateLimited)]


async def test_deletion_anonymises_and_keeps_other_peoples_results(
    store: SqlRecordsStore,
) -> None:
    ada = await store.create_player("Ada", ADDRESS)
    bob = await store.create_player("Bob", ADDRESS)
    await store.set_handle(bob.player_id, "bobby")
    race_id = await store.record_race(
        make_race(1, seat(1, ada.player_id), seat(2, bob.player_id, "resigned", score=5))
    )
    ada_stats = await store.stats(ada.player_id)
    await store.delete_player(bob.player_id)

    race = await store.race(race_id)
    assert race is not None and len(race.record.seats) == 2
    ada_seat, bob_seat = race.record.seats
    assert ada_seat.name == "Racer 1" and ada_seat.status == "won"
    assert bob_seat.name == ids.DELETED_NAME and bob_seat.player_deleted and bob_seat.score == 5
    assert bob_seat.handle is None
    assert await store.stats(ada.player_id) == ada_stats
    assert await store.stats(bob.player_id) == []
    gone = await store.player(bob.player_id)
    assert gone is not None and gone.deleted and gone.name == ids.DELETED_NAME
    assert await store.authenticate(bob.player_id, bob.secret) is None
    assert await store.recover(bob.recovery_code) is None
    assert await store.player_by_handle("bobby") is None
    assert (await store.set_handle(ada.player_id, "Bobby")).handle == "Bobby"
    for call in (
        store.delete_player(bob.player_id),
        store.rename(bob.player_id, "Back"),
        store.delete_player("not an id"),
    ):
        with pytest.raises(UnknownPlayer):
            await call
    # a race recorded later with the deleted id keeps the seat, without the identity
    later = await store.record_race(make_race(2, seat(1, ada.player_id), seat(2, bob.player_id)))
    stored = await store.race(later)
    assert stored is not None and stored.record.seats[1].player_id is None


async def test_rename(store: SqlRecordsStore) -> None:
    ada = await store.create_player("Ada", ADDRESS)
    assert (await store.rename(ada.player_id, "  Ada   Lovelace ")).name == "Ada Lovelace"
    with pytest.raises(UnknownPlayer):
        await store.rename(ids.new_player_id(), "x")
