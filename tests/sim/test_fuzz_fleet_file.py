"""Fuzzing the fleet file reader (`kupgrade fleet create`): any YAML value a user could
write is either a fleet or one InputError naming the file, never another exception; and
the command says so in one line with a non-zero exit, leaving no cluster behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kupgrade.errors import KupgradeError
from kupgrade.sim.fleet.doc import read_fleet
from tests.support.cli import kupgrade

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 300),
    st.floats(allow_nan=False, width=32),
    st.sampled_from(["1.28.500-gke.120", "1.16.9", "v1.30.4", "1.31.0", "admin", "user", "x", ""]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(
                [
                    "version",
                    "role",
                    "managed_by",
                    "pools",
                    "cp",
                    "apiservers",
                    "nodes",
                    "kubeadm",
                    "np1",
                    "a",
                ]
            ),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=12,
)
cluster = st.fixed_dictionaries(
    {},
    optional={
        "version": values,
        "role": values,
        "managed_by": values,
        "pools": values,
        "cp": values,
        "apiservers": values,
        "kubeadm": values,
    },
)
documents = st.fixed_dictionaries(
    {"clusters": st.dictionaries(st.sampled_from(["admin", "u1", "k"]), cluster, max_size=3)},
    optional={
        "platform": st.sampled_from(["kubernetes", "gdc", 3]),
        "simulation": st.one_of(
            values,
            st.fixed_dictionaries(
                {},
                optional={
                    "nodesPerPool": values,
                    "controlPlanes": values,
                    "clusters": values,
                    "seed": values,
                    "start": values,
                },
            ),
        ),
        "release_order": values,
        "target": values,
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(values, documents))
def test_any_document_is_a_fleet_or_one_input_error(doc: Any) -> None:
    try:
        fleet = read_fleet(doc, "fuzz.yaml")
    except KupgradeError as exc:
        assert exc.message
        return
    assert fleet.members
    for member in fleet.members:
        assert member.profile.spec.platform in ("gdc", "kubernetes")


def test_hostile_files_fail_in_one_line_and_leave_nothing(tmp_path: Path) -> None:
    cases = {
        "binary.yaml": b"\xff\xfe\x00clusters: {}\n",
        "truncated.yaml": b"clusters:\n  admin: {version: '1.28.500-gke.120', role: adm",
        "bomb.yaml": b"a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nclusters: *c\n",
        "deep.yaml": b"clusters: " + b"[" * 5000 + b"]" * 5000 + b"\n",
        "dupes.yaml": b"clusters:\n  a: {version: '1.16.9'}\n  a: {version: '1.16.9'}\n",
        "badsize.yaml": b"clusters: {a: {version: '1.16.9'}}\nsimulation: {nodesPerPool: 100000}\n",
    }
    env = {"KUPGRADE_HOME": str(tmp_path / "home")}
    for name, body in cases.items():
        path = tmp_path / name
        path.write_bytes(body)
        done = kupgrade("fleet", "create", str(path), env=env)
        assert done.returncode != 0, name
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert (lines and str(path) in lines[0]) or name in done.stderr, (name, done.stderr)
    assert not (tmp_path / "home" / "clusters").exists() or not any(
        (tmp_path / "home" / "clusters").iterdir()
    )
