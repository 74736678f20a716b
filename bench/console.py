"""The web console's time to first render of the largest channel (the one with the most
versions) of a graph-data, in headless Debian Chromium: from navigation start until every
version of the channel is drawn; and the bytes the page took over the wire (HTML, CSS,
JavaScript and the JSON it asked for). Median of several page loads. Run by `make bench`
(bench/run.py) or alone: `python -m bench.console RELEASES GRAPH_DATA`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import sync_playwright

from kupgrade.updateservice.process import ServiceProcess

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
TRANSFERRED = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  return nav.transferSize + performance.getEntriesByType('resource')
    .reduce((sum, r) => sum + r.transferSize, 0);
}"""


def largest_channel(base: str) -> tuple[str, int, int]:
    known = httpx.get(f"{base}/console/api/channels").json()
    best = ("", 0, 0)
    for channel in known["channels"]:
        doc = httpx.get(
            f"{base}/api/upgrades_info/graph",
            params={"channel": channel},
            headers={"Accept": "application/json"},
        ).json()
        if len(doc["nodes"]) > best[1]:
            best = (channel, len(doc["nodes"]), len(doc["edges"]))
    return best


def bench_console(releases: Path, graph_data: Path, runs: int = 5) -> dict[str, Any]:
    chromium = shutil.which("chromium")
    if chromium is None:
        return {"skipped": "Debian's chromium is not installed"}
    with (
        tempfile.TemporaryDirectory() as tmp,
        ServiceProcess(releases, graph_data, Path(tmp) / "serve.log") as service,
    ):
        service.wait_for("/readyz")
        channel, versions, edges = largest_channel(service.base)
        times, sizes = _loads(chromium, f"{service.base}/?channel={channel}", versions, runs)
    return {
        "channel": channel,
        "versions": versions,
        "edges": edges,
        "first_render_ms": round(statistics.median(times), 1),
        "bytes": int(statistics.median(sizes)),
        "runs": runs,
    }


def _loads(chromium: str, url: str, versions: int, runs: int) -> tuple[list[float], list[int]]:
    """(ms to the last version drawn, bytes transferred) of each fresh page load."""
    times, sizes = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            for _ in range(runs):
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(url)
                page.wait_for_function(
                    f"document.querySelectorAll('.node').length === {versions}", timeout=60_000
                )
                times.append(float(page.evaluate("performance.now()")))
                sizes.append(int(page.evaluate(TRANSFERRED)))
                page.close()
        finally:
            browser.close()
    return times, sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("releases", type=Path)
    parser.add_argument("graph_data", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps(bench_console(args.releases, args.graph_data, args.runs), indent=2))


if __name__ == "__main__":
    main()
