"""The store's changes numbered by resourceVersion, kept for the API server's lists and
watches (its watch cache)."""

from __future__ import annotations

import builtins
import threading
from typing import TYPE_CHECKING, Any

from kupgrade.sim.commits import encode

if TYPE_CHECKING:
    from kupgrade.sim.store import Store


class ChangeLog:
    """The store's changes numbered by resourceVersion, for list and watch.

    Each change keeps the object as it was then (encoded, so later edits in place do not
    alter history); a watch from a version older than the oldest kept gets 410 Gone.
    """

    def __init__(self, store: Store, start: int, keep: int) -> None:
        self.store = store
        self.version = start
        self.oldest = start  # a watch may resume from this version or later
        self.keep = keep
        # Versions are consecutive, so the changes after version v start at index
        # v - first: a watch catching up costs what it reads, not the length of the log.
        self.entries: builtins.list[tuple[int, str, str, bytes]] = []
        # One condition a kind, all on the store's lock: a change wakes the watches of its
        # kind only. One for all woke every watch (a client's informers hold one a kind,
        # 25) at every change, each to find nothing of its own.
        self._kinds: dict[str, threading.Condition] = {}

    def record(self, kind_of_change: str, obj: dict[str, Any]) -> None:
        self.version += 1
        obj["metadata"]["resourceVersion"] = str(self.version)
        self.entries.append((self.version, kind_of_change, str(obj["kind"]), encode(obj)))
        if len(self.entries) >= 2 * self.keep:  # trimmed in halves: amortised O(1)
            del self.entries[: self.keep]
        if len(self.entries) > self.keep:
            self.oldest = self.entries[len(self.entries) - self.keep - 1][0]
        self.store.set_meta("resourceVersion", self.version)
        waiting = self._kinds.get(str(obj["kind"]))
        if waiting is not None:
            with waiting:  # the store's RLock: held already by a step or a request
                waiting.notify_all()

    def changed(self, kind: str) -> threading.Condition:
        """What a watch of `kind` waits on (under the store's lock) for its next change."""
        found = self._kinds.get(kind)
        if found is None:
            found = self._kinds[kind] = threading.Condition(self.store.lock)
        return found

    def since(self, version: int) -> builtins.list[tuple[int, str, str, bytes]] | None:
        """Changes after `version`, or None when they are no longer kept (410 Gone)."""
        if version < self.oldest or version > self.version:
            return None
        if not self.entries:
            return []
        return self.entries[max(0, version - self.entries[0][0] + 1) :]
