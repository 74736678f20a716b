"""Is one upgrade step allowed? (SPEC H6, H7)

A step is judged by its own rules (no minor skipped by an apiserver, nothing ahead of
the apiservers it talks to, no in-place minor kubelet upgrade) and by the state it
leaves: a violation the state after has and the state before had not is blamed on the
step, while one that was already there is not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from kupgrade.errors import InputError, VersionError
from kupgrade.skew.inventory import Instance, Inventory
from kupgrade.skew.k8s import check, minor, resolve_policy
from kupgrade.skew.kubeadm import FIXES, Finding, Upgrade, enforce, kubeadm_version, kubelet_skew_of
from kupgrade.skew.verdict import Verdict, Violation
from kupgrade.versions import SemVer, parse_kube

CONTROLLERS = ("kube-controller-manager", "kube-scheduler", "cloud-controller-manager")
COMPONENTS = ("kube-apiserver", *CONTROLLERS, "kubelet", "kube-proxy", "kubectl")


@dataclass(frozen=True)
class Step:
    component: str
    instances: list[str]
    to: str
    drained: bool = False
    available: list[str] = field(default_factory=list)


def _instances(inv: Inventory, component: str) -> dict[str, str | None]:
    """name -> current version of the instances of `component`."""
    if component == "kube-apiserver":
        return {a.name: a.version for a in inv.apiservers}
    if component in CONTROLLERS:
        return {i.name: i.version for c, i in inv.controllers() if c == component}
    if component == "kubectl":
        return {i.name: i.version for i in inv.kubectl}
    if component == "kubelet":
        return {n.name: n.kubelet for n in inv.nodes}
    if component == "kube-proxy":
        return {n.name: n.kube_proxy for n in inv.nodes}
    raise InputError(f"unknown component {component!r}", field="--step", hint=", ".join(COMPONENTS))


def apply_step(inv: Inventory, step: Step) -> Inventory:
    """The inventory after the step's instances run `step.to`."""
    chosen = set(step.instances)

    def moved(items: list[Instance], component: str) -> list[Instance]:
        return [
            msgspec.structs.replace(i, version=step.to)
            if i.name in chosen and component == step.component
            else i
            for i in items
        ]

    nodes = [
        msgspec.structs.replace(
            n,
            kubelet=step.to if step.component == "kubelet" else n.kubelet,
            kube_proxy=step.to if step.component == "kube-proxy" else n.kube_proxy,
        )
        if n.name in chosen
        else n
        for n in inv.nodes
    ]
    return msgspec.structs.replace(
        inv,
        apiservers=moved(inv.apiservers, "kube-apiserver"),
        kube_controller_manager=moved(inv.kube_controller_manager, "kube-controller-manager"),
        kube_scheduler=moved(inv.kube_scheduler, "kube-scheduler"),
        cloud_controller_manager=moved(inv.cloud_controller_manager, "cloud-controller-manager"),
        kubectl=moved(inv.kubectl, "kubectl"),
        nodes=nodes,
    )


def _talks_to(inv: Inventory, component: str, name: str) -> list[str] | None:
    for c, i in inv.controllers():
        if c == component and i.name == name:
            return i.talks_to
    return None


def _own_rules(inv: Inventory, step: Step, current: dict[str, str | None]) -> list[Violation]:
    """What the step itself breaks, whatever state it leaves (SPEC H6)."""
    to = parse_kube(step.to)
    out: list[Violation] = []
    apis = {a.name: parse_kube(a.version) for a in inv.apiservers}
    for name in step.instances:
        text = current[name]
        before = parse_kube(text) if text else None
        obj = f"node/{name}" if step.component == "kubelet" else f"{step.component}/{name}"
        if step.component == "kube-apiserver":
            if before is not None and to.minor - before.minor > 1:
                out.append(
                    Violation(
                        "H6.no-minor-skip",
                        f"kube-apiserver/{name}",
                        f"kube-apiserver/{name} would go from {minor(before)} to {minor(to)}, skipping a minor",
                        f"upgrade to {before.major}.{before.minor + 1} first",
                    )
                )
            continue
        if step.component in (*CONTROLLERS, "kubelet", "kube-proxy"):
            reach = _talks_to(inv, step.component, name)
            names = reach if reach is not None else list(apis)
            behind = [n for n in names if to.minor > apis[n].minor]
            if behind:
                out.append(
                    Violation(
                        "H6.order",
                        obj,
                        f"{obj} would move to {minor(to)} before kube-apiserver/{behind[0]} "
                        f"(at {minor(apis[behind[0]])})",
                        f"upgrade every kube-apiserver it talks to to {minor(to)} first",
                    )
                )
        in_place = step.component == "kubelet" and not step.drained
        if in_place and before is not None and (before.major, before.minor) != (to.major, to.minor):
            out.append(
                Violation(
                    "H6.drain-before-minor",
                    f"node/{name}",
                    f"the kubelet on node/{name} would change minor ({minor(before)} to "
                    f"{minor(to)}) in place",
                    f"drain node/{name} first (kubectl drain {name}); patch upgrades may stay in place",
                )
            )
    return out


