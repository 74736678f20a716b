"""What the simulated API server refuses before anything is stored, in kube-apiserver's
words: the object's metadata (names, labels, annotations) as apimachinery validates it
(staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go and
pkg/util/validation/validation.go), and the spec fields the simulator's controllers read
(kubernetes pkg/apis/core/validation for nodes, pkg/apis/apps/validation for replicas,
pkg/apis/policy/validation/validation.go ValidatePodDisruptionBudgetSpec for budgets,
machine-config's int-or-percent maxUnavailable).

A refused write is answered 422 Invalid with one cause per field (metav1.StatusCause, as
apimachinery's errors.NewInvalid builds it) and nothing is kept: a budget whose
minAvailable is "abc" must never reach the store the controllers read (SPEC X6: kubectl
sees and drives a rehearsal as it would a real cluster).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kupgrade.cluster.objects import key_of

INT32 = 2**31 - 1
MAX_ANNOTATIONS = 256 * 1024  # TotalAnnotationSizeLimitB
NAME_MAX = 63
SUBDOMAIN_MAX = 253
QUALIFIED = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
LABEL_VALUE = r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
PERCENT = r"[0-9]+%"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
REASONS = {  # metav1.CauseType of each field.ErrorType
    "Invalid value": "FieldValueInvalid",
    "Required value": "FieldValueRequired",
    "Unsupported value": "FieldValueNotSupported",
    "Too long": "FieldValueTooLong",
}


@dataclass(frozen=True)
class FieldError:
    """apimachinery's field.Error: a path, what is wrong with it, the value, the detail."""

    field: str
    type: str  # "Invalid value", "Required value", "Unsupported value", "Too long"
    value: Any
    detail: str = ""

    def body(self) -> str:
        """field.Error.ErrorBody(): the type, the bad value (strings quoted as Go's %q,
        omitted for required and too long), then the detail."""
        text = self.type
        if self.type not in ("Required value", "Too long"):
            text += f": {_shown(self.value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def cause(self) -> dict[str, str]:
        return {"reason": REASONS[self.type], "message": self.body(), "field": self.field}

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def invalid_message(kind: str, group: str, name: str, errors: list[FieldError]) -> str:
    """errors.NewInvalid's message: `Kind.group "name" is invalid: ...` (several errors as
    apimachinery's aggregate, in brackets)."""
    qualified = f"{kind}.{group}" if group else kind
    text = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(map(str, errors)) + "]"
    return f'{qualified} "{name}" is invalid: {text}'


def validate(kind: str, obj: dict[str, Any]) -> list[FieldError]:
    """Every reason kube-apiserver would refuse `obj` as a `kind` (none: it is valid)."""
    errors = list(_metadata(obj.get("metadata")))
    check = SPECS.get(kind)
    spec = obj.get("spec")
    if check is not None and spec is not None:
        if isinstance(spec, dict):
            errors.extend(check(spec))
        else:
            errors.append(FieldError("spec", "Invalid value", spec, "must be an object"))
    return errors


def stored_problems(objects: Iterable[dict[str, Any]], shown: int = 3) -> str:
    """One line naming the stored objects the API would refuse now (a store an older
    kupgrade wrote, before writes were validated), or "" when there are none."""
    found = []
    for obj in objects:
        errors = validate(str(obj.get("kind", "")), obj)
        if errors:
            found.append(f"{key_of(obj)}: {errors[0]}")
    if not found:
        return ""
    more = f" (and {len(found) - shown} more)" if len(found) > shown else ""
    return f"{len(found)} stored object(s) are not valid: " + "; ".join(found[:shown]) + more


# --- metadata -------------------------------------------------------------------------


def _metadata(meta: Any) -> Iterator[FieldError]:
    if not isinstance(meta, dict):
        yield FieldError("metadata", "Required value", None)
        return
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        yield FieldError(
            "metadata.name", "Required value", None, "name or generateName is required"
        )
    else:
        yield from _subdomain("metadata.name", name)
    yield from _labels(meta.get("labels"))
    yield from _annotations(meta.get("annotations"))


