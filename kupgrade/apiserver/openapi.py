"""OpenAPI v3 documents for the kinds the simulated API serves, as kube-apiserver publishes
them (k8s.io/kube-openapi pkg/handler3): `/openapi/v3` lists one document per group
version, each at `/openapi/v3/api/v1` or `/openapi/v3/apis/GROUP/VERSION` with a hash.

kubectl reads them for three things: whether the server checks fields itself (a PATCH
operation of the kind with a `fieldValidation` parameter: kubectl's
pkg/cmd/util/... resource/queryparams.go supportsQueryParamV3; when it does, kubectl
skips its own validation, which needs the v2 protobuf document this server does not
serve), `kubectl explain` (components.schemas found by x-kubernetes-group-version-kind),
and apply's patch type.

The Kubernetes kinds' schemas are those of the release lightkube-models was generated
from (a pinned dependency), read from its dataclasses: type hints give the types, the
docstrings the descriptions. No Python library publishes the schemas themselves, and
copying kubernetes' api/openapi-spec into this package would pin a second copy of what
lightkube already carries. OpenShift, distributed-cloud, OLM and simulator kinds are
served as CRDs without a structural schema are (x-kubernetes-preserve-unknown-fields).
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import importlib
import json
import re
import typing
from functools import cache
from typing import Any

from kupgrade.apiserver.resources import RESOURCES, Resource, group_versions

SCHEMAS = "#/components/schemas/"
# lightkube's module of a group's models (lightkube/models/<prefix>_<version>.py).
LIGHTKUBE_GROUPS = {
    "": "core",
    "apps": "apps",
    "batch": "batch",
    "policy": "policy",
    "rbac.authorization.k8s.io": "rbac",
    "coordination.k8s.io": "coordination",
    "apiextensions.k8s.io": "apiextensions",
}
# The Go package a module's types live in, as upstream names its schemas.
PACKAGES = {
    "meta": "io.k8s.apimachinery.pkg.apis.meta",
    "apiextensions": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions",
}
INT_OR_STRING = {"x-kubernetes-int-or-string": True}
FREE = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
FIELD_LINE = re.compile(r"^\s*\* \*\*(?P<name>[^*]+)\*\* ``[^`]*`` - (?P<text>.*)$")


def model_of(r: Resource) -> type[Any] | None:
    """The lightkube dataclass of a served kind, or None for a kind lightkube lacks."""
    prefix = LIGHTKUBE_GROUPS.get(r.group)
    if prefix is None:
        return None
    try:
        module = importlib.import_module(f"lightkube.models.{prefix}_{r.version}")
    except ImportError:
        return None
    found = getattr(module, r.kind, None)
    return found if isinstance(found, type) and dataclasses.is_dataclass(found) else None


def schema_name(model: type[Any]) -> str:
    """io.k8s.api.core.v1.Pod, io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta, …"""
    prefix, _, version = model.__module__.rsplit(".", 1)[1].rpartition("_")
    package = PACKAGES.get(prefix, f"io.k8s.api.{prefix}")
    return f"{package}.{version}.{model.__name__}"


def _descriptions(model: type[Any]) -> tuple[str, dict[str, str]]:
    """The model's description and its fields' from lightkube's docstring layout."""
    lines = (model.__doc__ or "").splitlines()
    own: list[str] = []
    fields: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        found = FIELD_LINE.match(line)
        if found:
            current = fields.setdefault(found["name"], [found["text"].strip()])
        elif "**parameters**" in line:
            current = []
        elif current is None:
            own.append(line.strip())
        elif current and line.strip():
            current.append(line.strip())
    return " ".join(filter(None, own)), {k: " ".join(v) for k, v in fields.items()}


