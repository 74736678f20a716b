"""opm's replaces-chain rule (alpha/model model.go validateReplacesChain) walked in linear
time: the same verdicts and messages as opm's own quadratic walk (about 10 GB and two
minutes for a 50,000-bundle channel here), written below as the reference, on random
channels. The 50,000-bundle channel itself: test_catalog_scale.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kupgrade.olm.catalog import Entry
from kupgrade.olm.graph import HeadError, channel_head, replaces_chain_error


def _opm(entries: list[Entry]) -> str | None:
    """The reference: opm's walk as written, every path grown at every step."""
    try:
        head = channel_head(entries)
    except HeadError as exc:
        return exc.message
    by_name = {e.name: e for e in entries}
    skipped = {s for e in entries for s in e.skips}
    chain_from: dict[str, list[str]] = {}
    reached = {head}
    current: Entry | None = by_name[head]
    while current is not None:
        chain_from.setdefault(current.name, [current.name])
        if current.replaces in skipped:
            break
        for path in chain_from.values():
            path.append(current.replaces)
        if current.replaces in reached:
            cycle = " -> ".join(chain_from[current.replaces])
            return f"detected cycle in replaces chain of upgrade graph: {cycle}"
        reached.add(current.replaces)
        current = by_name.get(current.replaces)
    stranded = sorted(set(by_name) - reached - skipped)
    if stranded:
        return f"channel contains one or more stranded bundles: {', '.join(stranded)}"
    return None


NAMES = [f"op.v{i}" for i in range(8)]
ENTRY = st.builds(
    Entry,
    name=st.sampled_from(NAMES),
    replaces=st.sampled_from(["", *NAMES, "op.gone"]),
    skips=st.lists(st.sampled_from([*NAMES, "op.old"]), max_size=2).map(tuple),
)


@given(st.lists(ENTRY, min_size=1, max_size=8, unique_by=lambda e: e.name))
def test_the_linear_walk_says_what_opms_walk_says(entries: list[Entry]) -> None:
    assert replaces_chain_error(entries) == _opm(entries)
