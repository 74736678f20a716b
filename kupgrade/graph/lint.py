"""`kupgrade graph lint`: every problem of a graph-data tree, with file, field and reason.

The graph-data feeds the update graph and its risks (SPEC A3, A4); refusals explain
themselves (SPEC X4).

The builder keeps Cincinnati's tolerance and silently skips a bad file; the lint is how
authors find out before they publish. Beyond what makes the builder skip a file it checks
what Cincinnati accepts but users almost never mean: unknown keys (typos such as `_to`),
versions written as YAML numbers, risk names, non-https urls, `Always` rules with extra
keys, a rule type twice in one list, risks that share a name but not a definition,
regexes outside RE2, and file names that do not start with their `to` version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from kupgrade import intake
from kupgrade.errors import InputError
from kupgrade.graph.graphdata import (
    CONDITIONAL_KEYS,
    UNCONDITIONAL_KEYS,
    load_yaml,
    yaml_extension,
)
from kupgrade.graph.policy import CHANNEL_PATTERN
from kupgrade.graph.regex import RegexError, compile_regex
from kupgrade.graph.tree import Entry, Tree
from kupgrade.versions import SemVer

BLOCKED_EDGE_KEYS = CONDITIONAL_KEYS | {"fixedIn"}
CHANNEL_KEYS = frozenset({"name", "versions", "feeder", "tombstones"})
FEEDER_KEYS = frozenset({"name", "delay", "filter", "errata"})
RULE_TYPES = ("Always", "PromQL")
RISK_NAME = re.compile(r"[A-Z][A-Za-z0-9_]*")
_CHANNEL_NAME = re.compile(CHANNEL_PATTERN[1:-1])


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    file: str
    field: str
    reason: str

    def __str__(self) -> str:
        return (
            f"{self.file}: {self.field}: {self.reason}"
            if self.field
            else f"{self.file}: {self.reason}"
        )

    def to_json(self) -> dict[str, str]:
        return {"file": self.file, "field": self.field, "reason": self.reason}


class _Report:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, file: str, field: str, reason: str) -> None:
        self.problems.append(Problem(file, field, reason))


def lint_tree(tree: Tree) -> list[Problem]:
    """All problems, sorted by file then field."""
    report = _Report()
    _lint_version(tree, report)
    _lint_raw_metadata(tree, report)
    risks: dict[str, tuple[str, tuple[Any, ...]]] = {}
    for path, doc in _documents(tree, "blocked-edges", report):
        _lint_blocked_edge(path, doc, report, risks)
    names: dict[str, str] = {}
    for path, doc in _documents(tree, "channels", report):
        _lint_channel(path, doc, report, names)
    return sorted(set(report.problems))


def _lint_version(tree: Tree, report: _Report) -> None:
    raw = tree.file("version")
    if raw is None:
        report.add("version", "", "missing: graph-data must have a 'version' file (e.g. 1.1.0)")
        return
    text = raw.decode("utf-8", "replace").strip()
    version = SemVer.try_parse(text)
    if version is None:
        report.add("version", "", f"{text!r} is not a SemVer version")
    elif version.major != 1:
        report.add("version", "", f"schema {text} is not supported (major version 1 is)")


def _lint_raw_metadata(tree: Tree, report: _Report) -> None:
    path = "raw/metadata.json"
    raw = tree.file(path)
    if raw is None:
        report.add(path, "", "missing: graph-data must have raw/metadata.json (may be {})")
        return
    try:
        doc = intake.decode_json(raw, path)
    except InputError as exc:
        report.add(path, "", exc.message)
        return
    if not isinstance(doc, dict):
        report.add(path, "", "must be an object {version: {key: value}}")
        return
    for version, entries in doc.items():
        if SemVer.try_parse(version) is None:
            report.add(path, version, "is not a SemVer version; the entry matches no release")
        if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
            report.add(path, version, "must map metadata keys to string values")


def _documents(tree: Tree, subdir: str, report: _Report) -> list[tuple[str, Any]]:
    entries = tree.listdir(subdir)
    if entries is None:
        report.add(f"{subdir}/", "", f"missing: graph-data must have a '{subdir}/' directory")
        return []
    out = []
    for entry in entries:
        path = f"{subdir}/{entry.name}"
        doc = _read(entry, path, report)
        if doc is not None:
            out.append((path, doc))
    return out


def _read(entry: Entry, path: str, report: _Report) -> Any:
    if not yaml_extension(entry.name):
        report.add(path, "", "is not read by the graph builder: the extension must be .yaml")
        return None
    if entry.data is None:
        report.add(path, "", entry.problem or "cannot be read")
        return None
    try:
        doc = load_yaml(entry.data, path)
    except ValueError as exc:
        report.add(path, "", str(exc))
        return None
    if not isinstance(doc, dict):
        report.add(path, "", "must be a YAML mapping")
        return None
    return doc


def _version_field(path: str, field: str, value: Any, report: _Report) -> SemVer | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        report.add(path, field, f"{value!r} is a YAML number, not a version; quote it")
        return None
    parsed = SemVer.try_parse(value) if isinstance(value, str) else None
    if parsed is None:
        report.add(path, field, f"{value!r} is not a SemVer version")
    return parsed


def _regex_field(path: str, field: str, value: Any, report: _Report) -> None:
    if not isinstance(value, str):
        report.add(path, field, f"must be a regular expression string, got {value!r}")
        return
    try:
        compile_regex(value)
    except RegexError as exc:
        report.add(path, field, f"regex {value!r} {exc.reason}")


def _lint_blocked_edge(
    path: str, doc: dict[str, Any], report: _Report, risks: dict[str, tuple[str, tuple[Any, ...]]]
) -> None:
    for key in sorted(set(doc) - BLOCKED_EDGE_KEYS, key=str):
        report.add(
            path, str(key), "unknown key (known: " + ", ".join(sorted(BLOCKED_EDGE_KEYS)) + ")"
        )
    for key in ("to", "from"):
        if key not in doc:
            report.add(path, key, "missing")
    if "to" in doc:
        to = _version_field(path, "to", doc["to"], report)
        if to is not None and not names_version(path.rsplit("/", 1)[-1], to):
            report.add(
                path,
                "to",
                f"file name should start with the 'to' version {to} (e.g. {to}-<risk>.yaml)",
            )
    if "from" in doc:
        _regex_field(path, "from", doc["from"], report)
    if set(doc) & (CONDITIONAL_KEYS - UNCONDITIONAL_KEYS):
        _lint_risk(path, doc, report, risks)
    elif "fixedIn" in doc:
        report.add(
            path,
            "fixedIn",
            "only conditional edges (with url, name, message, matchingRules) take fixedIn",
        )
    if "fixedIn" in doc:
        _version_field(path, "fixedIn", doc["fixedIn"], report)


def names_version(file_name: str, to: SemVer) -> bool:
    """`<to>-<what>.yaml`, or graph-data's `<from>-to-<to>.yaml` for single-edge blocks."""
    pattern = rf"(?:^|-to-){re.escape(str(to))}(?=[.\-+])"
    return re.search(pattern, file_name) is not None


