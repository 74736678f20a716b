"""OLM's objects in their own shapes (operators.coreos.com/v1alpha1: CatalogSource,
Subscription, InstallPlan, ClusterServiceVersion), the operator-lifecycle-manager
ClusterOperator's Upgradeable condition, and `oc get`'s columns for them (SPEC F, C6).

Upgradeable follows operator-lifecycle-manager pkg/controller/operators/openshift
(helpers.go incompatibleOperators, maxOpenShiftVersion; clusteroperator_controller.go
setUpgradeable): an installed CSV whose `olm.maxOpenShiftVersion` is below the next minor
release blocks minor upgrades; an invalid value blocks them too.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kupgrade.cluster.objects import meta

Obj = dict[str, Any]
GROUP_VERSION = "operators.coreos.com/v1alpha1"
OLM_OPERATOR = "operator-lifecycle-manager"
PROPERTIES = "operatorframework.io/properties"  # projection.PropertiesAnnotationKey
MAX_OPENSHIFT = "olm.maxOpenShiftVersion"
INCOMPATIBLE = "IncompatibleOperatorsInstalled"
OWNER = "olm.owner"  # on the operator's Deployment: its CSV
SOURCE_FILE = "file"  # a catalog read from a file or directory (the simulator's)
SOURCE_IMAGE = "grpc"  # a catalog image (OLM serves it over gRPC; kupgrade pulls it)


def catalog_source(
    name: str,
    namespace: str,
    *,
    image: str = "",
    path: str = "",
    priority: int = 0,
    poll: str = "",
    created: str = "",
) -> Obj:
    spec: Obj = {
        "sourceType": SOURCE_IMAGE if image else SOURCE_FILE,
        "priority": priority,
        "displayName": name,
        "publisher": "kupgrade",
    }
    if image:
        spec["image"] = image
        if poll:
            spec["updateStrategy"] = {"registryPoll": {"interval": poll}}
    else:
        spec["path"] = path
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "CatalogSource",
        "metadata": meta(name, namespace, creationTimestamp=created),
        "spec": spec,
        "status": {},
    }


def subscription(
    name: str,
    namespace: str,
    *,
    package: str,
    channel: str,
    source: str,
    source_namespace: str,
    approval: str = "Automatic",
    starting_csv: str = "",
    created: str = "",
) -> Obj:
    spec: Obj = {
        "name": package,
        "channel": channel,
        "source": source,
        "sourceNamespace": source_namespace,
        "installPlanApproval": approval,
    }
    if starting_csv:
        spec["startingCSV"] = starting_csv
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "Subscription",
        "metadata": meta(name, namespace, creationTimestamp=created),
        "spec": spec,
        "status": {},
    }


def plan_name(namespace: str, subscription: str, csv: str, generation: int) -> str:
    """install-xxxxx, as OLM names them (generated; here stable for the same step)."""
    digest = hashlib.sha256(f"{namespace}/{subscription}/{csv}/{generation}".encode()).hexdigest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "install-" + "".join(
        alphabet[int(digest[i : i + 2], 16) % len(alphabet)] for i in range(0, 10, 2)
    )


def install_plan(
    name: str,
    namespace: str,
    csv: str,
    *,
    approval: str,
    generation: int,
    created: str,
    subscription: str,
) -> Obj:
    automatic = approval == "Automatic"
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "InstallPlan",
        "metadata": meta(
            name,
            namespace,
            creationTimestamp=created,
            labels={"operators.coreos.com/subscription": subscription},
        ),
        "spec": {
            "clusterServiceVersionNames": [csv],
            "approval": approval,
            "approved": automatic,
            "generation": generation,
        },
        "status": {"phase": "Installing" if automatic else "RequiresApproval"},
    }


def csv_object(
    name: str,
    namespace: str,
    *,
    package: str,
    version: str,
    replaces: str,
    skips: list[str],
    properties: list[dict[str, Any]],
    image: str,
    created: str,
) -> Obj:
    spec: Obj = {
        "displayName": package,
        "version": version,
        "replaces": replaces or None,
        "install": {
            "strategy": "deployment",
            "spec": {
                "deployments": [
                    {
                        "name": f"{package}-operator",
                        "spec": {
                            "replicas": 1,
                            "template": {
                                "spec": {"containers": [{"name": "operator", "image": image}]}
                            },
                        },
                    }
                ]
            },
        },
    }
    if skips:
        spec["skips"] = list(skips)
    annotations = {PROPERTIES: json.dumps({"properties": properties}, sort_keys=True)}
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "ClusterServiceVersion",
        "metadata": meta(
            name,
            namespace,
            creationTimestamp=created,
            annotations=annotations,
            labels={f"operators.coreos.com/{package}.{namespace}": ""},
        ),
        "spec": spec,
        "status": {
            "phase": "Pending",
            "reason": "RequirementsUnknown",
            "message": "requirements not yet checked",
        },
    }


# --- progress --------------------------------------------------------------------------------

IN_FLIGHT = ("Pending", "InstallReady", "Installing", "Replacing", "Deleting")


def olm_busy(subscriptions: list[Obj], plans: list[Obj], csvs: list[Obj]) -> bool:
    """OLM still has work it will do on its own: a subscription not yet looked at, an
    install plan approved but not complete, a CSV between phases. A plan waiting for
    approval, a failure or a subscription at its latest is not work in flight."""
    if any(not (s.get("status") or {}).get("conditions") for s in subscriptions):
        return True
    if any(
        p["spec"].get("approved") and p["status"].get("phase") in ("RequiresApproval", "Installing")
        for p in plans
    ):
        return True
    return any(c["status"].get("phase") in IN_FLIGHT for c in csvs)


# --- Upgradeable (SPEC C6) -----------------------------------------------------------------


def _xy(text: str) -> tuple[int, int] | None:
    parts = text.lstrip("v").split("-")[0].split("+")[0].split(".")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        return None
    if not numbers:
        return None
    return numbers[0], numbers[1] if len(numbers) > 1 else 0


def max_openshift_version(csv: Obj) -> tuple[tuple[int, int] | None, str]:
    """helpers.go maxOpenShiftVersion: (major, minor) or None, and the error text."""
    annotation = (csv["metadata"].get("annotations") or {}).get(PROPERTIES)
    if annotation is None:
        return None, ""
    try:
        properties = json.loads(annotation).get("properties") or []
    except (ValueError, AttributeError) as exc:
        return None, str(exc)
    except RecursionError:  # nested past what a parser keeps; Go's encoding/json stops too
        return None, "exceeded max depth"
    found = [
        p.get("value") for p in properties if isinstance(p, dict) and p.get("type") == MAX_OPENSHIFT
    ]
    if not found:
        return None, ""
    if len(found) > 1:
        return None, f'defining more than one "{MAX_OPENSHIFT}" property is not allowed'
    value = str(found[0]).strip('"')
    if value == "":
        return None, 'value cannot be "" (an empty string)'
    parsed = _xy(value)
    if parsed is None:
        return None, f'failed to parse "{value}" as semver'
    bare = value.lstrip("v")
    extra = bare.split(".", 2)[2] if bare.count(".") >= 2 else "0"
    if extra != "0":  # a patch, a pre-release or build (semver.ParseTolerant, then EQ)
        return None, (
            f"property {MAX_OPENSHIFT} must specify only <major>.<minor> version, got "
            f"invalid value {value}"
        )
    return parsed, ""


def incompatible(csvs: list[Obj], current: str) -> list[tuple[str, str, str]]:
    """(namespace/name, max "X.Y" or "", error) of each installed CSV that blocks the next
    minor release after `current`; errors first, as skews.String orders them."""
    now = _xy(current)
    if now is None:
        return []
    next_minor = (now[0], now[1] + 1)
    bad, errors = [], []
    for csv in csvs:
        ref = f"{csv['metadata'].get('namespace', '')}/{csv['metadata']['name']}"
        cap, error = max_openshift_version(csv)
        if error:
            errors.append((ref, "", error))
        elif cap is not None and cap < next_minor:
            bad.append((ref, f"{cap[0]}.{cap[1]}", ""))
    return errors + bad[::-1]


def upgradeable_condition(csvs: list[Obj], current: str) -> Obj:
    """The operator-lifecycle-manager ClusterOperator's Upgradeable condition."""
    found = incompatible(csvs, current)
    if not found:
        return {"type": "Upgradeable", "status": "True"}
    lines = [
        f"- {ref} has invalid {MAX_OPENSHIFT} properties: {error}"
        if error
        else f"- maximum supported OCP version for {ref} is {cap}"
        for ref, cap, error in found
    ]
    first = _xy(found[0][1]) if found[0][1] else (0, 0)
    assert first is not None
    return {
        "type": "Upgradeable",
        "status": "False",
        "reason": INCOMPATIBLE,
        "message": f"ClusterServiceVersions blocking minor version upgrades to "
        f"{first[0]}.{first[1] + 1}.0 or higher:\n" + "\n".join(lines),
    }


# --- oc get's columns ------------------------------------------------------------------------


def olm_columns(kind: str, obj: Obj) -> list[str]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if kind == "CatalogSource":
        return [
            str(spec.get("displayName", "")),
            str(spec.get("sourceType", "")),
            str(spec.get("publisher", "")),
        ]
    if kind == "Subscription":
        return [
            str(spec.get("name", "")),
            str(spec.get("source", "")),
            str(spec.get("channel", "")),
        ]
    if kind == "InstallPlan":
        return [
            ", ".join(spec.get("clusterServiceVersionNames") or []),
            str(spec.get("approval", "")),
            str(spec.get("approved", False)).lower(),
        ]
    return [
        str(spec.get("displayName", "")),
        str(spec.get("version", "")),
        str(spec.get("replaces") or ""),
        str(status.get("phase", "")),
    ]


OLM_HEADS = {
    "CatalogSource": ["DISPLAY", "TYPE", "PUBLISHER", "AGE"],
    "Subscription": ["PACKAGE", "SOURCE", "CHANNEL"],
    "InstallPlan": ["CSV", "APPROVAL", "APPROVED"],
    "ClusterServiceVersion": ["DISPLAY", "VERSION", "REPLACES", "PHASE"],
}
