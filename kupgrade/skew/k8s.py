"""Kubernetes version-skew rules (SPEC H1-H6) in both of their eras.

`k8s-n2` is the seed's text: kubelet and kube-proxy at most two minors behind the
apiservers, kube-proxy on its kubelet's minor. `k8s-n3` is upstream since 1.28: three
minors, except for components older than 1.25, which keep two. Only minors are compared
(patch skew is never restricted), and high availability narrows every range: a
component must satisfy its rule against every apiserver it may reach.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from kupgrade.errors import InputError
from kupgrade.skew.inventory import Instance, Inventory
from kupgrade.skew.verdict import Violation
from kupgrade.versions import SemVer, parse_kube

POLICIES = ("k8s-n2", "k8s-n3", "auto")
KUBEADM = re.compile(r"kubeadm-v?\d+\.\d+(\.\d+)?")


def resolve_policy(policy: str, inventory: Inventory) -> str:
    """`auto`: the n2 text while the newest apiserver is at 1.27 or older, n3 after.

    `kubeadm-X.Y[.Z]` clusters follow the same upstream rules; kubeadm's own policies
    apply to control-plane steps on top (kupgrade.skew.kubeadm).
    """
    if policy.startswith("kubeadm-") and KUBEADM.fullmatch(policy):
        policy = "auto"
    if policy not in POLICIES:
        raise InputError(
            f"unknown skew policy {policy!r}",
            field="--policy",
            hint="k8s-n2, k8s-n3, auto or kubeadm-X.Y[.Z] (the kubeadm in use)",
        )
    if policy != "auto":
        return policy
    newest = max((parse_kube(a.version) for a in inventory.apiservers), default=None)
    return "k8s-n2" if newest is not None and (newest.major, newest.minor) <= (1, 27) else "k8s-n3"


def older_limit(policy: str, version: SemVer) -> int:
    """How many minors a kubelet or kube-proxy may trail an apiserver (SPEC H3, H6)."""
    if policy == "k8s-n2" or (version.major, version.minor) < (1, 25):
        return 2
    return 3


def minor(v: SemVer) -> str:
    return f"{v.major}.{v.minor}"


class NodeMemo:
    """Each node's findings under one set of apiservers and rules, kept between checks.

    A node's findings depend only on its kubelet and kube-proxy, the apiservers and the
    rules. The Kubernetes controller asks before each node's change, one node after
    another (controllers/kube/findings.py): with this memo only the nodes that changed
    are judged again. The memo keeps one context (apiservers and rules) at a time."""

    def __init__(self) -> None:
        self.context: tuple[object, ...] = ()
        self.found: dict[tuple[str, str | None, str | None], list[Violation]] = {}

    def use(self, context: tuple[object, ...]) -> None:
        if context != self.context:
            self.context, self.found = context, {}


class _Checker:
    def __init__(self, inventory: Inventory, policy: str, memo: NodeMemo | None = None) -> None:
        self.inv = inventory
        self.policy = policy
        self.apis = {a.name: parse_kube(a.version) for a in inventory.apiservers}
        first = inventory.apiservers[0] if inventory.apiservers else None
        self.major = parse_kube(first.version).major if first else None
        self.memo = memo
        if memo is not None:
            memo.use((policy, *((a.name, a.version) for a in inventory.apiservers)))

    def reachable(self, talks_to: list[str] | None) -> list[tuple[str, SemVer]]:
        names = talks_to if talks_to is not None else list(self.apis)
        return [(n, self.apis[n]) for n in names if self.apis[n].major == self.major]

    def wrong_major(self, obj: str, version: SemVer) -> Violation | None:
        if self.major is None or version.major == self.major:
            return None
        return Violation(
            "H1.major",
            obj,
            f"{obj} runs {version}, major {version.major}, but the apiservers run major {self.major}",
            f"run {obj} on a {self.major}.x release; skew rules only hold within one major",
        )

    def all(self) -> Iterator[Violation]:
        yield from self.apiservers()
        for component, instance in self.inv.controllers():
            yield from self.controller(component, instance)
        for node in self.inv.nodes:
            yield from self._node(node.name, node.kubelet, node.kube_proxy)
        for client in self.inv.kubectl:
            yield from self.kubectl(client)

    def apiservers(self) -> Iterator[Violation]:
        for name, version in self.apis.items():
            wrong = self.wrong_major(f"kube-apiserver/{name}", version)
            if wrong:
                yield wrong
        same = [v for v in self.apis.values() if v.major == self.major]
        if same and max(same).minor - min(same).minor > 1:
            yield Violation(
                "H2",
                "kube-apiserver",
                f"kube-apiserver instances span {minor(min(same))} to {minor(max(same))}, "
                "more than one minor",
                f"bring every kube-apiserver to {minor(max(same))} (or back within one minor "
                "of it) before anything else moves",
            )

    def _against(
        self,
        obj: str,
        version: SemVer,
        *,
        talks_to: list[str] | None,
        behind: Callable[[int], int],
        ahead: int,
        ids: tuple[str, str],
        what: str,
    ) -> Iterator[Violation]:
        """`ids` = (too new, too old) for `version` against every reachable apiserver;
        `behind(minor)` is how far a component at that minor may trail."""
        reach = self.reachable(talks_to)
        newer = [(n, v) for n, v in reach if version.minor - v.minor > ahead]
        older = [(n, v) for n, v in reach if v.minor - version.minor > behind(version.minor)]
        if newer:
            n, v = min(newer, key=lambda item: item[1])
            yield Violation(
                ids[0],
                obj,
                f"{obj} at {minor(version)} is newer than kube-apiserver/{n} at {minor(v)}"
                + (f" (more than {ahead} minor ahead)" if ahead else ""),
                f"upgrade the apiservers first, or keep {what} at {minor(v)} or older",
            )
        if older:
            n, v = max(older, key=lambda item: item[1])
            lowest = next(m for m in range(version.minor, v.minor + 1) if v.minor - m <= behind(m))
            yield Violation(
                ids[1],
                obj,
                f"{obj} at {minor(version)} is {v.minor - version.minor} minors behind "
                f"kube-apiserver/{n} at {minor(v)}; at most {behind(version.minor)} allowed",
                f"upgrade {what} to {v.major}.{lowest} or newer",
            )

    def _limit(self, version: SemVer) -> Callable[[int], int]:
        """How far a kubelet or kube-proxy at a given minor of this major may trail."""
        return lambda m: older_limit(self.policy, SemVer(version.major, m, 0))

    def controller(self, component: str, instance: Instance) -> Iterator[Violation]:
        """H4: not newer than any apiserver it reaches, at most one minor behind."""
        yield from self._instance(component, instance, ahead=0, ids=("H4.newer", "H4.older"))

    def kubectl(self, client: Instance) -> Iterator[Violation]:
        """H5: within one minor of every apiserver, either side."""
        yield from self._instance("kubectl", client, ahead=1, ids=("H5", "H5"))

    def _instance(
        self, component: str, instance: Instance, *, ahead: int, ids: tuple[str, str]
    ) -> Iterator[Violation]:
        obj = f"{component}/{instance.name}"
        version = parse_kube(instance.version)
        wrong = self.wrong_major(obj, version)
        if wrong:
            yield wrong
            return
        yield from self._against(
            obj,
            version,
            talks_to=instance.talks_to,
            behind=lambda _: 1,
            ahead=ahead,
            ids=ids,
            what=component,
        )

    def _node(self, name: str, kubelet: str | None, proxy: str | None) -> Iterable[Violation]:
        """The node's findings, from the memo when this node was seen as it is now."""
        if self.memo is None:
            return self.node(name, kubelet, proxy)
        key = (name, kubelet, proxy)
        found = self.memo.found.get(key)
        if found is None:
            found = self.memo.found[key] = list(self.node(name, kubelet, proxy))
        return found

    def node(self, name: str, kubelet: str | None, proxy: str | None) -> Iterator[Violation]:
        kv = parse_kube(kubelet) if kubelet else None
        pv = parse_kube(proxy) if proxy else None
        if kv is not None:
            wrong = self.wrong_major(f"node/{name}", kv)
            if wrong:
                yield wrong
                kv = None
            else:
                yield from self._against(
                    f"node/{name}",
                    kv,
                    talks_to=None,
                    behind=self._limit(kv),
                    ahead=0,
                    ids=("H3.newer", "H3.older"),
                    what="the kubelet",
                )
        if pv is not None:
            obj = f"kube-proxy/{name}"
            wrong = self.wrong_major(obj, pv)
            if wrong:
                yield wrong
                return
            yield from self._against(
                obj,
                pv,
                talks_to=None,
                behind=self._limit(pv),
                ahead=0,
                ids=("H6.proxy-newer", "H6.proxy-older"),
                what="kube-proxy",
            )
            if kv is not None:
                yield from self.proxy_kubelet(obj, pv, kv)

    def proxy_kubelet(self, obj: str, proxy: SemVer, kubelet: SemVer) -> Iterator[Violation]:
        apart = abs(proxy.minor - kubelet.minor)
        allowed = 0 if self.policy == "k8s-n2" else older_limit(self.policy, proxy)
        if apart > allowed:
            yield Violation(
                "H6.proxy-kubelet",
                obj,
                f"{obj} at {minor(proxy)} and its kubelet at {minor(kubelet)} are {apart} "
                f"minors apart; {self.policy} allows {allowed}",
                f"move kube-proxy to the kubelet's minor {minor(kubelet)}"
                if allowed == 0
                else f"bring kube-proxy within {allowed} minors of the kubelet",
            )


class NodeRules:
    """The node rules (H1 for nodes, H3, H6) under one control plane and one resolved
    policy, through a memo: what `check` finds for a node, asked one node at a time."""

    def __init__(self, plane: Inventory, rules: str, memo: NodeMemo) -> None:
        self._checker = _Checker(plane, rules, memo)

    def findings(self, name: str, kubelet: str | None, proxy: str | None) -> list[Violation]:
        return list(self._checker._node(name, kubelet, proxy))


def check(inventory: Inventory, policy: str) -> list[Violation]:
    """Every violation of the rule set, one per (rule, object), in inventory order."""
    rules = resolve_policy(policy, inventory)
    seen: set[tuple[str, str]] = set()
    out = []
    for violation in _Checker(inventory, rules).all():
        if (violation.id, violation.object) not in seen:
            seen.add((violation.id, violation.object))
            out.append(violation)
    return out
