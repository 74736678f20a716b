"""File-based catalog blobs written byte for byte as opm writes them (operator-registry
alpha/declcfg/write.go WriteJSON / WriteYAML and declcfg.go's struct field order).

opm encodes each blob with Go's encoding/json (4-space indent, no HTML escaping, Go's
float formatting) and, for YAML, feeds that JSON through sigs.k8s.io/yaml's JSONToYAML
(go-yaml v2: every mapping's keys sorted, strings that would read back as another type
double-quoted, multi-line strings as literal blocks). Python's json and PyYAML differ on
each of those points, so the encoding is done here; PyYAML's emitter (the same libyaml
design as go-yaml v2's) does the layout once the styles are chosen.

A property value is a `Raw`: opm keeps `json.RawMessage` bytes as they were made (a
bundle directory's built properties keep Go's HTML escapes, `\\u003c`), so they are
written as they are, only re-indented.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import yaml

from kupgrade.olm.gofmt import go_g

INDENT = "    "


@dataclass(frozen=True)
class Raw:
    """Compact JSON text kept as it is (Go's json.RawMessage)."""

    text: str


@dataclass
class RenderedBundle:
    """An olm.bundle blob in opm's field order, and the CSV it carries (CsvJSON: not
    written, but the semver template reads its description and icon)."""

    blob: dict[str, Any]
    csv_json: str = ""


@dataclass
class DeclConfig:
    """opm's DeclarativeConfig: blobs by schema, each a dict in Go's field order."""

    packages: list[dict[str, Any]] = field(default_factory=list)
    channels: list[dict[str, Any]] = field(default_factory=list)
    bundles: list[RenderedBundle] = field(default_factory=list)
    deprecations: list[dict[str, Any]] = field(default_factory=list)
    others: list[dict[str, Any]] = field(default_factory=list)

    def merge(self, other: DeclConfig) -> None:
        """declcfg.go Merge: append each kind."""
        self.packages.extend(other.packages)
        self.channels.extend(other.channels)
        self.bundles.extend(other.bundles)
        self.deprecations.extend(other.deprecations)
        self.others.extend(other.others)


# --- Go's encoding/json -----------------------------------------------------------------

_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def go_string(text: str, escape_html: bool = False) -> str:
    """A JSON string as Go's encoder writes it (U+2028/9 escaped; invalid UTF-8 (lone
    surrogates here) as U+FFFD; HTML characters escaped only when asked)."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in _SHORT:
            out.append(_SHORT[char])
        elif code < 0x20:
            out.append(f"\\u{code:04x}")
        elif escape_html and char in _HTML:
            out.append(_HTML[char])
        elif code in (0x2028, 0x2029):
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _digits(value: float) -> tuple[str, int]:
    """The shortest round-trip digits of a finite non-zero float and its decimal point
    position (value = 0.DIGITS x 10^point), as strconv's shortest formatting finds them."""
    _sign, digits, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    text = "".join(str(d) for d in digits)
    return text, len(text) + int(exponent)


def go_float(value: float) -> str:
    """encoding/json's float64: 'f' format, 'e' below 1e-6 or from 1e21 (e-07 -> e-7)."""
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign = "-" if value < 0 else ""
    digits, point = _digits(value)
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        return sign + _e_format(digits, point, clean=True)
    return sign + _f_format(digits, point)


def _f_format(digits: str, point: int) -> str:
    if point <= 0:
        return "0." + "0" * -point + digits
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return digits[:point] + "." + digits[point:]


def _e_format(digits: str, point: int, clean: bool) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    exp = point - 1
    text = f"{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if clean and text[-4:-1] == "e-0":
        text = text[:-2] + text[-1]
    return text


def go_json(value: Any, escape_html: bool = False) -> str:
    """Compact JSON of `value` as Go encodes it: dicts in their order, ints as float64
    when `value` came through interface{} (callers convert), Raw text as it is."""
    if isinstance(value, Raw):
        return value.text
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_string(value, escape_html)
    if isinstance(value, dict):
        inner = ",".join(
            f"{go_string(str(k), escape_html)}:{go_json(v, escape_html)}" for k, v in value.items()
        )
        return "{" + inner + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(go_json(v, escape_html) for v in value) + "]"
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def go_interface(value: Any) -> Any:
    """`value` as Go holds it after decoding into interface{}: every number a float64,
    every object's keys sorted (Go encodes maps in key order)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dict):
        return {str(k): go_interface(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, (list, tuple)):
        return [go_interface(v) for v in value]
    return value


def raw_interface(value: Any) -> Raw:
    """A decoded JSON value as the RawMessage opm holds after its Meta round trip."""
    return Raw(go_json(go_interface(value)))


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^{}\[\],:"\s]+')


def indent(compact: str, unit: str = INDENT) -> str:
    """encoding/json Indent: a newline and indent after `{`, `[` and `,`, `": "` after a
    key; `{}` and `[]` stay as they are; strings untouched. Token by token (a catalog's
    JSON is hundreds of megabytes)."""
    out: list[str] = []
    depth = 0
    tokens = _TOKEN.findall(compact)
    count = len(tokens)
    i = 0
    while i < count:
        token = tokens[i]
        if token in ("{", "["):
            if i + 1 < count and tokens[i + 1] in ("}", "]"):
                out.append(token + tokens[i + 1])
                i += 2
                continue
            depth += 1
            out.append(token + "\n" + unit * depth)
        elif token in ("}", "]"):
            depth -= 1
            out.append("\n" + unit * depth + token)
        elif token == ",":
            out.append(",\n" + unit * depth)
        elif token == ":":
            out.append(": ")
        else:
            out.append(token)
        i += 1
    return "".join(out)


# --- write order ------------------------------------------------------------------------


def ordered_blobs(cfg: DeclConfig) -> list[dict[str, Any]]:
    """writeToEncoder's order: per package name (sorted) its packages, channels by name,
    bundles by name, others by schema, deprecations; then others without a package."""
    names: set[str] = set()
    by: dict[str, dict[str, list[dict[str, Any]]]] = {}

    def add(name: str, kind: str, blob: dict[str, Any]) -> None:
        if name:
            names.add(name)
            by.setdefault(name, {}).setdefault(kind, []).append(blob)

    for p in cfg.packages:
        add(p.get("name", ""), "packages", p)
    for c in cfg.channels:
        add(c.get("package", ""), "channels", c)
    for b in cfg.bundles:
        add(b.blob.get("package", ""), "bundles", b.blob)
    root_others = []
    for o in cfg.others:
        package = o.get("package")
        if isinstance(package, str) and package:
            add(package, "others", o)
        else:
            root_others.append(o)
    for d in cfg.deprecations:
        add(d.get("package", ""), "deprecations", d)
    out: list[dict[str, Any]] = []
    for name in sorted(names):
        kinds = by[name]
        out += kinds.get("packages", [])
        out += sorted(kinds.get("channels", []), key=lambda c: _go_key(c.get("name", "")))
        out += sorted(kinds.get("bundles", []), key=lambda b: _go_key(b.get("name", "")))
        out += sorted(kinds.get("others", []), key=lambda o: _go_key(str(o.get("schema", ""))))
        out += kinds.get("deprecations", [])
    return out + root_others


def _go_key(text: str) -> bytes:
    """Go compares strings byte by byte (UTF-8)."""
    return text.encode("utf-8", "surrogatepass")


def write_json(cfg: DeclConfig) -> str:
    """WriteJSON: each blob indented by four spaces, one after another."""
    return "".join(indent(go_json(blob)) + "\n" for blob in ordered_blobs(cfg))


def write_yaml(cfg: DeclConfig) -> str:
    """WriteYAML: each blob as `---` and go-yaml v2's rendering of its JSON."""
    return "".join("---\n" + json_to_yaml(go_json(blob)) for blob in ordered_blobs(cfg))


# --- go-yaml v2 -------------------------------------------------------------------------

_NULLS = {"", "~", "null", "Null", "NULL"}
_BOOL_WORDS = "y Y yes Yes YES on On ON true True TRUE n N no No NO off Off OFF false False FALSE"
_BOOLS = frozenset(_BOOL_WORDS.split(" "))
_SPECIAL_FLOATS = {
    f"{sign}.{word}" for sign in ("", "+", "-") for word in ("inf", "Inf", "INF")
} | {".nan", ".NaN", ".NAN"}
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_BASE60 = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
_GO_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]*|0[bB][01]+|[1-9][0-9]*)")
_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
    r"(?:[Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:Z|[-+][0-9]{2}:[0-9]{2})?)?"
)
_GO_FLOAT_DOT = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?|\.(?:inf|infinity|nan)", re.IGNORECASE)


