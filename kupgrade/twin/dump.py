"""Reading a cluster's dump (SPEC X7): an `oc adm must-gather` directory or its .tar.gz, an
Insights archive, `kubectl get ... -o yaml|json` List files, or a directory of manifests.

Every file is one problem at most: a truncated YAML, a file that is not UTF-8 or one that
holds something other than Kubernetes objects is skipped and named in one line, so that a
must-gather with one broken file still imports. Only when nothing usable remains is the
dump refused. Objects met twice (a must-gather writes pods both in `pods.yaml` and one
file per pod) are kept once: the copy with the higher resourceVersion.

The layouts read (openshift/must-gather collection-scripts, oc adm inspect): cluster-scoped
objects under `cluster-scoped-resources/<group>/<resource>[/<name>].yaml`, namespaced
ones under `namespaces/<ns>/<group>/<resource>[.yaml|/<name>.yaml]`; logs and other
files beside them are not objects and are counted, not read. An Insights archive
(openshift/insights-operator docs/insights-archive-sample) holds JSON objects whose kind
its folder names (`config/node/NAME.json`).
"""

from __future__ import annotations

import os
import stat
import tarfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from kupgrade import intake
from kupgrade.cluster.alerts import Alert, answer_alerts, is_answer
from kupgrade.errors import InputError
from kupgrade.intake.files import os_problem
from kupgrade.intake.limits import BYTES

Obj = dict[str, Any]
Key = tuple[str, str, str]

OBJECT_SUFFIXES = (".yaml", ".yml", ".json")
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")
# An Insights archive's folders and the kind of the objects in them, for objects written
# without `kind` (insights-operator pkg/gatherers/clusterconfig: one gatherer per folder).
INSIGHTS_KINDS = {
    "config/node": "Node",
    "config/clusteroperator": "ClusterOperator",
    "config/machineconfigpools": "MachineConfigPool",
    "config/pdbs": "PodDisruptionBudget",
    "config/pod": "Pod",
    "config/version": "ClusterVersion",
    "config/apirequestcounts": "APIRequestCount",
}
# What a List's items are when they carry no kind of their own (a typed PodList).
_LIST_SUFFIX = "List"


@dataclass
class Dump:
    """The objects of a dump, one per (kind, namespace, name), with what went wrong."""

    objects: dict[Key, Obj] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # one line per file or object skipped
    duplicates: int = 0
    files: int = 0  # files read as objects
    other_files: int = 0  # logs and other files that hold no objects
    alerts: list[Alert] | None = None  # the alerts answers among its files, when any

    def add(self, obj: Obj) -> bool:
        """Keep `obj` (or the copy of it already read with a higher resourceVersion);
        False when it is not an object (no kind or no name)."""
        key = key_of(obj)
        if key is None:
            return False
        had = self.objects.get(key)
        if had is not None:
            self.duplicates += 1
            if _version(had) > _version(obj):
                return True
        self.objects[key] = obj
        return True

    def notes(self, most: int = 20) -> list[str]:
        """What was skipped, one line each (the first `most`, then how many more)."""
        lines = self.problems[:most]
        if len(self.problems) > most:
            lines.append(f"... and {len(self.problems) - most} more files skipped")
        if self.duplicates:
            lines.append(
                f"{self.duplicates} objects appear more than once in the dump; "
                "the copy with the highest resourceVersion was kept"
            )
        return lines


def key_of(obj: Obj) -> Key | None:
    meta = obj.get("metadata")
    kind = obj.get("kind")
    if not isinstance(meta, dict) or not isinstance(kind, str) or not kind:
        return None
    name, namespace = meta.get("name"), meta.get("namespace") or ""
    if not isinstance(name, str) or not name or not isinstance(namespace, str):
        return None
    return (kind, namespace, name)


def _version(obj: Obj) -> int:
    raw = (obj.get("metadata") or {}).get("resourceVersion")
    return int(raw) if isinstance(raw, str | int) and str(raw).isdecimal() else -1


def read_dumps(paths: Sequence[Path]) -> Dump:
    """Every object of every path given; InputError when none of them holds any."""
    dump = Dump()
    for path in paths:
        _read_path(dump, path)
    if not dump.objects:
        raise InputError(
            "holds no Kubernetes objects" + (f" ({dump.problems[0]})" if dump.problems else ""),
            file=", ".join(str(p) for p in paths),
            hint="give a must-gather directory or archive, `kubectl get -o yaml` files, "
            "or a directory of manifests",
        )
    return dump


def _read_path(dump: Dump, path: Path) -> None:
    try:
        info = path.stat()
    except OSError as exc:
        raise InputError(f"cannot read the dump: {os_problem(exc)}", file=str(path)) from None
    if stat.S_ISDIR(info.st_mode):
        for file, rel in _walk(path):
            _read_file(dump, file, rel)
    elif path.name.endswith(ARCHIVE_SUFFIXES):
        _read_archive(dump, path)
    else:  # a file the user named is read whatever its name (a FIFO is refused there)
        _read_bytes(dump, intake.read_file(path, "dump file"), str(path), path.name)