class Schemas:
    """components.schemas of one document: each model reached from its kinds, once."""

    def __init__(self) -> None:
        self.found: dict[str, dict[str, Any]] = {}

    def ref(self, model: type[Any]) -> dict[str, Any]:
        name = schema_name(model)
        if name not in self.found:
            self.found[name] = {}  # placed first: a model may reach itself
            self.found[name] = self._object(model)
        return {"$ref": SCHEMAS + name}

    def _object(self, model: type[Any]) -> dict[str, Any]:
        # Imported here: lightkube's package imports its whole client (0.2 s), which every
        # `cluster` command would pay for on its way to the API server's module.
        from lightkube.core.dataclasses_dict import get_type_hints  # noqa: PLC0415

        description, described = _descriptions(model)
        hints = get_type_hints(model)  # type: ignore[no-untyped-call]
        properties: dict[str, Any] = {}
        required: list[str] = []
        for field in dataclasses.fields(model):
            name = field.metadata.get("json", field.name)
            prop = self._type(hints[field.name])
            if described.get(name):
                prop = {**prop, "description": described[name]}
            properties[name] = prop
            if field.default is dataclasses.MISSING:
                required.append(name)
        out: dict[str, Any] = {"description": description, "type": "object"}
        out["properties"] = properties
        if required:
            out["required"] = required
        return out

    def _type(self, hint: Any) -> dict[str, Any]:
        origin = typing.get_origin(hint)
        if origin is list:
            return {"type": "array", "items": self._type(typing.get_args(hint)[0])}
        if origin is typing.Union:
            return dict(INT_OR_STRING)
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            return self.ref(hint)
        simple = {
            str: {"type": "string"},
            int: {"type": "integer", "format": "int64"},
            bool: {"type": "boolean"},
            float: {"type": "number", "format": "double"},
            datetime.datetime: {"type": "string", "format": "date-time"},
        }
        return dict(simple.get(hint, FREE))


def _gvk(r: Resource) -> dict[str, str]:
    return {"group": r.group, "version": r.version, "kind": r.kind}


def _kind_schema(r: Resource, schemas: Schemas) -> str:
    """The kind's schema name, adding it (and what it reaches) to `schemas`."""
    model = model_of(r)
    if model is not None:
        name = schemas.ref(model)["$ref"].removeprefix(SCHEMAS)
    else:
        name = f"io.kupgrade.{r.group or 'core'}.{r.version}.{r.kind}"
        schemas.found[name] = {
            "description": f"{r.kind} of {r.group_version}, served without a structural schema.",
            **FREE,
        }
    schemas.found[name]["x-kubernetes-group-version-kind"] = [_gvk(r)]
    return str(name)


def _parameter(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "description": description,
        "schema": {"type": "string", "uniqueItems": True},
    }


WRITE_PARAMETERS = [
    _parameter("dryRun", "When present, the change is checked but not persisted (All)."),
    _parameter("fieldManager", "The name of the actor making the change."),
    _parameter("fieldValidation", "Ignore, Warn or Strict: what unknown fields cause."),
]
PATCH_PARAMETERS = [*WRITE_PARAMETERS, _parameter("force", "Force an apply (apply patches).")]


def _operation(r: Resource, action: str, ref: str, patch_types: list[str] | None = None) -> Any:
    op: dict[str, Any] = {
        "operationId": f"{action}{r.kind}",
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": _gvk(r),
        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": ref}}}}},
    }
    if action in ("post", "put"):
        op["parameters"] = WRITE_PARAMETERS
        op["requestBody"] = {"content": {"*/*": {"schema": {"$ref": ref}}}, "required": True}
    elif action == "patch":
        op["parameters"] = PATCH_PARAMETERS
        content = {t: {"schema": {"type": "object"}} for t in patch_types or []}
        op["requestBody"] = {"content": content, "required": True}
    return op