def _resolves_to_string(text: str) -> bool:
    """go-yaml v2 resolve("", s) gives !!str (the string can be written plain)."""
    if text in _NULLS or text in _BOOLS or text in _SPECIAL_FLOATS or text == "<<":
        return False
    head = text[0]
    if head == ".":
        return not _GO_FLOAT_DOT.fullmatch(text)
    if head in "+-0123456789":
        if head.isdigit() and _TIMESTAMP.fullmatch(text):
            return False
        plain = text.replace("_", "")
        if _GO_INT.fullmatch(plain) or _YAML_FLOAT.fullmatch(plain):
            return False
        if re.fullmatch(r"-0b[01]+", plain):
            return False
    return True


@functools.cmp_to_key
def _v2_key_order(a: str, b: str) -> int:
    """go-yaml v2 keyList.Less: letters after other characters, digit runs by value."""
    return -1 if _v2_less(a, b) else (1 if _v2_less(b, a) else 0)


def _v2_less(a: str, b: str) -> bool:
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        al, bl = a[i].isalpha(), b[i].isalpha()
        if al and bl:
            return a[i] < b[i]
        if al or bl:
            return bl
        an = bn = 0
        if a[i] == "0" or b[i] == "0":
            j = i - 1
            while j >= 0 and a[j].isdigit():
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(a) and a[ai].isdigit():
            an = an * 10 + int(a[ai])
            ai += 1
        bi = i
        while bi < len(b) and b[bi].isdigit():
            bn = bn * 10 + int(b[bi])
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return a[i] < b[i]
    return len(a) < len(b)


