"""Node objects from the shorthand of ../shared/conformance/mco/rollout.yaml."""

from __future__ import annotations

from typing import Any

from kupgrade.controllers.nodes import pool as mcp


def node_of(spec: dict[str, Any]) -> dict[str, Any]:
    notes: dict[str, str] = {}
    for key, annotation in (
        ("currentConfig", mcp.CURRENT),
        ("desiredConfig", mcp.DESIRED),
        ("state", mcp.STATE),
        ("reason", mcp.REASON),
        ("desiredImage", mcp.DESIRED_IMAGE),
        ("currentImage", mcp.CURRENT_IMAGE),
    ):
        if spec.get(key) is not None:
            notes[annotation] = spec[key]
    labels = {mcp.ZONE_LABEL: spec["zone"]} if spec.get("zone") else {}
    conditions = [{"type": k, "status": v} for k, v in (spec.get("conditions") or {}).items()]
    meta: dict[str, Any] = {"name": spec["name"], "annotations": notes, "labels": labels}
    if spec.get("created"):
        meta["creationTimestamp"] = spec["created"]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta,
        "spec": {"unschedulable": bool(spec.get("unschedulable", False))},
        "status": {"conditions": conditions},
    }