def _lint_risk(
    path: str, doc: dict[str, Any], report: _Report, risks: dict[str, tuple[str, tuple[Any, ...]]]
) -> None:
    for key in sorted(CONDITIONAL_KEYS - set(doc)):
        report.add(
            path,
            key,
            "missing (a conditional edge needs to, from, url, name, message, matchingRules)",
        )
    name, url, message = doc.get("name"), doc.get("url"), doc.get("message")
    if "name" in doc and not (isinstance(name, str) and RISK_NAME.fullmatch(name)):
        report.add(path, "name", f"{name!r} must match ^[A-Z][A-Za-z0-9_]*$ (a CamelCase reason)")
    if "url" in doc:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme != "https" or not parts.netloc:
            report.add(path, "url", f"{url!r} must be an https:// URL")
    if "message" in doc and not (isinstance(message, str) and message.strip()):
        report.add(path, "message", "must be a non-empty string")
    if "matchingRules" in doc:
        _lint_rules(path, doc["matchingRules"], report)
    if isinstance(name, str):
        definition = (url, message, _plain(doc.get("matchingRules")))
        first = risks.setdefault(name, (path, definition))
        if first[1] != definition:
            differs = [
                k
                for k, a, b in zip(
                    ("url", "message", "matchingRules"), first[1], definition, strict=True
                )
                if a != b
            ]
            report.add(
                path,
                "name",
                f"risk {name} is also defined in {first[0]} with a different {', '.join(differs)}",
            )


