"""The CLI run as users run it: a real process, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def kupgrade(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "kupgrade", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        timeout=120,
        env={**os.environ, **env} if env else None,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result
