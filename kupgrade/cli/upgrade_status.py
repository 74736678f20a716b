"""`kupgrade upgrade status`: an update's progress as `oc adm upgrade status` prints it,
on a simulated cluster or through a kubeconfig (cluster/upgrade_status.py assesses)."""

from __future__ import annotations

import sys
import time
from enum import StrEnum

from kupgrade.cli.output import Format, print_json
from kupgrade.cluster.alerts import Alert
from kupgrade.cluster.backend import Backend
from kupgrade.cluster.kube import KubeBackend
from kupgrade.cluster.thanos import route_alerts
from kupgrade.errors import InputError
from kupgrade.risks.backends import RiskSource
from kupgrade.views.upgrade_status import assess, read_objects
from kupgrade.views.upgrade_status_text import as_data, render


def _alerts(api: Backend, alerting: RiskSource | None) -> list[Alert] | str | None:
    """The alerts `--metrics` or `--prometheus` name, else those of a live cluster's
    thanos-querier Route as oc reads them; why they could not be had (the status goes on
    without them, as oc's does); None when there is nowhere to read them."""
    try:
        given = alerting.alerts() if alerting is not None else None
        if given is None and isinstance(api, KubeBackend):
            return route_alerts(api)
        return given
    except InputError as exc:
        return str(exc)


class Details(StrEnum):
    none = "none"
    nodes = "nodes"
    operators = "operators"
    health = "health"
    all = "all"


def show_status(
    api: Backend, details: Details, output: Format, alerting: RiskSource | None = None
) -> None:
    now = api.now() or time.time()
    objects = read_objects(api, _alerts(api, alerting))
    if isinstance(objects.alerts, str):
        # oc prints this on its standard output, before the status; here it goes to
        # standard error, so that the status stays what oc prints for the same cluster.
        print(
            "Unable to fetch alerts, ignoring alerts in 'Update Health': ",
            objects.alerts,
            file=sys.stderr,
        )
    status = assess(objects, now)
    if output.data:
        print_json(as_data(status))
        return
    wanted: set[str] = (
        {"nodes", "operators", "health"} if details is Details.all else {details.value}
    )
    sys.stdout.write(render(status, wanted))
