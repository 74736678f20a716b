"""`kubeadm upgrade plan`'s printer and document (kupgrade.views.kubeadm_plan) against
kubeadm's own goldens.

Origin of the test data below (the upgrades, the component config states and every
expected text, transcribed word for word as data): kubernetes/kubernetes,
cmd/kubeadm/app/cmd/upgrade/plan_test.go, TestPrintUpgradePlan (formerly
TestPrintAvailableUpgrades; all its cases: "Patch version available", "minor version
available", "patch and minor version available", "experimental version available",
"release candidate available", "multiple kubelet versions") and
TestPrintUpgradePlanStructured (its JSON and text cases). Copyright The Kubernetes
Authors, licensed under the Apache License, Version 2.0
(http://www.apache.org/licenses/LICENSE-2.0).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kupgrade.errors import InputError
from kupgrade.views.kubeadm_plan import (
    ClusterState,
    ConfigVersion,
    Upgrade,
    render_configs,
    render_plan,
    upgrade_plan,
)

VERSION_STATES = [
    ConfigVersion("kubeproxy.config.k8s.io", "v1alpha1", "v1alpha1", False),
    ConfigVersion("kubelet.config.k8s.io", "v1beta1", "v1beta1", False),
]


def _before(
    kube: str, kubelets: dict[str, list[str]], etcd: str, kubeadm: str, dns: str
) -> ClusterState:
    """An upstream case's Before: every static pod on node1 at `kube`."""
    return ClusterState(
        kube_version=kube,
        apiservers={kube: ["node1"]},
        controller_managers={kube: ["node1"]},
        schedulers={kube: ["node1"]},
        kubelets=kubelets,
        etcds={etcd: ["node1"]},
        kubeadm_version=kubeadm,
        dns_version=dns,
    )


def _after(kube: str, kubeadm: str, dns: str, etcd: str) -> ClusterState:
    return ClusterState(
        kube_version=kube, kubeadm_version=kubeadm, dns_version=dns, etcd_version=etcd
    )


PATCH = Upgrade(
    "version in the v1.18 series",
    _before("v1.18.1", {"v1.18.1": ["node1"]}, "3.4.3-0", "v1.18.1", "1.6.7"),
    _after("v1.18.4", "v1.18.4", "1.6.7", "3.4.3-0"),
)
PATCH_TEXT = """Components that must be upgraded manually after you have upgraded the control plane with 'kubeadm upgrade apply':
COMPONENT   NODE      CURRENT   TARGET
kubelet     node1     v1.18.1   v1.18.4

Upgrade to the latest version in the v1.18 series:

COMPONENT                 NODE      CURRENT   TARGET
kube-apiserver            node1     v1.18.1   v1.18.4
kube-controller-manager   node1     v1.18.1   v1.18.4
kube-scheduler            node1     v1.18.1   v1.18.4
kube-proxy                          v1.18.1   v1.18.4
CoreDNS                             1.6.7     1.6.7
etcd                      node1     3.4.3-0   3.4.3-0

You can now apply the upgrade by executing the following command:

\tkubeadm upgrade apply v1.18.4

Note: Before you can perform this upgrade, you have to update kubeadm to v1.18.4.

_____________________________________________________________________


The table below shows the current state of component configs as understood by this version of kubeadm.
Configs that have a "yes" mark in the "MANUAL UPGRADE REQUIRED" column require manual config upgrade or
resetting to kubeadm defaults before a successful upgrade can be performed. The version to manually
upgrade to is denoted in the "PREFERRED VERSION" column.

API GROUP                 CURRENT VERSION   PREFERRED VERSION   MANUAL UPGRADE REQUIRED
kubeproxy.config.k8s.io   v1alpha1          v1alpha1            no
kubelet.config.k8s.io     v1beta1           v1beta1             no
_____________________________________________________________________

"""

