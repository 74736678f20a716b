"""The cycle collector paused while big documents are read and built.

A 5,000-node simulated cluster is millions of small objects (100,000 pods as dicts), and
a real operator catalog a million (its blobs, their properties, the model built from
them). CPython's cycle collector runs after every 700 new containers and, every tenth
time, rescans what survived: reading such a document triggers it thousands of times over
a heap that only grows, none of it garbage. Loading a store of 100,000 pods took 1.8 s
with it and 0.4 s without; indexing those pods by node when a cluster is opened, 1.5 s
and 0.14 s; loading, validating and indexing the largest catalog, 0.24 s and 0.20 s in a
process holding what `make bench` holds.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No cycle collection while documents are built or loaded; it resumes as it was.
    Nothing leaks: a cycle made meanwhile is found by the next collection after it."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
