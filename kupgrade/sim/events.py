"""The world's scheduled events, as the store keeps them: a tagged union whose members
are stored as `[tag, field, ...]` (msgspec's array-like structs), the form the schedule
table has always held. The events every platform shares are here; each platform's
package adds its own (sim/openshift/world.py, sim/gdc/world.py, sim/kubernetes/world.py).
"""

from __future__ import annotations

from typing import Any

import msgspec


class Event(msgspec.Struct, array_like=True):
    """A scheduled event of the world; subclasses carry a tag (their stored name)."""


class Wake(Event, tag="wake"):
    """A requeue: the object is handed to the watchers of its kind, changed or not."""

    kind: str = ""
    namespace: str = ""
    name: str = ""


class PodGone(Event, tag="pod-gone"):
    """A terminating pod's grace period ended: it leaves the store."""

    namespace: str
    name: str


class PodReady(Event, tag="pod-ready"):
    """A new pod passed its start time: Ready."""

    namespace: str
    name: str


class Change(Event, tag="change"):
    """A profile's scripted change: a merge patch of one object at a minute."""

    kind: str
    name: str
    namespace: str
    patch: dict[str, Any]