MINOR = Upgrade(
    "stable version",
    _before("v1.18.4", {"v1.18.4": ["node1"]}, "3.4.3-0", "v1.18.4", "1.6.7"),
    _after("v1.19.0", "v1.19.0", "1.7.0", "3.4.7-0"),
)
MINOR_TEXT = """Components that must be upgraded manually after you have upgraded the control plane with 'kubeadm upgrade apply':
COMPONENT   NODE      CURRENT   TARGET
kubelet     node1     v1.18.4   v1.19.0

Upgrade to the latest stable version:

COMPONENT                 NODE      CURRENT   TARGET
kube-apiserver            node1     v1.18.4   v1.19.0
kube-controller-manager   node1     v1.18.4   v1.19.0
kube-scheduler            node1     v1.18.4   v1.19.0
kube-proxy                          v1.18.4   v1.19.0
CoreDNS                             1.6.7     1.7.0
etcd                      node1     3.4.3-0   3.4.7-0

You can now apply the upgrade by executing the following command:

\tkubeadm upgrade apply v1.19.0

Note: Before you can perform this upgrade, you have to update kubeadm to v1.19.0.

_____________________________________________________________________


The table below shows the current state of component configs as understood by this version of kubeadm.
Configs that have a "yes" mark in the "MANUAL UPGRADE REQUIRED" column require manual config upgrade or
resetting to kubeadm defaults before a successful upgrade can be performed. The version to manually
upgrade to is denoted in the "PREFERRED VERSION" column.

API GROUP                 CURRENT VERSION   PREFERRED VERSION   MANUAL UPGRADE REQUIRED
kubeproxy.config.k8s.io   v1alpha1          v1alpha1            no
kubelet.config.k8s.io     v1beta1           v1beta1             no
_____________________________________________________________________

"""

PATCH_AND_MINOR = [
    Upgrade(
        "version in the v1.18 series",
        _before("v1.18.3", {"v1.18.3": ["node1"]}, "3.4.3-0", "v1.18.3", "1.6.7"),
        _after("v1.18.5", "v1.18.3", "1.6.7", "3.4.3-0"),
    ),
    Upgrade(
        "stable version",
        _before("v1.18.3", {"v1.18.3": ["node1"]}, "3.4.3-0", "v1.18.3", "1.6.7"),
        _after("v1.19.0", "v1.19.0", "1.7.0", "3.4.7-0"),
    ),
]
PATCH_AND_MINOR_TEXT = """Components that must be upgraded manually after you have upgraded the control plane with 'kubeadm upgrade apply':
COMPONENT   NODE      CURRENT   TARGET
kubelet     node1     v1.18.3   v1.18.5

Upgrade to the latest version in the v1.18 series:

COMPONENT                 NODE      CURRENT   TARGET
kube-apiserver            node1     v1.18.3   v1.18.5
kube-controller-manager   node1     v1.18.3   v1.18.5
kube-scheduler            node1     v1.18.3   v1.18.5
kube-proxy                          v1.18.3   v1.18.5
CoreDNS                             1.6.7     1.6.7
etcd                      node1     3.4.3-0   3.4.3-0

You can now apply the upgrade by executing the following command:

\tkubeadm upgrade apply v1.18.5

_____________________________________________________________________

Components that must be upgraded manually after you have upgraded the control plane with 'kubeadm upgrade apply':
COMPONENT   NODE      CURRENT   TARGET
kubelet     node1     v1.18.3   v1.19.0

Upgrade to the latest stable version:

COMPONENT                 NODE      CURRENT   TARGET
kube-apiserver            node1     v1.18.3   v1.19.0
kube-controller-manager   node1     v1.18.3   v1.19.0
kube-scheduler            node1     v1.18.3   v1.19.0
kube-proxy                          v1.18.3   v1.19.0
CoreDNS                             1.6.7     1.7.0
etcd                      node1     3.4.3-0   3.4.7-0

You can now apply the upgrade by executing the following command:

\tkubeadm upgrade apply v1.19.0

Note: Before you can perform this upgrade, you have to update kubeadm to v1.19.0.

_____________________________________________________________________


The table below shows the current state of component configs as understood by this version of kubeadm.
Configs that have a "yes" mark in the "MANUAL UPGRADE REQUIRED" column require manual config upgrade or
resetting to kubeadm defaults before a successful upgrade can be performed. The version to manually
upgrade to is denoted in the "PREFERRED VERSION" column.

API GROUP                 CURRENT VERSION   PREFERRED VERSION   MANUAL UPGRADE REQUIRED
kubeproxy.config.k8s.io   v1alpha1          v1alpha1            no
kubelet.config.k8s.io     v1beta1           v1beta1             no
_____________________________________________________________________

"""

