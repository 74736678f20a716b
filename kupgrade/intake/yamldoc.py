"""YAML from untrusted text: bounded nesting and alias expansion, duplicate keys refused.

PyYAML (and libyaml under it) has none of these guards: a document nested 100,000 deep
overflows the C stack, and an alias bomb ("billion laughs") builds a structure whose
traversal never ends. So the events are scanned first — iteratively, counting how many
nodes the document would have with every alias expanded — and only a document within the
limits is composed. The scan is skipped when the text cannot hold a problem (no alias
and fewer structure characters than the depth limit), which is nearly every file.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import yaml

from kupgrade.errors import InputError
from kupgrade.intake.jsondoc import TOO_MANY_DIGITS
from kupgrade.intake.limits import DEPTH, NODES, LimitError
from kupgrade.intake.text import decode_utf8

SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_EVENT_LOADER: Any = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
_MERGE = "tag:yaml.org,2002:merge"
_STRUCTURE = "[{-:?"


class YamlError(InputError):
    """A YAML syntax or structure problem; `reason` is the text without the file."""

    def __init__(self, reason: str, file: str) -> None:
        super().__init__(f"not valid YAML: {reason}", file=file)
        self.reason = reason


class _DuplicateKey(yaml.YAMLError):
    pass


class _Guard:
    """Refuses a mapping that names a key twice (the last one would silently win)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        checked: set[int] = self.__dict__.setdefault("_checked", set())
        if isinstance(node, yaml.MappingNode) and id(node) not in checked:
            checked.add(id(node))
            self._refuse_duplicates(node)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]

    def _refuse_duplicates(self, node: yaml.MappingNode) -> None:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE or not isinstance(key_node, yaml.ScalarNode):
                continue
            key = self.construct_object(key_node)  # type: ignore[attr-defined]
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the constructor refuses it itself
                continue
            if first is not None:
                raise _DuplicateKey(f"key {key!r} appears twice: on line {first} and line {line}")
            seen[key] = line


@cache
def guarded_loader(loader: type) -> type:
    """`loader` with duplicate keys refused (one subclass per loader, made once)."""
    return type(f"Guarded{loader.__name__}", (_Guard, loader), {})


def load_yaml(data: bytes | str, source: str, loader: type | None = None) -> Any:
    """The first document of a YAML text (None when empty), read within the limits."""
    docs = _load(data, source, loader, single=True)
    return docs[0] if docs else None


def load_yaml_all(data: bytes | str, source: str, loader: type | None = None) -> list[Any]:
    """Every document of a YAML stream, read within the limits."""
    return _load(data, source, loader, single=False)


def _load(data: bytes | str, source: str, loader: type | None, *, single: bool) -> list[Any]:
    text = decode_utf8(data, source) if isinstance(data, bytes) else data
    cls = guarded_loader(loader or SAFE_LOADER)
    try:
        if _needs_scan(text):
            _scan(text, source)
        instance = cls(text)
        try:
            if single:
                return [instance.get_single_data()]
            docs = []
            while instance.check_data():
                docs.append(instance.get_data())
            return docs
        finally:
            instance.dispose()
    except yaml.YAMLError as exc:
        raise YamlError(" ".join(str(exc).split()), source) from None
    except ValueError:  # a scalar the constructor cannot convert (an integer of 5,000 digits)
        raise YamlError(TOO_MANY_DIGITS, source) from None
    except RecursionError:
        raise DEPTH.exceeded("the nesting", source) from None


def check_limits(text: str, source: str) -> None:
    """Refuse a YAML text that nests too deep or expands its aliases too far, before any
    loader builds it (for readers with a loader of their own, such as opm's)."""
    if _needs_scan(text):
        _scan(text, source)


def _needs_scan(text: str) -> bool:
    if "*" in text and _ALIAS.search(text):
        return True
    return sum(text.count(c) for c in _STRUCTURE) >= DEPTH.value()


# An alias is `*` and an anchor name (no space, no flow indicator), at a line's start or
# after a space, a tab, a flow indicator or a `:` (a flow mapping's `"key":*alias` needs no
# space). A `*` inside a plain scalar (graph-data's `from: 4\.14\..*` regexes) or between
# spaces (PromQL's ` * ` in a block scalar) cannot be one; a quoted one only costs a scan.
_ALIAS = re.compile(r"(?:^|[\s\[{,:])\*[^\s,\[\]{}]", re.M)


def _scan(text: str, source: str) -> None:
    """Walk the events once: refuse deep nesting, recursive aliases and expansion bombs."""
    max_depth, max_nodes = DEPTH.value(), NODES.value()
    parser = _EVENT_LOADER(text)
    # Each open collection: [anchor, expanded node count so far].
    stack: list[list[Any]] = []
    anchors: dict[str, int] = {}
    expanded = 0  # nodes that aliases add beyond those written out
    try:
        while parser.check_event():
            event = parser.get_event()
            size = 0  # expanded nodes this event adds to the enclosing collection
            if isinstance(event, yaml.DocumentStartEvent):
                anchors.clear()
            elif isinstance(event, yaml.CollectionStartEvent):
                if len(stack) >= max_depth:
                    raise DEPTH.exceeded(f"the nesting at line {_line(event)}", source)
                stack.append([event.anchor, 1])
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, size = stack.pop()
                if anchor is not None:
                    anchors[anchor] = size
            elif isinstance(event, yaml.ScalarEvent):
                size = 1
                if event.anchor is not None:
                    anchors[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                if any(entry[0] == event.anchor for entry in stack):
                    raise LimitError(
                        f"alias *{event.anchor} at line {_line(event)} refers to "
                        "a node that contains it (a recursive structure)",
                        file=source,
                    )
                size = anchors.get(event.anchor or "", 1)
                expanded += size - 1
            if size and stack:
                stack[-1][1] += size
            if expanded > max_nodes:
                raise NODES.exceeded("what aliases add to the document", source)
    finally:
        parser.dispose()


def _line(event: Any) -> int:
    mark = event.start_mark
    return int(mark.line) + 1 if mark is not None else 0
