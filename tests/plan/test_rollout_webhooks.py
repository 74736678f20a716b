"""What Cluster API's webhooks refuse in a rollout strategy, branch by branch (cluster-api
internal/webhooks/machinedeployment.go validateRolloutStrategy and
controlplane/kubeadm/internal/webhooks/kubeadmcontrolplane.go validateRolloutStrategy and
validateVersion)."""

from __future__ import annotations

from typing import Any

import pytest

from kupgrade.plan.engines import rollout

NOT_PERCENT = "invalid value for IntOrString: invalid type: string is not a percentage"


@pytest.mark.parametrize(
    ("settings", "invalid"),
    [
        (
            {"replicas": 3, "maxSurge": 0, "maxUnavailable": 0},
            "maxUnavailable and maxSurge cannot both be 0",
        ),
        (
            {"replicas": 3, "maxSurge": "50 percent"},
            f"maxSurge: must be either an int or a percentage: {NOT_PERCENT}",
        ),
        (
            {"replicas": 3, "maxUnavailable": "x%"},
            "maxUnavailable: must be either an int or a percentage: invalid value for IntOrString: "
            'invalid value "x%": strconv.Atoi: parsing "x": invalid syntax',
        ),
        (
            {"replicas": 3, "maxSurge": "0%", "maxUnavailable": "0%"},
            None,
        ),  # percentages: mdutil's 1
    ],
)
def test_machine_deployment_strategy(settings: dict[str, Any], invalid: str | None) -> None:
    got = rollout("capi-machinedeployment", settings)
    assert got.get("invalid") == invalid
    if invalid is None:
        assert got["unavailable"] == 1


@pytest.mark.parametrize(
    ("settings", "invalid"),
    [
        ({"replicas": 3, "maxSurge": 2}, "value must be 1 or 0"),
        (
            {"replicas": 1, "maxSurge": "50%"},
            "when KubeadmControlPlane is configured to scale-in, replica count needs to be at least 3",
        ),
        ({"maxSurge": 0}, None),  # no replicas given: nothing to compare
        ({"replicas": 3, "maxSurge": 1, "type": "OnDelete"}, "only RollingUpdate is supported"),
        (
            {"from": "v1.30.5", "to": "v1.32.0-rc.1"},
            "cannot update Kubernetes version from v1.30.5 to v1.32.0-rc.1",
        ),
        ({"from": "v1.30.5", "to": "v1.29.0"}, None),  # downgrades are not this check's business
        ({"from": "v1.30", "to": "v1.31.9"}, None),  # parsed tolerantly
        (
            {"from": "v1.30.5", "to": "v2.0.0"},
            "cannot update Kubernetes version from v1.30.5 to v2.0.0",
        ),
        (
            {"from": "v1.30.5", "to": "latest"},
            'failed to parse updated kubeadmcontrolplane version: latest: Invalid character(s) found in version "latest"',
        ),
    ],
)
def test_kubeadm_control_plane_webhook(settings: dict[str, Any], invalid: str | None) -> None:
    got = rollout("capi-kcp", settings)
    assert got.get("invalid") == invalid
    assert got.get("valid") is (True if invalid is None else None)