EXPERIMENTAL = Upgrade(
    "experimental version",
    _before("v1.18.5", {"v1.18.5": ["node1"]}, "3.4.3-0", "v1.18.5", "1.6.7"),
    _after("v1.19.0-beta.1", "v1.19.0-beta.1", "1.7.0", "3.4.7-0"),
)
EXPERIMENTAL_TEXT = """Components that must be upgraded manually after you have upgraded the control plane with 'kubeadm upgrade apply':
COMPONENT   NODE      CURRENT   TARGET
kubelet     node1     v1.18.5   v1.19.0-beta.1

Upgrade to the latest experimental version:

COMPONENT                 NODE      CURRENT   TARGET
kube-apiserver            node1     v1.18.5   v1.19.0-beta.1
kube-controller-manager   node1     v1.18.5   v1.19.0-beta.1
kube-scheduler            node1     v1.18.5   v1.19.0-beta.1
kube-proxy                          v1.18.5   v1.19.0-beta.1
CoreDNS                             1.6.7     1.7.0
etcd                      node1     3.4.3-0   3.4.7-0

You can now apply the upgrade by executing the following command:

\tkubeadm upgrade apply v1.19.0-beta.1 --allow-experimental-upgrades

Note: Before you can perform this upgrade, you have to update kubeadm to v1.19.0-beta.1.

_____________________________________________________________________


The table below shows the current state of component configs as understood by this version of kubeadm.
Configs that have a "yes" mark in the "MANUAL UPGRADE REQUIRED" column require manual config upgrade or
resetting to kubeadm defaults before a successful upgrade can be performed. The version to manually
upgrade to is denoted in the "PREFERRED VERSION" column.

API GROUP                 CURRENT VERSION   PREFERRED VERSION   MANUAL UPGRADE REQUIRED
kubeproxy.config.k8s.io   v1alpha1          v1alpha1            no
kubelet.config.k8s.io     v1beta1           v1beta1             no
_____________________________________________________________________

"""

RC = Upgrade(
    "release candidate version",
    _before("v1.18.5", {"v1.18.5": ["node1"]}, "3.4.3-0", "v1.18.5", "1.6.7"),
    _after("v1.19.0-rc.1", "v1.19.0-rc.1", "1.7.0", "3.4.7-0"),
)
RC_TEXT = """Components that must be upgraded manually after you have upgraded the control plane with 'kubeadm upgrade apply':
COMPONENT   NODE      CURRENT   TARGET
kubelet     node1     v1.18.5   v1.19.0-rc.1

Upgrade to the latest release candidate version:

COMPONENT                 NODE      CURRENT   TARGET
kube-apiserver            node1     v1.18.5   v1.19.0-rc.1
kube-controller-manager   node1     v1.18.5   v1.19.0-rc.1
kube-scheduler            node1     v1.18.5   v1.19.0-rc.1
kube-proxy                          v1.18.5   v1.19.0-rc.1
CoreDNS                             1.6.7     1.7.0
etcd                      node1     3.4.3-0   3.4.7-0

You can now apply the upgrade by executing the following command:

\tkubeadm upgrade apply v1.19.0-rc.1 --allow-release-candidate-upgrades

Note: Before you can perform this upgrade, you have to update kubeadm to v1.19.0-rc.1.

_____________________________________________________________________


The table below shows the current state of component configs as understood by this version of kubeadm.
Configs that have a "yes" mark in the "MANUAL UPGRADE REQUIRED" column require manual config upgrade or
resetting to kubeadm defaults before a successful upgrade can be performed. The version to manually
upgrade to is denoted in the "PREFERRED VERSION" column.

API GROUP                 CURRENT VERSION   PREFERRED VERSION   MANUAL UPGRADE REQUIRED
kubeproxy.config.k8s.io   v1alpha1          v1alpha1            no
kubelet.config.k8s.io     v1beta1           v1beta1             no
_____________________________________________________________________

"""

