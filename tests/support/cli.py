"""The CLI run as users run it: a real process, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any


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


def run_cli(args: list[str], home: Path) -> Any:
    """`kupgrade ARGS` in a process of its own with `home` as $KUPGRADE_HOME; the result
    has exit_code, stdout and stderr apart."""
    done = kupgrade(*args, env={"KUPGRADE_HOME": str(home)})
    return SimpleNamespace(exit_code=done.returncode, stdout=done.stdout, stderr=done.stderr)
