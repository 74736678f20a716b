"""The web console in a real browser (headless Debian Chromium driven by Playwright):
the page loads without console errors, a channel draws as many versions as the graph
API returns, a from/to query highlights the hops `kupgrade path -o json` gives, and the
back button restores the previous query. Screenshots of each state are saved under
`artifacts/console/` (not committed)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support.browser import axe_violations, browser_page, install_axe, needs_chromium, shot
from tests.support.service import running_server

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("console")
    subprocess.run(
        [sys.executable, "-m", "kupgrade", "sample", "write", str(root / "sample")],
        check=True,
        capture_output=True,
    )
    return root / "sample"


@pytest.fixture(scope="module")
def base(sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("console-log") / "serve.log"
    with running_server(sample / "releases", sample / "graph-data", log) as server:
        yield server.base


@pytest.fixture
def page(base: str) -> Iterator[Any]:
    with browser_page() as tab:
        yield tab


def test_a_channel_draws_every_version_the_api_returns(page: Any, base: str) -> None:
    page.goto(f"{base}/?channel=stable-4.14")
    page.wait_for_selector(".node")
    doc = httpx.get(
        f"{base}/api/upgrades_info/graph",
        params={"channel": "stable-4.14"},
        headers={"Accept": "application/json"},
    ).json()
    assert page.locator(".node").count() == len(doc["nodes"])
    assert page.locator(".edge.conditional").count() == sum(
        len(block["edges"]) for block in doc.get("conditionalEdges", [])
    )
    shot(page, "channel")
    assert page.errors == []


@pytest.mark.parametrize(
    ("channel", "start", "target"),
    [("stable-4.14", "4.14.4", "4.14.27"), ("stable-4.13", "4.13.30", "4.14.27")],
)
def test_a_path_highlights_the_hops_kupgrade_path_gives(
    page: Any, base: str, channel: str, start: str, target: str
) -> None:
    """Within a channel, and across channels (the graphs of every channel the path walks
    through are drawn together)."""
    page.goto(f"{base}/?channel={channel}&from={start}&to={target}")
    page.wait_for_selector(".hop-item")
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "kupgrade",
            "path",
            "--upstream",
            f"{base}/api/upgrades_info/graph",
            "--from",
            start,
            "--to",
            target,
            "--channel",
            channel,
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    hops = [(h["from"], h["to"]) for h in json.loads(cli.stdout)["hops"]]
    shown = [
        (li.get_attribute("data-from"), li.get_attribute("data-to"))
        for li in page.locator(".hop-item").all()
    ]
    assert shown == hops
    drawn = {
        (e.get_attribute("data-from"), e.get_attribute("data-to"))
        for e in page.locator(".edge.hop").all()
    }
    assert hops and drawn == set(hops)
    shot(page, f"path-{channel}")
    assert page.errors == []


def test_the_back_button_restores_the_previous_query(page: Any, base: str) -> None:
    page.goto(f"{base}/?channel=stable-4.14")
    page.wait_for_selector(".node")
    page.select_option("#channel", "fast-4.14")
    page.wait_for_function("document.querySelector('#summary').textContent.includes('fast-4.14')")
    assert "channel=fast-4.14" in page.url
    page.go_back()
    page.wait_for_function("document.querySelector('#channel').value === 'stable-4.14'")
    assert "channel=stable-4.14" in page.url
    shot(page, "back")
    assert page.errors == []


def _blocked_files(graph_data: Path) -> list[tuple[str, re.Pattern[str]]]:
    """The graph-data's unconditional blocked edges, read here: (to, from regex)."""
    out = []
    for path in sorted((graph_data / "blocked-edges").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        if "matchingRules" not in doc:
            out.append((str(doc["to"]), re.compile(str(doc["from"]))))
    return out


@pytest.mark.parametrize("channel", ["stable-4.13", "fast-4.14"])
def test_blocked_edges_are_drawn_on_request(
    page: Any, base: str, sample: Path, channel: str
) -> None:
    """Off by default; on, every edge graph-data blocked between the channel's versions is
    drawn and listed with what removed it, none of them is one the graph API serves, and
    each is one a blocked-edges file names (its `to`, and a `from` its regex matches)."""
    page.goto(f"{base}/?channel={channel}")
    page.wait_for_selector(".node")
    assert page.locator(".edge.blocked").count() == 0
    page.check("#blocked")
    page.wait_for_function("new URLSearchParams(location.search).get('blocked') === '1'")
    page.wait_for_selector("#blocked-list h2")
    blocked = httpx.get(f"{base}/console/api/blocked", params={"channel": channel}).json()[
        "blocked"
    ]
    doc = httpx.get(
        f"{base}/api/upgrades_info/graph",
        params={"channel": channel},
        headers={"Accept": "application/json"},
    ).json()
    versions = [n["version"] for n in doc["nodes"]]
    served = {(versions[a], versions[b]) for a, b in doc["edges"]}
    pairs = {(b["from"], b["to"]) for b in blocked}
    drawn = {
        (e.get_attribute("data-from"), e.get_attribute("data-to"))
        for e in page.locator(".edge.blocked").all()
    }
    listed = {
        (li.get_attribute("data-from"), li.get_attribute("data-to"))
        for li in page.locator(".blocked-item").all()
    }
    assert pairs and drawn == listed == pairs
    assert not pairs & served
    files = _blocked_files(sample / "graph-data")
    for start, target in pairs:  # the regexes see the versions with their arch build
        assert any(to == target and rx.search(f"{start}+amd64") for to, rx in files), (
            start,
            target,
        )
    assert all(
        "removed by previous.remove_regex" in li.inner_text()
        for li in page.locator(".blocked-item").all()
    )
    shot(page, f"blocked-{channel}")
    page.go_back()
    page.wait_for_function("!document.querySelector('#blocked').checked")
    assert page.errors == []


def test_every_control_has_a_label(page: Any, base: str) -> None:
    page.goto(f"{base}/?channel=stable-4.14")
    page.wait_for_selector(".node")
    unlabelled = page.evaluate(
        """() => [...document.querySelectorAll('select, input')].filter(e =>
             !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map(e => e.id)"""
    )
    assert unlabelled == []
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "channel"


def test_console_api_answers_and_refuses_in_json(base: str) -> None:
    """Without a browser: the page carries the API prefix, the channels are the loaded
    graph-data's, and a path query a user mistyped is a 400 with one line saying why."""
    page = httpx.get(f"{base}/", headers={"Accept": "text/html,application/xhtml+xml"})
    assert page.status_code == 200 and 'content="/api/upgrades_info"' in page.text
    api = httpx.get(f"{base}/")  # a Cincinnati client: the policy engine's empty 404
    assert api.status_code == 404 and api.content == b""
    known = httpx.get(f"{base}/console/api/channels").json()
    assert "stable-4.14" in known["channels"] and "amd64" in known["arches"]
    for query in (
        {"channel": "stable-4.14", "from": "4.14", "to": "4.14.27"},
        {"channel": "nonsense", "from": "4.14.4", "to": "4.14.27"},
        {"channel": "stable-4.14", "from": "4.14.4", "to": "5.0.0"},
        {"channel": "stable-4.14", "from": "\\xff" * 50, "to": "4.14.27"},
    ):
        answer = httpx.get(f"{base}/console/api/path", params=query)
        assert answer.status_code == 400, query
        assert "\n" not in answer.json()["error"]
    for params in (
        {"channel": "no such channel"},
        {"channel": "stable-4.14", "arch": "amd 64"},
        {"channel": "\xff" * 300},
        {},
    ):
        answer = httpx.get(f"{base}/console/api/blocked", params=params)
        assert answer.status_code == 400, params
        assert "\n" not in answer.json()["error"]
    unknown = httpx.get(f"{base}/console/api/blocked", params={"channel": "stable-9.99"})
    assert unknown.json() == {"blocked": []}  # a channel nobody is in: nothing blocked
    none = httpx.get(
        f"{base}/console/api/path",
        params={"channel": "stable-4.14", "from": "4.14.27", "to": "4.14.4"},
    ).json()
    assert none["found"] is False and none["explanation"]


def test_a_clusters_known_issues_read_as_kupgrade_updates_says_them(
    page: Any, base: str, sample: Path
) -> None:
    """A cluster's version and a metrics snapshot given in the page: each known issue
    shown is one of `kupgrade updates -o json`'s conditional updates, word for word, and
    the text is the command's."""
    snapshot = sample / "metrics" / "cluster.om"
    page.goto(f"{base}/?channel=stable-4.14")
    page.wait_for_selector(".node")
    page.click("#cluster-box summary")
    page.select_option("#cluster-version", "4.13.40")
    page.set_input_files("#snapshot", str(snapshot))
    page.click("#check")
    page.wait_for_selector("#cluster-result pre")
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "kupgrade",
            "updates",
            "--upstream",
            f"{base}/api/upgrades_info/graph",
            "--channel",
            "stable-4.14",
            "--version",
            "4.13.40",
            "--metrics",
            str(snapshot),
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    status = json.loads(cli.stdout)
    expected = {
        (u["release"]["version"], r["name"], r["message"])
        for u in status["conditionalUpdates"]
        for r in u["risks"]
    }
    shown = {
        (
            d.get_attribute("data-version"),
            d.get_attribute("data-risk"),
            d.locator(".message").inner_text(),
        )
        for d in page.locator(".issue").all()
    }
    assert expected and shown == expected
    text = subprocess.run(
        [
            sys.executable,
            "-m",
            "kupgrade",
            "updates",
            "--upstream",
            f"{base}/api/upgrades_info/graph",
            "--channel",
            "stable-4.14",
            "--version",
            "4.13.40",
            "--metrics",
            str(snapshot),
        ],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    # the command's text, line for line (the page asked the same service)
    assert page.locator("#cluster-result pre").inner_text().strip() == text.strip()
    assert "cluster=4.13.40" in page.url
    shot(page, "cluster")
    assert page.errors == []


def test_cluster_evaluation_refuses_what_it_cannot_read(base: str) -> None:
    """Hostile or mistaken requests to the cluster view's evaluation: one JSON line, 4xx."""
    url = f"{base}/console/api/updates"
    ok = {"channel": "stable-4.14", "version": "4.13.40"}
    assert httpx.get(url, params=ok).status_code == 405
    cases = [
        ({**ok, "version": "latest"}, b""),
        ({**ok, "wording": "loud"}, b""),
        (ok, b"\xff\xfe\x00 not utf-8"),
        (ok, b"# EOF\n"),  # no samples
        (ok, b'up{job="x" 1\n'),  # truncated
        ({**ok, "prometheus": "http://127.0.0.1:9"}, b"up 1 1\n# EOF\n"),  # both
    ]
    for params, body in cases:
        answer = httpx.post(url, params=params, content=body)
        assert answer.status_code == 400, (params, body, answer.text)
        assert "\n" not in answer.json()["error"]
    # a declared gigabyte is refused from its header, before anything is read
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        raw.sendall(
            b"POST /console/api/updates?channel=stable-4.14&version=4.13.40 HTTP/1.1\r\n"
            b"Host: x\r\nContent-Length: 1073741824\r\n\r\nxx"
        )
        head = raw.recv(200).decode("latin-1")
    assert head.startswith("HTTP/1.1 400"), head


def test_the_page_follows_the_path_prefix(sample: Path, tmp_path: Path) -> None:
    """Served with --path-prefix, the page asks the graph API there (and draws)."""
    with running_server(
        sample / "releases",
        sample / "graph-data",
        tmp_path / "serve.log",
        "--path-prefix",
        "/updates/v9",
    ) as server:
        html = httpx.get(f"{server.base}/", headers={"Accept": "text/html"}).text
        assert 'content="/updates/v9"' in html
        with browser_page(390, 800) as tab:  # a phone
            tab.goto(f"{server.base}/?channel=stable-4.14")
            tab.wait_for_selector(".node")
            assert tab.locator(".node").count() > 0
            shot(tab, "narrow-prefixed")
            assert tab.errors == []


@pytest.fixture(scope="module")
def axe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_axe(tmp_path_factory.mktemp("axe"))


def test_axe_finds_no_accessibility_violation(page: Any, base: str, axe: Path) -> None:
    """axe-core's rules (labels, contrast, nesting, ARIA) on the page with a graph, a
    path and a cluster's known issues shown; and versions are reachable by keyboard."""
    page.goto(f"{base}/?channel=stable-4.14&from=4.14.4&to=4.14.27")
    page.wait_for_selector(".hop-item")
    page.click("#cluster-box summary")
    page.select_option("#cluster-version", "4.13.40")
    page.click("#check")
    page.wait_for_selector("#cluster-result pre")
    assert axe_violations(page, axe) == []
    first = page.locator(".node").first
    first.focus()
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.version") != first.get_attribute(
        "data-version"
    )
    page.keyboard.press("Enter")  # picks the focused version as the new `from`
    page.wait_for_function("new URLSearchParams(location.search).get('from') !== '4.14.4'")
    assert page.errors == []
