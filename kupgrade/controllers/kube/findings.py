"""The skew rules' first finding on a cluster whose nodes change one at a time.

Before each change the Kubernetes controller asks: would the cluster, with this change
made, break a skew rule, and which rule first? `check(inventory(api, change))` answers
by reading every node. A node-by-node rollout asks once per node, so a cluster of N
nodes paid N x N. This answers the same question from what changed since it last asked:

- the control plane (a handful of static pods) is read and checked whole, every time;
- each node's findings are kept, for the apiservers and rules they were found under,
  with the nodes that have any; a node the watch reports as changed is read again;
- the node of a kubelet change is judged at its new version, the others as kept.

`check` lists the control plane's violations first, then the nodes' in inventory
order, one list per node with nothing shared between nodes: so the first finding is
the control plane's first, or else the first node's (in that order) that has any.
"""

from __future__ import annotations

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.kubeadm import is_control_plane, kubelet_of, proxy_of
from kupgrade.controllers.kube.inventory import plane_of
from kupgrade.skew.k8s import NodeMemo, NodeRules, check, resolve_policy
from kupgrade.skew.verdict import Violation

Versions = tuple[str, str, bool]  # kubelet, kube-proxy, control plane


class LiveFindings:
    """One controller's kept findings (SPEC H1, H3, H6 before each change: X1), told by
    `changed` what the controller's Node watch reported and asked by `first`."""

    def __init__(self, api: Backend) -> None:
        self.api = api
        self.memo = NodeMemo()
        self.nodes: dict[str, Versions] | None = None  # in the order the API lists them
        self.order: dict[str, int] = {}
        self.stale: set[str] = set()  # changed since their findings were kept
        self.bad: dict[str, Violation] = {}  # node -> its first finding, when it has any

    def changed(self, names: list[str]) -> None:
        """Nodes the watch reports as changed (added, gone or modified)."""
        self.stale.update(names)

    def first(self, change: tuple[str, str, str], policy: str) -> Violation | None:
        """What `check(inventory(api, change), policy)` would list first, or None."""
        nodes = self._nodes()
        planes = (name for name, (_, _, plane) in nodes.items() if plane)
        plane = plane_of(self.api, planes, change)
        rules = resolve_policy(policy, plane)
        found = check(plane, rules)
        if found:
            return found[0]
        found_under = self.memo.context
        judge = NodeRules(plane, rules, self.memo)
        if self.memo.context != found_under:  # other apiservers or rules: judge all anew
            self.bad, self.stale = {}, set(nodes)
        for name in self.stale:
            self._judge(judge, name, *nodes[name][:2])
        self.stale = set()
        bad = dict(self.bad)
        if change[0] == "kubelet" and change[1] in nodes:
            bad.pop(change[1], None)
            moved = judge.findings(change[1], change[2], change[2])
            if moved:
                bad[change[1]] = moved[0]
        if not bad:
            return None
        return bad[min(bad, key=self.order.__getitem__)]

    def _judge(self, judge: NodeRules, name: str, kubelet: str, proxy: str) -> None:
        findings = judge.findings(name, kubelet, proxy)
        if findings:
            self.bad[name] = findings[0]
        else:
            self.bad.pop(name, None)

    def _nodes(self) -> dict[str, Versions]:
        """Every node's versions, read again where stale; all of them when one was added
        or is gone (the order then changes)."""
        if self.nodes is not None:
            for name in self.stale:
                node = self.api.get("Node", name)
                if node is None or name not in self.nodes:
                    self.nodes = None
                    break
                self.nodes[name] = (kubelet_of(node), proxy_of(node), is_control_plane(node))
        if self.nodes is None:
            listed = self.api.list("Node")
            self.nodes = {
                n["metadata"]["name"]: (kubelet_of(n), proxy_of(n), is_control_plane(n))
                for n in listed
            }
            self.order = {name: i for i, name in enumerate(self.nodes)}
            self.bad, self.stale = {}, set(self.nodes)  # every node judged anew
        return self.nodes
