"""Which payload manifests a cluster applies (SPEC C5), in the version controller's order.

Each filter is off when its option is None. The checks run in library-go's order and the
first failing one gives the reason, worded exactly as the controller logs it, so a user
can grep a real controller log for the same text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kupgrade.errors import InputError
from kupgrade.release.manifest import ResourceId

DEFAULT_PROFILE = "self-managed-high-availability"
KNOWN_FEATURE_SETS = (
    "CustomNoUpgrade",
    "Default",
    "DevPreviewNoUpgrade",
    "OKD",
    "TechPreviewNoUpgrade",
)
CAPABILITY = "capability.openshift.io/name"
FEATURE_SET = "release.openshift.io/feature-set"
FEATURE_GATE = "release.openshift.io/feature-gate"
MAJOR_VERSION = "release.openshift.io/major-version"
CREATE_ONLY = "release.openshift.io/create-only"
DELETE = "release.openshift.io/delete"


@dataclass(frozen=True)
class Capabilities:
    known: tuple[str, ...]
    enabled: tuple[str, ...]


@dataclass(frozen=True)
class Override:
    """A ClusterVersion spec.overrides entry."""

    kind: str
    group: str
    namespace: str
    name: str
    unmanaged: bool


@dataclass(frozen=True)
class Options:
    """The cluster's side of the inclusion decision."""

    exclude: str | None = None
    required_feature_set: str | None = None
    profile: str | None = DEFAULT_PROFILE
    capabilities: Capabilities | None = None
    overrides: tuple[Override, ...] | None = None
    enabled_feature_gates: frozenset[str] | None = None
    major_version: int | None = None
    allow_unknown_capabilities: bool = False


# What a running cluster loads a payload with when nothing else is said: the default
# profile, the Default feature set and no feature gate enabled (SPEC C5).
CLUSTER_DEFAULTS = Options(required_feature_set="", enabled_feature_gates=frozenset())

Annotations = Mapping[str, str]
Check = Callable[[ResourceId, Annotations, Options], str | None]


def _exclude_id(rid: ResourceId, annotations: Annotations, options: Options) -> str | None:
    if options.exclude is None:
        return None
    key = f"exclude.release.openshift.io/{options.exclude}"
    return f"{key}=true" if annotations.get(key) == "true" else None


def _set_and_gate(rid: ResourceId, annotations: Annotations, options: Options) -> str | None:
    if options.required_feature_set is None or options.enabled_feature_gates is None:
        return None
    if FEATURE_SET in annotations and FEATURE_GATE in annotations:
        return (
            "both feature set and feature gate annotations are present: manifests may specify "
            "either a feature set or a feature gate, but not both"
        )
    return None


def _feature_set(rid: ResourceId, annotations: Annotations, options: Options) -> str | None:
    if options.required_feature_set is None or FEATURE_SET not in annotations:
        return None
    required = options.required_feature_set or "Default"
    value = annotations[FEATURE_SET]
    listed = value.split(",")
    for entry in listed:
        if entry not in KNOWN_FEATURE_SETS:
            return (
                f'unrecognized value "{entry}" in {FEATURE_SET}={value}; '
                f"known values are: {','.join(KNOWN_FEATURE_SETS)}"
            )
    if required not in listed:
        return f'"{required}" is required, and {FEATURE_SET}={",".join(sorted(set(listed)))}'
    return None


def _feature_gates(rid: ResourceId, annotations: Annotations, options: Options) -> str | None:
    gates = options.enabled_feature_gates
    if gates is None or FEATURE_GATE not in annotations:
        return None
    for entry in (part.strip() for part in annotations[FEATURE_GATE].split(",")):
        if not entry:
            continue
        if entry.startswith("-"):
            if entry[1:] in gates:
                return (
                    f"feature gate {entry[1:]} is enabled but manifest requires it to be disabled"
                )
        elif entry not in gates:
            return f"feature gate {entry} is required but not enabled"
    return None


