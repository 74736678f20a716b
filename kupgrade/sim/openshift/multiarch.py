"""`kupgrade upgrade --to-multi-arch`: a single-architecture OpenShift cluster asked to
move to the multi-architecture payload of the version it runs, as `oc adm upgrade
--to-multi-arch` asks (openshift/oc pkg/cli/admin/upgrade/upgrade.go, Complete's flag
checks and Run's `case o.ToMultiArch`). The cluster-version operator then asks its update
service with `arch=multi` and offers the current version as the one update
(cluster-version-operator pkg/cincinnati/cincinnati.go GetUpdates)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.upgrade_text import check_for_upgrade
from kupgrade.errors import InputError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.openshift.platform import OPENSHIFT
from kupgrade.sim.openshift.upgrade import FORCE_WARNING
from kupgrade.sim.platform import UPGRADE_FLAGS, Platform, Said, UpgradeAsk
from kupgrade.sim.store import Store

MULTI = "Multi"  # configv1.ClusterVersionArchitectureMulti
REQUESTED = "Requested update to multi cluster architecture"


@dataclass(frozen=True)
class MultiArchAsk:
    """The flags that change what --to-multi-arch does, and those it refuses."""

    force: bool = False
    with_warnings: bool = False  # --allow-upgrade-with-warnings
    clear: bool = False
    to: str | None = None
    image: str | None = None
    latest: bool = False


def check_multi_flags(ask: MultiArchAsk) -> None:
    """oc's Complete: --clear goes with nothing, --to-multi-arch with no target."""
    if ask.clear:
        raise InputError("--clear may not be specified with any other flags", field="--clear")
    if ask.to or ask.image or ask.latest:
        raise InputError(
            "--to-multi-arch may not be used with --to, --to-image, or --to-latest",
            field="--to-multi-arch",
        )


def request_multi_arch(api: Backend, ask: MultiArchAsk) -> Said:
    """spec.desiredUpdate set to the current version with architecture Multi (written
    through `api`, for the caller to commit), or oc's refusal; --force is carried and
    warned about, accepted risks are kept."""
    check_multi_flags(ask)
    found = api.get("ClusterVersion", "version")
    if found is None:
        raise InputError(
            "No cluster version information available - you must be connected to an "
            "OpenShift version 4 server to fetch the current version",
            field="--to-multi-arch",
        )
    spec = found.get("spec") or {}
    previous = spec.get("desiredUpdate") or {}
    if previous.get("architecture") == MULTI:
        raise InputError(
            "info: Update to multi cluster architecture has already been requested",
            field="--to-multi-arch",
        )
    said = Said()
    problem = check_for_upgrade(found)
    if problem is not None and not ask.with_warnings:
        raise InputError(
            problem, hint="If you want to upgrade anyway, use --allow-upgrade-with-warnings."
        )
    if problem is not None:
        said.errors.append(f"warning: --allow-upgrade-with-warnings is bypassing: {problem}")
    version = ((found.get("status") or {}).get("desired") or {}).get("version", "")
    update: dict[str, Any] = {"architecture": MULTI, "version": version}
    if ask.force:
        update["force"] = True
        said.errors.append(f"warning: {FORCE_WARNING}")
    if previous.get("acceptRisks") is not None:
        update["acceptRisks"] = previous["acceptRisks"]
    cv = copy.deepcopy(found)
    cv.setdefault("spec", {})["desiredUpdate"] = update
    api.write(cv)
    api.record(
        "clusterversion/version",
        "DesiredUpdate",
        f"update to {version} with architecture {MULTI} requested",
    )
    said.doc = {"desiredUpdate": update}
    said.lines.append(REQUESTED)
    return said


def _openshift_only(platform: Platform) -> None:
    if platform is not OPENSHIFT:
        raise InputError(
            "applies to OpenShift clusters",
            field="--to-multi-arch",
            hint=f"{platform.title} clusters have no multi-architecture payload to move to",
        )


def multi_arch_on_sim(
    store: Store, platform: Platform, fleet: str | None, ask: MultiArchAsk
) -> Said:
    """--to-multi-arch on a simulated cluster of `platform`: the request committed to its
    store, for `kupgrade controller run` to carry out; refused while `fleet` (the fleet
    rehearsal driving this cluster, if any) runs."""
    _openshift_only(platform)
    check_multi_flags(ask)
    if fleet is not None:
        raise InputError(
            f"cluster {store.meta('name')} is being upgraded by the rehearsal of fleet {fleet}",
            field="--to-multi-arch",
            hint=f"let it finish: `kupgrade fleet rehearse --fleet {fleet}`",
        )
    said = request_multi_arch(SimCluster(store), ask)
    store.commit()
    said.lines[-1] += "; run `kupgrade controller run` to carry it out."
    return said


def multi_arch_over_api(api: Backend, platform: Platform, ask: MultiArchAsk) -> Said:
    """--to-multi-arch through --kubeconfig (the cluster behind `api` is of `platform`):
    written to the cluster's ClusterVersion."""
    _openshift_only(platform)
    return request_multi_arch(api, ask)


# UpgradeAsk fields oc's --to-multi-arch accepts: those it reads, and the
# not-recommended/explicit ones it lets pass unread (no target to judge); the others are
# other platforms' flags, refused by name.
_READ = frozenset(
    {
        "force",
        "with_warnings",
        "clear",
        "to",
        "image",
        "latest",
        "explicit",
        "include_not_recommended",
        "allow_not_recommended",
    }
)


def multi_arch_ask(
    ask: UpgradeAsk, action: str | None, from_dump: bool, rehearsed: bool
) -> MultiArchAsk:
    """The request --to-multi-arch makes of `upgrade`'s flags: an action, a dump, a
    preflight or dry run, or another platform's flag goes with it nowhere."""
    if action is not None:
        raise InputError(f"`upgrade {action}` takes no --to-multi-arch", field="--to-multi-arch")
    if from_dump or rehearsed:
        raise InputError(
            "requests an update: give --cluster or --kubeconfig, not --from, --preflight "
            "or --dry-run",
            field="--to-multi-arch",
        )
    for name in ask.given():
        if name not in _READ:
            raise InputError(
                "--to-multi-arch is an OpenShift request: it takes --force and --allow-upgrade-with-warnings",
                field=UPGRADE_FLAGS[name],
            )
    return MultiArchAsk(ask.force, ask.with_warnings, ask.clear, ask.to, ask.image, ask.latest)
