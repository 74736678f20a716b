"""A process's own peak memory, said where its time is (`controller run --profile-run`)
and measured by the benches (`make bench`).

`getrusage(RUSAGE_SELF).ru_maxrss` is not it for a process started by a bigger one:
Linux carries the parent's high-water mark into a child across fork and exec, so a child
of a 1 GB `make bench` reports 1 GB whatever it used. /proc/self/status's VmHWM belongs to
the process's own address space, which exec replaces.
"""

from __future__ import annotations

import resource
from pathlib import Path

STATUS = Path("/proc/self/status")


def peak_mb() -> float:
    """This process's peak resident memory in MB (VmHWM; ru_maxrss where there is no /proc)."""
    try:
        for line in STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
