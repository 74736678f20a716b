"""`controller run --profile-run FILE` (issue 46): where a run's time went, summarised for a
person and kept raw for pstats; the run's own report does not change."""

from __future__ import annotations

import json
import pstats
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from kupgrade.cli.profiling import tenths
from kupgrade.sim.openshift.releases import model_image
from kupgrade.sim.profile import Spec
from tests.support.cli import kupgrade


def _run(home: Path, *args: str) -> tuple[int, str, str]:
    done = kupgrade(*args, env={"KUPGRADE_HOME": str(home)})
    return done.returncode, done.stdout, done.stderr


def test_a_profiled_upgrade_says_where_its_time_went(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert _run(home, "cluster", "create", "demo", "--workers", "3")[0] == 0
    image = model_image(Spec(), "4.14.27", home / "clusters" / "demo")
    assert _run(home, "upgrade", "--to-image", image, "--allow-explicit-upgrade")[0] == 0
    out = tmp_path / "prof" / "run.txt"
    out.parent.mkdir()
    (out.parent / "run.txt.pstats").write_bytes(b"left by an earlier command")
    code, said, err = _run(home, "controller", "run", "-o", "json", "--profile-run", str(out))
    assert code == 0, err
    assert json.loads(said)["outcome"] == "completed"
    assert f"where the run's time went: {out}" in err
    text = out.read_text()
    head, memory = text.splitlines()[:2]
    assert re.fullmatch(
        r"profile of controller run of cluster demo: [\d.]+ s wall, [\d.]+ s profiled", head
    )
    peak = re.fullmatch(r"peak resident memory of this process: ([\d,]+\.\d) MB", memory)
    assert peak is not None, memory
    assert 20 < float(peak.group(1).replace(",", "")) < 4_000  # a small cluster's process
    shares = dict(
        (m.group(2), float(m.group(1)))
        for m in re.finditer(
            r"^\s+([\d.]+)%\s+[\d.]+ s\s+(\S+|\(the other parts\))$", text, re.MULTILINE
        )
    )
    assert "kupgrade.sim.store" in shares and "kupgrade.controllers.nodes.controller" in shares
    # every part, the smallest together; rounded so the shares make exactly 100%
    assert round(sum(shares.values()), 1) == 100.0
    functions = text.split("functions by own time (top 30)\n")[1].splitlines()[1:]
    assert len(functions) == 30
    # the raw data is this run's alone (an earlier command's file is not merged) and loads
    stats = pstats.Stats(str(out.parent / "run.txt.pstats"))
    names = {f"{Path(f).name}:{name}" for f, _, name in stats.stats}  # type: ignore[attr-defined]
    assert "loop.py:run" in names and "store.py:commit" in names


def test_profile_run_names_a_place_it_can_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert _run(home, "cluster", "create", "demo", "--workers", "1")[0] == 0
    for target, says in [
        (tmp_path, "is a directory"),
        (tmp_path / "missing" / "p.txt", "no such directory"),
        (Path("/proc/kupgrade-profile.txt"), "cannot write the profile"),  # found at the end
    ]:
        code, _, err = _run(
            home, "controller", "run", "--until", "idle", "--profile-run", str(target)
        )
        assert code != 0
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and says in lines[0], err


@given(st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), max_size=40))
def test_shares_in_tenths_make_a_whole_and_stay_near_the_exact_share(spent: list[float]) -> None:
    shares = tenths(spent)
    assert len(shares) == len(spent)
    total = sum(spent)
    if total <= 0:
        assert shares == [0] * len(spent)
        return
    assert sum(shares) == 1000
    for share, part in zip(shares, spent, strict=True):
        assert abs(share - 1000 * part / total) < 1 + 1e-9  # never more than a tenth off


def test_shares_round_the_largest_remainders_up() -> None:
    # three equal parts: 333.33 tenths each, the first gets the tenth left over
    assert tenths([1.0, 1.0, 1.0]) == [334, 333, 333]
    assert tenths([2.0, 1.0, 1.0]) == [500, 250, 250]
    # 21 parts of which each rounded alone would give 99.0% in all
    assert sum(tenths([1.0] * 21)) == 1000
    assert tenths([]) == [] and tenths([0.0, 0.0]) == [0, 0]
