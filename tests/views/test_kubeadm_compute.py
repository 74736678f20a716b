"""Which upgrades kubeadm offers (kupgrade.views.kubeadm_compute, a port of
cmd/kubeadm/app/phases/upgrade/compute.go, versiongetter.go and util/version.go) on
clusters held in memory, and the simulated dl.k8s.io labels it reads."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kupgrade.cluster.fake import MemoryBackend
from kupgrade.cluster.kubeadm import ETCD, kube_node, static_pod
from kupgrade.cluster.objects import workload_owner
from kupgrade.versions import SemVer, parse_kube
from kupgrade.views.kubeadm_compute import (
    LabelError,
    Releases,
    available_upgrades,
    config_versions,
    default_kubeadm,
    etcd_for,
    image_tag,
    release_version,
)
from kupgrade.views.kubeadm_plan import upgrade_plan

T = "2024-01-01T00:00:00Z"


def _cluster(
    apiservers: dict[str, str], *, etcd: bool = True, extra: list[dict[str, Any]] | None = None
) -> MemoryBackend:
    """Control-plane nodes named as `apiservers` says, each running its version."""
    objects = []
    for node, version in apiservers.items():
        objects.append(kube_node(node, "control-plane", "control-plane", version, created=T))
        for component in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
            objects.append(static_pod(component, node, version, T))
        if etcd:
            objects.append(static_pod("etcd", node, version, T))
    return MemoryBackend([*objects, *(extra or [])])


def test_different_apiservers_are_warned_of_and_the_newest_is_the_cluster() -> None:
    api = _cluster({"cp-0": "1.30.4", "cp-1": "1.31.0"})
    found = available_upgrades(api, Releases.of(["v1.31.2"]), "v1.31.2", False, False)
    (warning,) = found.warnings
    assert warning.startswith("Different API server versions in the cluster were discovered: ")
    assert "v1.30.4 on nodes [cp-0], v1.31.0 on nodes [cp-1]" in warning
    assert "[upgrade/versions] Cluster version: 1.31.0" in found.said
    (patch,) = found.upgrades
    assert patch.description == "version in the v1.31 series"
    assert patch.before.apiservers == {"v1.30.4": ["cp-0"], "v1.31.0": ["cp-1"]}
    assert patch.can_upgrade_kubelets()  # two kubelet versions


def test_external_etcd_has_no_etcd_rows_and_dns_comes_from_its_deployment() -> None:
    dns = workload_owner(
        "Deployment", "coredns", "kube-system", 2, created=T, labels={"k8s-app": "kube-dns"}
    )
    dns["spec"]["template"]["spec"]["containers"] = [
        {"name": "coredns", "image": "registry.k8s.io/coredns/coredns:v1.11.1"}
    ]
    api = _cluster({"cp-0": "1.30.4"}, etcd=False, extra=[dns])
    found = available_upgrades(api, Releases.of(["v1.31.2"]), "v1.31.2", False, False)
    (stable,) = found.upgrades  # no v1.30 release: the patch label warns, the stable stays
    assert any("stable-1.30" in w for w in found.warnings)
    assert stable.after.etcd_version == "" and stable.before.dns_version == "v1.11.1"
    components = upgrade_plan(found.upgrades, [])["availableUpgrades"][0]["components"]
    assert "etcd" not in [c["name"] for c in components]
    assert {"name": "CoreDNS", "currentVersion": "v1.11.1", "newVersion": "v1.11.3"} in components


def test_config_maps_kubeadm_reads() -> None:
    proxy = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kube-proxy", "namespace": "kube-system"},
        "data": {
            "config.conf": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
        },
    }
    kubelet = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kubelet-config", "namespace": "kube-system"},
        "data": {
            "kubelet": "kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1alpha9\n"
        },
    }
    states = config_versions(MemoryBackend([proxy, kubelet]))
    assert [s.to_json() for s in states] == [
        {
            "group": "kubeproxy.config.k8s.io",
            "currentVersion": "v1alpha1",
            "preferredVersion": "v1alpha1",
            "manualUpgradeRequired": False,
        },
        {
            "group": "kubelet.config.k8s.io",
            "currentVersion": "v1alpha9",
            "preferredVersion": "v1beta1",
            "manualUpgradeRequired": True,
        },
    ]


def test_the_default_kubeadm_is_one_minor_ahead_at_most() -> None:
    api = _cluster({"cp-0": "1.30.4"})
    releases = Releases.of(["v1.30.9", "v1.31.2", "v1.32.1", "v1.31.3-rc.0"])
    assert default_kubeadm(api, releases) == "v1.31.2"
    assert default_kubeadm(api, Releases.of([])) == "v1.30.4"


def test_etcd_falls_back_to_the_nearest_minor() -> None:
    assert etcd_for("v1.20.0") == ETCD[min(ETCD)]
    assert etcd_for("v1.99.0") == ETCD[max(ETCD)]
    assert etcd_for("v1.31.2") == ETCD[31]


# --- properties of the parsers ----------------------------------------------------------

versions = st.builds(
    SemVer,
    st.just(1),
    st.integers(25, 35),
    st.integers(0, 12),
    st.sampled_from([(), ("rc", "1"), ("alpha", "0"), ("beta", "2")]),
)


@given(st.lists(versions, max_size=12), st.integers(25, 35))
def test_labels_answer_as_dl_k8s_io_does(found: list[SemVer], minor: int) -> None:
    releases = Releases.of([f"v{r}" for r in found])
    stable = [r for r in found if not r.pre]
    assert releases.label("stable") == (max(stable) if stable else None)
    assert releases.label("latest") == (max(found) if found else None)
    of_minor = [r for r in found if r.minor == minor]
    assert releases.label(f"latest-1.{minor}") == (max(of_minor) if of_minor else None)
    stable_minor = [r for r in of_minor if not r.pre]
    assert releases.label(f"stable-1.{minor}") == (max(stable_minor) if stable_minor else None)


@given(st.lists(versions, max_size=12), versions, st.sampled_from(["stable", "latest"]))
def test_a_label_never_resolves_past_kubeadms_minor(
    found: list[SemVer], kubeadm: SemVer, label: str
) -> None:
    try:
        got = release_version(Releases.of([f"v{r}" for r in found]), label, "x", kubeadm)
    except LabelError as exc:
        assert str(exc).startswith("Couldn't fetch latest x from the internet")
        return
    assert got.minor <= kubeadm.minor and got in found


@given(
    st.sampled_from(["registry.k8s.io", "localhost:5000/k8s", "quay.io/a/b"]),
    st.from_regex(r"[a-z][a-z-]{0,10}", fullmatch=True),
    st.from_regex(r"v?[0-9]\.[0-9]{1,2}\.[0-9]{1,2}(-[0-9])?", fullmatch=True),
    st.booleans(),
)
def test_image_tags_are_read_as_kubeadm_reads_them(
    registry: str, name: str, tag: str, digest: bool
) -> None:
    image = f"{registry}/{name}:{tag}" + ("@sha256:" + "a" * 64 if digest else "")
    assert image_tag(image) == tag
    assert image_tag(f"{registry}/{name}") == ""
    assert image_tag(f"{registry}/{name}:v1.30.0_build.1") == "v1.30.0+build.1"
    assert parse_kube(image_tag(f"{registry}/{name}:v1.30.0_b")).build == ("b",)
