"""The last line of defence between a Python exception and the user's terminal.

Commands turn the errors they expect into `KupgradeError` (one line, exit 1). What reaches
here is either a usage error (click's, shown as one line with the command's --help, exit
2) or something no command expected: the machine's own limits (memory, disk, a read-only
home), or a bug. Those, too, become one line and a non-zero exit; `KUPGRADE_DEBUG=1`
shows the traceback for a bug report.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from typing import Any

# Typer vendors its own click (typer._click, click 8's API); its exceptions are not the
# click package's, so they are caught by these names.
from typer import Abort
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

from kupgrade.errors import KupgradeError

DEBUG_ENV = "KUPGRADE_DEBUG"
EXIT_INTERNAL = 70  # sysexits' EX_SOFTWARE
EXIT_OS = 74  # EX_IOERR: the machine, not the input


def _say(text: str) -> None:
    line = " ".join(text.split())
    try:
        sys.stderr.write(f"error: {line}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _usage(exc: ClickException) -> int:
    if isinstance(exc, NoArgsIsHelpError):
        return exc.exit_code  # Typer has printed the help already
    text = exc.format_message()
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, UsageError) and ctx is not None:
        text += f" (see '{ctx.command_path} --help')"
    _say(text)
    return exc.exit_code


def _os_error(exc: OSError) -> int:
    if exc.errno == errno.EPIPE:
        # The reader of our output went away (`| head`): not an error worth a line.
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), sys.stdout.fileno())
        return 1
    where = f"{exc.filename}: " if exc.filename else ""
    # Imported only on this path: it reads YAML and more, which `--help` should not load.
    from kupgrade.intake.files import os_problem  # noqa: PLC0415

    _say(f"{where}{os_problem(exc)}")
    return EXIT_OS


def guarded(app: Callable[..., Any]) -> int:
    """Run the Typer app without its standalone handling and return the exit code."""
    debug = os.environ.get(DEBUG_ENV, "") not in ("", "0")
    try:
        code = app(standalone_mode=False)
    except ClickException as exc:
        return _usage(exc)
    except Abort:
        _say("aborted")
        return 130
    except KupgradeError as exc:
        _say(str(exc))
        return 1
    except KeyboardInterrupt:
        return 130
    except MemoryError:
        _say("out of memory: the input is larger than this machine can hold")
        return EXIT_OS
    except RecursionError:
        if debug:
            raise
        _say("the input is nested too deeply to read (see KUPGRADE_MAX_DEPTH)")
        return 1
    except OSError as exc:
        if debug:
            raise
        return _os_error(exc)
    except Exception as exc:
        if debug:
            raise
        _say(
            f"internal error: {type(exc).__name__}: {exc}; please report it "
            f"({DEBUG_ENV}=1 shows the traceback)"
        )
        return EXIT_INTERNAL
    except BaseException as exc:
        # A Rust panic in an extension (pyo3's PanicException) is not an Exception.
        if debug or not _is_panic(exc):
            raise
        _say(f"internal error: a library panicked: {exc}; please report it")
        return EXIT_INTERNAL
    return code if isinstance(code, int) else 0


def _is_panic(exc: BaseException) -> bool:
    return type(exc).__name__ == "PanicException"