def _plain(value: Any) -> Any:
    """A hashable, comparable copy of YAML data."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _plain(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_plain(v) for v in value)
    return value


def _lint_rules(path: str, rules: Any, report: _Report) -> None:
    if not isinstance(rules, list) or not rules:
        report.add(path, "matchingRules", "must be a non-empty list of rules")
        return
    seen: set[str] = set()
    for i, rule in enumerate(rules):
        where = f"matchingRules[{i}]"
        if not isinstance(rule, dict):
            report.add(path, where, "must be a mapping with 'type'")
            continue
        rtype = rule.get("type")
        if rtype not in RULE_TYPES:
            report.add(
                path,
                f"{where}.type",
                f"{rtype!r} is not a known rule type ({', '.join(RULE_TYPES)}); clusters skip it",
            )
        if isinstance(rtype, str):
            if rtype in seen:
                report.add(
                    path,
                    f"{where}.type",
                    f"{rtype} appears twice in one list; only the first can decide",
                )
            seen.add(rtype)
        extra = set(rule) - {"type", "promql"}
        if rtype == "Always" and (extra or "promql" in rule):
            report.add(path, where, "an Always rule takes no other keys")
        elif extra:
            report.add(path, where, f"unknown keys: {', '.join(sorted(map(str, extra)))}")
        if rtype == "PromQL":
            promql = rule.get("promql")
            query = promql.get("promql") if isinstance(promql, dict) else None
            if not isinstance(query, str) or not query.strip():
                report.add(path, f"{where}.promql.promql", "a PromQL rule needs a non-empty query")
            elif isinstance(promql, dict) and set(promql) - {"promql"}:
                report.add(
                    path,
                    f"{where}.promql",
                    "unknown keys: " + ", ".join(sorted(map(str, set(promql) - {"promql"}))),
                )


def _lint_channel(path: str, doc: dict[str, Any], report: _Report, names: dict[str, str]) -> None:
    for key in sorted(set(doc) - CHANNEL_KEYS, key=str):
        report.add(path, str(key), "unknown key (known: " + ", ".join(sorted(CHANNEL_KEYS)) + ")")
    name = doc.get("name")
    if not isinstance(name, str):
        report.add(path, "name", f"must be a string, got {name!r}")
    else:
        if not _CHANNEL_NAME.fullmatch(name):
            report.add(
                path,
                "name",
                f"{name!r} can never be requested: channels must match {CHANNEL_PATTERN}",
            )
        if "-" not in name:
            report.add(
                path, "name", f"{name!r} has no '-'; Cincinnati cannot sort it (e.g. stable-4.14)"
            )
        if name in names:
            report.add(path, "name", f"channel {name} is also defined in {names[name]}")
        names.setdefault(name, path)
    versions = doc.get("versions")
    if not isinstance(versions, list):
        report.add(path, "versions", "must be a list of versions")
    else:
        seen: set[str] = set()
        for i, item in enumerate(versions):
            parsed = _version_field(path, f"versions[{i}]", item, report)
            if parsed is not None:
                if str(parsed) in seen:
                    report.add(path, f"versions[{i}]", f"{parsed} is listed twice")
                seen.add(str(parsed))
    _lint_feeder(path, doc, report)
    tombstones = doc.get("tombstones", [])
    if not isinstance(tombstones, list):
        report.add(path, "tombstones", "must be a list of versions")
    else:
        for i, item in enumerate(tombstones):
            _version_field(path, f"tombstones[{i}]", item, report)


def _lint_feeder(path: str, doc: dict[str, Any], report: _Report) -> None:
    if "feeder" not in doc:
        return
    feeder = doc["feeder"]
    if not isinstance(feeder, dict):
        report.add(path, "feeder", "must be a mapping with name, delay and filter")
        return
    for key in sorted(set(feeder) - FEEDER_KEYS, key=str):
        report.add(
            path, f"feeder.{key}", "unknown key (known: " + ", ".join(sorted(FEEDER_KEYS)) + ")"
        )
    if not isinstance(feeder.get("name"), str):
        report.add(path, "feeder.name", "must name the channel family that feeds this one")
    if "filter" in feeder:
        _regex_field(path, "feeder.filter", feeder["filter"], report)
