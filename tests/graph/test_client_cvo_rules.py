"""The update-service client's checks in the cluster-version operator's words
(pkg/cvo/availableupdates.go calculateAvailableUpdatesStatus, google/uuid Parse) and the
architecture it asks for (pkg/cincinnati/cincinnati.go GetUpdates)."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from kupgrade.cli.updates import cluster_view_of
from kupgrade.cluster.fake import MemoryBackend
from kupgrade.graph.client import ClusterView, fetch, release_arch, uuid_error


def test_uuid_error_texts() -> None:
    assert uuid_error("x") == "invalid UUID length: 1"
    assert uuid_error("0123456701230123012301234567890z") == "invalid UUID format"
    assert uuid_error("01234567-0123-0123-0123-0123456789zz"[:36]) == "invalid UUID format"
    assert uuid_error("0123456780123-0123-0123-0123456789ab") == "invalid UUID format"
    assert uuid_error("urx:uuid:01234567-0123-0123-0123-0123456789ab").startswith(
        "invalid urn prefix"
    )


@given(st.uuids())
def test_every_form_google_uuid_takes_is_accepted(value: uuid.UUID) -> None:
    text = str(value)
    for form in (text, text.upper(), f"urn:uuid:{text}", "{" + text + "}", value.hex):
        assert uuid_error(form) == ""


@given(st.text(max_size=50))
def test_any_text_gets_an_answer(text: str) -> None:
    assert isinstance(uuid_error(text), str)


def test_preflight_words() -> None:
    now = lambda: 0.0  # noqa: E731
    cases = {
        ClusterView("", "c", "4.1.0"): ("NoUpstream", "No updateService server"),
        ClusterView("http://h/g", "c", "4.1.0", cluster_id="nope"): (
            "InvalidID",
            "invalid cluster ID: invalid UUID length: 4",
        ),
        ClusterView("http://h/g", "c", "4.1.0", ""): (
            "NoArchitecture",
            "Architecture has not been configured.",
        ),
    }
    for view, (reason, words) in cases.items():
        condition = fetch(view, now).condition
        assert condition["reason"] == reason
        assert condition["message"].startswith(words)


def test_architecture_names() -> None:
    assert release_arch("Multi") == "multi"
    assert release_arch("arm64") == "arm64"
    assert ClusterView("u", "c", "1.0.0", "Multi", current_arch="amd64").migrating_to_multi
    assert not ClusterView("u", "c", "1.0.0", "Multi").migrating_to_multi


def test_cluster_view_reads_the_desired_architecture() -> None:
    cv = {
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"channel": "c", "clusterID": "id", "desiredUpdate": {"architecture": "Multi"}},
        "status": {"desired": {"version": "4.14.1"}},
    }
    found = cluster_view_of(MemoryBackend([cv]))
    assert (found[3], found[5]) == ("Multi", "amd64")