def _walk(root: Path) -> Iterator[tuple[Path, str]]:
    """Files under `root` in a stable order, with their path relative to it; links to
    directories are not followed (a must-gather has none, a loop would never end)."""
    for top, dirs, files in os.walk(root, onerror=None):
        dirs.sort()
        for name in sorted(files):
            file = Path(top) / name
            yield file, file.relative_to(root).as_posix()


def _read_file(dump: Dump, file: Path, rel: str) -> None:
    if not rel.endswith(OBJECT_SUFFIXES):
        dump.other_files += 1
        return
    try:
        data = intake.read_file(file, "dump file")
    except InputError as exc:
        dump.problems.append(str(exc))
        return
    _read_bytes(dump, data, str(file), rel)


def _read_archive(dump: Dump, path: Path) -> None:
    """A must-gather as `tar czf` made it: its members read as the directory's files,
    each within the size limit; links and devices in it are not followed."""
    limit = BYTES.value()
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                rel = _member_path(member.name)
                if not rel.endswith(OBJECT_SUFFIXES):
                    dump.other_files += 1
                    continue
                source = f"{path}:{member.name}"
                if member.size > limit:
                    dump.problems.append(str(BYTES.exceeded("the file's size", source)))
                    continue
                handle = tar.extractfile(member)
                if handle is not None:
                    _read_bytes(dump, handle.read(limit + 1), source, rel)
    except (tarfile.TarError, EOFError, OSError) as exc:
        message = os_problem(exc) if isinstance(exc, OSError) else str(exc) or "truncated"
        if dump.files == 0:
            raise InputError(
                f"is not a readable tar archive: {message}",
                file=str(path),
                hint="give the must-gather directory, or an archive `tar czf` made",
            ) from None
        dump.problems.append(f"{path}: the archive ends early ({message}); read up to there")


def _member_path(name: str) -> str:
    parts = [p for p in PurePosixPath(name).parts if p not in ("/", ".", "..")]
    return "/".join(parts)


def _read_bytes(dump: Dump, data: bytes, source: str, rel: str) -> None:
    try:
        docs = _decode(data, source)
    except InputError as exc:
        dump.problems.append(str(exc))
        return
    dump.files += 1
    implied = _implied_kind(rel)
    nameless = 0
    if len(docs) == 1 and is_answer(docs[0]):
        _read_alerts(dump, docs[0], source)
        return
    for doc in docs:
        for obj in _objects_of(doc, implied):
            if obj is None:
                dump.problems.append(f"{source}: holds something that is not a Kubernetes object")
                return
            nameless += 0 if dump.add(obj) else 1
    if nameless:
        dump.problems.append(f"{source}: {nameless} objects without a kind or a name were skipped")


def _read_alerts(dump: Dump, doc: Any, source: str) -> None:
    """A Prometheus /api/v1/alerts answer saved beside the objects (oc's NAME-alerts.json,
    `curl …/api/v1/alerts`): the cluster's alerts, for `upgrade status`."""
    try:
        dump.alerts = [*(dump.alerts or []), *answer_alerts(doc, source)]
    except InputError as exc:
        dump.problems.append(str(exc))


def _decode(data: bytes, source: str) -> list[Any]:
    stripped = data.lstrip()
    if stripped[:1] in (b"{", b"["):
        try:
            return [intake.decode_json(data, source)]
        except InputError:
            pass  # YAML's flow style starts with { too; YAML reads JSON as well
    return [d for d in intake.load_yaml_all(data, source) if d is not None]


def _implied_kind(rel: str) -> str | None:
    """The kind an Insights archive's folder names, for its objects without one."""
    parts = rel.rsplit(".", 1)[0].split("/")
    for i in range(len(parts) - 1):
        found = INSIGHTS_KINDS.get(f"{parts[i]}/{parts[i + 1]}")
        if found:
            return found
    return None


def _objects_of(doc: Any, implied: str | None) -> Iterator[Obj | None]:
    """The objects of one document: itself, or a List's items (a typed list's items take
    its kind without `List`); None for something that is neither."""
    if not isinstance(doc, dict):
        yield None
        return
    kind = doc.get("kind")
    items = doc.get("items")
    if isinstance(items, list) and (kind is None or str(kind).endswith(_LIST_SUFFIX)):
        item_kind = str(kind)[: -len(_LIST_SUFFIX)] if kind and kind != _LIST_SUFFIX else None
        for item in items:
            if not isinstance(item, dict):
                yield None
                return
            kind_given = item.get("kind") or item_kind or implied
            yield {"kind": kind_given, **item} if kind_given else item
        return
    if not kind and implied:
        doc = {"kind": implied, **doc}
    yield doc
