"""Expression files: `{expressions: [{id, expr}]}`, the format of the conformance cases
and of `kupgrade promql eval --exprs`."""

from __future__ import annotations

from pathlib import Path

from kupgrade import intake
from kupgrade.errors import InputError

EXPRS_RULE = "expressions file: {expressions: [{id, expr}, ...]}"


def load_expressions(path: Path) -> dict[str, str]:
    """Read `{expressions: [{id, expr}]}` (the conformance cases' format)."""
    doc = intake.load_yaml(intake.read_file(path, "expressions file"), str(path))
    items = doc.get("expressions") if isinstance(doc, dict) else None
    if not isinstance(items, list) or not items:
        # An empty list would print an empty table with exit 0: nothing was evaluated.
        raise InputError(
            "expected a list under 'expressions'"
            if not isinstance(items, list)
            else "the file lists no expression",
            file=str(path),
            field="expressions",
            rule=EXPRS_RULE,
        )
    out: dict[str, str] = {}
    for index, item in enumerate(items):
        where = f"expressions[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("expr"), str):
            raise InputError(
                "each entry needs a string 'expr'", file=str(path), field=where, rule=EXPRS_RULE
            )
        ident = str(item.get("id", index))
        if ident in out:
            raise InputError(
                f"id {ident!r} appears twice", file=str(path), field=f"{where}.id", rule=EXPRS_RULE
            )
        out[ident] = item["expr"]
    return out
