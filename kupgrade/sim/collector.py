"""The cycle collector around a simulator's run over a whole cluster (its loads and
builds pause it with kupgrade.collector.paused)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def few_collections() -> Iterator[None]:
    """Keep the cycle collector from rescanning the whole cluster over and over.

    The run creates and drops pods all the time; with the default thresholds every full
    collection walks all of the cluster, which made the run grow much faster than the
    cluster (a third of the time at 1,500 nodes). The objects alive at the start are
    frozen out of collection and the young generation collected less often; both are
    restored. No full collection comes first (0.8 s over a 5,000-node cluster): a cycle
    left from before the run is frozen with the rest and freed after it, at the unfreeze.
    """
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(200_000, 20, 1000)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()
