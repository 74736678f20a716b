"""The web console in a real browser (headless Debian Chromium driven by Playwright):
the page loads without console errors, a channel draws as many versions as the graph
API returns, a from/to query highlights the hops `kupgrade path -o json` gives, and the
back button restores the previous query. Screenshots of each state are saved under
`artifacts/console/` (not committed)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.service import running_server

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "console"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]  # fmt: skip


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("console")
    subprocess.run([sys.executable, "-m", "kupgrade", "sample", "write", str(root / "sample")],
                   check=True, capture_output=True)  # fmt: skip
    return root / "sample"


@pytest.fixture(scope="module")
def base(sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("console-log") / "serve.log"
    with running_server(sample / "releases", sample / "graph-data", log) as server:
        yield server.base


@pytest.fixture
def page(base: str) -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 800})
            tab.errors = []
            tab.on("console", lambda m: tab.errors.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda e: tab.errors.append(str(e)))
            yield tab
        finally:
            browser.close()


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_a_channel_draws_every_version_the_api_returns(page: Any, base: str) -> None:
    page.goto(f"{base}/?channel=stable-4.14")
    page.wait_for_selector(".node")
    doc = httpx.get(f"{base}/api/upgrades_info/graph", params={"channel": "stable-4.14"},
                    headers={"Accept": "application/json"}).json()  # fmt: skip
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
        [sys.executable, "-m", "kupgrade", "path", "--upstream", f"{base}/api/upgrades_info/graph",
         "--from", start, "--to", target, "--channel", channel, "-o", "json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    hops = [(h["from"], h["to"]) for h in json.loads(cli.stdout)["hops"]]
    shown = [(li.get_attribute("data-from"), li.get_attribute("data-to"))
             for li in page.locator(".hop-item").all()]  # fmt: skip
    assert shown == hops
    drawn = {(e.get_attribute("data-from"), e.get_attribute("data-to"))
             for e in page.locator(".edge.hop").all()}  # fmt: skip
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
    for query in ({"channel": "stable-4.14", "from": "4.14", "to": "4.14.27"},
                  {"channel": "nonsense", "from": "4.14.4", "to": "4.14.27"},
                  {"channel": "stable-4.14", "from": "4.14.4", "to": "5.0.0"},
                  {"channel": "stable-4.14", "from": "\\xff" * 50, "to": "4.14.27"}):  # fmt: skip
        answer = httpx.get(f"{base}/console/api/path", params=query)
        assert answer.status_code == 400, query
        assert "\n" not in answer.json()["error"]
    none = httpx.get(f"{base}/console/api/path",
                     params={"channel": "stable-4.14", "from": "4.14.27", "to": "4.14.4"}).json()  # fmt: skip
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
        [sys.executable, "-m", "kupgrade", "updates", "--upstream", f"{base}/api/upgrades_info/graph",
         "--channel", "stable-4.14", "--version", "4.13.40", "--metrics", str(snapshot), "-o", "json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    status = json.loads(cli.stdout)
    expected = {(u["release"]["version"], r["name"], r["message"])
                for u in status["conditionalUpdates"] for r in u["risks"]}  # fmt: skip
    shown = {(d.get_attribute("data-version"), d.get_attribute("data-risk"),
              d.locator(".message").inner_text()) for d in page.locator(".issue").all()}  # fmt: skip
    assert expected and shown == expected
    text = subprocess.run(
        [sys.executable, "-m", "kupgrade", "updates", "--upstream", f"{base}/api/upgrades_info/graph",
         "--channel", "stable-4.14", "--version", "4.13.40", "--metrics", str(snapshot)],
        capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
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
        raw.sendall(b"POST /console/api/updates?channel=stable-4.14&version=4.13.40 HTTP/1.1\r\n"
                    b"Host: x\r\nContent-Length: 1073741824\r\n\r\nxx")  # fmt: skip
        head = raw.recv(200).decode("latin-1")
    assert head.startswith("HTTP/1.1 400"), head


def test_the_page_follows_the_path_prefix(sample: Path, tmp_path: Path) -> None:
    """Served with --path-prefix, the page asks the graph API there (and draws)."""
    with running_server(sample / "releases", sample / "graph-data", tmp_path / "serve.log",
                        "--path-prefix", "/updates/v9") as server:  # fmt: skip
        html = httpx.get(f"{server.base}/", headers={"Accept": "text/html"}).text
        assert 'content="/updates/v9"' in html
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            try:
                tab = browser.new_page(viewport={"width": 390, "height": 800})  # a phone
                tab.goto(f"{server.base}/?channel=stable-4.14")
                tab.wait_for_selector(".node")
                assert tab.locator(".node").count() > 0
                shot(tab, "narrow-prefixed")
            finally:
                browser.close()


AXE_CORE = "4.14.1"  # from the npm registry at test time; nothing is committed


@pytest.fixture(scope="module")
def axe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed (axe-core comes from the npm registry)")
    root = tmp_path_factory.mktemp("axe")
    done = subprocess.run([npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix",
                           str(root), f"axe-core@{AXE_CORE}"], capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    script = root / "node_modules" / "axe-core" / "axe.min.js"
    if done.returncode != 0 or not script.exists():
        pytest.skip(f"axe-core could not be installed from the npm registry: {done.stderr[:200]}")
    return script


def test_axe_finds_no_accessibility_violation(page: Any, base: str, axe: Path) -> None:
    """axe-core's rules (labels, contrast, nesting, ARIA) on the page with a graph, a
    path and a cluster's known issues shown; and versions are reachable by keyboard."""
    page.goto(f"{base}/?channel=stable-4.14&from=4.14.4&to=4.14.27")
    page.wait_for_selector(".hop-item")
    page.click("#cluster-box summary")
    page.select_option("#cluster-version", "4.13.40")
    page.click("#check")
    page.wait_for_selector("#cluster-result pre")
    page.add_script_tag(path=str(axe))
    found = page.evaluate(
        """async () => (await axe.run(document)).violations.map(v =>
             `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map(n => n.target).join(' ')}`)"""
    )
    assert found == []
    first = page.locator(".node").first
    first.focus()
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.version") != first.get_attribute(
        "data-version"
    )
    page.keyboard.press("Enter")  # picks the focused version as the new `from`
    page.wait_for_function("new URLSearchParams(location.search).get('from') !== '4.14.4'")
    assert page.errors == []