def _subdomain(path: str, value: str) -> Iterator[FieldError]:
    """IsDNS1123Subdomain's messages."""
    if len(value) > SUBDOMAIN_MAX:
        yield FieldError(
            path, "Invalid value", value, f"must be no more than {SUBDOMAIN_MAX} characters"
        )
    if not re.fullmatch(SUBDOMAIN, value):
        yield FieldError(
            path,
            "Invalid value",
            value,
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character (e.g. "
            f"'example.com', regex used for validation is '{SUBDOMAIN}')",
        )


def _labels(labels: Any) -> Iterator[FieldError]:
    """ValidateLabels: qualified-name keys, values of at most 63 characters of the label
    alphabet."""
    if labels is None:
        return
    if not isinstance(labels, dict):
        yield FieldError("metadata.labels", "Invalid value", labels, "must be a map of strings")
        return
    for key, value in labels.items():
        yield from _qualified_name("metadata.labels", str(key))
        if not isinstance(value, str):
            yield FieldError("metadata.labels", "Invalid value", value, "must be a string")
        elif len(value) > NAME_MAX or not re.fullmatch(LABEL_VALUE, value):
            yield FieldError(
                "metadata.labels",
                "Invalid value",
                value,
                f"a valid label must be an empty string or consist of alphanumeric characters, "
                f"'-', '_' or '.', and must start and end with an alphanumeric character and "
                f"be no more than {NAME_MAX} characters (regex used for validation is "
                f"'{LABEL_VALUE}')",
            )


def _qualified_name(path: str, key: str) -> Iterator[FieldError]:
    """IsQualifiedName: an optional DNS-subdomain prefix and a name of at most 63."""
    prefix, _, name = key.rpartition("/")
    if "/" in prefix:
        name = ""  # two slashes: no valid split
    if prefix and (len(prefix) > SUBDOMAIN_MAX or not re.fullmatch(SUBDOMAIN, prefix)):
        yield FieldError(
            path, "Invalid value", key, "prefix part must be a lowercase RFC 1123 subdomain"
        )
    if not name or len(name) > NAME_MAX or not re.fullmatch(QUALIFIED, name):
        yield FieldError(
            path,
            "Invalid value",
            key,
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character, and be no more than "
            f"{NAME_MAX} characters (regex used for validation is '{QUALIFIED}')",
        )


def _annotations(annotations: Any) -> Iterator[FieldError]:
    if annotations is None:
        return
    if not isinstance(annotations, dict) or not all(
        isinstance(v, str) for v in annotations.values()
    ):
        yield FieldError(
            "metadata.annotations", "Invalid value", annotations, "must be a map of strings"
        )
        return
    size = sum(len(str(k)) + len(v) for k, v in annotations.items())
    if size > MAX_ANNOTATIONS:
        yield FieldError(
            "metadata.annotations", "Too long", size, f"must have at most {MAX_ANNOTATIONS} bytes"
        )


# --- the spec fields the controllers read ---------------------------------------------


def _whole(path: str, value: Any, *, low: int = 0) -> Iterator[FieldError]:
    """An int32 of at least `low` (ValidateNonnegativeField's words)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()))
    ):
        yield FieldError(path, "Invalid value", value, "must be an integer")
    elif value > INT32:
        yield FieldError(path, "Invalid value", value, f"must be less than or equal to {INT32}")
    elif value < low:
        yield FieldError(path, "Invalid value", value, f"must be greater than or equal to {low}")


def int_or_percent(path: str, value: Any) -> Iterator[FieldError]:
    """ValidatePositiveIntOrPercent and IsNotMoreThan100Percent."""
    if isinstance(value, str):
        if not re.fullmatch(PERCENT, value):
            yield FieldError(
                path,
                "Invalid value",
                value,
                "a valid percent string must be a numeric string followed by an ending '%' "
                f"(e.g. '1%',  or '93%', regex used for validation is '{PERCENT}')",
            )
        elif int(value[:-1]) > 100:
            yield FieldError(path, "Invalid value", value, "must not be greater than 100%")
    else:
        yield from _whole(path, value)


def _flag(path: str, value: Any) -> Iterator[FieldError]:
    if value is not None and not isinstance(value, bool):
        yield FieldError(path, "Invalid value", value, "must be a boolean")


def _budget(spec: dict[str, Any]) -> Iterator[FieldError]:
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    if low is not None and high is not None:
        yield FieldError(
            "spec", "Invalid value", "", "minAvailable and maxUnavailable cannot be both set"
        )
    if low is not None:
        yield from int_or_percent("spec.minAvailable", low)
    if high is not None:
        yield from int_or_percent("spec.maxUnavailable", high)


def _node(spec: dict[str, Any]) -> Iterator[FieldError]:
    yield from _flag("spec.unschedulable", spec.get("unschedulable"))
    taints = spec.get("taints")
    if taints is None:
        return
    if not isinstance(taints, list):
        yield FieldError("spec.taints", "Invalid value", taints, "must be a list")
        return
    for i, taint in enumerate(taints):
        path = f"spec.taints[{i}]"
        if not isinstance(taint, dict) or not taint.get("key"):
            yield FieldError(f"{path}.key", "Required value", None)
            continue
        yield from _qualified_name(f"{path}.key", str(taint["key"]))
        if taint.get("effect") not in TAINT_EFFECTS:
            yield FieldError(
                f"{path}.effect",
                "Unsupported value",
                taint.get("effect"),
                "supported values: " + ", ".join(f'"{e}"' for e in TAINT_EFFECTS),
            )


def _replicas(spec: dict[str, Any]) -> Iterator[FieldError]:
    if spec.get("replicas") is not None:
        yield from _whole("spec.replicas", spec["replicas"])


def _pool(spec: dict[str, Any]) -> Iterator[FieldError]:
    yield from _flag("spec.paused", spec.get("paused"))
    if spec.get("maxUnavailable") is not None:
        yield from int_or_percent("spec.maxUnavailable", spec["maxUnavailable"])


def _lease(spec: dict[str, Any]) -> Iterator[FieldError]:
    """ValidateLeaseSpec (pkg/apis/coordination/validation): a duration above 0, a count
    of transitions not below it."""
    duration, moves = spec.get("leaseDurationSeconds"), spec.get("leaseTransitions")
    if duration is not None:
        problems = list(_whole("spec.leaseDurationSeconds", duration))
        if not problems and duration <= 0:
            problems = [
                FieldError(
                    "spec.leaseDurationSeconds", "Invalid value", duration, "must be greater than 0"
                )
            ]
        yield from problems
    if moves is not None:
        yield from _whole("spec.leaseTransitions", moves)
    holder = spec.get("holderIdentity")
    if holder is not None and not isinstance(holder, str):
        yield FieldError("spec.holderIdentity", "Invalid value", holder, "must be a string")


SPECS: dict[str, Callable[[dict[str, Any]], Iterator[FieldError]]] = {
    "PodDisruptionBudget": _budget,
    "Node": _node,
    "Deployment": _replicas,
    "ReplicaSet": _replicas,
    "StatefulSet": _replicas,
    "MachineConfigPool": _pool,
    "Lease": _lease,
}


def _shown(value: Any) -> str:
    """A bad value as apimachinery prints it: strings quoted, numbers and booleans bare
    (Go's true/false), anything else as JSON-ish text, cut to a readable length."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    elif isinstance(value, int | float):
        text = repr(value) if math.isfinite(value) else ("+Inf" if value > 0 else "-Inf")
    elif value is None:
        text = "null"
    else:
        text = repr(value)
    return text if len(text) <= 256 else text[:253] + "..."
