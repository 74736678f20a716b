"""Leader election as client-go's tryAcquireOrRenew (tools/leaderelection/leaderelection.go)
on a fake clock and an in-memory Lease with resourceVersion conflicts: every branch, and
the property that two replicas never both believe they may act at one instant."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.cluster.leader import Elector, Leadership, LostLeaseError, Record, Timings, micro_time
from kupgrade.errors import InputError


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class Memory:
    """A Lease as the API server keeps it: a write with a stale resourceVersion is a 409."""

    def __init__(self) -> None:
        self.record: Record | None = None
        self.version = 0

    def get(self) -> tuple[Record, str] | None:
        return None if self.record is None else (self.record, str(self.version))

    def create(self, record: Record) -> bool:
        if self.record is not None:
            return False
        self.record, self.version = record, self.version + 1
        return True

    def update(self, record: Record, version: str) -> bool:
        if str(self.version) != version:
            return False
        self.record, self.version = record, self.version + 1
        return True


T = Timings(15, 10, 2)


def pair() -> tuple[Clock, Memory, Elector, Elector]:
    clock, lease = Clock(), Memory()
    a = Elector(lease, "a", T, clock, clock)
    b = Elector(lease, "b", T, clock, clock)
    return clock, lease, a, b


def test_the_first_creates_the_lease_and_renews_it() -> None:
    clock, lease, a, b = pair()
    assert a.try_acquire_or_renew() and a.valid()
    first = lease.record
    assert first is not None and first.holder == "a" and first.duration == 15
    assert first.transitions == 0
    clock.t += 2
    assert a.try_acquire_or_renew()
    assert lease.record is not None
    assert lease.record.acquire == first.acquire  # a holder keeps its acquireTime
    assert lease.record.renew != first.renew and lease.record.transitions == 0
    assert not b.try_acquire_or_renew() and b.holder() == "a" and not b.valid()


def test_another_waits_the_lease_duration_from_its_own_observation() -> None:
    clock, lease, a, b = pair()
    a.try_acquire_or_renew()
    clock.t += 100  # a's renewTime is old, but b has only just observed the record
    assert not b.try_acquire_or_renew()
    clock.t += 14.9
    assert not b.try_acquire_or_renew()
    assert not a.valid()  # a stopped acting long before: no renewal within 10 s
    clock.t += 0.2
    assert b.try_acquire_or_renew() and b.valid()
    assert lease.record is not None and lease.record.holder == "b"
    assert lease.record.transitions == 1  # a new holder counts a transition
    assert not a.try_acquire_or_renew() and not a.valid()


def test_a_lost_race_is_a_conflict_not_a_win() -> None:
    clock, lease, a, _b = pair()
    assert a.try_acquire_or_renew()
    stale = lease.get()
    assert stale is not None
    assert a.try_acquire_or_renew()  # a renews; b still holds the old version
    assert not lease.update(Record("b", 15, "x", "x", 1), stale[1])
    empty = Memory()
    c, d = Elector(empty, "c", T, clock, clock), Elector(empty, "d", T, clock, clock)
    assert c.try_acquire_or_renew()
    assert not d.try_acquire_or_renew()  # its create found one


def test_release_lets_another_take_it_at_once() -> None:
    _clock, lease, a, b = pair()
    a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    assert a.release() and not a.valid()
    assert lease.record is not None and lease.record.holder == "" and lease.record.duration == 1
    assert b.try_acquire_or_renew()  # an empty holder is free (b saw a change)
    assert lease.record is not None and lease.record.transitions == 1
    assert not a.release()  # not ours


def test_leadership_refuses_writes_once_not_renewed() -> None:
    clock, _lease, a, _ = pair()
    held = Leadership(a, "kube-system/x", lambda line: None)
    a.try_acquire_or_renew()
    held.check()
    clock.t += 10.0
    with pytest.raises(LostLeaseError, match="lost the lease kube-system/x"):
        held.check()


@pytest.mark.parametrize(
    ("timings", "flag"),
    [
        (Timings(10, 10, 2), "--lease-duration"),
        (Timings(15, 2.4, 2), "--renew-deadline"),
        (Timings(15, 10, 0), "--retry-period"),
    ],
)
def test_client_gos_checks_of_the_timings(timings: Timings, flag: str) -> None:
    with pytest.raises(InputError) as raised:
        timings.check()
    assert raised.value.field == flag
    assert T.check() is T


def test_micro_time_is_the_apis_form() -> None:
    assert micro_time(0.5) == "1970-01-01T00:00:00.500000Z"
    assert (
        Record.of({}).holder == ""
        and Record.of(Record("a", 1, "t", "t", 2).spec()).transitions == 2
    )


@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "tick"]), st.floats(0, 20)),
        min_size=1,
        max_size=80,
    )
)
def test_two_replicas_never_both_may_act(script: list[Any]) -> None:
    """Whatever order the replicas try in and however the time goes, at no instant do
    both hold a valid lease (renew deadline < lease duration; as client-go argues)."""
    clock, _, a, b = pair()
    who = {"a": a, "b": b}
    for step, seconds in script:
        if step == "tick":
            clock.t += seconds
        else:
            who[step].try_acquire_or_renew()
        assert not (a.valid() and b.valid())
