"""`kupgrade upgrade recommend`: `oc adm upgrade recommend` on a simulated cluster, through
a kubeconfig, on a capture (--mock-clusterversion, oc's own flag) or on a must-gather
(--from); views/upgrade_recommend.py decides and words it. oc's exit codes: 1 with
"error: ..." after the output when --version names an update that is not offered or
issues apply that --accept does not name; 0 otherwise, whatever the issues."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import typer

from kupgrade.cli.captured import captured
from kupgrade.cli.live import backend
from kupgrade.cli.output import Format, print_json
from kupgrade.cluster.alerts import Alert
from kupgrade.cluster.backend import Backend
from kupgrade.cluster.kube import KubeBackend
from kupgrade.cluster.thanos import route_alerts
from kupgrade.errors import InputError
from kupgrade.risks.backends import RiskSource
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.homes import opened
from kupgrade.sim.platforms import platform_of
from kupgrade.views.recommend_capture import checks_of, mock_checks, read_clusterversion
from kupgrade.views.recommend_checks import Check
from kupgrade.views.upgrade_recommend import Asked, Recommendation, recommend

NOT_OPENSHIFT = (
    "No cluster version information available - you must be connected to an OpenShift "
    "version 4 server to fetch the current version"
)


@dataclass(frozen=True)
class Where:
    """The cluster recommend reads: one of a simulated cluster, a kubeconfig, a capture
    or a dump; and where its alerts come from when not the cluster itself."""

    cluster: str | None = None
    kubeconfig: Path | None = None
    context: str | None = None
    capture: Path | None = None
    dump: list[Path] | None = None
    now: str | None = None
    alerting: RiskSource | None = None


def check_flags(recommending: bool, asked: Asked) -> None:
    """recommend's own flags go with `upgrade recommend` only."""
    if recommending:
        return
    for given, flag in (
        (asked.version, "--version"),
        (asked.show_outdated, "--show-outdated-releases"),
        (asked.quiet, "--quiet"),
    ):
        if given:
            raise InputError(f"{flag} goes with `upgrade recommend`", field=flag)


def _flagged(alerting: RiskSource | None) -> list[Check] | str | None:
    """The prechecks of the alerts --metrics or --prometheus name (or why they could not
    be read); None when neither was given."""
    if alerting is None or not (alerting.metrics or alerting.prometheus):
        return None
    try:
        return checks_of(alerting.alerts() or [])
    except InputError as exc:
        return str(exc)


def _live_checks(api: KubeBackend) -> list[Check] | str:
    """The alerts of the cluster's thanos-querier Route, as oc reads them (alerts.go,
    inspectalerts.GetAlerts)."""
    try:
        return checks_of(route_alerts(api))
    except InputError as exc:
        return str(exc)


def _sim_checks(metrics: str | None) -> list[Check] | str:
    """A simulated cluster's alerts: the ALERTS series of the metrics snapshot its risks
    are evaluated on; a cluster without one has no alerting to ask."""
    if not metrics:
        return "the simulated cluster has no metrics snapshot: give --metrics or --prometheus"
    found = _flagged(RiskSource(metrics=Path(metrics)))
    assert found is not None
    return found


def _dump_checks(alerts: list[Alert] | str | None) -> list[Check] | str:
    if alerts is None:
        return "the dump holds no alerts (an /api/v1/alerts answer saved beside its objects)"
    return checks_of(alerts)


def _clusterversion(api: Backend) -> dict[str, object]:
    cv = api.get("ClusterVersion", "version")
    if cv is None:
        raise InputError(NOT_OPENSHIFT)
    return cv


def assess(where: Where, asked: Asked) -> Recommendation:
    """Read the cluster and its prechecks from wherever `where` says, and recommend."""
    # oc's Complete: a capture is read, then the flags are checked, before anything else.
    cv = read_clusterversion(where.capture) if where.capture is not None else None
    asked.target()
    flagged = _flagged(where.alerting)
    if where.capture is not None and cv is not None:
        return recommend(cv, flagged or mock_checks(str(where.capture)), asked)
    if where.dump:
        dumped = captured(where.dump, where.now, mock=True)
        return recommend(_clusterversion(dumped), flagged or _dump_checks(dumped.alerts), asked)
    if where.kubeconfig is not None or where.context is not None:
        api = backend(where.kubeconfig, where.context)
        return recommend(_clusterversion(api), flagged or _live_checks(api), asked)
    with opened(where.cluster) as (_, store, spec):
        if "upgrade status" not in platform_of(spec).verbs:
            raise InputError(
                f"`upgrade recommend` does not apply to {platform_of(spec).title} clusters",
                field="ACTION",
            )
        cv = _clusterversion(SimCluster(store))
    return recommend(cv, flagged or _sim_checks(spec.metrics), asked)


def show_recommend(where: Where, asked: Asked, output: Format) -> None:
    """Print as oc prints (standard output, then its warnings on standard error, then
    "error: ..." and exit 1 when the run ended in one); -o json: the assessment."""
    found = assess(where, asked)
    if output.data:
        print_json(found.data)
    else:
        sys.stdout.write(found.out)
        sys.stdout.flush()
    sys.stderr.write(found.err)
    if found.error is not None:
        if not output.data:
            sys.stderr.write(f"error: {found.error}\n")
        raise typer.Exit(1)
