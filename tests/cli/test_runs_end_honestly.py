"""A run says how it ended: `controller run --until completed` that cannot complete
(a budget holds a drain for ever) stops once nothing has moved for the platform's stall
time, exits 1 and names the pod and the budget, instead of simulating two weeks and
exiting 0 (SPEC X4); `--speed N` runs N simulated seconds per real second."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from kupgrade.sim.loop import Stillness
from kupgrade.sim.openshift.releases import model_image
from kupgrade.sim.profile import Spec
from tests.support.cli import kupgrade

HELD = """\
spec:
  seed: 5
  pools:
  - {name: master, nodes: 3, maxUnavailable: 1}
  - {name: worker, nodes: 3, maxUnavailable: 1}
  workloads:
  - {name: web, namespace: shop, replicas: 3, pdb: {minAvailable: 3}}
"""


def _held(home: Path) -> dict[str, str]:
    env = {"KUPGRADE_HOME": str(home)}
    profile = home.parent / "held.yaml"
    profile.write_text(HELD)
    assert kupgrade("cluster", "create", "held", "--profile", str(profile), env=env).returncode == 0
    image = model_image(Spec(), "4.14.27", home / "clusters" / "held")
    asked = kupgrade(
        "upgrade", "--cluster", "held", "--to-image", image, "--allow-explicit-upgrade", env=env
    )
    assert asked.returncode == 0, asked.stderr
    return env


def test_a_drain_held_for_ever_stops_as_stalled_and_says_by_what(tmp_path: Path) -> None:
    env = _held(tmp_path / "home")
    done = kupgrade("controller", "run", "--cluster", "held", "-o", "json", env=env)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["outcome"] == "stalled"
    assert report["simulatedSeconds"] < 6 * 3600  # not the two weeks of a time limit
    said = done.stderr
    assert said.count("\n") == 1 and said.startswith("error: cluster held did not complete")
    assert "nothing moved for 60 simulated minutes" in said
    assert "pod/shop/web-" in said and "disruption budget web" in said
    assert "waiting: pool worker 0/3" in said
    # Asked only to run until idle, the same stop is no error of the command's.
    idle = kupgrade("controller", "run", "--cluster", "held", "--until", "idle", env=env)
    assert idle.returncode == 0, idle.stderr


def test_speed_is_simulated_seconds_per_real_second(tmp_path: Path) -> None:
    env = {"KUPGRADE_HOME": str(tmp_path)}
    for name in ("fast", "paced"):
        made = kupgrade(
            "cluster",
            "create",
            name,
            "--platform",
            "kubernetes",
            "--version",
            "v1.30.4",
            "--control-planes",
            "1",
            "--workers",
            "1",
            env=env,
        )
        assert made.returncode == 0, made.stderr
        kupgrade("upgrade", "--cluster", name, "--to", "v1.30.9", env=env)
    fast = json.loads(
        kupgrade("controller", "run", "--cluster", "fast", "-o", "json", env=env).stdout
    )
    simulated = float(fast["simulatedSeconds"])
    assert simulated > 0
    # Eight real seconds over a handful of steps: more than a second of waiting per step.
    speed = simulated / 8
    started = time.monotonic()
    paced = kupgrade(
        "controller", "run", "--cluster", "paced", "--speed", str(speed), "-o", "json", env=env
    )
    took = time.monotonic() - started
    assert json.loads(paced.stdout)["simulatedSeconds"] == simulated
    assert took >= 0.9 * simulated / speed  # never ahead of the clock it was asked to follow


@given(st.lists(st.tuples(st.floats(0, 600), st.integers(0, 2)), max_size=60))
def test_a_run_is_stalled_only_after_its_motion_stood_still_past_the_limit(
    steps: list[tuple[float, int]],
) -> None:
    limit = 1800.0
    still = Stillness(0.0, limit)
    now, mark, since, looked = 0.0, None, 0.0, -1.0
    for gap, change in steps:
        now += gap
        motion = (change,)
        said = still.stalled(now, lambda m=motion: m)  # type: ignore[misc]
        if looked >= 0 and now < looked + Stillness.LOOK_EVERY:
            assert not said  # between looks nothing is decided
            continue
        looked = now
        if motion != mark:
            mark, since = motion, now
            assert not said
        else:
            assert said == (now - since > limit)


def test_a_killed_controllers_process_is_said_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "KUPGRADE_HOME": str(tmp_path)}
    made = kupgrade(
        "cluster",
        "create",
        "k",
        "--platform",
        "kubernetes",
        "--version",
        "v1.30.4",
        "--control-planes",
        "1",
        "--workers",
        "2",
        env=env,
    )
    assert made.returncode == 0, made.stderr
    assert kupgrade("upgrade", "--cluster", "k", "--to", "v1.30.9", env=env).returncode == 0
    parent = subprocess.Popen(
        [sys.executable, "-m", "kupgrade", "controller", "run", "--cluster", "k", "--speed", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    child = None
    deadline = time.monotonic() + 60
    while child is None and time.monotonic() < deadline:
        time.sleep(0.2)
        found = subprocess.run(
            ["pgrep", "-P", str(parent.pid)], capture_output=True, text=True, check=False
        )
        child = int(found.stdout.split()[0]) if found.stdout.strip() else None
    assert child is not None
    os.kill(child, signal.SIGKILL)
    _, said = parent.communicate(timeout=60)
    assert parent.returncode == 1  # not 247, the -9 of a child passed on
    lines = [line for line in said.splitlines() if line.strip()]
    assert len(lines) == 1 and f"process {child} was stopped by SIGKILL" in lines[0], said
    assert "kupgrade controller run" in lines[0] and "Traceback" not in said
    # The cluster carries on where the killed run left it.
    again = kupgrade("controller", "run", "--cluster", "k", "-o", "json", env=env)
    assert json.loads(again.stdout)["outcome"] == "completed", again.stderr
