"""Whether a write is a dry run, where each client says so: `?dryRun=All` on a create,
update or patch (kubectl --dry-run=server), `dryRun` in the DeleteOptions body of a
delete, and in the `deleteOptions` of an Eviction (kubectl drain --dry-run=server).

Only "All" is a dry run; any other value is refused as kube-apiserver refuses it
(apimachinery pkg/apis/meta/v1/validation ValidateDryRun: NotSupported, answered as
errors.NewInvalid of the options kind), so a misspelt dry run never writes (SPEC X6).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

ALL = "All"
OPTIONS = {
    "POST": "CreateOptions",
    "PUT": "UpdateOptions",
    "PATCH": "PatchOptions",
    "DELETE": "DeleteOptions",
}


@dataclass(frozen=True)
class DryRunRefused:
    """A dryRun value other than All: the Status message and details to answer with."""

    message: str
    details: dict[str, Any] = field(default_factory=dict)


def dry_run(method: str, sub: str, query: dict[str, str], body: bytes) -> bool | DryRunRefused:
    """True for a dry run, False for a real write, or why the dryRun asked is refused."""
    values: list[str] = []
    if "dryRun" in query:
        values.append(query["dryRun"])
    if method == "DELETE" or sub == "eviction":
        values.extend(_from_body(body, "deleteOptions" if sub == "eviction" else ""))
    wrong = [v for v in values if v != ALL]
    if wrong:
        kind = "DeleteOptions" if sub == "eviction" else OPTIONS.get(method, "CreateOptions")
        shown = "[]string{" + ", ".join(json.dumps(v) for v in wrong) + "}"
        detail = f'dryRun: Unsupported value: {shown}: supported values: "{ALL}"'
        return DryRunRefused(
            f'{kind}.meta.k8s.io "" is invalid: {detail}',
            {
                "group": "meta.k8s.io",
                "kind": kind,
                "causes": [
                    {
                        "reason": "FieldValueNotSupported",
                        "message": detail.removeprefix("dryRun: "),
                        "field": "dryRun",
                    }
                ],
            },
        )
    return bool(values)


def _from_body(body: bytes, under: str) -> list[str]:
    """The dryRun list of a DeleteOptions body (or of the Eviction's `under` field); a
    body that is not such an object carries none (the write itself will say so)."""
    try:
        doc = json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return []
    if under and isinstance(doc, dict):
        doc = doc.get(under)
    if not isinstance(doc, dict):
        return []
    found = doc.get("dryRun")
    if isinstance(found, str):
        return [found]
    if isinstance(found, list):
        return [str(v) for v in found]
    return []
