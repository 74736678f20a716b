"""What a Kubernetes cluster runs, as a user writes it down: every kube-apiserver instance,
the controllers and which apiservers they reach, each node's kubelet and kube-proxy, the
kubectl clients in use. The skew rules (SPEC H) are checked against this."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from kupgrade import intake
from kupgrade.errors import InputError, VersionError
from kupgrade.versions import SemVer, parse_kube


class _Base(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    pass


class Instance(_Base):
    name: str
    version: str
    talks_to: list[str] | None = None  # apiserver names; None: any of them (SPEC H2)


class InventoryNode(_Base):
    name: str
    kubelet: str | None = None
    kube_proxy: str | None = None
    drained: bool = False


class Inventory(_Base):
    apiservers: list[Instance] = msgspec.field(default_factory=list)
    kube_controller_manager: list[Instance] = msgspec.field(
        default_factory=list, name="kube-controller-manager"
    )
    kube_scheduler: list[Instance] = msgspec.field(default_factory=list, name="kube-scheduler")
    cloud_controller_manager: list[Instance] = msgspec.field(
        default_factory=list, name="cloud-controller-manager"
    )
    nodes: list[InventoryNode] = msgspec.field(default_factory=list)
    kubectl: list[Instance] = msgspec.field(default_factory=list)
    webhooks_cover_new_versions: bool = True

    def controllers(self) -> list[tuple[str, Instance]]:
        """(component, instance) for the components that follow H4."""
        return [
            *(("kube-controller-manager", i) for i in self.kube_controller_manager),
            *(("kube-scheduler", i) for i in self.kube_scheduler),
            *(("cloud-controller-manager", i) for i in self.cloud_controller_manager),
        ]


def parse_inventory(data: Any, where: str) -> Inventory:
    """Check the shape, every version and every apiserver a component names."""
    try:
        inventory = msgspec.convert(data or {}, Inventory)
    except msgspec.ValidationError as exc:
        text = str(exc)
        hint = (
            "quote versions in YAML ('1.30' is a number)"
            if "float" in text
            else "components: apiservers, kube-controller-manager, kube-scheduler, "
            "cloud-controller-manager, nodes (name, kubelet, kube_proxy), kubectl"
            if "unknown field" in text
            else None
        )
        raise InputError(str(exc), file=where, hint=hint) from None
    names = {a.name for a in inventory.apiservers}
    fields = [("apiservers", a) for a in inventory.apiservers]
    fields += [(c, i) for c, i in inventory.controllers()]
    fields += [("kubectl", i) for i in inventory.kubectl]
    for field, instance in fields:
        kube_field(instance.version, f"{field}[{instance.name}].version", where)
        for target in instance.talks_to or []:
            if target not in names:
                raise InputError(
                    f"{instance.name} talks to apiserver {target!r}, which the inventory does not list",
                    file=where,
                    field=f"{field}[{instance.name}].talks_to",
                    rule="SPEC H2",
                )
    for node in inventory.nodes:
        for field, value in (("kubelet", node.kubelet), ("kube_proxy", node.kube_proxy)):
            if value is not None:
                kube_field(value, f"nodes[{node.name}].{field}", where)
    return inventory


def with_apiservers(inventory: Inventory, where: str, field: str = "apiservers") -> Inventory:
    """The inventory, refused when it lists no kube-apiserver.

    Every rule measures a component against the apiservers (SPEC H2-H5), and a plan starts
    from their version: without one nothing is checked or planned, and "no violations"
    would pass an empty or mistaken file, or a cluster whose version the API server does
    not say."""
    if not inventory.apiservers:
        raise InputError(
            "the inventory lists no kube-apiserver, so there is nothing to check against",
            file=where,
            field=field,
            hint="`kupgrade skew reference inventory` shows the file format",
        )
    return inventory


def kube_field(text: str, field: str, file: str | None = None) -> SemVer:
    """`parse_kube`, with a user's mistake named by where it was written."""
    try:
        return parse_kube(str(text))
    except VersionError as exc:
        raise InputError(exc.message, file=file, field=field) from None


def read_yaml(path: Path, what: str) -> Any:
    """A YAML file read through the intake guards (UTF-8, size, depth, aliases, duplicates)."""
    return intake.load_yaml(intake.read_file(path, what), str(path))