KUBELETS = Upgrade(
    "version in the v1.19 series",
    _before(
        "v1.19.2",
        {"v1.19.2": ["node1"], "v1.19.3": ["node2", "node3"]},
        "3.4.7-0",
        "v1.19.2",
        "1.7.0",
    ),
    _after("v1.19.3", "v1.19.3", "1.7.0", "3.4.7-0"),
)
KUBELETS_TEXT = """Components that must be upgraded manually after you have upgraded the control plane with 'kubeadm upgrade apply':
COMPONENT   NODE      CURRENT   TARGET
kubelet     node1     v1.19.2   v1.19.3
kubelet     node2     v1.19.3   v1.19.3
kubelet     node3     v1.19.3   v1.19.3

Upgrade to the latest version in the v1.19 series:

COMPONENT                 NODE      CURRENT   TARGET
kube-apiserver            node1     v1.19.2   v1.19.3
kube-controller-manager   node1     v1.19.2   v1.19.3
kube-scheduler            node1     v1.19.2   v1.19.3
kube-proxy                          v1.19.2   v1.19.3
CoreDNS                             1.7.0     1.7.0
etcd                      node1     3.4.7-0   3.4.7-0

You can now apply the upgrade by executing the following command:

\tkubeadm upgrade apply v1.19.3

Note: Before you can perform this upgrade, you have to update kubeadm to v1.19.3.

_____________________________________________________________________


The table below shows the current state of component configs as understood by this version of kubeadm.
Configs that have a "yes" mark in the "MANUAL UPGRADE REQUIRED" column require manual config upgrade or
resetting to kubeadm defaults before a successful upgrade can be performed. The version to manually
upgrade to is denoted in the "PREFERRED VERSION" column.

API GROUP                 CURRENT VERSION   PREFERRED VERSION   MANUAL UPGRADE REQUIRED
kubeproxy.config.k8s.io   v1alpha1          v1alpha1            no
kubelet.config.k8s.io     v1beta1           v1beta1             no
_____________________________________________________________________

"""

CASES = {
    "Patch version available": ([PATCH], PATCH_TEXT),
    "minor version available": ([MINOR], MINOR_TEXT),
    "patch and minor version available": (PATCH_AND_MINOR, PATCH_AND_MINOR_TEXT),
    "experimental version available": ([EXPERIMENTAL], EXPERIMENTAL_TEXT),
    "release candidate available": ([RC], RC_TEXT),
    "multiple kubelet versions": ([KUBELETS], KUBELETS_TEXT),
}


@pytest.mark.parametrize("name", list(CASES))
def test_print_upgrade_plan_goldens(name: str) -> None:
    upgrades, expected = CASES[name]
    assert render_plan(upgrade_plan(upgrades, VERSION_STATES)) == expected


# TestPrintUpgradePlanStructured: one upgrade, printed as JSON and as text.
STRUCTURED = Upgrade(
    "version in the v1.8 series",
    _before("v1.8.1", {"v1.8.1": ["node1"]}, "3.0.17", "v1.8.2", "1.14.5"),
    _after("v1.8.3", "v1.8.3", "1.14.5", "3.0.17"),
)
STRUCTURED_JSON = """{
    "kind": "UpgradePlan",
    "apiVersion": "output.kubeadm.k8s.io/v1alpha3",
    "availableUpgrades": [
        {
            "description": "version in the v1.8 series",
            "components": [
                {
                    "name": "kubelet",
                    "currentVersion": "v1.8.1",
                    "newVersion": "v1.8.3",
                    "nodeName": "node1"
                },
                {
                    "name": "kube-apiserver",
                    "currentVersion": "v1.8.1",
                    "newVersion": "v1.8.3",
                    "nodeName": "node1"
                },
                {
                    "name": "kube-controller-manager",
                    "currentVersion": "v1.8.1",
                    "newVersion": "v1.8.3",
                    "nodeName": "node1"
                },
                {
                    "name": "kube-scheduler",
                    "currentVersion": "v1.8.1",
                    "newVersion": "v1.8.3",
                    "nodeName": "node1"
                },
                {
                    "name": "kube-proxy",
                    "currentVersion": "v1.8.1",
                    "newVersion": "v1.8.3"
                },
                {
                    "name": "CoreDNS",
                    "currentVersion": "1.14.5",
                    "newVersion": "1.14.5"
                },
                {
                    "name": "kubeadm",
                    "currentVersion": "v1.8.2",
                    "newVersion": "v1.8.3"
                },
                {
                    "name": "etcd",
                    "currentVersion": "3.0.17",
                    "newVersion": "3.0.17",
                    "nodeName": "node1"
                }
            ]
        }
    ],
    "configVersions": [
        {
            "group": "kubeproxy.config.k8s.io",
            "currentVersion": "v1alpha1",
            "preferredVersion": "v1alpha1",
            "manualUpgradeRequired": false
        },
        {
            "group": "kubelet.config.k8s.io",
            "currentVersion": "v1beta1",
            "preferredVersion": "v1beta1",
            "manualUpgradeRequired": false
        }
    ]
}
"""
STRUCTURED_TEXT = """Components that must be upgraded manually after you have upgraded the control plane with 'kubeadm upgrade apply':
COMPONENT   NODE      CURRENT   TARGET
kubelet     node1     v1.8.1    v1.8.3

Upgrade to the latest version in the v1.8 series:

COMPONENT                 NODE      CURRENT   TARGET
kube-apiserver            node1     v1.8.1    v1.8.3
kube-controller-manager   node1     v1.8.1    v1.8.3
kube-scheduler            node1     v1.8.1    v1.8.3
kube-proxy                          v1.8.1    v1.8.3
CoreDNS                             1.14.5    1.14.5
etcd                      node1     3.0.17    3.0.17

You can now apply the upgrade by executing the following command:

\tkubeadm upgrade apply v1.8.3

Note: Before you can perform this upgrade, you have to update kubeadm to v1.8.3.

_____________________________________________________________________


The table below shows the current state of component configs as understood by this version of kubeadm.
Configs that have a "yes" mark in the "MANUAL UPGRADE REQUIRED" column require manual config upgrade or
resetting to kubeadm defaults before a successful upgrade can be performed. The version to manually
upgrade to is denoted in the "PREFERRED VERSION" column.

API GROUP                 CURRENT VERSION   PREFERRED VERSION   MANUAL UPGRADE REQUIRED
kubeproxy.config.k8s.io   v1alpha1          v1alpha1            no
kubelet.config.k8s.io     v1beta1           v1beta1             no
_____________________________________________________________________

"""


