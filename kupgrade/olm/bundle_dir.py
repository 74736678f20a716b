"""A registry+v1 bundle directory (manifests/ and metadata/) rendered to an olm.bundle
blob the way `opm render` renders one: operator-registry pkg/registry/parse.go
(bundleParser), pkg/registry/registry_to_model.go (ObjectsAndPropertiesFromBundle) and
alpha/action/render.go (bundleToDeclcfg, getRelatedImages) at 4f9d6f22.

Properties keep the bytes Go made for them (`Raw`): values opm builds are Go's
json.Marshal output (sorted keys, HTML characters escaped), and they are sorted by type
then by that text, so the text decides the order.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import yaml

from kupgrade import intake
from kupgrade.errors import InputError
from kupgrade.olm.declcfg_write import Raw, RenderedBundle, go_json

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
CSV_KIND = "ClusterServiceVersion"
_PACKAGE_KEY = "operators.operatorframework.io.bundle.package.v1"
_ANNOTATION_KEYS = (
    _PACKAGE_KEY,
    "operators.operatorframework.io.bundle.channels.v1",
    "operators.operatorframework.io.bundle.channel.default.v1",
)


def is_bundle_dir(path: Path) -> bool:
    """render.go isBundle: a directory holding both manifests/ and metadata/."""
    return path.is_dir() and (path / "manifests").is_dir() and (path / "metadata").is_dir()


def go_marshal(value: Any) -> str:
    """Go's json.Marshal of a decoded map: keys sorted, HTML characters escaped."""
    return go_json(_sorted(value), escape_html=True)


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _sorted(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _first_document(file: Path) -> Any:
    """decodeFileFS: the first YAML or JSON document of a file (None when it fails)."""
    text = intake.read_file(file, "bundle file").decode("utf-8", "replace")
    try:
        for doc in yaml.load_all(text, Loader=_LOADER):
            return doc
    except yaml.YAMLError:
        return None
    return None


def _files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_file() and not p.name.startswith("."))


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


_TEMPLATE_FIELD = re.compile(r"\{\{\s*\.(Package|Name|Version)\s*\}\}")


def image_from_template(template: str, package: str, name: str, version: str) -> str:
    """render.go templateBundleImageRef: `{{.Package}}`, `{{.Name}}` and `{{.Version}}`
    of opm's --alpha-image-ref-template filled in (no other template syntax)."""
    values = {"Package": package, "Name": name, "Version": version}
    filled = _TEMPLATE_FIELD.sub(lambda m: values[m.group(1)], template)
    if "{{" in filled or "}}" in filled:
        raise InputError(
            f"invalid image reference template {template!r}: only {{{{.Package}}}}, "
            "{{.Name}} and {{.Version}} are known",
            field="--image-ref-template",
        )
    return filled


def render_bundle_dir(root: Path, image_template: str = "") -> RenderedBundle:
    """The bundle at `root` as opm renders it (SPEC F1: a CSV and its manifests): no image (a directory has none) unless an
    image reference template names one."""
    objects: list[dict[str, Any]] = []
    csv: dict[str, Any] | None = None
    for file in _files(root / "manifests"):
        obj = _first_document(file)
        if not isinstance(obj, dict) or not obj:
            continue
        if obj.get("kind") == CSV_KIND:
            if csv is not None:
                continue
            csv = obj
        objects.append(obj)
    if not objects:
        raise InputError("no bundle objects found", file=str(root / "manifests"))
    if csv is None:
        raise InputError("no csv in bundle", file=str(root / "manifests"))
    name = str(_dict(csv.get("metadata")).get("name") or "")
    spec = _dict(csv.get("spec"))
    provided = _provided_apis(objects, spec)
    _check_owned(name, spec, provided, root)
    package, properties, dependencies = _metadata(root / "metadata")
    image = ""
    if image_template:
        image = image_from_template(image_template, package, name, _string(spec.get("version")))

    derived: list[tuple[str, str]] = []
    annotations = _dict(_dict(csv.get("metadata")).get("annotations"))
    listed = annotations.get("olm.properties")
    if isinstance(listed, str):
        try:
            derived = [
                (str(p.get("type", "")), go_json(p.get("value")))
                for p in _list(json.loads(listed))
                if isinstance(p, dict)
            ]
        except json.JSONDecodeError:
            derived = []  # parse.go only warns
    version, release = _string(spec.get("version")), _release(spec.get("release"))
    if package:
        derived.insert(0, ("olm.package", _package_value(package, version, release)))
    derived += [("olm.gvk", _gvk(*key[:3])) for key in provided]
    props = _unique(properties + _unique(derived))
    return _to_blob(
        name=name,
        package=package,
        image=image,
        props=props,
        dependencies=dependencies,
        objects=objects,
        csv=csv,
        spec=spec,
        provided=provided,
    )


