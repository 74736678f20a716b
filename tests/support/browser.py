"""Headless Debian Chromium driven by Playwright, for the console's browser tests: a
page that records console errors, and screenshots saved under `artifacts/console/`
(not committed)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "console"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@contextmanager
def browser_page(width: int = 1280, height: int = 800) -> Iterator[Any]:
    """A new page; `page.errors` collects console errors and uncaught exceptions."""
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            tab = browser.new_page(viewport={"width": width, "height": height})
            tab.errors = []
            tab.on("console", lambda m: tab.errors.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda e: tab.errors.append(str(e)))
            yield tab
        finally:
            browser.close()


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


AXE_CORE = "4.14.1"  # from the npm registry at test time; nothing is committed


def install_axe(root: Path) -> Path:
    """axe-core installed from the npm registry into `root`; skips the test without npm
    or the registry."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed (axe-core comes from the npm registry)")
    done = subprocess.run(
        [
            npm,
            "install",
            "--silent",
            "--no-audit",
            "--no-fund",
            "--prefix",
            str(root),
            f"axe-core@{AXE_CORE}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    script = root / "node_modules" / "axe-core" / "axe.min.js"
    if done.returncode != 0 or not script.exists():
        pytest.skip(f"axe-core could not be installed from the npm registry: {done.stderr[:200]}")
    return script


def axe_violations(page: Any, script: Path) -> list[str]:
    """axe-core's rules (labels, contrast, nesting, ARIA) on the page as it is now."""
    page.add_script_tag(path=str(script))
    found: list[str] = page.evaluate(
        """async () => (await axe.run(document)).violations.map(v =>
             `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map(n => n.target).join(' ')}`)"""
    )
    return found