def _warnings(inv: Inventory, after: Inventory, step: Step, policy: str) -> list[Violation]:
    """What is allowed but worth a second look (SPEC H6, H7)."""
    if step.component != "kube-apiserver":
        return []
    to = parse_kube(step.to)
    out: list[Violation] = []
    olds = [parse_kube(a.version) for a in inv.apiservers if a.name in step.instances]
    minor_step = any((o.major, o.minor) != (to.major, to.minor) for o in olds)
    if not minor_step:
        return []
    if not inv.webhooks_cover_new_versions:
        out.append(
            Violation(
                "H6.webhooks",
                "kube-apiserver",
                f"admission webhooks are not known to handle the API versions of {minor(to)}",
                "make sure every admission webhook covers the new versions before the upgrade",
            )
        )
    if policy == "k8s-n3":
        for node in after.nodes:
            if node.kubelet and to.minor - parse_kube(node.kubelet).minor == 3:
                out.append(
                    Violation(
                        "H6.kubelet-prereq",
                        f"node/{node.name}",
                        f"node/{node.name}'s kubelet would be 3 minors behind {minor(to)}: allowed by "
                        "the skew rule, but the upgrade prerequisite asks for kubelets at N-1 or N-2",
                        f"upgrade node/{node.name}'s kubelet first",
                    )
                )
                break
    if step.available:
        out.extend(_latest_patch(olds, to, step.available))
    return out


def _latest_patch(olds: list[SemVer], to: SemVer, available: list[str]) -> list[Violation]:
    """SPEC H7: leave from the newest patch of the current minor, land on the newest one."""
    versions = [parse_kube(v) for v in available]

    def latest(of: SemVer) -> SemVer | None:
        same = [v for v in versions if (v.major, v.minor) == (of.major, of.minor)]
        return max(same) if same else None

    ends = [latest(o) for o in olds] + [latest(to)]
    if all(e is None or e == v for e, v in zip(ends, [*olds, to], strict=True)):
        return []
    target = latest(to) or to
    return [
        Violation(
            "H7.latest-patch-first",
            "kube-apiserver",
            f"the minor upgrade to {to} does not go from the newest patch of the current "
            f"minor to the newest patch ({target}) of the next",
            f"update to the latest patch first ({', '.join(str(latest(o) or o) for o in olds)}), "
            f"then to {target}",
        )
    ]


def _kubeadm(inv: Inventory, step: Step, policy: str) -> tuple[list[Violation], list[Violation]]:
    """`kubeadm upgrade apply` on this control plane: (mandatory, skippable) findings."""
    to = parse_kube(step.to)
    version = kubeadm_version(policy, to)
    cluster = max(inv.apiservers, key=lambda a: parse_kube(a.version)).version
    found = enforce(
        Upgrade(
            cluster=_v(cluster),
            kubelets=[_v(n.kubelet) for n in inv.nodes if n.kubelet],
            kubeadm=version,
            new=_v(step.to),
            kubelet_skew=kubelet_skew_of(parse_kube(version)),
            min_control_plane=f"v{to.major}.{parse_kube(version).minor - 1}.0",
        )
    )

    def as_violation(f: Finding) -> Violation:
        return Violation(f.id, "kube-apiserver", f.message, FIXES.get(f.id, ""))

    return [as_violation(f) for f in found.mandatory], [as_violation(f) for f in found.skippable]


def _v(text: str) -> str:
    return text if text.startswith("v") else f"v{text}"


def judge(inventory: Inventory, step: Step, policy: str, force: bool = False) -> Verdict:
    """The step's verdict with every rule and warning it earns (README section 1).

    Under `kubeadm-X.Y` an apiserver step also meets kubeadm's policies: mandatory ones
    refuse it, skippable ones too unless `force` (then they are warnings).
    """
    rules = resolve_policy(policy, inventory)
    current = _instances(inventory, step.component)
    if not current:
        # Nothing would move: "allowed" would judge a step the cluster cannot take.
        raise InputError(
            f"the inventory lists no {step.component}, so the step moves nothing",
            field="--step",
            hint="name a component the inventory lists, or add its instances to the file",
        )
    for name in step.instances:
        if name not in current:
            raise InputError(
                f"{step.component} has no instance {name!r}",
                field="--step",
                hint="instances: " + ", ".join(current) if current else None,
            )
    try:
        parse_kube(step.to)
    except VersionError as exc:
        raise InputError(exc.message, field="--step") from None
    after = apply_step(inventory, step)
    before = {(v.id, v.object) for v in check(inventory, rules)}
    blamed = [v for v in check(after, rules) if (v.id, v.object) not in before]
    own = _own_rules(inventory, step, current)
    warned = _warnings(inventory, after, step, rules)
    if policy.startswith("kubeadm-") and step.component == "kube-apiserver":
        mandatory, skippable = _kubeadm(inventory, step, policy)
        own += mandatory + ([] if force else skippable)
        warned += skippable if force else []
    refused = own + blamed
    return Verdict(
        sorted({v.id for v in refused}), sorted({v.id for v in warned}), refused + warned
    )


def parse_step(
    text: str, inventory: Inventory, *, drained: bool = False, available: list[str] | None = None
) -> Step:
    """`COMPONENT[/NAME[,NAME]] -> VERSION`; `node/NAME` is that node's kubelet; without
    names the step moves every instance of the component."""
    target, arrow, version = text.partition("->")
    if not arrow or not target.strip() or not version.strip():
        raise InputError(
            f"{text!r} is not a step", field="--step", hint="write 'kube-apiserver/a1 -> 1.30.4'"
        )
    component, _, names = target.strip().partition("/")
    if component == "node":
        component = "kubelet"
    instances = [n.strip() for n in names.split(",") if n.strip()] or [
        name for name, current in _instances(inventory, component).items() if current
    ]
    return Step(component, instances, version.strip(), drained, list(available or []))
