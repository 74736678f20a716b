"""Leader election as client-go's tryAcquireOrRenew (tools/leaderelection/leaderelection.go)
on a fake clock and an in-memory Lease with resourceVersion conflicts: every branch, and
the property that two replicas never both believe they may act at one instant."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.cluster.leader import (
    Elector,
    Leadership,
    LostLeaseError,
    Record,
    Timings,
    check_lease_names,
    micro_time,
)
from kupgrade.errors import InputError


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class Memory:
    """A Lease as the API server keeps it: a write with a stale resourceVersion is a 409.
    `Memory.view` is one candidate's LeaseLock over it: it keeps the version it last saw."""

    def __init__(self) -> None:
        self.record: Record | None = None
        self.version = 0
        self.writes: list[str] = []  # the holder of each write, in order

    def view(self) -> Lock:
        return Lock(self)


class Lock:
    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.seen: int | None = None  # the resourceVersion of the Lease last got or written

    def get(self) -> Record | None:
        self.seen = None if self.memory.record is None else self.memory.version
        return self.memory.record

    def create(self, record: Record) -> bool:
        if self.memory.record is not None:
            return False
        return self._write(record)

    def update(self, record: Record) -> bool:
        if self.seen is None or self.seen != self.memory.version or self.memory.record is None:
            return False
        return self._write(record)

    def _write(self, record: Record) -> bool:
        self.memory.record, self.memory.version = record, self.memory.version + 1
        self.memory.writes.append(record.holder)
        self.seen = self.memory.version
        return True


T = Timings(15, 10, 2)


def pair() -> tuple[Clock, Memory, Elector, Elector]:
    clock, lease = Clock(), Memory()
    a = Elector(lease.view(), "a", T, clock, clock)
    b = Elector(lease.view(), "b", T, clock, clock)
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


class Racing(Lock):
    """A LeaseLock whose next update is preceded by another candidate's write (the race
    between a Get and its Update that the resourceVersion decides)."""

    def __init__(self, memory: Memory, first: Callable[[], object]) -> None:
        super().__init__(memory)
        self.first = first

    def _race(self) -> None:
        first, self.first = self.first, lambda: None
        first()

    def create(self, record: Record) -> bool:
        self._race()
        return super().create(record)

    def update(self, record: Record) -> bool:
        self._race()
        return super().update(record)


def test_a_lost_race_is_a_conflict_not_a_win() -> None:
    clock, lease, a, b = pair()
    assert a.try_acquire_or_renew()
    clock.t += 20
    assert not b.try_acquire_or_renew()  # b observes a's record now: 15 s from here
    clock.t += 16
    b.store = Racing(lease, a.try_acquire_or_renew)  # a writes between b's read and write
    assert not b.try_acquire_or_renew()  # b's update carries a stale resourceVersion
    assert lease.record is not None and lease.record.holder == "a"
    assert a.valid() and not b.valid()
    empty = Memory()
    c = Elector(empty.view(), "c", T, clock, clock)
    d = Elector(Racing(empty, c.try_acquire_or_renew), "d", T, clock, clock)
    assert not d.try_acquire_or_renew()  # d read no Lease; c created it before d's create
    assert c.valid() and not d.valid() and empty.writes == ["c"]
    assert not d.try_acquire_or_renew() and d.holder() == "c"


def test_the_leader_renews_on_the_fast_path_and_falls_back_on_a_conflict() -> None:
    clock, lease, a, _b = pair()
    assert a.try_acquire_or_renew()
    reads: list[int] = []
    get = a.store.get

    def counted() -> Record | None:
        reads.append(1)
        return get()

    a.store.get = counted  # type: ignore[method-assign]
    clock.t += 2
    assert a.try_acquire_or_renew() and reads == []  # an update over the Lease it wrote
    assert lease.writes == ["a", "a"]
    # Someone edits the Lease (kubectl, another tool): the optimistic update is a 409,
    # the slow path reads it and finds another holder.
    lease.record, lease.version = Record("z", 15, "t", "t", 4), lease.version + 1
    clock.t += 2
    assert not a.try_acquire_or_renew() and reads == [1]
    assert not a.valid() and a.holder() == "z"


def test_a_record_unchanged_for_the_lease_duration_is_taken_over() -> None:
    clock, lease, a, b = pair()
    a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    seen = b.observed_at
    clock.t += 5
    assert not b.try_acquire_or_renew() and b.observed_at == seen  # same record: not again
    clock.t += 10.5
    assert b.try_acquire_or_renew()
    assert lease.record is not None
    assert (lease.record.holder, lease.record.transitions) == ("b", 1)
    assert lease.record.acquire == lease.record.renew  # a new holder's acquireTime is now
    assert lease.record.duration == 15


def test_a_lease_with_no_holder_is_free_at_once() -> None:
    _clock, lease, _a, b = pair()
    lease.record, lease.version = Record("", 3600, "t", "t", 7), 1
    assert b.try_acquire_or_renew()
    assert lease.record is not None and lease.record.transitions == 8


