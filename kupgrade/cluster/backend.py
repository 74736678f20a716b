"""What the controllers act through: a real cluster's API or the simulated one.

Controllers only observe objects, write objects, evict pods and ask to be woken later;
they never read a wall clock (time comes from `now`), so the same controller code runs
an upgrade on a real cluster or hours of one in seconds on the simulator.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Any, Protocol

Obj = dict[str, Any]
Key = tuple[str, str, str]  # kind, namespace, name


class Watch:
    """The keys of watched kinds changed since the last drain, as an informer queues them.

    A new watch starts with every existing key (the informer's initial list), so a
    controller started after a crash looks at everything once and then only at changes.
    """

    def __init__(self, keys: Iterable[Key]) -> None:
        self._keys: set[Key] = set(keys)

    def add(self, key: Key) -> None:
        self._keys.add(key)

    def drain(self) -> builtins.list[Key]:
        """Pending keys in sorted order (set order would differ between processes)."""
        keys = sorted(self._keys)
        self._keys.clear()
        return keys

    def __bool__(self) -> bool:
        return bool(self._keys)


class Eviction(Protocol):
    @property
    def code(self) -> int:
        """200 evicted, 429 refused by a PodDisruptionBudget, 500 misconfigured budgets."""
        ...

    @property
    def message(self) -> str: ...

    @property
    def cause(self) -> str:
        """The Status cause that names the budget ("" when there is none)."""
        ...


class Backend(Protocol):
    def now(self) -> float: ...

    def get(self, kind: str, name: str, namespace: str = "") -> Obj | None: ...

    def list(self, kind: str) -> builtins.list[Obj]: ...

    def watch(self, *kinds: str) -> Watch:
        """Keys of these kinds changed since the last look, starting with all of them."""
        ...

    def pods_on(self, node: str) -> builtins.list[Obj]:
        """Pods bound to `node` (field selector spec.nodeName)."""
        ...

    def apply(self, obj: Obj) -> Obj:
        """Create or update spec and metadata; the status stays the owner's."""
        ...

    def write(self, obj: Obj) -> None:
        """Store an object the caller changed (spec, metadata or status)."""
        ...

    def evict(self, pod: Obj) -> Eviction: ...

    def requeue_at(self, at: float, kind: str, name: str, namespace: str = "") -> None:
        """Queue one object to its watchers again at `at` (a retry with a delay)."""
        ...

    def record(self, obj: str, reason: str, message: str) -> None:
        """An event for the timeline (what happened, to which object)."""
        ...

    def state(self, key: str, default: Any = None) -> Any:
        """Controller state kept with the cluster (survives a crash)."""
        ...

    def set_state(self, key: str, value: Any) -> None: ...

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        """Ask for an object's deletion, as the API server takes it: gone at once, or,
        while it has finalizers, kept with metadata.deletionTimestamp set."""
        ...
