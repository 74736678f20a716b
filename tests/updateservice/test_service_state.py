"""The service's graph generations, in process (no HTTP): caching and refresh bookkeeping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kupgrade.graph.policy import PolicyError
from kupgrade.updateservice.metrics import ServiceMetrics
from kupgrade.updateservice.rendered import EMPTY_GRAPH, Rendered
from kupgrade.updateservice.state import GraphState


def loaded(sample_dir: Path) -> GraphState:
    state = GraphState(sample_dir / "releases", sample_dir / "graph-data", 300, ServiceMetrics())
    assert state.refresh_once()
    return state


def test_known_answers_are_rendered_once_and_unknown_ones_not_cached(sample_dir: Path) -> None:
    generation = loaded(sample_dir).current
    assert generation is not None
    warmed = len(generation.renders)
    assert warmed == len(generation.channels) * len(generation.arches)
    first = generation.render("stable-4.14", "amd64")
    assert generation.render("stable-4.14", "amd64") is first
    for i in range(200):
        assert json.loads(generation.render(f"nobody-{i}", "amd64").body) == EMPTY_GRAPH
    assert len(generation.renders) == warmed
    with pytest.raises(PolicyError) as info:
        generation.render("nobody-uses-this", "NOT_AN_ARCH")
    assert info.value.param == "arch"


def test_unchanged_inputs_are_not_rebuilt(sample_dir: Path) -> None:
    state = loaded(sample_dir)
    generation = state.current
    assert state.refresh_once() and state.current is generation
    text = state.metrics.render().decode()
    assert 'kupgrade_graph_refreshes_total{result="unchanged"} 1.0' in text
    assert 'kupgrade_graph_refreshes_total{result="built"} 1.0' in text


def test_the_child_renders_every_known_answer_as_the_service_would(
    sample_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rebuild's child hands back every known (channel, arch) answer already rendered:
    the serving process renders none of them itself, and each is byte for byte (body,
    gzip body, both etags) what rendering it here gives."""
    rendered_here: list[object] = []
    original = Rendered.of

    def counting(doc: object) -> Rendered:
        rendered_here.append(doc)
        return original(doc)

    monkeypatch.setattr(Rendered, "of", staticmethod(counting))
    generation = loaded(sample_dir).current
    assert generation is not None
    assert rendered_here == []  # all came from the child
    assert set(generation.renders) == {
        (c, a) for c in generation.channels for a in generation.arches
    }
    monkeypatch.setattr(Rendered, "of", staticmethod(original))
    for (channel, arch), got in generation.renders.items():
        want = Rendered.of(generation.view.filter(channel, arch))
        assert (got.body, got.etag, got.gzip_body, got.gzip_etag) == (
            want.body,
            want.etag,
            want.gzip_body,
            want.gzip_etag,
        )