def test_structured_json_is_kubeadms_document() -> None:
    """The same document, field for field and in kubeadm's order (4-space indent there)."""
    doc = upgrade_plan([STRUCTURED], VERSION_STATES)
    assert json.dumps(doc, indent=4) + "\n" == STRUCTURED_JSON
    assert list(doc) == list(json.loads(STRUCTURED_JSON))


def test_structured_text() -> None:
    assert render_plan(upgrade_plan([STRUCTURED], VERSION_STATES)) == STRUCTURED_TEXT


# --- branches the goldens do not reach (plan.go, read for each) ---------------------------


def _same_kubelets_plan(**after: Any) -> dict[str, Any]:
    up = Upgrade(
        "version in the v1.30 series",
        _before("v1.30.4", {"v1.30.9": ["n1"]}, "3.5.12-0", "v1.30.9", ""),
        _after("v1.30.9", "v1.30.9", **after),
    )
    return upgrade_plan([up], [])


def test_no_kubelet_to_upgrade_leaves_the_table_header_and_no_note() -> None:
    """CanUpgradeKubelets false (the one kubelet version is the target): the manual table
    is only its header; kubeadm already new enough: no note; no configs: kubeadm's line."""
    text = render_plan(_same_kubelets_plan(dns="v1.11.3", etcd="3.5.15-0"))
    lines = text.splitlines()
    assert lines[1] == "COMPONENT   NODE      CURRENT   TARGET" and lines[2] == ""
    assert "Note:" not in text
    # empty NODE and CURRENT cells keep their columns (26, 10, then 11 for "3.5.12-0")
    assert "CoreDNS" + " " * 40 + "v1.11.3\n" in text
    assert text.endswith(SEPARATOR_LINE + "\n\nNo information available on component configs.\n")


SEPARATOR_LINE = "_____________________________________________________________________"


def test_unknown_kubelets_and_dns_are_left_out() -> None:
    up = Upgrade(
        "stable version",
        ClusterState(kube_version="1.30.4", apiservers={"v1.30.4": ["cp"]}),
        ClusterState(kube_version="v1.31.2", etcd_version=""),
    )
    names = [c["name"] for c in upgrade_plan([up], [])["availableUpgrades"][0]["components"]]
    assert names == ["kube-apiserver", "kube-proxy"]  # no kubelets, DNS, kubeadm nor etcd


def test_config_states_dash_and_yes() -> None:
    configs = [
        ConfigVersion("kubeproxy.config.k8s.io", "", "v1alpha1"),
        ConfigVersion("kubelet.config.k8s.io", "v1alpha9", "v1beta1", True),
    ]
    table = render_configs([c.to_json() for c in configs]).splitlines()
    assert table[-4:] == [
        "kubeproxy.config.k8s.io   -                 v1alpha1            no",
        "kubelet.config.k8s.io     v1alpha9          v1beta1             yes",
        SEPARATOR_LINE,
        "",
    ]


def test_a_plan_without_an_apiserver_target_is_refused_in_one_line() -> None:
    plan = {"availableUpgrades": [{"description": "x", "components": []}], "configVersions": []}
    with pytest.raises(InputError, match="Unable to parse normalized version"):
        render_plan(plan)
