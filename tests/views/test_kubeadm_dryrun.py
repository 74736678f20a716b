"""`upgrade --to V --dry-run` as a view (kupgrade.views.kubeadm_dryrun): kubeadm's
skippable findings stop a step unless --force, and what kubeadm would skip is left out."""

from __future__ import annotations

from kupgrade.cluster.fake import MemoryBackend
from kupgrade.cluster.kubeadm import STATIC, kube_node, static_pod
from kupgrade.views.kubeadm_dryrun import DryRunAsk, dry_run

T = "2024-01-01T00:00:00Z"


def _cluster() -> MemoryBackend:
    objects = [kube_node("cp", "control-plane", "control-plane", "1.31.0", created=T)]
    objects += [static_pod(c, "cp", "1.31.0", T) for c in (*STATIC, "etcd")]
    objects.append(kube_node("w", "worker", "worker", "1.31.0", created=T))
    return MemoryBackend(objects)


def test_an_older_kubeadm_patch_stops_the_step_unless_forced() -> None:
    """P7: the target's patch is past kubeadm's own; skippable, so --force passes it."""
    ask = DryRunAsk(to="v1.31.2", kubeadm="v1.31.0")
    stopped = dry_run(_cluster(), ask)
    assert stopped.blocked is not None and stopped.blocked.startswith(
        f"{stopped.steps[0].id}: kubeadm P7: "
    )
    assert stopped.changes == [] and stopped.lines()[-2].startswith("[dryrun] The upgrade would")
    forced = dry_run(_cluster(), DryRunAsk(to="v1.31.2", kubeadm="v1.31.0", force=True))
    assert forced.blocked is None
    assert [n.split(": ")[1] for n in forced.notes] == ["kubeadm P7 passed with --force"]
    doc = forced.to_json()
    assert doc["kubeadmVersion"] == "v1.31.0" and doc["dryRun"] is True
    manifests = [c["name"] for c in doc["changes"] if c["kind"] == "StaticPod"]
    # same minor: etcd stays (kubeadm skips an etcd that is not newer)
    assert manifests == [f"/etc/kubernetes/manifests/{c}.yaml" for c in STATIC]
    nodes = [c["node"] for c in doc["changes"] if c["kind"] == "Kubelet"]
    assert nodes == ["cp", "w"]
