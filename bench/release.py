"""Release payloads: load and graph 1,000 manifests; extract and verify against tar and sha256sum.

A generated payload shaped like an OpenShift release (about 1,000 manifests over 60
components and the usual runlevels, a few large CRDs, some Jobs) is built into an OCI
image. Timed, median of several runs:
  * load: parse and filter every manifest as the controller does, with versionHash;
  * graph: split on Jobs and parallelize for an update;
  * extract: read the image, check every blob digest and every tar entry, write the
    files (while the layer is read, as `release extract` does); against `tar -xzf` of
    the very same layer blob (no checks at all), as MB/s of unpacked payload; the ratio
    kupgrade/tar is the figure. Both write to the same disk, whose speed drifts a lot
    here (1,000 new files cost 40 ms or 600 ms by the minute), so they run in turns, and
    once more writing to memory (/dev/shm) where only the two programs' speed counts;
  * verify: the layer digest check alone, against `sha256sum` of the same file.
Run by `make bench` (bench/run.py) or alone: `python bench/release.py [--manifests 1000]`.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from kupgrade.release.assemble import ReleaseSpec, payload_files, task_of
from kupgrade.release.oci import build_image, check_blob, layout_files, open_image, read_tree
from kupgrade.release.payload import PayloadFiles, load_payload, read_directory
from kupgrade.release.sources import LayoutDir, write_tree
from kupgrade.release.staged import TreeWriter
from kupgrade.release.taskgraph import build_graph

REPO = Path(__file__).resolve().parents[1]


RUNLEVELS = ["00", "03", "05", "10", "20", "25", "30", "40", "50", "70", "80", "90"]
KINDS = [
    ("v1", "ConfigMap"),
    ("apps/v1", "Deployment"),
    ("v1", "ServiceAccount"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("config.openshift.io/v1", "ClusterOperator"),
]
INCLUDE = {"include.release.openshift.io/self-managed-high-availability": "true"}


def generate(count: int, seed: int = 7) -> dict[str, bytes]:
    """`count` manifests named 0000_<runlevel>_<component>_<nn>-<name>.yaml."""
    rng = random.Random(seed)
    components = [f"component-{i:02d}-operator" for i in range(60)]
    files: dict[str, bytes] = {}
    for index in range(count):
        component = components[index % len(components)]
        runlevel = RUNLEVELS[(index % len(components)) % len(RUNLEVELS)]
        if index % 150 == 149:
            api, kind = "batch/v1", "Job"
        elif index % 97 == 0:
            api, kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
        else:
            api, kind = KINDS[index % len(KINDS)]
        body: dict[str, Any] = {
            "apiVersion": api,
            "kind": kind,
            "metadata": {
                "name": f"{component}-{index}",
                "namespace": f"openshift-{component}",
                "annotations": INCLUDE,
            },
        }
        size = 120_000 if kind == "CustomResourceDefinition" else rng.randint(800, 6000)
        body["data" if kind == "ConfigMap" else "spec"] = {
            f"key{k}": "".join(rng.choices("abcdefghijklmnopqrstuvwxyz ", k=80))
            for k in range(size // 90)
        }
        name = f"release-manifests/0000_{runlevel}_{component}_{index:04d}-{kind.lower()}.yaml"
        files[name] = yaml.safe_dump(body).encode()
    return payload_files(files, ReleaseSpec("4.99.0"))


def _median(func: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        func()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def _alternating(
    first: Callable[[], object], second: Callable[[], object], runs: int
) -> tuple[float, float]:
    """Medians of the two, run in turns: disk speed drifts, so both see the same drift."""
    a, b = [], []
    for _ in range(runs):
        a.append(_median(first, 1))
        b.append(_median(second, 1))
    return statistics.median(a), statistics.median(b)


def _extraction_pair(
    layout: Path, layer_path: Path
) -> Callable[[Path], tuple[Callable[[], None], Callable[[], None]]]:
    """Ours and `tar -xzf`, each writing a new directory under the one given."""
    counter = iter(range(10**6))

    def pair(under: Path) -> tuple[Callable[[], None], Callable[[], None]]:
        def ours() -> None:
            """As `release extract` does: files written while the layer is read."""
            target = under / f"ours-{next(counter)}"
            with TreeWriter(target, ("manifests", "release-manifests")) as out:
                read_tree(open_image(LayoutDir(layout)), sink=out)

        def plain_tar() -> None:
            target = under / f"tar-{next(counter)}"
            target.mkdir()
            subprocess.run(["tar", "-xzf", str(layer_path), "-C", str(target)], check=True)

        return ours, plain_tar

    return pair


def bench_release(manifests: int = 1000, runs: int = 7) -> dict[str, Any]:
    files = generate(manifests)
    payload_bytes = sum(len(v) for v in files.values())
    work = Path(tempfile.mkdtemp(prefix="kupgrade-bench-release-"))
    try:
        image = build_image(files, "4.99.0")
        layout = work / "layout"
        write_tree(layout, layout_files(image))
        in_memory = PayloadFiles(files, origin="generated")
        extracted = work / "extracted"
        write_tree(extracted, files, ("manifests", "release-manifests"))
        payload = load_payload(in_memory)
        tasks = [task_of(m) for m in payload.included]
        layer = next(d for d, b in image.blobs.items() if len(b) > 10_000)
        layer_path = layout / "blobs" / "sha256" / layer.removeprefix("sha256:")
        pair = _extraction_pair(layout, layer_path)
        source = LayoutDir(layout)
        descriptor = open_image(source).layers[0]
        t_load = _median(lambda: load_payload(in_memory), runs)
        t_load_dir = _median(lambda: load_payload(read_directory(extracted)), runs)
        t_graph = _median(lambda: build_graph(tasks, "update"), runs)
        t_ours, t_tar = _alternating(*pair(work), runs)
        memory = Path("/dev/shm")
        in_ram = Path(tempfile.mkdtemp(dir=memory)) if memory.is_dir() else None
        t_ours_ram, t_tar_ram = _alternating(*pair(in_ram), runs) if in_ram else (0.0, 0.0)
        if in_ram:
            shutil.rmtree(in_ram, ignore_errors=True)
        t_verify = _median(lambda: check_blob(layer_path.read_bytes(), descriptor, "bench"), runs)
        t_sha = _median(
            lambda: subprocess.run(["sha256sum", str(layer_path)], check=True, capture_output=True),
            runs,
        )
        mb = payload_bytes / 1e6
        layer_mb = layer_path.stat().st_size / 1e6
        return {
            "manifests": payload.total,
            "payload_mb": round(mb, 1),
            "layer_mb": round(layer_mb, 1),
            "load_ms": round(t_load * 1000, 1),
            "load_from_dir_ms": round(t_load_dir * 1000, 1),
            "graph_ms": round(t_graph * 1000, 2),
            "extract_mb_s": round(mb / t_ours, 1),
            "tar_mb_s": round(mb / t_tar, 1),
            "ratio_extract_kupgrade_over_tar": round(t_tar / t_ours, 2),
            "ratio_extract_in_memory": round(t_tar_ram / t_ours_ram, 2) if in_ram else None,
            "verify_mb_s": round(layer_mb / t_verify, 1),
            "sha256sum_mb_s": round(layer_mb / t_sha, 1),
            "ratio_verify_kupgrade_over_sha256sum": round(t_sha / t_verify, 2),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def describe(r: dict[str, Any]) -> str:
    return (
        f"release ({r['manifests']} manifests, {r['payload_mb']} MB, layer {r['layer_mb']} MB gz): "
        f"load {r['load_ms']} ms (from a directory {r['load_from_dir_ms']} ms), update graph {r['graph_ms']} ms; "
        f"extract {r['extract_mb_s']} MB/s vs tar -xzf {r['tar_mb_s']} MB/s (kupgrade/tar {r['ratio_extract_kupgrade_over_tar']}, "
        f"{r['ratio_extract_in_memory']} writing to memory, where the disk's drift is out); "
        f"verify {r['verify_mb_s']} MB/s vs sha256sum {r['sha256sum_mb_s']} MB/s "
        f"(kupgrade/sha256sum {r['ratio_verify_kupgrade_over_sha256sum']})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifests", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=7)
    print(describe(bench_release(parser.parse_args().manifests, parser.parse_args().runs)))