def _to_blob(
    *,
    name: str,
    package: str,
    image: str,
    props: list[tuple[str, str]],
    dependencies: list[tuple[str, str]],
    objects: list[dict[str, Any]],
    csv: dict[str, Any],
    spec: dict[str, Any],
    provided: list[tuple[str, str, str, str]],
) -> RenderedBundle:
    """registry_to_model.go ObjectsAndPropertiesFromBundle and render.go bundleToDeclcfg."""
    provided_gvks: set[str] = set()
    required_gvks: set[str] = set()
    package_prop = ""
    others: list[tuple[str, str]] = []
    for kind, value in props:
        if kind == "olm.gvk":
            v = _dict(json.loads(value))
            provided_gvks.add(_gvk(_s(v, "group"), _s(v, "version"), _s(v, "kind")))
        elif kind == "olm.package":
            v = _dict(json.loads(value))
            package_prop = _package_value(_s(v, "packageName"), _s(v, "version"), _s(v, "release"))
        else:
            others.append((kind, value))
    required_packages: list[tuple[str, str]] = []
    for kind, value in dependencies:
        v = _dict(json.loads(value))
        if kind == "olm.gvk":
            required_gvks.add(_gvk(_s(v, "group"), _s(v, "version"), _s(v, "kind")))
        elif kind == "olm.package":
            required_packages.append(
                (
                    "olm.package.required",
                    go_marshal(
                        {"packageName": _s(v, "packageName"), "versionRange": _s(v, "version")}
                    ),
                )
            )
        else:
            others.append((kind, value))
    provided_gvks.update(_gvk(*key[:3]) for key in provided)
    required_gvks.update(_gvk(*key[:3]) for key in _required_apis(spec))
    out = [
        (
            "olm.bundle.object",
            go_marshal({"data": base64.b64encode(go_marshal(o).encode()).decode()}),
        )
        for o in objects
    ]
    version, release = _string(spec.get("version")), _release(spec.get("release"))
    out.append(("olm.package", package_prop or _package_value(package, version, release)))
    out += [("olm.gvk", v) for v in provided_gvks]
    out += [("olm.gvk.required", v) for v in required_gvks]
    out += required_packages + others
    out.sort(key=lambda p: (p[0].encode(), p[1].encode()))
    blob: dict[str, Any] = {"schema": "olm.bundle"}
    if name:
        blob["name"] = name
    if package:
        blob["package"] = package
    blob["image"] = image
    blob["properties"] = [{"type": kind, "value": Raw(value)} for kind, value in out]
    related = _related_images(spec, image)
    if related:
        blob["relatedImages"] = related
    return RenderedBundle(blob, go_marshal(csv))


def _s(value: dict[str, Any], key: str) -> str:
    item = value.get(key)
    return item if isinstance(item, str) else ""


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _release(value: Any) -> str:
    """csv.go GetRelease: a string, or a number written as Go prints it."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(int(value)) if float(value).is_integer() else f"{value:g}"
    return ""


def _package_value(package: str, version: str, release: str) -> str:
    doc = {"packageName": package, "version": version}
    if release:
        doc["release"] = release
    return go_json(doc, escape_html=True)


def _gvk(group: str, version: str, kind: str) -> str:
    return go_json({"group": group, "kind": kind, "version": version}, escape_html=True)


def _unique(props: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """parse.go propertySet: the first of each (type, value)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for prop in props:
        if prop not in seen:
            seen.add(prop)
            out.append(prop)
    return out


