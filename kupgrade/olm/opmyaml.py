"""One catalog file read as opm reads it: the objects apimachinery's YAMLOrJSONDecoder
yields to operator-registry's WalkMetasReader (alpha/declcfg/load.go, at 4f9d6f22).

The reference code, branch by branch:
  * k8s.io/apimachinery v0.36 pkg/util/yaml/decoder.go: a file whose first non-space
    character is `{` is read as a JSON stream; when a value fails to decode and at most
    one value came before it, the rest (past the whitespace up to the first newline) is
    read as YAML instead, and if that fails too the JSON error is the one reported.
    YAMLReader cuts a YAML stream at every line that starts with `---` (only spaces or a
    comment may follow it, else "invalid Yaml document separator"); each non-empty chunk
    is one document, blank or comment-only chunks included.
  * sigs.k8s.io/yaml v1.6 yaml.go Unmarshal: go-yaml v2 decodes the chunk's first
    document without strictness (a repeated key: the last one wins), then map keys become
    strings (ints as digits, bools as true/false, floats by FormatFloat 'g' 32-bit) and the
    value goes through JSON, which refuses NaN and infinities.
  * go.yaml.in/yaml/v2 resolve.go: YAML 1.1 scalars as go-yaml resolves them into an
    interface{} — y/n/yes/no/on/off are bools, ints in any base Go's ParseInt(…, 0, 64)
    reads (underscores dropped), decimal floats, and timestamps, sexagesimal numbers and
    `=` stay strings; an unknown tag leaves the value as it is.
  * A document that is null (a blank or comment-only chunk, `~`) leaves opm's Meta empty,
    so it fails as an object without a schema; it is yielded as None for the catalog to say so.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from collections.abc import Hashable, Iterator
from typing import Any

import yaml

from kupgrade.errors import InputError
from kupgrade.intake import check_depth
from kupgrade.intake.jsondoc import TOO_MANY_DIGITS, stack_for
from kupgrade.intake.limits import DEPTH
from kupgrade.intake.yamldoc import check_limits
from kupgrade.olm.gofmt import go_g

_JSON_SPACE = " \t\n\r"
_SEPARATOR = "---"


class _PyParser(
    yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer
):
    """The pure-Python parser chain, where PyYAML was built without libyaml."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)


# libyaml's parser (it composes too) when PyYAML has it
_PARSER: Any = getattr(yaml, "CParser", _PyParser)
_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_BOOLS = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE"), True),
    **dict.fromkeys(("on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE"), False),
    **dict.fromkeys(("off", "Off", "OFF"), False),
}
_SPECIAL_FLOATS = {
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_NUMBER_TAG = "tag:kupgrade,2026:go-number"
_INT64 = 1 << 63
_UINT64 = 1 << 64


def _refuse_constant(name: str) -> Any:
    """Go's encoding/json knows no NaN or Infinity literal."""
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")


_JSON = json.JSONDecoder(parse_constant=_refuse_constant)


def read_stream(text: str, source: str) -> Iterator[Any]:
    """The objects of one catalog file (None for a null YAML document)."""
    start = len(text) - len(text.lstrip())
    if not text.startswith("{", start):
        yield from _yaml_stream(text, source)
        return
    position, count, consumed = start, 0, 0  # consumed: the end of the last value read
    max_depth = DEPTH.value()
    while True:
        while position < len(text) and text[position] in _JSON_SPACE:
            position += 1
        if position >= len(text):
            return
        try:
            with stack_for(max_depth):
                value, after = _JSON.raw_decode(text, position)
        except RecursionError:
            raise DEPTH.exceeded("the nesting", source) from None
        except ValueError as exc:  # JSONDecodeError, a refused constant, 4,300 digits
            if count > 1:
                raise _load_error(f"not a JSON stream: {exc}", source) from None
            yield from _yaml_after_json(text, consumed, source, f"not a JSON stream: {exc}")
            return
        # no value is nested deeper than its brackets: most blobs need no walk
        if text.count("[", position, after) + text.count("{", position, after) > max_depth:
            check_depth(value, source, max_depth=max_depth)
        count += 1
        yield value
        position = consumed = after


def _yaml_after_json(text: str, position: int, source: str, json_error: str) -> Iterator[Any]:
    """decoder.go: rewind to the end of the last JSON value, eat whitespace up to and
    including the first newline, and read on as YAML; the JSON error wins if the first
    YAML document fails too."""
    while position < len(text) and text[position].isspace():
        position += 1
        if text[position - 1] == "\n":
            break
    documents = _yaml_stream(text[position:], source)
    try:
        first = next(documents)
    except StopIteration:
        return
    except InputError:
        raise _load_error(json_error, source) from None
    yield first
    yield from documents


def _yaml_stream(text: str, source: str) -> Iterator[Any]:
    for chunk in _chunks(text, source):
        yield _document(chunk, source)


def _chunks(text: str, source: str) -> Iterator[str]:
    """YAMLReader.Read: documents cut at `---` lines, each line as LineReader returns it
    (ending in a newline, a carriage return before it dropped)."""
    buffer: list[str] = []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line starts no line of its own
    for raw in lines:
        line = raw.removesuffix("\r")
        if line.startswith(_SEPARATOR):
            rest = line[len(_SEPARATOR) :].strip()
            if rest and not rest.startswith("#"):
                raise _load_error(f"invalid Yaml document separator: {rest}", source)
            if buffer:
                yield "".join(buffer)
                buffer = []
            continue
        buffer.append(line + "\n")
    if buffer:
        yield "".join(buffer)


def _document(chunk: str, source: str) -> Any:
    """The chunk's first YAML document, as JSON would carry it."""
    try:
        check_limits(chunk, source)
        loader = _GoLoader(chunk)
        try:
            value = loader.get_data() if loader.check_data() else None  # type: ignore[no-untyped-call]
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())
        raise _load_error(f"not a JSON or YAML stream: {reason}", source) from None
    except _KeyError as exc:
        raise _load_error(f"error converting YAML to JSON: {exc}", source) from None
    except ValueError:  # an explicit !!int of thousands of digits
        raise _load_error(f"not a JSON or YAML stream: {TOO_MANY_DIGITS}", source) from None
    except RecursionError:
        raise DEPTH.exceeded("the nesting", source) from None
    try:
        return _jsonable(value)
    except ValueError as exc:
        raise _load_error(f"error converting YAML to JSON: {exc}", source) from None


