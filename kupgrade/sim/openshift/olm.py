"""What `kupgrade olm subscribe` and `olm approve` write to a simulated cluster, and the
catalogs and subscriptions a profile starts it with (SPEC F1, F6): CatalogSource and
Subscription objects for the OLM controller, and an install plan's approval."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kupgrade.cluster.olm import catalog_source, subscription
from kupgrade.errors import InputError
from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.load import load_catalog
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.profile import Olm
from kupgrade.versions.times import rfc3339

Obj = dict[str, Any]


def looks_like_image(text: str) -> bool:
    """A catalog given as an image reference rather than a file or directory."""
    return not Path(text).exists() and "/" in text and (":" in text or "@" in text)


def add_source(
    sim: SimCluster, name: str, where: str, *, namespace: str, priority: int = 0, poll: str = ""
) -> Obj:
    """Create or update the CatalogSource `namespace/name` for a catalog file, directory
    or image."""
    stamp = rfc3339(sim.now())
    if looks_like_image(where):
        obj = catalog_source(
            name, namespace, image=where, priority=priority, poll=poll, created=stamp
        )
    else:
        path = Path(where).resolve()
        if not path.exists():
            raise InputError(
                f"catalog {where} does not exist",
                field="--source",
                hint="give a file-based catalog (file or directory) or an image",
            )
        obj = catalog_source(name, namespace, path=str(path), priority=priority, created=stamp)
    return sim.apply(obj)


def package_of(where: str, package: str) -> str:
    """The package to subscribe to: the one named, or the catalog's only one."""
    if package or looks_like_image(where):
        if not package:
            raise InputError("name the package of an image catalog", field="--package")
        return package
    names = sorted(CatalogIndex.build(load_catalog(where)).packages)
    if len(names) != 1:
        raise InputError(
            f"catalog {where} has {len(names)} packages: {', '.join(names[:10])}",
            field="--package",
            hint="choose one with --package",
        )
    return names[0]


def subscribe(
    sim: SimCluster,
    *,
    package: str,
    source: str,
    source_namespace: str,
    namespace: str,
    channel: str = "",
    approval: str = "Automatic",
    starting_csv: str = "",
) -> Obj:
    if approval not in ("Automatic", "Manual"):
        raise InputError("approval must be Automatic or Manual", field="--approval")
    if sim.get("Subscription", package, namespace) is not None:
        raise InputError(
            f"subscription {namespace}/{package} already exists",
            hint="delete it first, or subscribe in another --namespace",
        )
    obj = subscription(
        package,
        namespace,
        package=package,
        channel=channel,
        source=source,
        source_namespace=source_namespace,
        approval=approval,
        starting_csv=starting_csv,
        created=rfc3339(sim.now()),
    )
    sim.write(obj)
    return obj


def approve(sim: SimCluster, name: str, namespace: str = "") -> Obj:
    """Approve a Manual install plan (spec.approved), as `oc patch installplan` does.
    A plan its subscription no longer waits on (the catalog moved on and a newer plan
    replaced it) is refused with the plan to approve instead."""
    plans = [
        p
        for p in sim.list("InstallPlan")
        if p["metadata"]["name"] == name and namespace in ("", p["metadata"].get("namespace"))
    ]
    if not plans:
        raise InputError(
            f"install plan {name} not found", hint="`kupgrade get installplans -A` lists them"
        )
    if len(plans) > 1:
        raise InputError(f"install plan {name} is in several namespaces", field="--namespace")
    plan = plans[0]
    if plan["spec"].get("approved"):
        raise InputError(f"install plan {name} is already approved ({plan['status'].get('phase')})")
    owner = (plan["metadata"].get("labels") or {}).get("operators.coreos.com/subscription", "")
    sub = sim.get("Subscription", owner, plan["metadata"]["namespace"])
    current = ((sub or {}).get("status") or {}).get("installPlanRef", {}).get("name")
    if current and current != name:
        raise InputError(
            f"install plan {name} is stale: subscription {owner} now waits on {current}",
            hint=f"approve {current}",
        )
    plan["spec"]["approved"] = True
    sim.write(plan)
    return plan


def start_with(sim: SimCluster, olm: Olm) -> None:
    """A profile's catalogs and subscriptions, created with the cluster."""
    for catalog in olm.catalogs:
        where = catalog.image or catalog.path or ""
        add_source(
            sim,
            catalog.name,
            where,
            namespace=catalog.namespace,
            priority=catalog.priority,
            poll=catalog.poll or "",
        )
    for sub in olm.subscriptions:
        subscribe(
            sim,
            package=sub.package,
            source=sub.source,
            source_namespace=sub.source_namespace,
            namespace=sub.namespace,
            channel=sub.channel,
            approval=sub.approval,
            starting_csv=sub.starting_csv,
        )