def _provided_apis(
    objects: list[dict[str, Any]], spec: dict[str, Any]
) -> list[tuple[str, str, str, str]]:
    """bundle.go ProvidedAPIs: each CRD object's versions, and the CSV's owned API services."""
    found: dict[tuple[str, str, str, str], None] = {}
    for obj in objects:
        if obj.get("kind") != "CustomResourceDefinition":
            continue
        crd = _dict(obj.get("spec"))
        names = _dict(crd.get("names"))
        group, kind, plural = _s(crd, "group"), _s(names, "kind"), _s(names, "plural")
        for version in _list(crd.get("versions")):
            found[(group, _s(_dict(version), "name"), kind, plural)] = None
        if str(obj.get("apiVersion", "")).endswith("v1beta1") and _s(crd, "version"):
            found[(group, _s(crd, "version"), kind, plural)] = None
    owned = _list(_dict(spec.get("apiservicedefinitions")).get("owned"))
    for api in (_dict(a) for a in owned):
        found[(_s(api, "group"), _s(api, "version"), _s(api, "kind"), _s(api, "name"))] = None
    return list(found)


def _required_apis(spec: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """bundle.go RequiredAPIs: the CSV's required CRDs (plural.group names) and API services."""
    found = []
    for crd in (
        _dict(c) for c in _list(_dict(spec.get("customresourcedefinitions")).get("required"))
    ):
        plural, _, group = _s(crd, "name").partition(".")
        if not group:
            raise InputError(f"couldn't parse plural.group from crd name: {_s(crd, 'name')}")
        found.append((group, _s(crd, "version"), _s(crd, "kind"), plural))
    for api in (_dict(a) for a in _list(_dict(spec.get("apiservicedefinitions")).get("required"))):
        found.append((_s(api, "group"), _s(api, "version"), _s(api, "kind"), _s(api, "name")))
    return found


def _check_owned(
    name: str, spec: dict[str, Any], provided: list[tuple[str, str, str, str]], root: Path
) -> None:
    """bundle.go AllProvidedAPIsInBundle: every owned CRD of the CSV ships in the bundle."""
    for crd in (_dict(c) for c in _list(_dict(spec.get("customresourcedefinitions")).get("owned"))):
        plural, _, group = _s(crd, "name").partition(".")
        if not group:
            raise InputError(f"couldn't parse plural.group from crd name: {_s(crd, 'name')}")
        key = (group, _s(crd, "version"), _s(crd, "kind"), plural)
        if key not in provided:
            raise InputError(
                f"error checking provided apis in bundle {name}: couldn't find "
                f"{key[0]}/{key[1]}/{key[2]} ({key[3]}) in bundle",
                file=str(root / "manifests"),
            )


def _metadata(directory: Path) -> tuple[str, list[tuple[str, str]], list[tuple[str, str]]]:
    """parse.go addMetadata: the first annotations, dependencies and properties files."""
    package: str | None = None
    properties: list[tuple[str, str]] | None = None
    dependencies: list[tuple[str, str]] | None = None
    for file in sorted(p for p in directory.iterdir() if p.is_file()):
        doc = _dict(_first_document(file))
        annotations = _dict(doc.get("annotations"))
        if package is None and any(
            isinstance(annotations.get(k), str) and annotations[k] for k in _ANNOTATION_KEYS
        ):
            package = _s(annotations, _PACKAGE_KEY)
        if dependencies is None and _list(doc.get("dependencies")):
            dependencies = _typed_values(doc["dependencies"])
        if properties is None and _list(doc.get("properties")):
            properties = _typed_values(doc["properties"])
    if package is None:
        raise InputError("Could not find annotations file", file=str(directory))
    return package, properties or [], dependencies or []


def _typed_values(items: list[Any]) -> list[tuple[str, str]]:
    return [
        (str(_dict(item).get("type", "")), go_marshal(_dict(item).get("value"))) for item in items
    ]


def _related_images(spec: dict[str, Any], image: str) -> list[dict[str, str]]:
    """render.go getRelatedImages: the CSV's relatedImages, the bundle image, then the
    images of the install strategy's containers and init containers (sorted later)."""
    related = [
        {"name": _s(_dict(r), "name"), "image": _s(_dict(r), "image")}
        for r in _list(spec.get("relatedImages"))
    ]
    seen = {r["image"] for r in related}
    if image and image not in seen:
        related.append({"name": "", "image": image})
    install = _dict(spec.get("install"))
    if install.get("strategy") == "deployment":
        for deployment in _list(_dict(install.get("spec")).get("deployments")):
            pod = _dict(_dict(_dict(_dict(deployment).get("spec")).get("template")).get("spec"))
            for container in _list(pod.get("containers")) + _list(pod.get("initContainers")):
                ref = _s(_dict(container), "image")
                if ref not in seen:
                    related.append({"name": "", "image": ref})
                seen.add(ref)
    return related