class _V2Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """PyYAML told the styles go-yaml v2 picks."""


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    if "\n" in text:
        style: str | None = "|"
    elif not _resolves_to_string(text) or _BASE60.fullmatch(text):
        style = '"'
    else:
        style = None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


def _represent_float(dumper: yaml.SafeDumper, value: float) -> yaml.ScalarNode:
    if math.isnan(value):
        text = ".nan"
    elif value in (float("inf"), float("-inf")):
        text = ".inf" if value > 0 else "-.inf"
    else:
        text = go_g(value)
    return dumper.represent_scalar("tag:yaml.org,2002:float", text)


def _represent_dict(dumper: yaml.SafeDumper, value: dict[str, Any]) -> yaml.MappingNode:
    items = sorted(value.items(), key=lambda kv: _v2_key_order(str(kv[0])))
    return dumper.represent_mapping("tag:yaml.org,2002:map", items)


_V2Dumper.add_representer(str, _represent_str)
_V2Dumper.add_representer(float, _represent_float)
_V2Dumper.add_representer(dict, _represent_dict)


def json_to_yaml(text: str) -> str:
    """sigs.k8s.io/yaml JSONToYAML: the JSON read by go-yaml v2 and marshalled again."""
    value = json.loads(text)
    return str(
        yaml.dump(
            value,
            Dumper=_V2Dumper,
            default_flow_style=False,
            allow_unicode=True,
            sort_keys=False,
            width=80,
        )
    )
