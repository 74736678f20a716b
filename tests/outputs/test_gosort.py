"""Go's sort.Slice reproduced (kupgrade/outputs/gosort.py): a correct sort whatever the
input, stable up to 12 items as Go's insertion sort is, and the same order every time."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kupgrade.outputs.gosort import go_sort_slice


def _by_key(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[0]


items = st.lists(st.integers(0, 6), max_size=300).map(lambda ks: [(k, i) for i, k in enumerate(ks)])


@given(items)
def test_it_sorts_and_keeps_every_item(pairs: list[tuple[int, int]]) -> None:
    done = go_sort_slice(pairs, _by_key)
    assert sorted(done) == sorted(pairs)
    assert [k for k, _ in done] == sorted(k for k, _ in pairs)
    assert go_sort_slice(pairs, _by_key) == done  # deterministic


@given(st.lists(st.integers(0, 3), max_size=12))
def test_up_to_twelve_items_it_is_stable(keys: list[int]) -> None:
    pairs = [(k, i) for i, k in enumerate(keys)]
    assert go_sort_slice(pairs, _by_key) == sorted(pairs, key=lambda p: p[0])


def test_the_input_list_is_left_alone_and_patterns_are_handled() -> None:
    pairs = [(k % 5, i) for i, k in enumerate(range(1000, 0, -1))]
    before = list(pairs)
    for shaped in (pairs, sorted(pairs), sorted(pairs, reverse=True), [(0, i) for i in range(500)]):
        done = go_sort_slice(shaped, _by_key)
        assert [k for k, _ in done] == sorted(k for k, _ in shaped)
    assert pairs == before


def test_equal_items_beyond_twelve_are_not_kept_in_order() -> None:
    """What makes this worth reproducing: Go's order of equal items is its own."""
    pairs = [(i % 2, i) for i in range(40)]
    done = go_sort_slice(pairs, _by_key)
    assert done != sorted(pairs, key=lambda p: p[0])
