"""`kupgrade upgrade status`: an update's progress as `oc adm upgrade status` prints it,
on a simulated cluster or through a kubeconfig (cluster/upgrade_status.py assesses)."""

from __future__ import annotations

import sys
import time
from enum import StrEnum

from kupgrade.cli.output import Format, print_json
from kupgrade.cluster.backend import Backend
from kupgrade.views.upgrade_status import assess, read_objects
from kupgrade.views.upgrade_status_text import as_data, render


class Details(StrEnum):
    none = "none"
    nodes = "nodes"
    operators = "operators"
    health = "health"
    all = "all"


def show_status(api: Backend, details: Details, output: Format) -> None:
    now = api.now() or time.time()
    status = assess(read_objects(api), now)
    if output.data:
        print_json(as_data(status))
        return
    wanted: set[str] = (
        {"nodes", "operators", "health"} if details is Details.all else {details.value}
    )
    sys.stdout.write(render(status, wanted))
