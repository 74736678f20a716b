"""Every field of a conformance case must be read by the test that runs it.

A test that reads ../shared/conformance can silently ignore a field the README defines —
an HTTP status, a pod kind, `force`, a mode — and then passes on a case that uses it,
whether the library is right or not. The cases handed out by `conformance_cases` are
therefore `Tracked` copies that remember which keys were read, and this plugin fails a
passing test that left a field unread.

The rule, per mapping: one that the test (or the code under test) never looked inside
counts as used as a whole (it was compared or passed on in one piece); one it did look
inside must have every key read, recursively. Identity, provenance and commentary keys
(EXEMPT) are not checked; a field a branch rightly never reads is declared with `unused`
and a comment saying why, and maps keyed by data are taken whole with `plain`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

import pytest
import yaml

# Identity, provenance and commentary: the READMEs say these are never compared.
EXEMPT = frozenset({"id", "source", "origin", "note", "notes", "description", "why"})

# Set by tests/test_case_harness.py: each section hands out its first case only, with a
# field no README defines, and every test that runs it must then fail.
MUTATE = "KUPGRADE_MUTATE_CASES"
MUTANT = "x_field_no_test_reads"


def mutated(case: dict[str, Any]) -> dict[str, Any]:
    """A copy of a real case with a field nobody defines, at the top and in its input."""
    copy = {**case, MUTANT: True}
    if isinstance(case.get("input"), dict):
        copy["input"] = {**case["input"], MUTANT: True}
    return copy


def case_params(
    cases: Iterable[dict[str, Any]],
    id_key: str = "id",
    where: Callable[[dict[str, Any]], bool] | None = None,
) -> list[Any]:
    """One tracked pytest param per case (those `where` keeps; what it reads counts as
    read). Under MUTATE only the first, with a field no README defines."""
    mutate = bool(os.environ.get(MUTATE))
    params = []
    for case in cases:
        tracked = track(mutated(case) if mutate else case)
        if where is None or where(tracked):
            tracked.pin()
            params.append(pytest.param(tracked, id=str(case[id_key])))
    return params[:1] if mutate else params


def track(value: Any) -> Any:
    """A tracked deep copy of plain YAML data (mappings and lists; scalars as they are)."""
    if isinstance(value, dict):
        return Tracked({k: track(v) for k, v in value.items()})
    if isinstance(value, list):
        return TrackedList(track(v) for v in value)
    return value


class Tracked(dict[Any, Any]):
    """A dict that records which keys were read."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read: set[Any] = set()
        self.pinned: set[Any] = set()  # read when the case was selected (its section)

    def _mark(self, key: Any) -> None:
        self.read.add(key)

    def __getitem__(self, key: Any) -> Any:
        self._mark(key)
        return super().__getitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._mark(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self._mark(key)
        return super().__contains__(key)

    def pop(self, key: Any, *default: Any) -> Any:
        self._mark(key)
        return super().pop(key, *default)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._mark(key)
        return super().setdefault(key, default)

    def items(self) -> Any:
        self.read.update(super().keys())
        return super().items()

    def values(self) -> Any:
        self.read.update(super().keys())
        return super().values()

    def __iter__(self) -> Iterator[Any]:
        # Iterating the keys is how `for k in d: d[k]` and `dict(**d)` read everything.
        self.read.update(super().keys())
        return super().__iter__()

    def copy(self) -> Tracked:
        self.read.update(super().keys())
        return Tracked(super().items())

    def __reduce_ex__(self, protocol: Any) -> Any:
        self.read.update(super().keys())
        return super().__reduce_ex__(protocol)

    def pin(self) -> None:
        """What was read so far stays read: the keys a case was selected by."""
        self.pinned = set(self.read)

    def reset(self) -> None:
        self.read = set(self.pinned)
        for value in dict.values(self):
            _reset(value)

    def unread(self, path: str = "") -> list[str]:
        """Paths of keys the test never read, in mappings it looked inside."""
        if not self.read:
            return []
        missing: list[str] = []
        for key, value in dict.items(self):
            where = f"{path}.{key}" if path else str(key)
            if key in EXEMPT:
                continue
            if key not in self.read:
                missing.append(where)
            else:
                missing += _unread(value, where)
        return missing


class TrackedList(list[Any]):
    """A list whose tracked elements are checked when they were looked inside."""


def unused(case: Any, *paths: str) -> None:
    """Declare fields the code under test rightly never reads (say why at the call).

    A path is dotted keys with `[]` for every element of a list, e.g.
    `input.history[].version`; a missing key is fine (cases differ in what they carry).
    """
    for path in paths:
        _mark_path(case, path.replace("[]", ".[]").split("."))


def plain(value: Any) -> Any:
    """An untracked copy of `value`, which counts as read in full: for maps keyed by data
    (operator names, versions) that the code under test looks up in, not walks."""
    if isinstance(value, Tracked):
        value.read.update(dict.keys(value))
        return {k: plain(v) for k, v in dict.items(value)}
    if isinstance(value, TrackedList):
        return [plain(v) for v in list.__iter__(value)]
    return value


def _mark_path(value: Any, parts: list[str]) -> None:
    if not parts:
        return
    head, rest = parts[0], parts[1:]
    if head == "[]":
        if isinstance(value, list):
            for item in list.__iter__(value):
                _mark_path(item, rest)
        return
    if isinstance(value, Tracked) and dict.__contains__(value, head):
        value.read.add(head)
        _mark_path(dict.__getitem__(value, head), rest)


def _reset(value: Any) -> None:
    if isinstance(value, Tracked):
        value.reset()
    elif isinstance(value, TrackedList):
        for item in list.__iter__(value):
            _reset(item)


def _unread(value: Any, path: str) -> list[str]:
    if isinstance(value, Tracked):
        return value.unread(path)
    if isinstance(value, TrackedList):
        return [
            p for i, item in enumerate(list.__iter__(value)) for p in _unread(item, f"{path}[{i}]")
        ]
    return []


yaml.SafeDumper.add_representer(Tracked, yaml.SafeDumper.represent_dict)
yaml.SafeDumper.add_representer(TrackedList, yaml.SafeDumper.represent_list)


def _cases(item: pytest.Item) -> list[Tracked]:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return []
    return [v for v in callspec.params.values() if isinstance(v, Tracked)]


REPORT = "KUPGRADE_MUTATE_REPORT"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under MUTATE only the tests that run a conformance case are of interest."""
    if not os.environ.get(MUTATE):
        return
    keep = [item for item in items if _cases(item)]
    config.hook.pytest_deselected(items=[item for item in items if not _cases(item)])
    items[:] = keep


def _report(item: pytest.Item, outcome: str) -> None:
    """Under MUTATE, one line per test that ran a case: its id and how it ended."""
    path = os.environ.get(REPORT)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{item.nodeid}\t{outcome}\n")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    cases = _cases(item)
    for case in cases:
        case.reset()
    try:
        result = yield
    except BaseException as exc:
        if cases:
            _report(item, "skipped" if isinstance(exc, pytest.skip.Exception) else "failed")
        raise
    unread = [path for case in cases for path in case.unread()]
    if cases:
        _report(item, "failed" if unread else "passed")
    if unread:
        raise AssertionError(
            "conformance case fields the test never read (honour them or fail on them): "
            + ", ".join(unread)
        )
    return result
