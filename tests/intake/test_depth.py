"""The nesting guard of every JSON and YAML reader (intake.check_depth) against the depth
of the value counted by recursion, on drawn values and limits (property test)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.errors import InputError
from kupgrade.intake import check_depth, decode_json_stream

SCALARS = st.none() | st.booleans() | st.integers() | st.text(alphabet="ab[]{}", max_size=3)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=40,
)


def depth(value: Any) -> int:
    """Containers one inside another down to the deepest: `[1]` is one, `1` none."""
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


def _nested(levels: int) -> Any:
    value: Any = 0
    for i in range(levels):
        value = [value] if i % 2 else {"k": value}
    return value


@settings(max_examples=300, deadline=None)
@given(value=VALUES, limit=st.integers(1, 8))
def test_refuses_exactly_what_is_deeper_than_the_limit(value: Any, limit: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KUPGRADE_MAX_DEPTH", str(limit))
        deeper = depth(value) > limit
        try:
            check_depth(value, "drawn.json")
        except InputError as exc:
            assert deeper, exc
            assert "drawn.json" in str(exc) and "nesting" in str(exc)
        else:
            assert not deeper


@pytest.mark.parametrize("levels", [199, 200, 201, 5000])
def test_the_default_limit_on_a_deep_chain(levels: int) -> None:
    """Mixed dicts and lists 5,000 deep are walked without recursion, and refused."""
    if levels <= 200:
        check_depth(_nested(levels), "deep.json")
    else:
        with pytest.raises(InputError, match="nesting"):
            check_depth(_nested(levels), "deep.json")


@settings(max_examples=200, deadline=None)
@given(values=st.lists(VALUES, min_size=1, max_size=5), limit=st.integers(1, 6))
def test_a_stream_refuses_exactly_a_value_deeper_than_the_limit(
    values: list[Any], limit: int
) -> None:
    """opm's concatenated JSON: values with fewer brackets than the limit skip the walk,
    and none deeper than the limit gets through (brackets in strings only count more)."""
    text = "\n".join(json.dumps(v) for v in values)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KUPGRADE_MAX_DEPTH", str(limit))
        deeper = any(depth(v) > limit for v in values)
        try:
            assert list(decode_json_stream(text, "catalog.json")) == values
        except InputError as exc:
            assert deeper, exc
        else:
            assert not deeper