def _go_parse_uint(text: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise ValueError(f'strconv.ParseUint: parsing "{text}": invalid syntax')
    value = int(text)
    if value >= 1 << 64:
        raise ValueError(f'strconv.ParseUint: parsing "{text}": value out of range')
    return value


def _major_version(rid: ResourceId, annotations: Annotations, options: Options) -> str | None:
    major = options.major_version
    if major is None or MAJOR_VERSION not in annotations:
        return None
    if (rid.group, rid.kind) not in (
        ("config.openshift.io", "FeatureGate"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ):
        return "major version filtering is only supported for feature gates and custom resources"
    included: set[int] = set()
    excluded: set[int] = set()
    for entry in (part.strip() for part in annotations[MAJOR_VERSION].split(",")):
        if not entry:
            continue
        negative = entry.startswith("-")
        text = entry[1:] if negative else entry
        try:
            number = _go_parse_uint(text)
        except ValueError as exc:
            which = "excluded" if negative else "included"
            return f'invalid {which} major version "{text}" in annotation: {exc}'
        (excluded if negative else included).add(number)
    if overlap := included & excluded:
        return (
            f"inclusion and exclusion requirements overlap: [{' '.join(map(str, sorted(overlap)))}]"
        )
    if major in included:
        return None
    if major in excluded:
        return f"major version {major} matches excluded version {major}"
    if included:
        return f"major version {major} does not match any required versions"
    return None


def _profile(rid: ResourceId, annotations: Annotations, options: Options) -> str | None:
    if options.profile is None:
        return None
    key = f"include.release.openshift.io/{options.profile}"
    if key not in annotations:
        return f"{key} unset"
    value = annotations[key]
    return None if value == "true" else f"unrecognized value {key}={value}"


def manifest_capabilities(annotations: Annotations | None) -> list[str]:
    value = (annotations or {}).get(CAPABILITY, "")
    return value.split("+") if value else []


def _capabilities(rid: ResourceId, annotations: Annotations, options: Options) -> str | None:
    caps = options.capabilities
    if caps is None:
        return None
    unknown: list[str] = []
    disabled: list[str] = []
    for name in manifest_capabilities(annotations):
        if not options.allow_unknown_capabilities and name not in caps.known:
            unknown.append(name)
        elif name not in caps.enabled:
            disabled.append(name)
    if unknown:
        return f"unrecognized capability names: {', '.join(unknown)}"
    if disabled:
        return f"disabled capabilities: {', '.join(disabled)}"
    return None


def _overrides(rid: ResourceId, annotations: Annotations, options: Options) -> str | None:
    for override in options.overrides or ():
        namespace = override.namespace if rid.namespace else ""
        if ResourceId(override.group, override.kind, namespace, override.name) == rid:
            return "overridden" if override.unmanaged else None
    return None


# SPEC C5: the order library-go checks in; the first failure is the reason.
CHECKS: tuple[tuple[str, Check], ...] = (
    ("exclude", _exclude_id),
    ("feature-set-and-gate", _set_and_gate),
    ("feature-set", _feature_set),
    ("feature-gate", _feature_gates),
    ("major-version", _major_version),
    ("profile", _profile),
    ("capabilities", _capabilities),
    ("overrides", _overrides),
)


def exclusion_reason(
    rid: ResourceId, annotations: Annotations | None, options: Options
) -> str | None:
    """Why this manifest is left out for this cluster, or None when it is applied."""
    if annotations is None:
        return "no annotations"
    for _name, check in CHECKS:
        reason = check(rid, annotations, options)
        if reason is not None:
            return reason
    return None


def apply_action(annotations: Annotations | None, file: str) -> str:
    """How an included manifest is applied: "apply", "create-only" or "delete" (SPEC C5).

    A create-only object is created when missing and never updated; a delete-annotated
    object is removed from the cluster. The controller fails the manifest at apply time
    for any delete value but "true"; we refuse it when loading, before anything runs.
    """
    values = annotations or {}
    if DELETE in values:
        if values[DELETE] != "true":
            raise InputError(
                f'invalid value "{values[DELETE]}" for annotation {DELETE}; only "true" is allowed',
                file=file,
                field=f"metadata.annotations.{DELETE}",
                rule="SPEC C5",
            )
        return "delete"
    return "create-only" if values.get(CREATE_ONLY) == "true" else "apply"
