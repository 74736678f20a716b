"""A snapshot file read by worker processes gives what one process gives: the same series,
points and values, or the same error on the same line (or the same decoding error), for
drawn snapshots cut into pieces of any size. The pieces are made tiny and the size
threshold zero so that small files take the parallel way. The snapshots feed the risks'
matching rules (SPEC A4)."""

from __future__ import annotations

import itertools
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kupgrade.errors import InputError
from kupgrade.risks.promql import snapshot_pool
from kupgrade.risks.promql.snapshot import parse_snapshot
from kupgrade.risks.promql.snapshot_file import load_snapshot
from tests.risks.test_snapshot_bulk import snapshots
from tests.support import promkit
from tests.support.conformance import SHARED


def _outcome(read: Any) -> Any:
    try:
        series = read()
    except InputError as exc:
        return ("error", exc.message, exc.field)
    return sorted((s.labels, s.ts.tobytes(), s.vals.tobytes()) for s in series)


def _in_workers(data: bytes, piece: int, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Read by the workers themselves: no way back to one process that would hide them."""
    monkeypatch.setattr(snapshot_pool, "PIECE", piece)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "snap.om"
        path.write_bytes(data)
        with path.open("rb") as handle:
            # An error's message and line are compared; its file name differs.
            return _outcome(lambda: snapshot_pool.read_in_parallel(handle, str(path), len(data)))


def _in_one(text: str) -> Any:
    return _outcome(lambda: parse_snapshot(text, source="snap.om").series)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=snapshots(), piece=st.integers(1, 300))
def test_workers_read_what_one_process_reads(
    text: str, piece: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _in_workers(text.encode(), piece, monkeypatch) == _in_one(text)


def test_a_large_plain_file_is_read_in_pieces_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Series that run across pieces, a series whose time goes back in a later piece (an
    error only the taking in order can see), comments between pieces."""
    lines = ["# TYPE up gauge"]
    lines += [f'up{{job="a"}} {i} {1000 + i}' for i in range(3000)]
    lines += ["# HELP m help"]
    lines += [f'm{{x="{i % 7}"}} {i}.5 {i}' for i in range(2000)]
    lines += [f'up{{job="a"}} 1 {5000 + i}' for i in range(500)]
    good = "\n".join([*lines, "# EOF", ""])
    assert _in_workers(good.encode(), 4096, monkeypatch) == _in_one(good)
    back = good.replace('up{job="a"} 1 5000\n', 'up{job="a"} 1 2000\n')
    outcome = _in_workers(back.encode(), 4096, monkeypatch)
    assert outcome == _in_one(back)
    assert outcome[0] == "error"
    assert "out of order" in outcome[1]


def test_a_piece_that_is_not_utf8_is_named_as_one_process_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers' decoding error reaches `load_snapshot`, which words it as it does
    for one process (the same file read both ways)."""
    head = "".join(f"up {i} {i}\n" for i in range(2000)).encode()
    path = tmp_path / "snap.om"
    path.write_bytes(head + b'up{a="\xff"} 1 99999\n# EOF\n')
    one = _outcome(lambda: load_snapshot(path).series)
    taken: list[str] = []
    real = snapshot_pool.read_in_parallel

    def spy(handle: Any, name: str, size: int) -> Any:
        taken.append(name)
        return real(handle, name, size)

    monkeypatch.setattr(snapshot_pool, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(snapshot_pool, "PIECE", 1024)
    monkeypatch.setattr(snapshot_pool, "read_in_parallel", spy)
    workers = _outcome(lambda: load_snapshot(path).series)
    assert taken == [str(path)]
    assert workers[0] == one[0] == "error"
    assert workers[1] == one[1]
    assert "not UTF-8" in workers[1]


def test_the_pieces_cover_the_file_and_end_after_newlines(tmp_path: Path) -> None:
    data = b"a 1 1\n" * 100 + b"no newline at the end"
    path = tmp_path / "f"
    path.write_bytes(data)
    for piece in (1, 5, 6, 7, 64, 10_000):
        with path.open("rb") as handle:
            pieces = list(snapshot_pool._pieces(handle, len(data), piece))
        assert pieces[0][0] == 0
        assert pieces[-1][1] == len(data)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(pieces))
        assert all(data[end - 1 : end] == b"\n" for _, end in pieces[:-1])


def test_small_files_and_one_core_stay_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not snapshot_pool.parallel_wanted(snapshot_pool.PARALLEL_BYTES - 1)
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert not snapshot_pool.parallel_wanted(snapshot_pool.PARALLEL_BYTES * 10)


def test_load_snapshot_takes_the_workers_way_for_a_large_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command's reader hands a file over the threshold to the workers, and gives
    what they read."""
    text = "".join(f'up{{i="{i % 50}"}} {i} {i}\n' for i in range(20_000)) + "# EOF\n"
    path = tmp_path / "big.om"
    path.write_text(text)
    taken: list[int] = []
    real = snapshot_pool.read_in_parallel

    def spy(handle: Any, name: str, size: int) -> Any:
        series = real(handle, name, size)
        taken.append(len(series))
        return series

    monkeypatch.setattr(snapshot_pool, "PARALLEL_BYTES", len(text) // 2)
    monkeypatch.setattr(snapshot_pool, "PIECE", 32 << 10)
    monkeypatch.setattr(snapshot_pool, "read_in_parallel", spy)
    snapshot = load_snapshot(path)
    assert taken == [50]
    assert snapshot.sample_count == 20_000
    assert _outcome(lambda: snapshot.series) == _in_one(text)


def test_a_lost_worker_sends_the_reading_back_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file vanishes between our open and the workers' (a rotation, say): they end
    without a piece, and the reading is done here, from the descriptor still open."""
    text = "".join(f"up {i} {i}\n" for i in range(5_000)) + "# EOF\n"
    path = tmp_path / "rotated.om"
    path.write_text(text)
    real = snapshot_pool._start

    def start_after_unlink(name: str, ranges: list[tuple[int, int]]) -> Any:
        Path(name).unlink(missing_ok=True)
        return real(name, ranges)

    with path.open("rb") as handle:
        monkeypatch.setattr(snapshot_pool, "_start", start_after_unlink)
        with pytest.raises(snapshot_pool.WorkerLost):
            snapshot_pool.read_in_parallel(handle, str(path), len(text))
    path.write_text(text)
    monkeypatch.setattr(snapshot_pool, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(snapshot_pool, "PIECE", 4096)
    assert _outcome(lambda: load_snapshot(path).series) == _in_one(text)


def test_a_huge_file_is_cut_into_a_bounded_number_of_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker's ranges travel in one argument (Linux caps one at 128 KiB): however
    small the configured piece, the pieces stay under MAX_PIECES."""
    text = "".join(f"up {i} {i}\n" for i in range(20_000)) + "# EOF\n"
    monkeypatch.setattr(snapshot_pool, "MAX_PIECES", 7)
    seen: list[int] = []
    real = snapshot_pool._start

    def counting(name: str, ranges: list[tuple[int, int]]) -> Any:
        seen.append(len(ranges))
        return real(name, ranges)

    monkeypatch.setattr(snapshot_pool, "_start", counting)
    assert _in_workers(text.encode(), 1, monkeypatch) == _in_one(text)
    assert 0 < sum(seen) <= 7


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_cluster_shaped_like_the_conformance_rules_reads_the_same(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every metric the shared conformance rules select (conformance/promql/metrics.yaml:
    names, labels, matcher values), as a cluster's two hours of samples: the workers read
    what one process reads. SPEC A4."""
    metrics = promkit.rule_metrics(SHARED)
    text = promkit.rule_snapshot(metrics, random.Random(seed), 1_767_724_497, "single", 2)
    one = _in_one(text)
    assert one[0] != "error" and len(one) > 10
    assert _in_workers(text.encode(), 8192, monkeypatch) == one
