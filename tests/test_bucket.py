"""The one token bucket (server.bucket): its arithmetic, a bucket on a clock of the test's
own, and the limits built on it agreeing with it."""

from __future__ import annotations

import doctest

import pytest

import server.bucket
from server.bucket import TokenBucket, refill, wait_for_token
from server.edge.limits import AddressBuckets


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_refill_adds_rate_a_second_up_to_the_burst() -> None:
    assert refill(0.0, 0.5, 2.0, 3.0) == 1.0
    assert refill(1.5, 10.0, 2.0, 3.0) == 3.0  # never more than the burst
    assert refill(1.5, -4.0, 2.0, 3.0) == 1.5  # a clock stepping back adds nothing


def test_wait_for_token_is_the_time_to_a_whole_token() -> None:
    assert wait_for_token(1.0, 2.0) == 0.0
    assert wait_for_token(0.25, 2.0) == pytest.approx(0.375)
    assert wait_for_token(0.0, 0.5) == pytest.approx(2.0)


def test_a_bucket_starts_full_and_refuses_once_empty() -> None:
    clock = Clock()
    bucket = TokenBucket(4.0, 3, clock=clock)
    assert [bucket.take() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take() == pytest.approx(0.25)
    assert bucket.take() == pytest.approx(0.25)  # a refusal takes nothing
    clock.now += 0.125
    assert bucket.take() == pytest.approx(0.125)  # half a token is not one
    clock.now += 0.125
    assert bucket.take() == 0.0
    clock.now += 3600
    assert [bucket.take() for _ in range(4)] == [0.0, 0.0, 0.0, pytest.approx(0.25)]


@pytest.mark.parametrize(("rate", "burst"), [(0.0, 1), (-1.0, 5), (1.0, 0), (float("nan"), 2)])
def test_a_bucket_that_could_never_give_a_token_is_refused(rate: float, burst: int) -> None:
    with pytest.raises(ValueError, match="rate"):
        TokenBucket(rate, burst)


def test_the_module_example_holds() -> None:
    failures, tried = doctest.testmod(server.bucket)
    assert tried and not failures


# --------------------------------------------------------------------- per address


def test_buckets_refill_at_their_rate_per_address() -> None:
    clock = Clock()
    buckets = AddressBuckets(2.0, 3, clock=clock)
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(0.5)
    assert buckets.take("b") == 0.0  # another address has its own bucket
    clock.now += 0.25
    assert buckets.take("a") == pytest.approx(0.25)  # half a token is not one
    clock.now += 0.25
    assert buckets.take("a") == 0.0
    clock.now += 100
    assert [buckets.take("a") for _ in range(4)][-1] > 0  # never more than the burst
    assert AddressBuckets.retry_after(0.01) == "1" and AddressBuckets.retry_after(1.2) == "2"


def test_buckets_forget_the_address_unseen_longest() -> None:
    clock = Clock()
    buckets = AddressBuckets(1.0, 1, capacity=2, clock=clock)
    buckets.take("a")
    buckets.take("b")
    buckets.take("a")  # refused, but seen last
    buckets.take("c")
    assert len(buckets) == 2
    assert buckets.take("a") > 0  # remembered, still empty
    assert buckets.take("b") == 0.0  # forgotten: a full bucket again
    with pytest.raises(ValueError):
        AddressBuckets(0, 1)
