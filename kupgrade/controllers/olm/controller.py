"""The operator-lifecycle-manager on a cluster (SPEC F1-F10, C6): subscriptions resolved
against their catalog sources, one install plan per step (F6), approval when Manual,
CSVs through Pending, InstallReady, Installing, Succeeded (and Replacing, Deleting for
the one replaced), and the operator-lifecycle-manager ClusterOperator's Upgradeable.

After operator-lifecycle-manager pkg/controller/operators/catalog (subscription sync,
install plan phases), pkg/controller/operators/olm (CSV phases, the replaced CSV's
Replacing and Deleting), pkg/controller/registry/resolver (the new CSV replaces the
installed one, whatever edge led to it) and pkg/controller/operators/openshift
(Upgradeable). The resolution policy is the cluster's (seed, olm-v0, semver).
Everything it knows is in objects' status, so a restarted controller carries on.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable
from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.conditions import find, remove, set_condition
from kupgrade.cluster.objects import Obj, copied, key_of
from kupgrade.cluster.olm import (
    GROUP_VERSION,
    OLM_OPERATOR,
    OWNER,
    csv_object,
    install_plan,
    plan_name,
    upgradeable_condition,
)
from kupgrade.controllers.protocol import Progress
from kupgrade.errors import KupgradeError
from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.resolver import resolve
from kupgrade.olm.resolver.model import Installed, ResolutionError, Source, Subscription
from kupgrade.versions import SemVer, parse_blang
from kupgrade.versions.goduration import parse_go_duration
from kupgrade.versions.times import rfc3339, stamp_or_zero

# A CatalogSource -> its catalog; True asks an image source to be pulled again (its poll).
CatalogLoader = Callable[[Obj, bool], CatalogIndex]
INSTALL_TIMEOUT = 300.0  # seconds a CSV may wait for its deployment before it fails
# The ClusterVersion too: its current release decides which CSVs block the next minor.
WATCHED = (
    "Subscription",
    "InstallPlan",
    "ClusterServiceVersion",
    "CatalogSource",
    "Deployment",
    "ClusterVersion",
)


def plan_csv(plan: Obj) -> str:
    """The one CSV an install plan installs ("" when it names none)."""
    names = (plan.get("spec") or {}).get("clusterServiceVersionNames") or [""]
    return str(names[0]) if isinstance(names, list) else ""


SUBSCRIPTION_LABEL = "operators.coreos.com/subscription"  # an install plan's subscription


def _owner(plan: Obj) -> tuple[Any, Any]:
    """(namespace, subscription) of an install plan, as its metadata has them."""
    meta = plan["metadata"]
    return meta.get("namespace"), (meta.get("labels") or {}).get(SUBSCRIPTION_LABEL)


def _name(plan: Obj) -> str:
    return str(plan["metadata"]["name"])


def _generation(plan: Obj) -> int:
    return _int(plan["spec"].get("generation"))


def _int(value: object) -> int:
    """An integer field as a client may have written it (0 when it is not one)."""
    try:
        return int(str(value or 0))
    except ValueError:
        return 0


def _properties(text: object) -> list[dict[str, object]]:
    """A bundle lookup's properties (JSON text); none when it is not a list of them."""
    try:
        found = json.loads(str(text or "[]"))
    except ValueError:
        return []
    return [p for p in found if isinstance(p, dict)] if isinstance(found, list) else []


def resolution_reason(error_class: str) -> str:
    """The Subscription's ResolutionFailed reason for a resolver error: the catalog
    operator's two (pkg/controller/operators/catalog/operator.go)."""
    return (
        "ConstraintsNotSatisfiable"
        if error_class == "not-satisfiable"
        else "ErrorPreventedResolution"
    )