def test_the_lease_duration_is_whole_seconds_as_client_go_writes_it() -> None:
    clock, lease = Clock(), Memory()
    e = Elector(lease.view(), "e", Timings(2.9, 2, 0.5), clock, clock)
    assert e.try_acquire_or_renew()
    assert lease.record is not None and lease.record.duration == 2  # int(2.9s / 1s)


def test_the_renew_deadline_counts_from_before_the_write() -> None:
    """A slow answer does not lengthen the leader's term: the write reached the server
    after the request left, so others observe it later still."""
    clock, lease = Clock(), Memory()
    view = lease.view()
    e = Elector(view, "e", T, clock, clock)
    write = view._write

    def slow(record: Record) -> bool:
        clock.t += 4  # the answer takes 4 s
        return write(record)

    view._write = slow  # type: ignore[method-assign]
    assert e.try_acquire_or_renew()
    clock.t += 6
    assert not e.valid()  # 10 s since the request left, 6 s since the answer


def test_release_lets_another_take_it_at_once() -> None:
    clock, lease, a, b = pair()
    a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    assert a.release() and not a.valid()
    assert lease.record is not None and lease.record.holder == "" and lease.record.duration == 1
    assert b.try_acquire_or_renew()  # an empty holder is free (b saw a change)
    assert lease.record is not None and lease.record.transitions == 1
    assert not a.release()  # not ours
    clock.t += 11
    assert not b.release()  # past its renew deadline: it writes nothing, the Lease neither
    assert lease.record is not None and lease.record.holder == "b"


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


def test_a_deleted_lease_is_found_out_at_the_next_renewal() -> None:
    """Deleting the Lease is outside the protocol (another may create it at once, as with
    client-go): the holder learns of it at its next renewal and stops."""
    clock, lease, a, b = pair()
    a.try_acquire_or_renew()
    lease.record, lease.version = None, lease.version + 1
    assert b.try_acquire_or_renew()
    clock.t += 2
    assert not a.try_acquire_or_renew() and not a.valid() and a.holder() == "b"


@settings(max_examples=400)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "tick", "release", "race", "edit"]),
            st.floats(0, 20),
        ),
        min_size=1,
        max_size=80,
    )
)
def test_no_two_replicas_ever_both_may_act(script: list[Any]) -> None:
    """Whatever order three replicas try in, however the time goes, whoever releases,
    whatever races a write or edits the Lease: at no instant do two hold a valid lease
    (renew deadline < lease duration; as client-go argues)."""
    clock, lease = Clock(), Memory()
    who = [Elector(lease.view(), name, T, clock, clock) for name in "abc"]
    for step, seconds in script:
        if step == "tick":
            clock.t += seconds
        elif step == "release":
            who[int(seconds) % 3].release()
        elif step == "race":  # the next of one's writes comes after another's try
            one, other = who[int(seconds) % 3], who[(int(seconds) + 1) % 3]
            if isinstance(one.store, Lock):
                racing = Racing(lease, other.try_acquire_or_renew)
                racing.seen = one.store.seen
                one.store = racing
        elif step == "edit":  # another holder written by hand (a term at least as long)
            edited = Record("z", 15 + int(seconds), "t", "t", 0)
            lease.record, lease.version = edited, lease.version + 1
        else:
            who["abc".index(step)].try_acquire_or_renew()
        assert sum(e.valid() for e in who) <= 1


@given(st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?(\.[a-z0-9]{1,5})?", fullmatch=True))
def test_dns_names_are_accepted(name: str) -> None:
    check_lease_names(name.split(".", maxsplit=1)[0], name)


@given(st.text(min_size=1, max_size=20))
def test_names_the_api_server_refuses_are_one_line_errors(name: str) -> None:
    valid = re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name) is not None
    if valid:
        check_lease_names(name, name)
        return
    with pytest.raises(InputError) as raised:
        check_lease_names(name, "ok")
    assert raised.value.field == "--lease-namespace"
    with pytest.raises(InputError):
        check_lease_names("ok", name + "_")


def test_a_long_sync_does_not_stop_the_renewals() -> None:
    """The renewals run in their own thread: a controller busy for longer than the lease
    duration (pure Python, holding the GIL in turns) still holds a valid lease."""
    lease = Memory()
    elector = Elector(lease.view(), "busy", Timings(1.5, 1.0, 0.2))
    held = Leadership(elector, "kube-system/x", lambda line: None)
    held.acquire()
    try:
        end = time.monotonic() + 3.0  # twice the lease duration, three renew deadlines
        while time.monotonic() < end:
            sum(range(1000))
        held.check()  # would raise LostLeaseError had the renewals stalled
        assert lease.writes.count("busy") >= 8
    finally:
        assert held.stop()
    assert lease.record is not None and lease.record.holder == ""  # released at the end
