"""A cluster captured as oc's own examples are, read as `oc adm upgrade status
--mock-clusterversion` reads it (openshift/oc pkg/cli/admin/upgrade/status status.go
Complete and Run, mockresources.go): the objects in an in-memory cluster on the capture's
own clock, and the alerts file beside them when there is one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kupgrade import intake
from kupgrade.cluster.alerts import Alert, read_answer
from kupgrade.cluster.fake import MemoryBackend
from kupgrade.errors import InputError
from kupgrade.versions.times import parse_time
from kupgrade.views.status_health import CAPTURE_SLACK

Obj = dict[str, Any]
CAPTURED = {"co": True, "mcp": True, "mc": True, "node": True, "mco-deployment": False}


def read_capture(cv_path: Path) -> MemoryBackend:
    """A cluster captured as oc's own examples are: `oc get clusterversion -o yaml` in
    NAME-cv.yaml and, beside it, the ClusterOperators (NAME-co.yaml), MachineConfigPools
    (-mcp.yaml), MachineConfigs (-mc.yaml), Nodes (-node.yaml) and the machine-config
    operator's Deployment when there is one (-mco-deployment.yaml), and the alerts
    (-alerts.json, an /api/v1/alerts answer) when they were captured: what `oc adm upgrade
    status --mock-clusterversion` reads (openshift/oc pkg/cli/admin/upgrade/status
    status.go Complete, mockresources.go)."""
    name = str(cv_path)
    if not name.endswith("-cv.yaml"):
        raise InputError(
            "a capture's ClusterVersion file is named NAME-cv.yaml",
            file=name,
            hint="the other files are found beside it by that name",
        )
    objects = _captured(cv_path)
    for suffix, required in CAPTURED.items():
        path = Path(name.removesuffix("-cv.yaml") + f"-{suffix}.yaml")
        if required or path.exists():
            objects += _captured(path)
    api = MemoryBackend(objects, mock_clock(objects), as_given=True)
    alerts = Path(name.removesuffix("-cv.yaml") + "-alerts.json")
    if alerts.exists():
        api.alerts = captured_alerts(alerts)
    return api


def captured_alerts(path: Path) -> list[Alert] | str:
    """The alerts file of a capture; what is wrong with it when it cannot be read, for
    the status to say and go on without them, as oc does."""
    try:
        return read_answer(intake.read_file(path, "captured alerts"), str(path))
    except InputError as exc:
        return str(exc)


def mock_clock(objects: list[Obj]) -> float:
    """The time oc's mock mode reads a capture at: its ClusterVersion's and
    ClusterOperators' latest condition change, a little after (0 when there is none)."""
    conditions = [
        c
        for o in objects
        if o.get("kind") in ("ClusterVersion", "ClusterOperator")
        for c in (o.get("status") or {}).get("conditions") or []
        if isinstance(c, dict)
    ]
    stamps = [parse_time(c.get("lastTransitionTime")) for c in conditions]
    return max(stamps, default=0.0) + CAPTURE_SLACK if stamps else 0.0


def _captured(path: Path) -> list[Obj]:
    """The objects of one captured file: an object, or the items of a List."""
    doc = intake.load_yaml(intake.read_file(path, "captured objects"), str(path))
    if not isinstance(doc, dict):
        raise InputError("is not a Kubernetes object or List", file=str(path))
    items = doc.get("items") if str(doc.get("kind", "")).endswith("List") else [doc]
    if not isinstance(items, list) or not all(
        isinstance(o, dict) and isinstance(o.get("metadata"), dict) and o.get("kind") for o in items
    ):
        raise InputError(
            "holds something that is not a Kubernetes object",
            file=str(path),
            hint="capture it with `oc get KIND -o yaml`",
        )
    return items
