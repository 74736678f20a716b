"""The API server's audit log, as kube-apiserver writes it with `--audit-log-path`: one
JSON line per request, an audit.k8s.io/v1 Event at level Metadata (who asked what, with
which verb, and the answer's code), so a user can see everything a client sent, such as
that an import only read (SPEC X7)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path
from typing import IO, Any

from kupgrade.versions.times import rfc3339

_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def verb_of(method: str, path: str, query: dict[str, str]) -> str:
    """kube-apiserver's verb (request_info.go): get of one object, list of a collection,
    watch with ?watch; create, update, patch, delete(collection) for writes."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"]:
        rest = parts[2:]
    elif parts[:1] == ["apis"]:
        rest = parts[3:]
    else:
        return method.lower()
    if len(rest) >= 3 and rest[0] == "namespaces":
        rest = rest[2:]
    collection = len(rest) == 1
    if method == "GET":
        if query.get("watch") in ("true", "1"):
            return "watch"
        return "list" if collection else "get"
    if method == "DELETE" and collection:
        return "deletecollection"
    return _VERBS.get(method, method.lower())


class AuditLog:
    """Appends one line per request to `path`; requests come from many threads."""

    def __init__(self, path: Path) -> None:
        self._file: IO[str] = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def record(
        self, method: str, uri: str, query: dict[str, str], headers: dict[str, str], *, code: int
    ) -> None:
        event: dict[str, Any] = {
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "auditID": str(uuid.uuid4()),
            "stage": "ResponseComplete",
            "requestURI": uri,
            "verb": verb_of(method, uri.split("?", 1)[0], query),
            "userAgent": headers.get("user-agent", ""),
            "responseStatus": {"metadata": {}, "code": code},
            "stageTimestamp": rfc3339(time.time()),
        }
        line = json.dumps(event, separators=(",", ":")) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()
