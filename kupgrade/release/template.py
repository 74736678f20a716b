"""The part of Go text/template that the controller's own manifests use.

Files under `manifests/` are rendered before parsing with .ReleaseImage, .ClusterProfile
and .Images (image-references tag -> pull spec). Real payloads only print those values,
so this renders field references, `index .Images "name"`, string literals, comments and
the `{{-`/`-}}` trim markers. Any other action fails the file the way an unknown field
does in the controller: the file is skipped with a warning, never half-rendered. No
Python library implements Go's template language, hence this small interpreter.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.DOTALL)
_STRING = r'"(?:[^"\\]|\\.)*"'
_FIELD_CHAIN = re.compile(r"^(\.[A-Za-z_][A-Za-z0-9_]*)+$")
_INDEX = re.compile(
    rf"^index\s+(\.[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s+({_STRING})$"
)


class TemplateError(Exception):
    """The file cannot be rendered; the controller skips such a file."""


def _unquote(literal: str) -> str:
    return bytes(literal[1:-1], "utf-8").decode("unicode_escape")


def _field(data: Mapping[str, Any], chain: str, type_name: str) -> Any:
    value: Any = data
    for i, name in enumerate(chain.split(".")[1:]):
        if i == 0:
            if name not in data:
                raise TemplateError(f"can't evaluate field {name} in type {type_name}")
            value = data[name]
        elif isinstance(value, Mapping):
            value = value.get(name)  # a missing map key prints "<no value>"
        else:
            raise TemplateError(f"can't evaluate field {name} in type string")
    return value


def _evaluate(expr: str, data: Mapping[str, Any], type_name: str) -> str:
    expr = expr.strip()
    if _FIELD_CHAIN.match(expr):
        value = _field(data, expr, type_name)
        return "<no value>" if value is None else str(value)
    if match := _INDEX.match(expr):
        container = _field(data, match.group(1), type_name)
        if not isinstance(container, Mapping):
            raise TemplateError(f"error calling index: cannot index {match.group(1)}")
        return str(container.get(_unquote(match.group(2)), ""))
    if re.fullmatch(_STRING, expr):
        return _unquote(expr)
    raise TemplateError(f"unsupported template action {{{{{expr}}}}}")


def render(
    text: str, data: Mapping[str, Any], type_name: str = "payload.manifestRenderConfig"
) -> str:
    """Render `text` with `data`; raises TemplateError where Go's template would fail."""
    out: list[str] = []
    position = 0
    for match in _ACTION.finditer(text):
        before = text[position : match.start()]
        if match.group(1):
            before = before.rstrip()
        out.append(before)
        body = match.group(2)
        if not body.strip().startswith("/*"):
            out.append(_evaluate(body, data, type_name))
        elif not body.strip().endswith("*/"):
            raise TemplateError("unclosed comment")
        position = match.end()
        if match.group(3):
            rest = text[position:]
            position += len(rest) - len(rest.lstrip())
    tail = text[position:]
    if "{{" in tail:
        raise TemplateError("unclosed action")
    out.append(tail)
    return "".join(out)
