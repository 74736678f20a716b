"""The file formats `kupgrade skew` and `kupgrade plan` read, for users to look up: a
commented example of each (shipped, and loaded by the tests through the real readers)
and the JSON Schema of the very types the readers convert into (SPEC G2-G4, H)."""

from __future__ import annotations

from importlib import resources
from typing import Any

import msgspec

from kupgrade.skew.fleet import ClusterDoc, FleetDoc
from kupgrade.skew.inventory import Inventory

KINDS = ("inventory", "fleet")


def example(kind: str) -> str:
    return (resources.files("kupgrade.skew") / "examples" / f"{kind}.yaml").read_text(
        encoding="utf-8"
    )


def schema(kind: str) -> dict[str, Any]:
    if kind == "inventory":
        return dict(msgspec.json.schema(Inventory))
    # A fleet's clusters are converted one by one (to name the cluster in an error), so
    # the document type says Any; the schema says what each one is.
    (doc, _), components = msgspec.json.schema_components([FleetDoc, ClusterDoc])
    components["FleetDoc"]["properties"]["clusters"] = {
        "type": "object",
        "additionalProperties": {"$ref": "#/$defs/ClusterDoc"},
    }
    return {**doc, "$defs": components}