def _paths(r: Resource, ref: str) -> dict[str, Any]:
    root = f"/api/{r.version}" if not r.group else f"/apis/{r.group}/{r.version}"
    where = f"{root}/namespaces/{{namespace}}" if r.namespaced else root
    patch_types = [
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/apply-patch+yaml",
    ]
    if model_of(r) is not None:  # a built-in kind: strategic merge too (not for a CRD)
        patch_types.append("application/strategic-merge-patch+json")
    collection: dict[str, Any] = {"get": _operation(r, "list", ref)}
    item: dict[str, Any] = {"get": _operation(r, "get", ref)}
    if r.writable:
        collection["post"] = _operation(r, "post", ref)
        item["put"] = _operation(r, "put", ref)
        item["patch"] = _operation(r, "patch", ref, patch_types)
        item["delete"] = _operation(r, "delete", ref)
    return {f"{where}/{r.plural}": collection, f"{where}/{r.plural}/{{name}}": item}


def _doc_path(group_version: str) -> str:
    return f"api/{group_version}" if "/" not in group_version else f"apis/{group_version}"


@cache
def documents() -> dict[str, bytes]:
    """Each group version's document as served, by its path under /openapi/v3/."""
    out = {}
    for gv, served in group_versions().items():
        schemas = Schemas()
        paths: dict[str, Any] = {}
        for r in served:
            ref = SCHEMAS + _kind_schema(r, schemas)
            paths.update(_paths(r, ref))
        doc = {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": "unversioned"},
            "paths": paths,
            "components": {"schemas": dict(sorted(schemas.found.items()))},
        }
        out[_doc_path(gv)] = json.dumps(doc, sort_keys=False).encode()
    return out


@cache
def root() -> bytes:
    """GET /openapi/v3: each document's path with the hash that names its version."""
    paths = {
        path: {
            "serverRelativeURL": f"/openapi/v3/{path}?hash="
            + hashlib.sha512(body).hexdigest().upper()
        }
        for path, body in documents().items()
    }
    return json.dumps({"paths": paths}).encode()


@cache
def _schemas_by_kind() -> dict[str, tuple[dict[str, Any], dict[str, dict[str, Any]]]]:
    out = {}
    for r in RESOURCES:
        model = model_of(r)
        if model is None:
            continue
        schemas = Schemas()
        name = schemas.ref(model)["$ref"].removeprefix(SCHEMAS)
        out[r.kind] = (schemas.found[name], schemas.found)
    return out


FIELD_VALIDATION = ("Ignore", "Warn", "Strict")


def unknown_fields(kind: str, obj: Any, old: Any, *, prune: bool = False) -> list[str]:
    """The paths of the fields of `obj` its kind's schema does not know, as kube-apiserver's
    strict decoding names them (`spec.foo`), but those `old` (the stored object) already
    had; none for a kind served without a schema. With `prune` they are also dropped
    from `obj`, as decoding drops them when the client asked to warn or ignore."""
    found = _schemas_by_kind().get(kind)
    if found is None:
        return []
    schema, schemas = found
    new: list[tuple[str, dict[str, Any], str]] = []
    _walk(obj, schema, schemas, "", new)
    if new and old:
        had: list[tuple[str, dict[str, Any], str]] = []
        _walk(old, schema, schemas, "", had)
        known = {path for path, _, _ in had}
        new = [entry for entry in new if entry[0] not in known]
    if prune:
        for _, holder, key in new:
            holder.pop(key, None)
    return [path for path, _, _ in new]


def _walk(
    value: Any,
    schema: dict[str, Any],
    schemas: dict[str, Any],
    at: str,
    out: list[tuple[str, dict[str, Any], str]],
) -> None:
    if "$ref" in schema:
        schema = schemas[schema["$ref"].removeprefix(SCHEMAS)]
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _walk(item, schema["items"], schemas, f"{at}[{i}]", out)
        return
    properties = schema.get("properties")
    if not isinstance(value, dict) or properties is None:
        return
    for key, item in value.items():
        path = f"{at}.{key}" if at else str(key)
        if key not in properties:
            out.append((path, value, key))
        else:
            _walk(item, properties[key], schemas, path, out)
