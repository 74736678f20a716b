"""Secondary metadata from a graph-data tree (SPEC A3): channels, blocked edges, raw metadata.

Cincinnati's tolerance is kept on purpose: a file that cannot be read as what it must be
is skipped and recorded (never fatal), while the `version` file, `raw/metadata.json` and
the `channels/` and `blocked-edges/` directories are required. `kupgrade graph lint`
reports what was skipped and more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kupgrade import intake
from kupgrade.collector import paused
from kupgrade.errors import BuildError, InputError
from kupgrade.graph.model import MatchingRule, Risk
from kupgrade.graph.regex import RegexError, SafeRegex, compile_regex
from kupgrade.graph.tree import Entry, Tree
from kupgrade.intake import YamlError
from kupgrade.versions import SemVer

_YAML_EXTENSION = re.compile(r"ya+ml")
UNCONDITIONAL_KEYS = frozenset({"to", "from"})
CONDITIONAL_KEYS = frozenset({"to", "from", "url", "name", "message", "matchingRules"})


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class BlockedEdge:
    """An unconditional block (exactly `to` and `from`)."""

    path: str
    to: SemVer
    from_regex: SafeRegex


@dataclass(frozen=True, slots=True)
class ConditionalBlock:
    """A conditional edge: the plain edge becomes conditional and carries `risk`."""

    path: str
    to: SemVer
    from_regex: SafeRegex
    risk: Risk


@dataclass(frozen=True, slots=True)
class Channel:
    path: str
    name: str
    versions: tuple[SemVer, ...]


@dataclass(slots=True)
class GraphData:
    schema_version: SemVer
    raw_metadata: dict[str, dict[str, str]]
    blocked: list[BlockedEdge] = field(default_factory=list)
    conditional: list[ConditionalBlock] = field(default_factory=list)
    channels: list[Channel] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def yaml_extension(name: str) -> bool:
    """Cincinnati reads a file when its extension *contains* a match of `ya+ml`.

    The extension is the text after the last dot; a name like `.yaml` has none (Rust's
    `Path::extension`).
    """
    stem, dot, ext = name.rpartition(".")
    return bool(dot) and bool(stem) and _YAML_EXTENSION.search(ext) is not None


def load_yaml(data: bytes, source: str = "") -> Any:
    """Parse one YAML document within the intake limits; ValueError with a readable reason."""
    try:
        return intake.load_yaml(data, source)
    except YamlError as exc:
        raise ValueError(f"invalid YAML: {exc.reason}") from None
    except InputError as exc:
        raise ValueError(exc.message + (f"; {exc.hint}" if exc.hint else "")) from None


@paused()  # thousands of documents: see kupgrade.collector
def load_graph_data(tree: Tree) -> GraphData:
    """Parse a graph-data tree; raises BuildError for what Cincinnati cannot build with."""
    data = GraphData(_schema_version(tree), _raw_metadata(tree))
    for entry, doc in _yaml_documents(tree, "blocked-edges", data.skipped):
        _classify_blocked_edge(f"blocked-edges/{entry.name}", doc, data)
    for entry, doc in _yaml_documents(tree, "channels", data.skipped):
        path = f"channels/{entry.name}"
        try:
            data.channels.append(parse_channel(path, doc))
        except ValueError as exc:
            data.skipped.append(Skipped(path, str(exc)))
    return data


def _schema_version(tree: Tree) -> SemVer:
    raw = tree.file("version")
    if raw is None:
        raise BuildError(
            "missing: graph-data must have a 'version' file", file=f"{tree.source}/version"
        )
    try:
        text = intake.decode_utf8(raw, f"{tree.source}/version").strip()
    except InputError as exc:
        raise BuildError(exc.message, file=exc.file, hint=exc.hint) from None
    version = SemVer.try_parse(text)
    if version is None:
        raise BuildError(f"{text!r} is not a SemVer version", file=f"{tree.source}/version")
    if version.major != 1:
        raise BuildError(
            f"graph-data schema {text} is not supported (major version 1 is)",
            file=f"{tree.source}/version",
        )
    return version


def _raw_metadata(tree: Tree) -> dict[str, dict[str, str]]:
    where = f"{tree.source}/raw/metadata.json"
    raw = tree.file("raw/metadata.json")
    if raw is None:
        raise BuildError("missing: graph-data must have raw/metadata.json", file=where)
    try:
        doc = intake.decode_json(raw, where)
    except InputError as exc:
        raise BuildError(exc.message, file=where, hint=exc.hint) from None
    if not isinstance(doc, dict):
        raise BuildError("must be an object {version: {key: value}}", file=where)
    for version, entries in doc.items():
        if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
            raise BuildError("must map metadata keys to string values", file=where, field=version)
    return doc


def _yaml_documents(tree: Tree, subdir: str, skipped: list[Skipped]) -> list[tuple[Entry, Any]]:
    entries = tree.listdir(subdir)
    if entries is None:
        raise BuildError(
            f"missing: graph-data must have a '{subdir}/' directory", file=f"{tree.source}/{subdir}"
        )
    out = []
    for entry in entries:
        path = f"{subdir}/{entry.name}"
        if not yaml_extension(entry.name):
            reason = (
                "has no extension"
                if "." not in entry.name.lstrip(".")
                else "has an extension other than .yaml"
            )
            skipped.append(Skipped(path, reason))
        elif entry.data is None:
            skipped.append(Skipped(path, entry.problem or "cannot be read"))
        else:
            try:
                out.append((entry, load_yaml(entry.data, f"{tree.source}/{path}")))
            except ValueError as exc:
                skipped.append(Skipped(path, str(exc)))
    return out


def _classify_blocked_edge(path: str, doc: Any, data: GraphData) -> None:
    try:
        if isinstance(doc, dict) and set(doc) == UNCONDITIONAL_KEYS:
            data.blocked.append(BlockedEdge(path, parse_to(doc), parse_from(doc)))
        elif isinstance(doc, dict) and set(doc) >= CONDITIONAL_KEYS:
            data.conditional.append(
                ConditionalBlock(path, parse_to(doc), parse_from(doc), parse_risk(doc))
            )
        elif isinstance(doc, dict):
            missing = sorted(CONDITIONAL_KEYS - set(doc))
            raise ValueError(
                "is neither a blocked edge (exactly 'to' and 'from') nor a conditional edge "
                f"(missing {', '.join(missing)})"
            )
        else:
            raise ValueError("must be a YAML mapping")
    except ValueError as exc:
        data.skipped.append(Skipped(path, str(exc)))


def parse_to(doc: dict[str, Any]) -> SemVer:
    value = doc.get("to")
    parsed = SemVer.try_parse(value) if isinstance(value, str) else None
    if parsed is None:
        raise ValueError(f"'to' must be a SemVer version string, got {value!r}")
    return parsed


def parse_from(doc: dict[str, Any]) -> SafeRegex:
    value = doc.get("from")
    if not isinstance(value, str):
        raise ValueError(f"'from' must be a regular expression string, got {value!r}")
    try:
        return compile_regex(value)
    except RegexError as exc:
        raise ValueError(f"'from' regex {value!r} {exc.reason}") from None


def parse_risk(doc: dict[str, Any]) -> Risk:
    for key in ("url", "name", "message"):
        if not isinstance(doc.get(key), str):
            raise ValueError(f"'{key}' must be a string, got {doc.get(key)!r}")
    return Risk(doc["url"], doc["name"], doc["message"], parse_rules(doc.get("matchingRules")))


def parse_rules(rules: Any) -> tuple[MatchingRule, ...]:
    if not isinstance(rules, list):
        raise ValueError(f"'matchingRules' must be a list, got {rules!r}")
    out = []
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            raise ValueError(f"matchingRules[{i}] must be a mapping")
        rtype = rule.get("type", "")
        promql = rule.get("promql", {})
        if not isinstance(rtype, str):
            raise ValueError(f"matchingRules[{i}].type must be a string")
        if promql is None:
            promql = {}
        if not isinstance(promql, dict) or not isinstance(promql.get("promql", ""), str):
            raise ValueError(f"matchingRules[{i}].promql must be a mapping {{promql: <query>}}")
        out.append(MatchingRule(rtype, promql.get("promql", "")))
    return tuple(out)


def parse_channel(path: str, doc: Any) -> Channel:
    if not isinstance(doc, dict):
        raise ValueError("must be a YAML mapping with 'name' and 'versions'")
    name, versions = doc.get("name"), doc.get("versions")
    if not isinstance(name, str):
        raise ValueError(f"'name' must be a string, got {name!r}")
    if "-" not in name:
        # Cincinnati sorts channel lists by the text after the first '-' and panics
        # without one; we skip the file instead of failing the whole build.
        raise ValueError(f"channel name {name!r} has no '-' (e.g. stable-4.14)")
    if not isinstance(versions, list):
        raise ValueError(f"'versions' must be a list, got {versions!r}")
    parsed = []
    for i, item in enumerate(versions):
        version = SemVer.try_parse(item) if isinstance(item, str) else None
        if version is None:
            raise ValueError(f"versions[{i}] must be a SemVer version string, got {item!r}")
        parsed.append(version)
    return Channel(path, name, tuple(parsed))
