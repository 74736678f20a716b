"""The three patch types `kubectl patch` sends (apimachinery pkg/util/strategicpatch,
RFC 7386, RFC 6902).

JSON merge patch is `cluster.objects.merge_patch`; JSON patch is the `jsonpatch` library;
strategic merge patch is written here, as none exists for Python: it merges maps like a
merge patch, but lists whose elements carry the field's merge key (containers and
volumes by `name`, conditions by `type`, taints by `key`) are merged element by element,
and `$patch: delete` / `$patch: replace` work as in apimachinery. Lists of other
fields are replaced, as for fields without a patchMergeKey.
"""

from __future__ import annotations

from typing import Any

import jsonpatch

from kupgrade.cluster.objects import merge_patch

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"  # server-side apply (kubectl apply --server-side)
TYPES = (MERGE, JSON_PATCH, STRATEGIC, APPLY)

# patchMergeKey of the core fields kubectl patches most (k8s.io/api core/v1 types.go).
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "volumes": "name",
    "env": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "conditions": "type",
    "taints": "key",
    "tolerations": "key",
    "imagePullSecrets": "name",
}


class PatchError(Exception):
    """The patch cannot be applied (the API server's 422 or 400)."""


def apply_patch(content_type: str, obj: dict[str, Any], patch: Any) -> dict[str, Any]:
    kind = content_type.split(";", maxsplit=1)[0].strip()
    if kind == MERGE:
        if not isinstance(patch, dict):
            raise PatchError("a merge patch is a JSON object")
        return dict(merge_patch(obj, patch))
    if kind == JSON_PATCH:
        if not isinstance(patch, list):
            raise PatchError("a JSON patch is a list of operations")
        try:
            return dict(jsonpatch.JsonPatch(patch).apply(obj))
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError) as exc:
            raise PatchError(f"the JSON patch does not apply: {exc}") from None
    if kind in (STRATEGIC, APPLY):
        # An applied configuration merges as a strategic merge patch does: lists keyed
        # by their merge keys, maps field by field. Real server-side apply also drops
        # the fields this manager set before and no longer sets (managedFields), which
        # this server does not track.
        if not isinstance(patch, dict):
            raise PatchError(
                f"a {'strategic merge patch' if kind == STRATEGIC else 'applied configuration'} is a JSON object"
            )
        return dict(strategic_merge(obj, patch))
    raise PatchError(f"the body of type {kind} is not one of {', '.join(TYPES)}")


def strategic_merge(target: Any, patch: Any, key: str | None = None) -> Any:
    """Merge `patch` into `target` by apimachinery's rules for known merge keys."""
    if not isinstance(patch, dict):
        return patch
    if patch.get("$patch") == "replace":
        return {k: v for k, v in patch.items() if k != "$patch"}
    out = dict(target) if isinstance(target, dict) else {}
    for name, value in patch.items():
        if value is None:
            out.pop(name, None)
        elif isinstance(value, list) and name in MERGE_KEYS and isinstance(out.get(name), list):
            out[name] = _merge_list(out[name], value, MERGE_KEYS[name])
        else:
            out[name] = strategic_merge(out.get(name), value)
    return out


def _merge_list(items: list[Any], patch: list[Any], key: str) -> list[Any]:
    merged = list(items)
    for element in patch:
        if not isinstance(element, dict) or key not in element:
            return patch  # not keyed: the list is replaced
        at = next(
            (i for i, e in enumerate(merged) if isinstance(e, dict) and e.get(key) == element[key]),
            None,
        )
        if element.get("$patch") == "delete":
            if at is not None:
                merged.pop(at)
        elif at is None:
            merged.append(element)
        else:
            merged[at] = strategic_merge(merged[at], element)
    return merged
