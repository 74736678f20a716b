"""Reading and checking a cluster profile: the rules every platform shares
(sim/profile.py), then its platform's own (its package's profile.py, through the
registry)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from kupgrade.errors import InputError
from kupgrade.sim.platforms import platform_of
from kupgrade.sim.profile import Pool, Profile, Spec, check_common, check_operator_faults


def check_profile(profile: Profile, where: str) -> None:
    spec = profile.spec
    check_common(spec, where)
    platform_of(spec).check(spec, where)
    check_operator_faults(spec, where)


def load_profile(path: Path | None, *, template: bool = False) -> Profile:
    """Read a profile file; None gives the embedded default. A `template` (a fleet's,
    whose pools each cluster replaces) is checked once it is applied, not here."""
    if path is None:
        return Profile()
    # Here, not at the top: every command on a simulated cluster imports this module for
    # the Profile type, and the YAML reader costs ~15 ms of its start (bench/cli_start.py).
    from kupgrade import intake  # noqa: PLC0415

    data = intake.load_yaml(intake.read_file(path, "profile"), str(path))
    try:
        profile = msgspec.convert(data or {}, Profile, strict=False)
    except msgspec.ValidationError as exc:
        raise InputError(
            str(exc), file=str(path), hint="see `kupgrade cluster profile` for the format"
        ) from exc
    if not template:
        check_profile(profile, str(path))
    return profile


def sized(spec: Spec, masters: int | None, workers: int | None) -> Spec:
    """`--masters` and `--workers` over the profile: the flag wins over the file, the pool
    getting this many generated nodes in place of any machines the profile names (a pool
    the profile lacks is added)."""
    pools = list(spec.pools)
    for pool_name, count in (("master", masters), ("worker", workers)):
        if count is None:
            continue
        pools = [
            msgspec.structs.replace(p, nodes=count, machines=[], created=[])
            if p.name == pool_name
            else p
            for p in pools
        ]
        if not any(p.name == pool_name for p in pools):
            pools.append(Pool(pool_name, count))
    return msgspec.structs.replace(spec, pools=pools)
