"""Outputs land like a Unix tool's (issue 17): devices and FIFOs are written to, never
replaced; created files and directories follow the umask; a replaced file keeps its mode."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from kupgrade.errors import KupgradeError
from kupgrade.outputs import staging_dir, write_output


@pytest.fixture
def mask() -> object:
    old = os.umask(0o027)
    yield
    os.umask(old)


def test_created_files_and_directories_follow_the_umask(tmp_path: Path, mask: object) -> None:
    write_output(tmp_path / "new.json", b"{}")
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640
    assert stat.S_IMODE(staging_dir(tmp_path, ".x.").stat().st_mode) == 0o750


def test_a_replaced_file_keeps_its_mode(tmp_path: Path, mask: object) -> None:
    target = tmp_path / "graph.json"
    target.write_bytes(b"old")
    target.chmod(0o604)
    write_output(target, b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o604


def test_dev_null_stays_a_device() -> None:
    write_output(Path("/dev/null"), b"x" * 100_000)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_fifo_is_written_to_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_output(fifo, b"through the pipe")
    reader.join(timeout=10)
    assert got == [b"through the pipe"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(KupgradeError, match="is a directory"):
        write_output(tmp_path, b"x")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
