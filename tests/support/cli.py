"""The CLI run as users run it: a real process, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from kupgrade.cli.main import app


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
    """The CLI in this process (fast enough to call per case), with `home` as
    $KUPGRADE_HOME; the result has exit_code, stdout and stderr apart."""
    result = CliRunner().invoke(app, args, env={"KUPGRADE_HOME": str(home)})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert "Traceback" not in result.stderr, result.stderr
    return result
