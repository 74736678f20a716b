"""How quickly the CLI starts, as a ratio to `kubectl version --client` on the same
machine: `kupgrade --help`, `kupgrade get nodes` on a small simulated cluster and
`kupgrade skew check` on a small inventory, each timed as a whole process, in pairs
with kubectl (A B A B ...) after a warm-up, the median of the pairs' ratios reported
(a pair shares the machine's load of its moment). Run by `make bench` or alone:
`python -m bench.cli_start`.
"""

from __future__ import annotations

import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kupgrade.cluster.live import local_kubectls

PACKAGE = Path(__file__).resolve().parents[1] / "kupgrade"
INVENTORY = PACKAGE / "skew" / "examples" / "inventory.yaml"


def _wall(command: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    subprocess.run(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - began


def paired(ours: list[str], theirs: list[str], env: dict[str, str], runs: int) -> dict[str, Any]:
    """Medians of `runs` paired runs after one warm-up pair."""
    _wall(ours, env), _wall(theirs, env)
    pairs = [(_wall(ours, env), _wall(theirs, env)) for _ in range(runs)]
    return {
        "kupgrade_s": round(statistics.median(a for a, _ in pairs), 4),
        "kubectl_s": round(statistics.median(b for _, b in pairs), 4),
        "ratio": round(statistics.median(a / b for a, b in pairs), 2),
        "runs": runs,
    }


def bench_cli_start(runs: int = 9) -> dict[str, Any]:
    found = local_kubectls()  # the newest kubectl here is the yardstick
    if not found:
        return {"skipped": "no kubectl on this machine"}
    newest = max(found, key=lambda f: tuple(int(x) for x in f[1].split(".") if x.isdigit()))
    kubectl = [newest[0], "version", "--client"]
    kupgrade = [str(Path(sys.executable).parent / "kupgrade")]
    # Bytecode as an installed package has it (pip compiles it at install). This checkout
    # is installed editable, and where PYTHONDONTWRITEBYTECODE is set (this image sets it)
    # the warm-up writes none: every run would compile the modules it imports again,
    # ~50 ms that no installed kupgrade pays.
    compileall.compile_dir(PACKAGE, quiet=1)
    with tempfile.TemporaryDirectory(prefix="kupgrade-start-") as tmp:
        env = {**os.environ, "KUPGRADE_HOME": tmp}
        subprocess.run(
            [
                *kupgrade,
                "cluster",
                "create",
                "small",
                "--platform",
                "kubernetes",
                "--version",
                "v1.30.4",
                "--control-planes",
                "1",
                "--workers",
                "2",
            ],
            env=env,
            capture_output=True,
            check=True,
        )
        commands = {
            "--help": [*kupgrade, "--help"],
            "get nodes": [*kupgrade, "get", "nodes", "--cluster", "small"],
            "skew check": [*kupgrade, "skew", "check", str(INVENTORY)],
        }
        return {name: paired(command, kubectl, env, runs) for name, command in commands.items()}


if __name__ == "__main__":
    print(json.dumps(bench_cli_start(), indent=2))
