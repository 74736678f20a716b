"""Kubernetes APIs removed per minor and who still uses them, for SPEC X8's preflight ("APIs
removed in the target that are still in use": the target answers them 404). Pure domain code,
no I/O: callers hand in decoded objects and metric samples; readers skip what they cannot read
(these are users' dumps) and never raise.

The table is the upstream "Deprecated API Migration Guide", kubernetes/website
`content/en/docs/reference/using-api/deprecation-guide.md` (main: sections v1.32, v1.29, v1.27,
v1.26, v1.25, v1.22, v1.16). Stored kubernetes/website copies are older (6a6fc841d44f,
02afb71016ac), so the rows were read from the mirror dancer1325/kubernetes-website at
d46ff627136bc060a79556d797193108676f849a, whose page matches main. APIRequestCount: openshift/api
`apiserver/v1/types_apirequestcount.go` at 51da05958f6873fd342358a1c234d03a88ebb9ba.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from kupgrade.errors import VersionError
from kupgrade.versions import GdcVersion, parse_kube

Minor = tuple[int, int]
Platform = Literal["openshift", "kubernetes", "gdc"]
METRIC = "apiserver_requested_deprecated_apis"
REMOVED_LABEL = "apirequestcounts.apiserver.openshift.io/removedInRelease"
_ARC_APIS = (None, ("apiserver.openshift.io", "v1"))  # APIRequestCount's apiVersion, if given
_CONDITION = ("type", "status", "reason", "message")  # what a note says of a status condition


@dataclass(frozen=True, slots=True)
class Replacement:
    api_version: str  # `group/version` to migrate to
    since: Minor | None  # the guide's "available since v1.N"; None where it gives none


@dataclass(frozen=True, slots=True, order=True)
class Removal:
    """One kind of one group/version that a Kubernetes minor stops serving."""

    removed_in: Minor
    group: str
    version: str
    kind: str
    resource: str
    replacements: tuple[Replacement, ...] = field(compare=False)  # the guide's order
    instead: str = field(default="", compare=False)  # what to use when no API replaces it

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass(frozen=True, slots=True, order=True)
class Use:
    """Someone or something that uses `group/version` `resource` (`kind`)."""

    group: str
    version: str
    resource: str  # plural; guessed from the kind for objects
    kind: str  # "" when the source names only a resource the table does not know
    source: str  # "object", "APIRequestCount" or "metric"
    who: str  # the object (Kind namespace/name), the user (agent), or the apiservers
    count: int = 1  # requests in the last 24 hours (APIRequestCount); 1 otherwise
    detail: str = ""
    notes: tuple[str, ...] = ()  # APIRequestCount status.conditions
    reported_removed_in: Minor | None = field(default=None, compare=False)  # by the source


@dataclass(frozen=True, slots=True)
class Finding:
    """A removed API still in use: a blocker of the upgrade (SPEC X8)."""

    removal: Removal
    uses: tuple[Use, ...]
    fix: str
    message: str


# release, removed group/versions, kinds, replacements in the guide's order (api@since; an
# api without a group is in the removed one's group; `-`: none, see _INSTEAD)
_GUIDE = """
1.16 extensions/v1beta1 NetworkPolicy networking.k8s.io/v1@1.8
1.16 extensions/v1beta1,apps/v1beta2 DaemonSet apps/v1@1.9
1.16 extensions/v1beta1,apps/v1beta1,apps/v1beta2 Deployment,ReplicaSet apps/v1@1.9
1.16 apps/v1beta1,apps/v1beta2 StatefulSet apps/v1@1.9
1.16 extensions/v1beta1 PodSecurityPolicy policy/v1beta1@1.10
1.22 admissionregistration.k8s.io/v1beta1 MutatingWebhookConfiguration,ValidatingWebhookConfiguration v1@1.16
1.22 apiextensions.k8s.io/v1beta1 CustomResourceDefinition v1@1.16
1.22 apiregistration.k8s.io/v1beta1 APIService v1@1.10
1.22 authentication.k8s.io/v1beta1 TokenReview v1@1.6
1.22 authorization.k8s.io/v1beta1 LocalSubjectAccessReview,SelfSubjectAccessReview,SubjectAccessReview,SelfSubjectRulesReview v1@1.6
1.22 certificates.k8s.io/v1beta1 CertificateSigningRequest v1@1.19
1.22 coordination.k8s.io/v1beta1 Lease v1@1.14
1.22 extensions/v1beta1,networking.k8s.io/v1beta1 Ingress networking.k8s.io/v1@1.19
1.22 networking.k8s.io/v1beta1 IngressClass v1@1.19
1.22 rbac.authorization.k8s.io/v1beta1 ClusterRole,ClusterRoleBinding,Role,RoleBinding v1@1.8
1.22 scheduling.k8s.io/v1beta1 PriorityClass v1@1.14
1.22 storage.k8s.io/v1beta1 CSIDriver v1@1.19
1.22 storage.k8s.io/v1beta1 CSINode v1@1.17
1.22 storage.k8s.io/v1beta1 StorageClass v1@1.6
1.22 storage.k8s.io/v1beta1 VolumeAttachment v1@1.13
1.25 batch/v1beta1 CronJob v1@1.21
1.25 discovery.k8s.io/v1beta1 EndpointSlice v1@1.21
1.25 events.k8s.io/v1beta1 Event v1@1.19
1.25 autoscaling/v2beta1 HorizontalPodAutoscaler v2@1.23
1.25 policy/v1beta1 PodDisruptionBudget v1@1.21
1.25 policy/v1beta1 PodSecurityPolicy -
1.25 node.k8s.io/v1beta1 RuntimeClass v1@1.20
1.26 flowcontrol.apiserver.k8s.io/v1beta1 FlowSchema,PriorityLevelConfiguration v1beta2
1.26 autoscaling/v2beta2 HorizontalPodAutoscaler v2@1.23
1.27 storage.k8s.io/v1beta1 CSIStorageCapacity v1@1.24
1.29 flowcontrol.apiserver.k8s.io/v1beta2 FlowSchema,PriorityLevelConfiguration v1@1.29,v1beta3@1.26
1.32 flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema,PriorityLevelConfiguration v1@1.29
"""
_INSTEAD = {"PodSecurityPolicy": "Pod Security Admission or a third-party admission webhook"}


def _plural(kind: str) -> str:  # apimachinery's UnsafeGuessKindToResource
    low = kind.lower()
    return low + "es" if low.endswith("s") else low[:-1] + "ies" if low.endswith("y") else low + "s"


def _v(minor: Minor) -> str:
    return f"v{minor[0]}.{minor[1]}"


def _table(text: str) -> tuple[Removal, ...]:
    rows = []
    for line in text.strip().splitlines():
        release, gvs, kinds, reps = line.split()
        for group, _, version in (gv.rpartition("/") for gv in gvs.split(",")):
            steps = tuple(
                Replacement(api if "/" in api else f"{group}/{api}", _release(at))
                for api, _, at in (r.partition("@") for r in reps.split(",") if r != "-")
            )
            for kind in kinds.split(","):
                instead = "" if steps else _INSTEAD[kind]
                minor = _release(release) or (0, 0)
                rows.append(Removal(minor, group, version, kind, _plural(kind), steps, instead))
    return tuple(sorted(rows))


def removed_between(current: Minor, target: Minor) -> list[Removal]:
    """Removals in releases after `current` and up to `target`: what an upgrade from
    `current` to `target` stops serving, whatever minors it passes through (SPEC X8)."""
    return [r for r in TABLE if current < r.removed_in <= target]


_MINOR_ONLY = re.compile(r"v?(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})")
# Distributed-cloud minors before 1.28 ship another Kubernetes minor (kupgrade/cluster/gdc.py).
_GDC_KUBE = {(1, 14): (1, 25), (1, 15): (1, 26), (1, 16): (1, 27)}
_OPENSHIFT_EARLY = {1: 13, 2: 14}  # 4.1 and 4.2 ran 1.13 and 1.14; from 4.3, 4.y runs 1.(y+13)


def kubernetes_minor(version: str, platform: Platform | None = None) -> Minor:
    """The Kubernetes minor a target runs, since removals are keyed by it: OpenShift `4.14.3`
    -> (1, 27), Kubernetes `v1.30.2` -> (1, 30), distributed cloud `1.29.100-gke.251` ->
    (1, 29). Without `platform`, major 4 is OpenShift, `-gke.N` distributed cloud, else
    Kubernetes; `MAJOR.MINOR` is taken too. VersionError for text of no scheme."""
    text = version.strip() if isinstance(version, str) else ""
    bare = _MINOR_ONLY.fullmatch(text)
    if bare:
        major, minor = int(bare[1]), int(bare[2])
    elif platform == "gdc" or (platform is None and "-gke." in text):
        gdc = GdcVersion.parse(text)
        major, minor, platform = gdc.major, gdc.minor, "gdc"
    else:
        parsed = parse_kube(text)
        major, minor = parsed.major, parsed.minor
    if platform == "openshift" or (platform is None and major == 4):
        if major != 4 or minor < 1:
            raise VersionError(f"{text!r} is not an OpenShift 4 version (4.MINOR.PATCH)")
        return (1, _OPENSHIFT_EARLY.get(minor, minor + 13))
    return _GDC_KUBE.get((major, minor), (major, minor)) if platform == "gdc" else (major, minor)


def _dict(value: object) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def _dicts(value: object) -> list[dict[Any, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _count(value: object) -> int:
    """A request count: a non-negative integer (bools, floats, text count nothing)."""
    return value if type(value) is int and value >= 0 else 0


def _release(value: object) -> Minor | None:
    """`1.25` (the table, removedInRelease, the metric's removed_release label)."""
    match = _MINOR_ONLY.fullmatch(value) if isinstance(value, str) else None
    return (int(match[1]), int(match[2])) if match else None


def _api(value: object) -> tuple[str, str] | None:
    """(group, version) of an apiVersion: `policy/v1beta1`, or `v1` (the core group)."""
    group, slash, version = _str(value).partition("/")
    if not slash:
        group, version = "", group
    return None if not version or "/" in version or (slash and not group) else (group, version)


def _objects(objects: object) -> Iterator[dict[Any, Any]]:
    """Each object of a dump (an object or an iterable of them), the items of `kind:
    List` and `*List` objects opened (with a stack: nesting cannot exhaust recursion)."""
    stack: list[object] = [objects]
    opened: set[int] = set()  # a YAML alias may make a list hold itself (ids: lists stay alive)
    while stack:
        current = stack.pop()
        items = _dict(current).get("items")
        if isinstance(items, list) and _str(_dict(current).get("kind")).endswith("List"):
            current = items
        if isinstance(current, dict):
            yield current
        elif isinstance(current, list | tuple | Iterator) and id(current) not in opened:
            opened.add(id(current))
            stack.extend(reversed(list(current)))


def _few(names: Iterable[str], limit: int = 10) -> str:
    ordered = sorted(set(names))
    more = len(ordered) - limit
    return ", ".join(ordered[:limit]) + (f", +{more} more" if more > 0 else "")


def uses_in_objects(objects: Iterable[object]) -> list[Use]:
    """The group/version and kind of each object of a dump (a manifest directory, or
    `kubectl get -o yaml`), named by kind and namespace/name: a manifest written against
    a removed API fails on the target (SPEC X8)."""
    uses: list[Use] = []
    for obj in _objects(objects):
        api, kind = _api(obj.get("apiVersion")), _str(obj.get("kind"))
        if api is None or not kind:
            continue
        meta = _dict(obj.get("metadata"))
        name = _str(meta.get("name")) or _str(meta.get("generateName")) or "(no name)"
        namespace = _str(meta.get("namespace"))
        who = f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
        uses.append(Use(*api, _plural(kind), kind, "object", who))
    return sorted(uses)


@dataclass
class _Tally:
    count: int = 0
    nodes: set[str] = field(default_factory=set)
    verbs: dict[str, int] = field(default_factory=dict)


def _request_count_uses(obj: dict[Any, Any]) -> list[Use]:
    meta, spec, status = (_dict(obj.get(k)) for k in ("metadata", "spec", "status"))
    parts = _str(meta.get("name")).split(".", 2)
    if len(parts) < 2 or not all(parts):
        return []
    resource, version, group = parts[0], parts[1], parts[2] if len(parts) == 3 else ""
    labels = _dict(meta.get("labels"))
    removed = _release(status.get("removedInRelease")) or _release(labels.get(REMOVED_LABEL))
    # last24h holds every hour, the current one included: currentHour duplicates it.
    hours = _dicts(status.get("last24h")) or _dicts([status.get("currentHour")])
    # Per (username, userAgent): requests, nodes, byVerb; nodes counting more than their byUser.
    users: dict[tuple[str, str], _Tally] = {}
    unnamed: set[str] = set()
    for node in (n for hour in hours for n in _dicts(hour.get("byNode"))):
        node_name, named = _str(node.get("nodeName")) or "(unknown node)", 0
        for user in _dicts(node.get("byUser")):
            if count := _count(user.get("requestCount")):
                named += count
                key = (_str(user.get("username")), _str(user.get("userAgent")))
                tally = users.setdefault(key, _Tally())
                tally.count += count
                tally.nodes.add(node_name)
                for verb in _dicts(user.get("byVerb")):
                    name = _str(verb.get("verb"))
                    tally.verbs[name] = tally.verbs.get(name, 0) + _count(verb.get("requestCount"))
        if _count(node.get("requestCount")) > named:
            unnamed.add(node_name)
    total, named = status.get("requestCount"), sum(t.count for t in users.values())
    if type(total) is not int:  # absent or not a count: what the hours and users say
        total = max(sum(_count(h.get("requestCount")) for h in hours), named)
    if _count(total) == 0:
        return []  # SPEC X8: not requested in the last 24 hours is not a use
    api = (group, version, resource, _KIND_OF.get((group, version, resource), ""))
    cond = (" ".join(_str(c.get(k)) for k in _CONDITION) for c in _dicts(status.get("conditions")))
    notes = tuple(sorted({text.strip() for text in cond} - {""}))
    uses = []
    for (username, agent), tally in users.items():
        who = (username or "(unknown user)") + (f" ({agent})" if agent else "")
        verbs = ", ".join(f"{v}={n}" for v, n in sorted(tally.verbs.items()) if v and n)
        detail = f"nodes: {_few(tally.nodes)}" + (f"; verbs: {verbs}" if verbs else "")
        uses.append(Use(*api, "APIRequestCount", who, tally.count, detail, notes, removed))
    if (others := _count(total) - named) > 0:
        top = _count(spec.get("numberOfUsersToReport")) or 10  # "unspecified or zero: ten"
        who = f"users outside the top {top} reported" if users else "users not reported by name"
        detail = f"nodes: {_few(unnamed)}" if unnamed else ""
        uses.append(Use(*api, "APIRequestCount", who, others, detail, notes, removed))
    return uses


def uses_in_request_counts(objects: Iterable[object]) -> list[Use]:
    """Who requested each API in the last 24 hours, from OpenShift `APIRequestCount`
    objects (apiserver.openshift.io/v1, named `resource.version.group`): a client still
    calling a removed API breaks on the target though no stored object uses it (SPEC X8).
    One use per user and user agent, one more for users outside the reported top."""
    uses: list[Use] = []
    for obj in _objects(objects):
        if obj.get("kind") == "APIRequestCount" and _api(obj.get("apiVersion")) in _ARC_APIS:
            uses.extend(_request_count_uses(obj))
    return sorted(uses)


def uses_in_metrics(samples: Iterable[object]) -> list[Use]:
    """APIs the apiserver saw requested, from the gauge `apiserver_requested_deprecated_apis`
    {group, version, resource, subresource, removed_release} (1: requested since the
    apiserver started): one use per API and apiserver instance (SPEC X8).

    Samples are (metric name, labels, value). The snapshot's types live in kupgrade.risks,
    above this room, so a caller converts an instant vector it evaluated:
    `[(dict(lb).get("__name__", ""), dict(lb), v) for lb, v in evaluate(METRIC, snap, t)]`.
    """
    uses: set[Use] = set()
    for sample in samples if isinstance(samples, Iterable) else ():
        if not isinstance(sample, tuple | list) or len(sample) != 3:
            continue
        name, labels, value = sample[0], _dict(sample[1]), sample[2]
        if METRIC not in (name, labels.get("__name__")) or type(value) not in (int, float):
            continue
        group, version, resource, sub, instance = (
            _str(labels.get(k)) for k in ("group", "version", "resource", "subresource", "instance")
        )
        if value > 0 and (type(value) is int or math.isfinite(value)) and version and resource:
            kind = _KIND_OF.get((group, version, resource), "")
            who = f"clients of apiserver {instance}" if instance else "clients of the apiserver"
            removed = _release(labels.get("removed_release"))
            detail = f"subresource {sub}" if sub else ""
            uses.add(Use(group, version, resource, kind, "metric", who, 1, detail, (), removed))
    return sorted(uses)


def _fix(removal: Removal, removed: dict[tuple[str, str], Removal], current: Minor | None) -> str:
    """Migrate to an API the target serves: replacements the upgrade removes too are
    followed (flowcontrol v1beta1 -> v1beta2 -> v1). With `current`, one served now is
    preferred: the migration must happen before the upgrade. Else what to use instead."""
    finals: list[Replacement] = []
    queue, expanded, instead = list(removal.replacements), set(), removal.instead
    while queue:
        step = queue.pop(0)
        then = removed.get((step.api_version, removal.kind))
        if then is None:
            finals.append(step)
        elif step.api_version not in expanded:
            expanded.add(step.api_version)
            queue.extend(then.replacements)
            instead = instead or then.instead
    served = [f for f in finals if current is None or f.since is None or f.since <= current]
    if not finals:
        return f"migrate to {instead or 'a supported API'} ({removal.kind} has no replacement API)"
    step = (served or finals)[0]
    since = f" (available since {_v(step.since)})" if step.since else ""
    if not served and current is not None:  # the cluster must first reach a minor serving it
        since += f"; {_v(current)} does not serve it: upgrade in steps, migrating on the way"
    return f"migrate to {step.api_version}{since}"


def findings(
    removals: Iterable[Removal], uses: Iterable[Use], *, current: Minor | None = None
) -> list[Finding]:
    """Each removed API in use, with its users, the release that removes it and the fix
    (SPEC X8: a blocker names its objects and what to do). A use matches a removal of its
    group/version by kind, or by resource when its source names no kind (requests,
    metrics). `current` (the cluster's minor now) prefers a replacement it serves already.
    Sorted by release and API, each finding's uses sorted."""
    ordered = sorted(set(removals))
    removed = {(r.api_version, r.kind): r for r in ordered}
    by_api: dict[tuple[str, str], set[Use]] = {}
    for use in uses:
        by_api.setdefault((use.group, use.version), set()).add(use)
    out = []
    for r in ordered:
        near = by_api.get((r.group, r.version), set())
        users = sorted(
            u for u in near if (u.kind or u.resource) == (r.kind if u.kind else r.resource)
        )
        if users:
            whom = _few((u.who for u in users), 5)
            message = f"{r.api_version} {r.kind} is removed in {_v(r.removed_in)}, used by {whom}"
            out.append(Finding(r, tuple(users), _fix(r, removed, current), message))
    return out


TABLE = _table(_GUIDE)
_KIND_OF = {(r.group, r.version, r.resource): r.kind for r in TABLE}
