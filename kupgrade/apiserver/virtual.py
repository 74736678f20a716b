"""Objects the API serves from what the simulator keeps outside its object table: the
controllers' state as the ConfigMap a controller on a real cluster keeps it in, the
event log as core/v1 Events, and the virtual clock (SPEC X2).

The same names and shapes as `cluster/kube.py` uses on a real cluster, so a controller
acting over the API keeps its state where the in-process one does (store meta
`state:KEY`) and its events land in the rehearsal's timeline.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec

from kupgrade.apiserver.clock import NAME as CLOCK
from kupgrade.apiserver.clock import Stepper, clock_object
from kupgrade.apiserver.resources import BY_KIND
from kupgrade.cluster.apikinds import EVENT_AT, STATE_CONFIGMAP, STATE_NAMESPACE
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.store import Store
from kupgrade.versions.times import rfc3339

STATE = "state:"  # SimCluster.state's meta prefix
KIND_NAMES = {k.lower(): k for k in BY_KIND}


class Virtual:
    def __init__(self, sim: SimCluster, clock: Stepper | None, home: str) -> None:
        self.sim = sim
        self.clock = clock
        self.home = home

    @staticmethod
    def is_state(kind: str, namespace: str, name: str) -> bool:
        return (kind, namespace, name) == ("ConfigMap", STATE_NAMESPACE, STATE_CONFIGMAP)

    # --- reads --------------------------------------------------------------------------

    def state_digest(self) -> str:
        """A digest of the controllers' state, in a ClockStep's answer: a client that
        keeps the state ConfigMap reads it again only when this changes, not at every
        step (a twelfth of the requests of a rehearsal over the API)."""
        encoded = msgspec.json.encode(self.sim.store.metas(STATE), order="sorted")
        return hashlib.blake2b(encoded, digest_size=12).hexdigest()

    def state(self) -> dict[str, Any]:
        data = {k: json.dumps(v) for k, v in self.sim.store.metas(STATE).items()}
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": STATE_CONFIGMAP,
                "namespace": STATE_NAMESPACE,
                "resourceVersion": self._version(),
            },
            "data": data,
        }

    def clocks(self) -> list[dict[str, Any]]:
        if self.clock is None:
            return []
        return [clock_object(self.clock, int(self._version()), self.home)]

    def clock_named(self, name: str) -> dict[str, Any] | None:
        return self.clocks()[0] if name == CLOCK and self.clock is not None else None

    def events(self) -> list[dict[str, Any]]:
        return events_of(self.sim.store)

    # --- writes -------------------------------------------------------------------------

    def put_state(self, obj: dict[str, Any], *, dry: bool = False) -> str:
        """Take the state ConfigMap's data as the controllers' state; a problem's text
        ("" when it was taken, or with `dry` would be). Keys it no longer holds are
        cleared."""
        data = obj.get("data") or {}
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            return "data: Invalid value: every value must be a string"
        try:
            values = {str(k): json.loads(v) for k, v in data.items()}
        except ValueError as exc:
            return f"data: Invalid value: the controllers' state is JSON ({exc})"
        if dry:
            return ""
        for key in self.sim.store.metas(STATE):
            if key not in values:
                self.sim.set_state(key, None)
        for key, value in values.items():
            self.sim.set_state(key, value)
        return ""

    def record_event(self, obj: dict[str, Any], *, dry: bool = False) -> str:
        """Log a created Event (the controller's record()); a problem's text or ""."""
        involved = obj.get("involvedObject") or {}
        if not isinstance(involved, dict) or not involved.get("kind") or not involved.get("name"):
            return "involvedObject: Required value: kind and name"
        if dry:
            return ""
        ns = involved.get("namespace") or ""
        key = f"{str(involved['kind']).lower()}/{ns + '/' if ns else ''}{involved['name']}"
        kind = "Warning" if obj.get("type") == "Warning" else "Normal"
        self.sim.store.event(
            self.sim.now(), kind, key, str(obj.get("reason", "")), str(obj.get("message", ""))
        )
        return ""

    def _version(self) -> str:
        changes = self.sim.store.changes
        return str(changes.version if changes is not None else 1)


def events_of(store: Store) -> list[dict[str, Any]]:
    """The event log (store.events) as core/v1 Events, oldest first."""
    out = []
    for seq, e in enumerate(store.events(), 1):
        kind, _, rest = str(e["object"]).partition("/")
        namespace, _, name = rest.rpartition("/")
        stamp = rfc3339(float(e["at"]))
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {
                    "name": f"{name or kind}.{seq:x}",
                    "namespace": namespace or "default",
                    "creationTimestamp": stamp,
                    "resourceVersion": str(seq),
                    "annotations": {EVENT_AT: repr(float(e["at"]))},
                },
                "involvedObject": {
                    "kind": KIND_NAMES.get(kind, kind),
                    "name": name,
                    **({"namespace": namespace} if namespace else {}),
                },
                "reason": e["reason"],
                "message": e["message"],
                "type": e["kind"],
                "count": 1,
                "firstTimestamp": stamp,
                "lastTimestamp": stamp,
                "source": {"component": "kupgrade"},
            }
        )
    return out