class OlmController:
    def __init__(
        self,
        api: Backend,
        catalogs: CatalogLoader,
        *,
        policy: str = "documented",
        global_namespace: str = "olm",
        install_timeout: float = INSTALL_TIMEOUT,
    ) -> None:
        self.api = api
        self.catalogs = catalogs
        self.policy = policy
        self.global_namespace = global_namespace
        self.install_timeout = install_timeout
        self.changes = api.watch(*WATCHED)
        self._fresh: set[tuple[str, str]] = set()
        self._loaded: tuple[list[Source], list[str]] | None = None
        # Each subscription's install plans, by name, grouped once per pass instead of
        # listing every plan for every subscription (which made a pass cost subscriptions
        # x plans); a plan this controller creates joins its group.
        self._walks: dict[tuple[Any, Any], list[Obj]] | None = None

    def sync(self) -> None:
        if not self.changes:
            return
        self.changes.drain()
        self._fresh = self._polls()
        self._loaded = None  # read again this pass
        self._walks = None
        subscriptions = self.api.list("Subscription")
        for sub in subscriptions:
            self._subscription(sub)
        for csv in self.api.list("ClusterServiceVersion"):
            self._csv(csv)
        if subscriptions or self.api.list("ClusterServiceVersion"):
            self._cluster_operator()

    def progress(self) -> list[Progress]:
        """Operators are installed and upgraded one subscription at a time, each its own
        story: the timeline tells them, no bar does."""
        return []

    def _stamp(self) -> str:
        return rfc3339(self.api.now())

    # --- subscriptions -----------------------------------------------------------------

    def _subscription(self, found: Obj) -> None:
        sub = copied(found)
        status = sub.setdefault("status", {})
        status.setdefault("conditions", [])
        if self._plan_step(sub, status):
            self._resolve(sub, status)
        if sub != found:
            status["lastUpdated"] = self._stamp()
            self.api.write(sub)

    def _plan_step(self, sub: Obj, status: Obj) -> bool:
        """Carry the subscription's install plan on; True when it is done (or there is
        none) and the subscription may resolve its next step."""
        ref = status.get("installPlanRef")
        if not ref:
            return True
        plan = self.api.get("InstallPlan", ref["name"], ref["namespace"])
        if plan is None:
            status.pop("installPlanRef", None)
            return True
        phase = plan["status"].get("phase")
        if phase == "RequiresApproval":
            if not plan["spec"].get("approved"):
                status["state"] = "UpgradePending"
                self._condition(
                    status,
                    "InstallPlanPending",
                    "True",
                    "RequiresApproval",
                    f"install plan {plan['metadata']['name']} waits for approval: "
                    f"kupgrade olm approve {plan['metadata']['name']}",
                )
                return False
            phase = self._set_plan_phase(plan, "Installing")
        if phase == "Installing":
            return self._installing(sub, status, plan)
        return bool(phase != "Failed")  # Complete: resolve the next step

    def _installing(self, sub: Obj, status: Obj, plan: Obj) -> bool:
        name = plan_csv(plan)
        if not name:
            self._condition(
                status,
                "InstallPlanFailed",
                "True",
                "InvalidInstallPlan",
                f"install plan {plan['metadata']['name']} names no CSV; delete it to resolve again",
            )
            return False
        namespace = plan["metadata"]["namespace"]
        csv = self.api.get("ClusterServiceVersion", name, namespace)
        if csv is None:
            lookup = (plan["status"].get("bundleLookups") or [{}])[0]
            self.api.write(
                csv_object(
                    name,
                    namespace,
                    package=sub["spec"]["name"],
                    version=lookup.get("version", ""),
                    replaces=lookup.get("replaces", ""),
                    skips=[],
                    properties=_properties(lookup.get("properties")),
                    image=lookup.get("path", ""),
                    created=self._stamp(),
                )
            )
            self.api.record(key_of(plan), "CreatingCSV", f"creating {name}")
            self._condition(
                status, "InstallPlanPending", "True", "Installing", f"installing {name}"
            )
            return False
        phase = csv["status"].get("phase")
        if phase == "Succeeded":
            self._set_plan_phase(plan, "Complete")
            status["installedCSV"] = status["currentCSV"] = name
            status["state"] = "AtLatestKnown"
            remove(status["conditions"], "InstallPlanPending")
            remove(status["conditions"], "InstallPlanFailed")
            return True
        if phase == "Failed":
            self._condition(
                status,
                "InstallPlanFailed",
                "True",
                str(csv["status"].get("reason", "")),
                f"{name} failed: {csv['status'].get('message', '')}; fix the operator's "
                "deployment or delete the CSV and the install plan to resolve again",
            )
            return False
        return False

    def _set_plan_phase(self, plan: Obj, phase: str) -> str:
        if plan["status"].get("phase") != phase:
            changed = copied(plan)
            changed["status"]["phase"] = phase
            self.api.write(changed)
            self.api.record(key_of(plan), f"InstallPlan{phase}", f"install plan {phase}")
        return phase

    def _polls(self) -> set[tuple[str, str]]:
        """Image sources whose registryPoll interval has passed: pulled again this pass
        (a new digest behind the tag is a new catalog), the next poll queued."""
        due = set()
        now = self.api.now()
        for found in self.api.list("CatalogSource"):
            interval = parse_go_duration(
                ((found["spec"].get("updateStrategy") or {}).get("registryPoll") or {}).get(
                    "interval", ""
                )
            )
            if not found["spec"].get("image") or interval <= 0:
                continue
            last = found.get("status", {}).get("latestImageRegistryPoll")
            if last and now < stamp_or_zero(last) + interval:
                continue
            source = copied(found)
            source.setdefault("status", {}).update(
                {
                    "latestImageRegistryPoll": self._stamp(),
                    "connectionState": {"lastObservedState": "READY", "lastConnect": self._stamp()},
                }
            )
            self.api.write(source)
            meta = found["metadata"]
            self.api.requeue_at(now + interval, "CatalogSource", meta["name"], meta["namespace"])
            due.add((meta["namespace"], meta["name"]))
        return due

    def _load(self) -> tuple[list[Source], list[str]]:
        """Every catalog source's catalog, read once per pass (a poll due pulls it again),
        and the ones that cannot be read, with why."""
        if self._loaded is None:
            sources, broken = [], []
            for obj in self.api.list("CatalogSource"):
                meta = obj["metadata"]
                try:
                    index = self.catalogs(obj, (meta["namespace"], meta["name"]) in self._fresh)
                except KupgradeError as exc:
                    broken.append(f"{meta['namespace']}/{meta['name']}: {exc}")
                    continue
                priority = _int(obj["spec"].get("priority"))
                sources.append(Source(meta["name"], meta["namespace"], priority, index))
            self._loaded = (sources, broken)
        return self._loaded

    def _sources(self, status: Obj) -> list[Source]:
        """The catalogs a subscription resolves against; their health in its status."""
        sources, broken = self._load()
        if broken:
            self._condition(
                status,
                "CatalogSourcesUnhealthy",
                "True",
                "UnhealthyCatalogSourceFound",
                "; ".join(broken),
            )
        else:
            self._condition(
                status,
                "CatalogSourcesUnhealthy",
                "False",
                "AllCatalogSourcesHealthy",
                "all available catalogsources are healthy",
            )
        return sources

    def _resolve(self, sub: Obj, status: Obj) -> None:
        spec, meta = sub["spec"], sub["metadata"]
        sources = self._sources(status)
        installed = self._installed(status, meta["namespace"])
        if status.get("installedCSV") and installed is None:
            return  # the installed CSV is not done yet
        model = Subscription(
            spec["name"],
            spec.get("channel", ""),
            spec["source"],
            spec.get("sourceNamespace", meta["namespace"]),
            meta["namespace"],
            spec.get("installPlanApproval", "Automatic"),
            spec.get("startingCSV", ""),
            meta["name"],
        )
        try:
            found = resolve(sources, model, installed, self.policy, self.global_namespace)
        except ResolutionError as exc:
            self._condition(
                status,
                "ResolutionFailed",
                "True",
                resolution_reason(exc.error_class),
                f"{exc.message}; check the subscription's package, channel and "
                "source against its catalog",
            )
            return
        remove(status["conditions"], "ResolutionFailed")
        if found.next is None:
            status["state"] = "AtLatestKnown"
            if installed is not None:
                status["currentCSV"] = installed.name
            return
        walk = self._walk(sub)
        if found.next in walk or (installed is not None and found.next == installed.name):
            # The resolver would install a CSV this subscription has had before: a loop
            # in the catalog's graph that OLM would follow for ever (SPEC F9).
            self._condition(
                status,
                "ResolutionFailed",
                "True",
                "UpgradeCycle",
                f"the walk returns to {found.next} after {' -> '.join(walk)}; fix "
                "the catalog's replaces, skips or skipRange",
            )
            return
        self._new_plan(sub, status, found.next, found.source)

    def _walk(self, sub: Obj) -> list[str]:
        """The CSVs this subscription's install plans installed, in order."""
        if self._walks is None:
            self._walks = {}
            for p in self.api.list("InstallPlan"):  # in (namespace, name) order
                self._walks.setdefault(_owner(p), []).append(p)
        meta = sub["metadata"]
        plans = self._walks.get((meta["namespace"], meta["name"]), [])
        return [plan_csv(p) for p in sorted(plans, key=_generation)]

    def _installed(self, status: Obj, namespace: str) -> Installed | None:
        name = status.get("installedCSV")
        if not name:
            return None
        csv = self.api.get("ClusterServiceVersion", name, namespace)
        if csv is None or csv["status"].get("phase") != "Succeeded":
            return None
        try:
            version = parse_blang(str(csv["spec"].get("version") or "0.0.0"))
        except KupgradeError:
            version = SemVer(0, 0, 0)
        return Installed(name, version)

    def _new_plan(self, sub: Obj, status: Obj, csv: str, source: Source | None) -> None:
        meta = sub["metadata"]
        generation = _int(status.get("installPlanGeneration")) + 1
        name = plan_name(meta["namespace"], meta["name"], csv, generation)
        approval = sub["spec"].get("installPlanApproval", "Automatic")
        plan = install_plan(
            name,
            meta["namespace"],
            csv,
            approval=approval,
            generation=generation,
            created=self._stamp(),
            subscription=meta["name"],
        )
        package = source.index.packages.get(sub["spec"]["name"]) if source else None
        version = package.versions.get(csv) if package else None
        plan["status"]["bundleLookups"] = [
            {
                "identifier": csv,
                "path": package.images.get(csv, "") if package else "",
                "replaces": status.get("installedCSV", ""),
                "version": str(version or "0.0.0"),
                "properties": json.dumps(package.properties.get(csv, []) if package else []),
                "catalogSourceRef": {
                    "name": source.name if source else "",
                    "namespace": source.namespace if source else "",
                },
            }
        ]
        self.api.write(plan)
        if self._walks is not None:  # the plan joins (or replaces its name in) its group
            group = self._walks.setdefault(_owner(plan), [])
            at = bisect.bisect_left(group, name, key=_name)
            group[at : at + (at < len(group) and _name(group[at]) == name)] = [plan]
        self.api.record(key_of(sub), "InstallPlanCreated", f"{name} installs {csv}")
        status.update(
            {
                "state": "UpgradePending",
                "currentCSV": csv,
                "installPlanGeneration": generation,
                "installPlanRef": {
                    "apiVersion": GROUP_VERSION,
                    "kind": "InstallPlan",
                    "name": name,
                    "namespace": meta["namespace"],
                },
                "installplan": {"apiVersion": GROUP_VERSION, "kind": "InstallPlan", "name": name},
            }
        )
        reason = "Installing" if approval == "Automatic" else "RequiresApproval"
        self._condition(status, "InstallPlanPending", "True", reason, f"{name} installs {csv}")

    def _condition(self, status: Obj, kind: str, value: str, reason: str, message: str) -> None:
        set_condition(
            status["conditions"],
            {"type": kind, "status": value, "reason": reason, "message": message},
            self._stamp(),
        )

    # --- CSVs ---------------------------------------------------------------------------

    def _csv(self, found: Obj) -> None:
        csv = copied(found)
        status = csv["status"]
        phase = status.get("phase")
        if phase == "Pending":
            self._phase(
                csv,
                "InstallReady",
                "AllRequirementsMet",
                "all requirements found, attempting install",
            )
            self._replacing(csv)
        elif phase == "InstallReady":
            self._deploy(csv)
            self._phase(
                csv,
                "Installing",
                "InstallWaiting",
                "installing: waiting for deployment to become ready",
            )
            status["installingSince"] = self._stamp()
            self.api.requeue_at(
                self.api.now() + self.install_timeout,
                "ClusterServiceVersion",
                csv["metadata"]["name"],
                csv["metadata"]["namespace"],
            )
        elif phase == "Installing":
            if self._ready(csv):
                self._phase(
                    csv,
                    "Succeeded",
                    "InstallSucceeded",
                    "install strategy completed with no errors",
                )
                self._deleting(csv)
            elif (
                self.api.now()
                >= stamp_or_zero(status.get("installingSince")) + self.install_timeout
            ):
                self._phase(csv, "Failed", "InstallCheckFailed", "install timeout")
        elif phase == "Deleting":
            self.api.delete(
                "ClusterServiceVersion", csv["metadata"]["name"], csv["metadata"]["namespace"]
            )
            self.api.record(key_of(csv), "Deleted", "replaced")
            return
        if csv != found:
            self.api.write(csv)

    def _phase(self, csv: Obj, phase: str, reason: str, message: str) -> None:
        status = csv["status"]
        status.update(
            {
                "phase": phase,
                "reason": reason,
                "message": message,
                "lastTransitionTime": self._stamp(),
            }
        )
        status.setdefault("conditions", []).append(
            {
                "phase": phase,
                "reason": reason,
                "message": message,
                "lastTransitionTime": self._stamp(),
            }
        )
        self.api.record(key_of(csv), phase, message)

    def _deployment_name(self, csv: Obj) -> str:
        return str(csv["spec"]["install"]["spec"]["deployments"][0]["name"])

    def _deploy(self, csv: Obj) -> None:
        """The operator's Deployment, owned by this CSV (a replacing CSV takes it over)."""
        meta = csv["metadata"]
        spec = csv["spec"]["install"]["spec"]["deployments"][0]["spec"]
        name = self._deployment_name(csv)
        existing = self.api.get("Deployment", name, meta["namespace"])
        fresh: Obj = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": name,
                "namespace": meta["namespace"],
                "creationTimestamp": self._stamp(),
            },
            "status": {},
        }
        deployment: Obj = copied(existing) if existing else fresh
        deployment["metadata"].setdefault("labels", {})[OWNER] = meta["name"]
        deployment["spec"] = {**spec, "selector": {"matchLabels": {"app": name}}}
        self.api.write(deployment)

    def _ready(self, csv: Obj) -> bool:
        found = self.api.get("Deployment", self._deployment_name(csv), csv["metadata"]["namespace"])
        status = (found or {}).get("status") or {}
        return (
            status.get("rolledOut") == csv["metadata"]["name"]
            and _int(status.get("readyReplicas")) >= 1
        )

    def _replacing(self, csv: Obj) -> None:
        old = self._replaced(csv)
        if old is not None and old["status"].get("phase") == "Succeeded":
            changed = copied(old)
            self._phase(
                changed,
                "Replacing",
                "BeingReplaced",
                f"being replaced by csv: {csv['metadata']['name']}",
            )
            self.api.write(changed)

    def _deleting(self, csv: Obj) -> None:
        old = self._replaced(csv)
        if old is not None and old["status"].get("phase") in ("Replacing", "Succeeded"):
            changed = copied(old)
            self._phase(
                changed,
                "Deleting",
                "Replaced",
                "has been replaced by a newer ClusterServiceVersion that has successfully installed.",
            )
            self.api.write(changed)

    def _replaced(self, csv: Obj) -> Obj | None:
        name = csv["spec"].get("replaces")
        return (
            self.api.get("ClusterServiceVersion", name, csv["metadata"]["namespace"])
            if name
            else None
        )

    # --- the ClusterOperator (SPEC C6) ------------------------------------------------------

    def _cluster_operator(self) -> None:
        cv = self.api.get("ClusterVersion", "version")
        if cv is None:
            return  # not OpenShift: no ClusterOperators
        history = cv.get("status", {}).get("history") or []
        current = next((h["version"] for h in history if h.get("state") == "Completed"), "")
        found = self.api.get("ClusterOperator", OLM_OPERATOR)
        fresh: Obj = {
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterOperator",
            "metadata": {"name": OLM_OPERATOR, "creationTimestamp": self._stamp()},
            "spec": {},
            "status": {"conditions": [], "versions": [{"name": "operator", "version": current}]},
        }
        co: Obj = copied(found) if found else fresh
        csvs = [
            c
            for c in self.api.list("ClusterServiceVersion")
            if c["status"].get("phase") == "Succeeded"
        ]
        conditions = co["status"].setdefault("conditions", [])
        for kind, value in (("Available", "True"), ("Progressing", "False"), ("Degraded", "False")):
            if find(conditions, kind) is None:
                set_condition(conditions, {"type": kind, "status": value}, self._stamp())
        set_condition(conditions, upgradeable_condition(csvs, current), self._stamp())
        if co != found:
            self.api.write(co)
