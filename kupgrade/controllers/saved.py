"""Controller state as typed records: what a controller keeps with the cluster (through
`Backend.state`, so a crashed run goes on where it stopped) is a msgspec Struct, read and
written here, never a dictionary whose keys each reader spells again.

The stored form stays plain JSON (the simulator's store, or the ConfigMap a controller
keeps on a real cluster), so a record written by an older kupgrade is read by a newer one:
fields it lacks take their defaults and fields it no longer has are ignored.
"""

from __future__ import annotations

from typing import TypeVar

import msgspec

from kupgrade.cluster.backend import Backend
from kupgrade.errors import InputError

Record = TypeVar("Record", bound=msgspec.Struct)


def load(api: Backend, key: str, kind: type[Record]) -> Record | None:
    """The record kept under `key`, or None when there is none."""
    raw = api.state(key)
    if raw is None:
        return None
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as exc:
        raise InputError(
            f"the upgrade state {key!r} kept with the cluster is not readable: {exc}",
            hint="it was written by a kupgrade that does not match this one, or edited; "
            "delete the cluster's upgrade state and ask for the upgrade again",
        ) from exc


def save(api: Backend, key: str, record: msgspec.Struct | None) -> None:
    """Keep `record` under `key` (None forgets it); an unchanged record writes nothing.

    The value handed over is the record's JSON form (lists, not tuples), the form a backend
    reads back: a served cluster's ConfigMap returns JSON, and a tuple never equals the
    list it comes back as, so every save would look like a change and write again."""
    api.set_state(key, None if record is None else msgspec.json.decode(msgspec.json.encode(record)))