def _load_error(message: str, source: str) -> InputError:
    return InputError(message, file=source, rule="opm load")


def _jsonable(value: Any) -> Any:
    """sigs.k8s.io/yaml convertToJSONableObject, then what json.Marshal refuses."""
    if isinstance(value, dict):
        return {_key(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"json: unsupported value: {go_g(value)}")
    if isinstance(value, bytes):  # !!binary: go-yaml gives the decoded bytes as a string
        return value.decode("utf-8", "replace")
    if isinstance(value, datetime.date):  # an explicit !!timestamp stays text in go-yaml
        return value.isoformat()
    if isinstance(value, set):  # an explicit !!set: a mapping of nulls
        return {_key(k): None for k in value}
    return value


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        text = go_g(key, 32)
        return {"+Inf": ".inf", "-Inf": "-.inf", "NaN": ".nan"}.get(text, text)
    kind = "<nil>" if key is None else type(key).__name__
    raise _KeyError(f"unsupported map key of type: {kind}, key: {key!r}")


class _KeyError(ValueError):
    """A map key JSON cannot name (sigs.k8s.io/yaml: "unsupported map key of type")."""


def go_number(text: str) -> Any:
    """go-yaml v2 resolve() for a plain scalar starting with a digit, a sign or a dot."""
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    if text.startswith("."):  # ParseFloat(text) as it is, underscores and all
        return float(text) if _GO_FLOAT.fullmatch(text) else text
    plain = text.replace("_", "")
    number = _go_parse_int(plain)
    if number is not None and -_INT64 <= number < _UINT64:
        return number
    if _GO_FLOAT.fullmatch(plain) and math.isfinite(decimal := float(plain)):
        return decimal  # ParseFloat's out-of-range error leaves the text a string
    return text


def _go_parse_int(plain: str) -> int | None:
    """strconv.ParseInt(plain, 0, 64): a sign, then 0b/0o/0x or a leading 0 for octal."""
    sign, digits = (plain[0], plain[1:]) if plain[:1] in "+-" else ("", plain)
    base = 10
    if digits[:2].lower() in ("0b", "0o", "0x"):
        base, digits = {"b": 2, "o": 8, "x": 16}[digits[1].lower()], digits[2:]
    elif len(digits) > 1 and digits.startswith("0"):
        base, digits = 8, digits[1:]
    if not digits or not digits.isascii() or not digits.isalnum():
        return None
    try:
        value = int(digits, base)
    except ValueError:
        return None
    return -value if sign == "-" else value


class _GoResolver(yaml.resolver.BaseResolver):
    """go-yaml v2's implicit types for plain scalars (no timestamps, no base 60)."""


for _first, _tag, _pattern in (
    (list("yYnNtTfFoO"), "tag:yaml.org,2002:bool", "|".join(_BOOLS)),
    (["~", "n", "N", ""], "tag:yaml.org,2002:null", "~|null|Null|NULL|"),
    (["<"], "tag:yaml.org,2002:merge", "<<"),
    (list("-+.0123456789"), _NUMBER_TAG, r"[-+.0-9][-+._0-9a-zA-Z]*"),
):
    _GoResolver.add_implicit_resolver(_tag, re.compile(f"^(?:{_pattern})$"), _first)


class _GoConstructor(yaml.constructor.SafeConstructor):
    """SafeConstructor with go-yaml's bools and numbers, and unknown tags ignored."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        """Keys become strings as each is read (sigs.k8s.io/yaml's conversion): Go keeps
        `1` and `true` apart where a Python dict would merge them."""
        self.flatten_mapping(node)
        mapping: dict[Hashable, Any] = {}
        for key_node, value_node in node.value:
            key = _key(self.construct_object(key_node, deep=True))
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


def _construct_bool(loader: Any, node: yaml.ScalarNode) -> bool:
    return _BOOLS[loader.construct_scalar(node)]


def _construct_number(loader: Any, node: yaml.ScalarNode) -> Any:
    return go_number(loader.construct_scalar(node))


def _construct_untagged(loader: Any, node: yaml.Node) -> Any:
    """resolve.go: a tag go-yaml does not know leaves the value as it is."""
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)


_GoConstructor.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
_GoConstructor.add_constructor(_NUMBER_TAG, _construct_number)
_GoConstructor.add_constructor(None, _construct_untagged)


class _GoLoader(_PARSER, _GoConstructor, _GoResolver):  # type: ignore[misc]
    """A loader with go-yaml v2's scalars; a repeated key overwrites the earlier one."""

    def __init__(self, stream: str) -> None:
        _PARSER.__init__(self, stream)
        _GoConstructor.__init__(self)
        _GoResolver.__init__(self)
