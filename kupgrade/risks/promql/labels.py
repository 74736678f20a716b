"""Label sets as sorted tuples of (name, value) pairs.

A tuple sorts exactly as Prometheus orders series (labels sorted by name, compared pair
by pair, a prefix first: Python compares str by code point, which is UTF-8 byte order),
hashes cheaply for vector matching, and cannot be mutated by one operator behind the
back of another. Empty values never appear: in PromQL an empty label is an absent one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

Labels = tuple[tuple[str, str], ...]
NAME = "__name__"
EMPTY: Labels = ()


def make(pairs: Iterable[tuple[str, str]]) -> Labels:
    return tuple(sorted((k, v) for k, v in pairs if v != ""))


def get(labels: Labels, name: str) -> str:
    for k, v in labels:
        if k == name:
            return v
    return ""


def drop_name(labels: Labels) -> Labels:
    for k, _ in labels:
        if k == NAME:
            return tuple(p for p in labels if p[0] != NAME)
    return labels


def without(labels: Labels, names: frozenset[str]) -> Labels:
    return tuple(p for p in labels if p[0] not in names)


def keep(labels: Labels, names: frozenset[str]) -> Labels:
    return tuple(p for p in labels if p[0] in names)


def with_label(labels: Labels, name: str, value: str) -> Labels:
    """Set (or, for an empty value, delete) one label."""
    rest = [p for p in labels if p[0] != name]
    if value != "":
        rest.append((name, value))
        rest.sort()
    return tuple(rest)


def go_string(labels: Labels) -> str:
    """Prometheus's `labels.Labels.String()`: `{a="b", c="d"}` with Go string quoting."""
    return "{" + ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in labels) + "}"


def valid_name(name: str) -> bool:
    """Prometheus's `model.LabelNameRE`: `^[a-zA-Z_][a-zA-Z0-9_]*$`."""
    return (
        bool(name)
        and (name[0].isascii() and (name[0].isalpha() or name[0] == "_"))
        and all(c.isascii() and (c.isalnum() or c == "_") for c in name)
    )
