"""The cycle collector around the simulator's bulk work on whole clusters.

A 5,000-node cluster is millions of small objects (100,000 pods as dicts). CPython's
cycle collector runs after every 700 new containers and, every tenth time, rescans what
survived: building or loading such a cluster triggers it thousands of times over a heap
that only grows, none of it ever a cycle (the objects are JSON documents). Loading a
store of 100,000 pods took 1.8 s with it and 0.4 s without; indexing those pods by node
when a cluster is opened, 1.5 s and 0.14 s.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No cycle collection while a cluster's objects are built or loaded (acyclic
    documents: nothing waits on the collector to be freed); it resumes as it was."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


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
