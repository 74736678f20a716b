"""A process's own peak memory (kupgrade/resident.py): what `--profile-run` says and the
benches report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kupgrade import resident


def _status(name: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
    raise AssertionError(name)


@pytest.mark.skipif(not resident.STATUS.exists(), reason="no /proc on this system")
def test_the_peak_is_the_high_water_mark_of_this_process() -> None:
    now = _status("VmRSS") / 1024
    assert resident.peak_mb() >= round(now, 1) - 0.1
    held = bytearray(64 << 20)  # 64 MB touched: resident
    held[::4096] = b"x" * len(held[::4096])
    assert resident.peak_mb() >= now + 60
    del held
    assert resident.peak_mb() >= now + 60  # a peak, not what is held now


@pytest.mark.skipif(not resident.STATUS.exists(), reason="no /proc on this system")
def test_a_child_of_a_big_process_reports_its_own_peak() -> None:
    """ru_maxrss would carry this process's high-water mark into the child."""
    code = "from kupgrade.resident import peak_mb; print(peak_mb())"
    ballast = bytearray(200 << 20)
    ballast[::4096] = b"x" * len(ballast[::4096])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert float(done.stdout) < 150 < resident.peak_mb()


@pytest.mark.parametrize("status", [None, b"VmHWM:\tlots kB\n", b"\xff\xfe not text"])
def test_without_a_readable_status_it_falls_back_to_rusage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: bytes | None
) -> None:
    path = tmp_path / "status"
    if status is not None:
        path.write_bytes(status)
    monkeypatch.setattr(resident, "STATUS", path)
    assert resident.peak_mb() > 1
