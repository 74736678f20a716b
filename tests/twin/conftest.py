"""What the twin tests share: an update service on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.graphserver import serve_graph

AWS_VERSION = "4.8.0-0.nightly-2021-07-31-065602"


@pytest.fixture
def upstream() -> Iterator[str]:
    """An update service on loopback whose graph goes from the captures' and the default
    cluster's versions to 4.9.0 and 4.14.27."""
    with serve_graph([AWS_VERSION, "4.9.0", "4.13.40", "4.14.27"]) as url:
        yield url
