"""Operator catalogs: load, validate and index the largest real catalog, against merely
parsing the same file's JSON stream in the same run; then resolve every (package,
channel, installed bundle) triple under each policy.

Memory is measured in a fresh child process (peak RSS growth over the parse baseline).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.load import load_catalog
from kupgrade.olm.resolver import resolve
from kupgrade.olm.resolver.model import Installed, Source, Subscription
from kupgrade.olm.validate import validate_catalog
from kupgrade.resident import peak_mb

REPO = Path(__file__).resolve().parents[1]


def _parse_only(path: Path) -> int:
    text, decoder, position, count = path.read_text(), json.JSONDecoder(), 0, 0
    while position < len(text):
        _, position = decoder.raw_decode(text, position)
        count += 1
        while position < len(text) and text[position] in " \t\r\n":
            position += 1
    return count


def _full(path: Path) -> CatalogIndex:
    catalog = load_catalog(path)
    assert validate_catalog(catalog).valid
    return CatalogIndex.build(catalog)


def _timed(func: Callable[[Path], object], path: Path) -> float:
    started = time.perf_counter()
    func(path)
    return time.perf_counter() - started


def _peak_mb(mode: str, path: Path) -> float:
    code = (
        "import sys; from bench import olm; from kupgrade.resident import peak_mb; from pathlib import Path;"
        "p = Path(sys.argv[3]); olm._parse_only(p) if sys.argv[2] == 'parse' else olm._full(p);"
        "print(peak_mb())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(REPO), mode, str(path)],
        cwd=REPO,  # the repository root on sys.path: `bench` is importable
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip())


def bench_olm(shared: Path, runs: int = 9) -> dict[str, object]:
    catalogs = sorted(
        (shared / "olm" / "catalogs" / "community-operators-prod").glob("*.json"),
        key=lambda p: p.stat().st_size,
    )
    if not catalogs:
        return {"skipped": f"no real catalog under {shared / 'olm'}"}
    path = catalogs[-1]
    # Pairs (parse, then load+validate+index), the ratio the median of the pairs' ratios:
    # each pair shares the machine's load of its moment, as the CLI start's pairs do.
    pairs = [(_timed(_parse_only, path), _timed(_full, path)) for _ in range(runs)]
    parse_s = statistics.median(a for a, _ in pairs)
    full_s = statistics.median(b for _, b in pairs)
    index = _full(path)
    source = Source("community", "olm", 0, index)
    results: dict[str, object] = {}
    for policy in ("seed", "olm-v0", "semver"):
        count, started = 0, time.perf_counter()
        for package in index.packages.values():
            for channel in package.channels.values():
                sub = Subscription(package.name, channel.name, "community", "olm", "olm")
                for entry in channel.entries:
                    version = package.versions.get(entry.name)
                    if version is None:
                        continue
                    try:
                        resolve([source], sub, Installed(entry.name, version), policy)
                    except Exception as exc:  # resolution errors are answers too
                        if type(exc).__name__ != "ResolutionError":
                            raise
                    count += 1
        elapsed = time.perf_counter() - started
        results[policy] = {
            "resolutions": count,
            "seconds": round(elapsed, 3),
            "per_second": round(count / elapsed),
        }
    return {
        "catalog": path.name,
        "bytes": path.stat().st_size,
        "parse_json_s": round(parse_s, 3),
        "load_validate_index_s": round(full_s, 3),
        "ratio": round(statistics.median(b / a for a, b in pairs), 2),
        "parse_peak_rss_mb": round(_peak_mb("parse", path), 1),
        "full_peak_rss_mb": round(_peak_mb("full", path), 1),
        "resolutions": results,
        "self_rss_mb": peak_mb(),
    }


def _starts(index: CatalogIndex, count: int) -> list[tuple[str, str, str]]:
    """(package, channel, starting CSV) for `count` subscriptions: every entry of every
    channel with a version, in turn, so most have a walk ahead of them."""
    out = []
    for name in sorted(index.packages):
        package = index.packages[name]
        for channel in package.channel_order():
            out += [
                (name, channel.name, e.name)
                for e in channel.entries
                if package.versions.get(e.name) is not None
            ]
    return out[:count]


def bench_olm_cluster(shared: Path, subscriptions: int = 200) -> dict[str, object]:
    """`subscriptions` subscriptions on the real v4.21 catalog (each in a namespace of its
    own, starting at an entry of a channel), resolved and walked to their heads by the OLM
    controller of a simulated cluster (wall time, install plans, where they ended)."""
    import tempfile  # noqa: PLC0415 - the rest of the bench does not need them

    from kupgrade.sim.create import create_cluster  # noqa: PLC0415
    from kupgrade.sim.openshift.olm import add_source, subscribe  # noqa: PLC0415
    from kupgrade.sim.profile import Olm, Pool, Profile, Spec  # noqa: PLC0415
    from kupgrade.sim.store import Store  # noqa: PLC0415
    from tests.support.sim import runner  # noqa: PLC0415

    path = shared / "olm" / "catalogs" / "community-operators-prod" / "v4.21.json"
    if not path.exists():
        return {"skipped": f"no {path}"}
    starts = _starts(_full(path), subscriptions)
    spec = Spec(seed=1, pools=[Pool(name="master", nodes=1, max_unavailable=1)], olm=Olm())
    with tempfile.TemporaryDirectory(prefix="kupgrade-olm-bench-") as tmp:
        root = create_cluster(Path(tmp), "c", Profile(spec=spec))
        store = Store(root / "cluster.db")
        r = runner(root, store, spec)
        add_source(r.transport.sim, "community", str(path), namespace="olm")
        for i, (package, channel, start) in enumerate(starts):
            subscribe(
                r.transport.sim,
                package=package,
                source="community",
                source_namespace="olm",
                namespace=f"team-{i}",
                channel=channel,
                starting_csv=start,
            )
        store.commit()
        since = r.transport.sim.now()
        started = time.perf_counter()
        outcome = r.run(until="idle", max_seconds=30 * 86400)
        wall = time.perf_counter() - started
        subs = r.transport.sim.list("Subscription")
        plans = len(r.transport.sim.list("InstallPlan"))
        at_head = 0
        index = CatalogIndex.build(load_catalog(path))
        for sub in subs:
            graph = index.packages[sub["spec"]["name"]].channel(sub["spec"]["channel"])
            at_head += graph is not None and sub["status"].get("installedCSV") == graph.head
        failed = sum(
            1
            for s in subs
            if any(
                c["type"] == "ResolutionFailed" and c["status"] == "True"
                for c in s["status"].get("conditions") or []
            )
        )
        store.close()
    return {
        "catalog": path.name,
        "subscriptions": len(subs),
        "install_plans": plans,
        "at_channel_head": at_head,
        "resolution_failed": failed,
        "wall_s": round(wall, 2),
        "simulated_min": round((outcome.now - since) / 60, 1),
        "steps": outcome.steps,
    }


if __name__ == "__main__":
    shared = REPO.parent / "shared" / "conformance"
    print(
        json.dumps({"catalog": bench_olm(shared), "cluster": bench_olm_cluster(shared)}, indent=2)
    )
