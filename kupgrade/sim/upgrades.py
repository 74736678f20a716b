"""`kupgrade upgrade` and `cluster create`'s platform flags, asked of the cluster's
platform (sim/platforms.py): a flag no platform of the cluster's kind takes is refused by
name, with the platforms it applies to, before anything is read or written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kupgrade.cluster.backend import Backend
from kupgrade.errors import InputError
from kupgrade.sim.fleet.home import rehearsing
from kupgrade.sim.platform import (
    CREATE_FLAGS,
    UPGRADE_FLAGS,
    CreateAsk,
    Platform,
    Said,
    UpgradeAsk,
)
from kupgrade.sim.platforms import PLATFORMS, platform_of, platform_serving
from kupgrade.sim.profile import Spec
from kupgrade.sim.store import Store


def _refuse_others(
    platform: Platform,
    given: list[str],
    flags: dict[str, str],
    takes: Callable[[Platform], frozenset[str]],
    words: Callable[[list[Platform]], str],
) -> None:
    """The first flag given that `platform` does not take, refused with those that do."""
    for name in given:
        if name in takes(platform):
            continue
        others = [p for p in PLATFORMS.values() if name in takes(p)]
        own = [flags[n] for n in flags if n in takes(platform)]
        hint = f"{platform.title} clusters take {', '.join(own)}" if own else None
        raise InputError(f"applies to {words(others)}", field=flags[name], hint=hint)


def upgrade_cluster(root: Path, store: Store, spec: Spec, ask: UpgradeAsk) -> Said:
    """`kupgrade upgrade` on a simulated cluster: its platform's status or request."""
    platform = platform_of(spec)
    _refuse_others(
        platform,
        ask.given(),
        UPGRADE_FLAGS,
        lambda p: p.upgrade_flags,
        lambda ps: " and ".join(p.title for p in ps) + " clusters",
    )
    fleet = rehearsing(store) if ask.target or ask.clear else None
    if fleet is not None:
        raise InputError(
            f"cluster {store.meta('name')} is being upgraded by the rehearsal of fleet {fleet}",
            field="--to",
            hint=f"let it finish: `kupgrade fleet rehearse --fleet {fleet}`",
        )
    return platform.upgrade(root, store, spec, ask)


def upgrade_over_api(api: Backend, ask: UpgradeAsk) -> Said:
    """`kupgrade upgrade --kubeconfig`: the platform of the cluster behind `api` answers."""
    platform = platform_serving(api)
    _refuse_others(
        platform,
        ask.given(),
        UPGRADE_FLAGS,
        lambda p: p.upgrade_flags,
        lambda ps: " and ".join(p.title for p in ps) + " clusters",
    )
    return platform.upgrade_api(api, ask)


def shape_profile(spec: Spec, ask: CreateAsk) -> Spec:
    """`cluster create`'s platform flags applied to the profile by its platform."""
    platform = platform_of(spec)
    _refuse_others(
        platform,
        ask.given(),
        CREATE_FLAGS,
        lambda p: p.create_flags,
        lambda ps: "--platform " + " or ".join(p.name for p in ps),
    )
    return platform.shape(spec, ask)
