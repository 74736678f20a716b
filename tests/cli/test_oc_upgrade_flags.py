"""`kupgrade upgrade` with the rest of `oc adm upgrade`'s flags: --to-latest, --clear,
--allow-not-recommended, --allow-upgrade-with-warnings, and "already at" answers, read
from openshift/oc pkg/cli/admin/upgrade/upgrade.go (Run and Complete). A cluster's
ClusterVersion is filled by a real `kupgrade serve` over loopback on the sample data."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kupgrade.cluster.clusterversion import (
    bypassed_risk,
    clear_request,
    latest_release,
    set_channel,
)
from kupgrade.cluster.conditions import find
from kupgrade.errors import InputError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.openshift.upgrade import answer
from kupgrade.sim.platform import UpgradeAsk
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.store import Store
from kupgrade.versions import sort_versions_desc
from tests.support.cli import kupgrade


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return kupgrade(*args, env={"KUPGRADE_HOME": str(home)})


def _cluster(home: Path, upstream: str, name: str = "c1") -> dict[str, Any]:
    """A cluster at 4.13.40 on stable-4.14 of the sample; its ClusterVersion after the
    update service was asked (what `upgrade` shows)."""
    made = _cli(
        home,
        "cluster",
        "create",
        name,
        "--version",
        "4.13.40",
        "--channel",
        "stable-4.14",
        "--upstream",
        upstream,
    )
    assert made.returncode == 0, made.stderr
    assert _cli(home, "upgrade", "--cluster", name).returncode == 0
    return _cv(home, name)


def _cv(home: Path, name: str = "c1") -> dict[str, Any]:
    done = _cli(home, "get", "clusterversion", "--cluster", name, "-o", "json")
    found = json.loads(done.stdout)
    return dict(found["items"][0] if "items" in found else found)


def _not_recommended(cv: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        u["release"]
        for u in cv["status"].get("conditionalUpdates") or []
        if (find(u.get("conditions"), "Recommended") or {}).get("status") != "True"
    ]


def test_to_latest_asks_for_the_highest_version_offered(tmp_path: Path, upstream: str) -> None:
    cv = _cluster(tmp_path, upstream)
    offered = [u["version"] for u in cv["status"]["availableUpdates"]]
    assert len(offered) > 1 and _not_recommended(cv), "the sample offers both kinds"
    done = _cli(tmp_path, "upgrade", "--cluster", "c1", "--to-latest", "-o", "json")
    assert done.returncode == 0, done.stderr
    wanted = json.loads(done.stdout)["desiredUpdate"]
    assert wanted["version"] == sort_versions_desc(offered)[0]
    spec = _cv(tmp_path)["spec"]["desiredUpdate"]
    assert (spec["version"], spec["image"]) == (wanted["version"], wanted["image"])


def test_clear_cancels_a_request_and_says_so(tmp_path: Path, upstream: str) -> None:
    cv = _cluster(tmp_path, upstream)
    done = _cli(tmp_path, "upgrade", "--cluster", "c1", "--clear")
    assert (done.returncode, done.stdout) == (0, "info: No update in progress\n")
    target = sort_versions_desc([u["version"] for u in cv["status"]["availableUpdates"]])[-1]
    assert _cli(tmp_path, "upgrade", "--cluster", "c1", "--to", target).returncode == 0
    done = _cli(tmp_path, "upgrade", "--cluster", "c1", "--clear")
    assert (done.returncode, done.stdout) == (0, f"Cancelled requested upgrade to {target}\n")
    assert _cv(tmp_path)["spec"].get("desiredUpdate") is None  # stored: the next command sees it
    assert _cli(tmp_path, "upgrade", "--cluster", "c1", "--clear").stdout.startswith("info: No")


def test_already_there_is_said_and_nothing_is_requested(tmp_path: Path, upstream: str) -> None:
    cv = _cluster(tmp_path, upstream)
    at = cv["status"]["desired"]
    done = _cli(tmp_path, "upgrade", "--cluster", "c1", "--to", at["version"])
    assert (done.returncode, done.stdout) == (
        0,
        f"info: Cluster is already at version {at['version']}\n",
    )
    done = _cli(tmp_path, "upgrade", "--cluster", "c1", "--to-image", at["image"], "-o", "json")
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "desiredUpdate": None,
        "message": f"info: Cluster is already at {at['image']}",
    }
    assert "desiredUpdate" not in _cv(tmp_path)["spec"]


def test_a_not_recommended_update_needs_allow_not_recommended(
    tmp_path: Path, upstream: str
) -> None:
    cv = _cluster(tmp_path, upstream)
    risky = sort_versions_desc([r["version"] for r in _not_recommended(cv)])[0]
    refused = _cli(tmp_path, "upgrade", "--cluster", "c1", "--to", risky)
    assert refused.returncode == 1 and "--allow-not-recommended" in refused.stderr
    done = _cli(tmp_path, "upgrade", "--cluster", "c1", "--to", risky, "--allow-not-recommended")
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(
        f"warning: with --allow-not-recommended you have accepted the risks with {risky} "
        "and bypassed Recommended=False "
    )
    assert _cv(tmp_path)["spec"]["desiredUpdate"]["version"] == risky


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--clear", "--to-latest"], "--clear may not be specified with any other flags"),
        (["--clear", "--to", "4.14.27"], "--clear may not be specified with any other flags"),
        (["--to-latest", "--to", "4.14.27"], "give one of --to, --to-image or --to-latest"),
        (["status", "--clear"], "it takes no --to, --to-image, --to-latest or --clear"),
    ],
)
def test_flags_that_do_not_go_together(
    tmp_path: Path, upstream: str, args: list[str], expected: str
) -> None:
    _cluster(tmp_path, upstream)
    done = _cli(tmp_path, "upgrade", *args, "--cluster", "c1")
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert expected in line, line
    assert "desiredUpdate" not in _cv(tmp_path)["spec"]


# --- the same verbs on a ClusterVersion in a store, for the states a run passes through ----


@pytest.fixture
def api(tmp_path: Path) -> Iterator[SimCluster]:
    root = create_cluster(tmp_path, "u", Profile(spec=Spec()))
    store = Store(root / "cluster.db")
    yield SimCluster(store)
    store.close()


def _set(api: SimCluster, **status: Any) -> dict[str, Any]:
    cv = api.get("ClusterVersion", "version")
    assert cv is not None
    cv["status"].update(status)
    api.write(cv)
    return cv


def _release(version: str) -> dict[str, str]:
    return {
        "version": version,
        "image": f"example.com/ocp/release@sha256:{version.replace('.', '') * 8}"[:90],
    }


def _conditional(version: str, status: str) -> dict[str, Any]:
    return {
        "release": _release(version),
        "risks": [{"name": "R", "url": "https://example.com", "message": "m"}],
        "conditions": [{"type": "Recommended", "status": status, "reason": "R", "message": "m"}],
    }


def test_latest_is_by_semantic_version_and_counts_risky_ones_only_when_allowed(
    api: SimCluster,
) -> None:
    # oc's sortReleasesBySemanticVersions: 4.14.10 above 4.14.9; not-SemVer last.
    cv = _set(
        api,
        availableUpdates=[_release("4.14.9"), _release("not-semver"), _release("4.14.10")],
        conditionalUpdates=[_conditional("4.15.1", "False"), _conditional("4.16.0", "True")],
    )
    found = latest_release(cv, allow_not_recommended=False)
    assert found is not None and found[0]["version"] == "4.14.10" and found[1] is None
    found = latest_release(cv, allow_not_recommended=True)
    assert found is not None and found[0]["version"] == "4.15.1"
    assert found[1] is not None and found[1]["status"] == "False"
    # Recommended=True conditional updates are the availableUpdates' business, not a risk.
    assert bypassed_risk(cv, _release("4.16.0")) is None
    assert bypassed_risk(cv, _release("4.14.9")) is None
    assert (bypassed_risk(cv, _release("4.15.1")) or {}).get("status") == "False"


def _answer(api: SimCluster, ask: UpgradeAsk) -> dict[str, Any] | None:
    """The release requested (None when nothing was), printed as `upgrade` prints it."""
    said = answer(api, ask, ".")
    sys.stdout.write("".join(line + "\n" for line in said.lines))
    sys.stderr.write("".join(line + "\n" for line in said.errors))
    return None if "message" in said.doc else dict(said.doc["desiredUpdate"])


def test_to_latest_with_nothing_offered_answers_as_oc_does(
    api: SimCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    version = api.get("ClusterVersion", "version")["status"]["desired"]["version"]  # type: ignore[index]
    retrieved = {"type": "RetrievedUpdates", "status": "True", "reason": "", "message": ""}
    _set(api, availableUpdates=[], conditionalUpdates=[], conditions=[retrieved])
    assert _answer(api, UpgradeAsk(latest=True)) is None
    assert (
        capsys.readouterr().out
        == f"info: Cluster is already at the latest available version {version}\n"
    )
    with pytest.raises(InputError, match="no recommended or conditional updates"):
        _answer(api, UpgradeAsk(latest=True, allow_not_recommended=True))
    failed = {**retrieved, "status": "False", "reason": "RemoteFailed", "message": "a\nb"}
    _set(api, conditions=[failed])
    with pytest.raises(InputError) as raised:
        _answer(api, UpgradeAsk(latest=True))
    assert raised.value.message == (
        "cannot refresh available updates:\n  Reason: RemoteFailed\n  Message: a\n  b\n\n"
        "specify --to-image to continue with an update."
    )


def test_the_guards_and_allow_upgrade_with_warnings(
    api: SimCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    progressing = {"type": "Progressing", "status": "True", "reason": "R", "message": "Working"}
    _set(api, availableUpdates=[_release("4.99.1")], conditions=[progressing])
    with pytest.raises(InputError) as raised:
        _answer(api, UpgradeAsk(latest=True))
    assert raised.value.message.startswith("the cluster is already upgrading:")
    assert "--allow-upgrade-with-warnings" in (raised.value.hint or "")
    assert "desiredUpdate" not in api.get("ClusterVersion", "version")["spec"]  # type: ignore[index]
    asked = UpgradeAsk(latest=True, with_warnings=True)
    assert _answer(api, asked) == _release("4.99.1")
    assert capsys.readouterr().err.startswith(
        "warning: --allow-upgrade-with-warnings is bypassing: the cluster is already upgrading:"
    )


def test_clear_knows_a_started_update(api: SimCluster) -> None:
    cv = _set(api)
    at = cv["status"]["desired"]
    cv["spec"]["desiredUpdate"] = {"version": "", "image": at["image"], "force": False}
    api.write(cv)
    # The request is what the cluster already runs (an update that started): oc's
    # updateIsEquivalent, by image.
    assert clear_request(api) == f"Cleared the update field, still at {at['version']}"
    assert api.get("ClusterVersion", "version")["spec"]["desiredUpdate"] is None  # type: ignore[index]
    cv = _set(api)
    cv["spec"]["desiredUpdate"] = {"version": "", "image": "example.com/x@sha256:" + "a" * 64}
    api.write(cv)
    assert clear_request(api) == "Cancelled requested upgrade to example.com/x@sha256:" + "a" * 64
    assert api.get("ClusterVersion", "version")["spec"]["desiredUpdate"] is None  # type: ignore[index]
    assert clear_request(api) == "info: No update in progress"


def _image(digit: str, registry: str = "example.com/ocp/release") -> str:
    return f"{registry}@sha256:{digit * 64}"


def test_to_and_to_image_find_the_target_as_oc_does(
    api: SimCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    offered = [
        {"version": "4.14.9", "image": _image("9")},
        {"version": "4.14.10", "image": _image("a")},
    ]
    risky = {
        **_conditional("4.15.1", "False"),
        "release": {"version": "4.15.1", "image": _image("b")},
    }
    retrieved = {"type": "RetrievedUpdates", "status": "True", "reason": "", "message": ""}
    _set(api, availableUpdates=offered, conditionalUpdates=[risky], conditions=[retrieved])

    # The same digest from a mirror is the offered release: no --allow-explicit-upgrade,
    # and the pull spec asked for is kept (oc's targetMatch and "preserve the ... image").
    mirror = _image("a", "mirror.local/ocp/release")
    assert _answer(api, UpgradeAsk(image=mirror)) == {
        "version": "4.14.10",
        "image": mirror,
    }
    assert capsys.readouterr().err == ""

    with pytest.raises(InputError) as raised:
        _answer(api, UpgradeAsk(image=_image("c")))
    assert raised.value.message == (
        "the update is not one of the possible targets: 4.14.10, 4.14.9. "
        "specify --allow-explicit-upgrade to continue with the update."
    )
    desired = _answer(api, UpgradeAsk(image=_image("c"), explicit=True))
    assert desired == {"version": "", "image": _image("c")}
    assert capsys.readouterr().err == (
        "warning: The requested upgrade image is not one of the available updates. You have "
        "used --allow-explicit-upgrade for the update to proceed anyway\n"
    )

    with pytest.raises(InputError) as raised:
        _answer(api, UpgradeAsk(image=_image("b")))
    assert raised.value.message == (
        "the update 4.15.1 is not one of the recommended updates, but is available as a "
        "conditional update. To accept the Recommended=False risk and to proceed with update "
        "use --allow-not-recommended.\n  Reason: R\n  Message: m"
    )
    with pytest.raises(InputError) as raised:
        _answer(api, UpgradeAsk(to="4.99.0", allow_not_recommended=True))
    assert "possible targets: 4.15.1, 4.14.10, 4.14.9. specify --to-image" in raised.value.message
    with pytest.raises(InputError, match="--to must be a semantic version"):
        _answer(api, UpgradeAsk(to="4.14"))


@pytest.mark.parametrize(
    ("retrieved", "allow", "expected"),
    [
        (
            "False",
            False,
            "cannot refresh available updates:\n  Reason: R\n  Message: m\n\n"
            "specify --to-image to continue with the update.",
        ),
        (
            "True",
            True,
            "no recommended or conditional updates, specify --to-image to continue "
            "with the update or wait for new updates to be available.",
        ),
        (
            "True",
            False,
            "no recommended updates, specify --to-image to continue with the "
            "update or wait for new updates to be available.",
        ),
    ],
)
def test_to_with_nothing_offered_says_why(
    api: SimCluster, retrieved: str, allow: bool, expected: str
) -> None:
    condition = {"type": "RetrievedUpdates", "status": retrieved, "reason": "R", "message": "m"}
    _set(api, availableUpdates=[], conditionalUpdates=[], conditions=[condition])
    with pytest.raises(InputError) as raised:
        _answer(api, UpgradeAsk(to="4.99.0", allow_not_recommended=allow))
    assert raised.value.message == expected


# --- upgrade channel (openshift/oc pkg/cli/admin/upgrade/channel/channel.go) ---------------


def _channels(api: SimCluster, current: str, known: list[str]) -> None:
    cv = api.get("ClusterVersion", "version")
    assert cv is not None
    cv["spec"]["channel"] = current
    cv["status"]["desired"]["channels"] = known
    api.write(cv)


def _channel_now(api: SimCluster) -> str:
    return str(api.get("ClusterVersion", "version")["spec"]["channel"])  # type: ignore[index]


def test_channel_within_the_release_s_channels(api: SimCluster) -> None:
    _channels(api, "stable-4.13", ["fast-4.14", "stable-4.13", "stable-4.14"])
    assert set_channel(api, "stable-4.13", False) == (
        "info: Cluster is already in stable-4.13 (no change)",
        [],
    )
    assert set_channel(api, "stable-4.14", False) == ("", [])  # oc says nothing
    assert _channel_now(api) == "stable-4.14"
    with pytest.raises(InputError) as raised:
        set_channel(api, "stable-9.9", False)
    assert raised.value.message == (
        'the requested channel "stable-9.9" is not one of the available channels '
        "(fast-4.14, stable-4.13, stable-4.14), you must pass --allow-explicit-channel to continue"
    )
    assert _channel_now(api) == "stable-4.14"
    text, warnings = set_channel(api, "stable-9.9", True)
    assert text == "" and warnings == [
        'The requested channel "stable-9.9" is not one of the available channels (fast-4.14, '
        "stable-4.13, stable-4.14). You have used --allow-explicit-channel to proceed anyway. "
        'Setting the update channel to "stable-9.9".'
    ]
    assert _channel_now(api) == "stable-9.9"


def test_clearing_a_known_channel_needs_allow_explicit_channel(api: SimCluster) -> None:
    _channels(api, "stable-4.14", ["stable-4.14"])
    with pytest.raises(InputError, match="You are requesting to clear the update channel"):
        set_channel(api, "", False)
    text, warnings = set_channel(api, "", True)
    assert text == "" and warnings == [
        'Clearing channel "stable-4.14"; cluster will no longer request available update '
        "recommendations."
    ]
    assert set_channel(api, "", False) == ("info: Cluster channel is already clear (no change)", [])
    # A channel the release does not list may be cleared without the flag.
    _channels(api, "custom", ["stable-4.14"])
    assert set_channel(api, "", False)[1][0].startswith('Clearing channel "custom"')


def test_a_release_that_names_no_channel_cannot_validate_one(api: SimCluster) -> None:
    _channels(api, "", [])
    version = api.get("ClusterVersion", "version")["status"]["desired"]["version"]  # type: ignore[index]
    assert set_channel(api, "anything-1", False) == (
        "",
        [
            f'No channels known to be compatible with the current version "{version}"; unable '
            'to validate "anything-1". Setting the update channel to "anything-1" anyway.'
        ],
    )


def test_upgrade_channel_through_the_cli(tmp_path: Path, upstream: str) -> None:
    _cluster(tmp_path, upstream)
    done = _cli(tmp_path, "upgrade", "channel", "stable-4.13", "--cluster", "c1", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"channel": "stable-4.13", "message": ""}
    assert _cv(tmp_path)["spec"]["channel"] == "stable-4.13"
    # The update service is asked on the new channel at the next look.
    shown = _cli(tmp_path, "upgrade", "--cluster", "c1")
    assert "Channel: stable-4.13" in shown.stdout
    again = _cli(tmp_path, "upgrade", "channel", "stable-4.13", "--cluster", "c1")
    assert again.stdout == "info: Cluster is already in stable-4.13 (no change)\n"
    for args, expected in (
        (["status", "x"], "unexpected argument 'x'"),
        (["--allow-explicit-channel"], "--allow-explicit-channel goes with `upgrade channel`"),
        (["channel", "a", "--to-latest"], "`upgrade channel` sets the channel"),
    ):
        done = _cli(tmp_path, "upgrade", *args, "--cluster", "c1")
        assert done.returncode == 1 and expected in done.stderr, done.stderr


def test_only_a_digest_matches_a_digest(api: SimCluster) -> None:
    """oc's targetMatch compares digests only when the one asked for has one: two pull
    specs without a digest are not the same release."""
    cv = _set(api, availableUpdates=[{"version": "4.14.9", "image": "example.com/ocp:4.14.9"}])
    assert bypassed_risk(cv, {"version": "", "image": "example.com/other:tag"}) is None
    risky = {**_conditional("4.15.1", "False"), "release": {"version": "4.15.1", "image": "x:1"}}
    cv = _set(
        api,
        availableUpdates=[{"version": "4.14.9", "image": "example.com/ocp:4.14.9"}],
        conditionalUpdates=[risky],
    )
    assert (bypassed_risk(cv, {"version": "", "image": "x:1"}) or {}).get("status") == "False"
