"""The preconditions `oc adm upgrade recommend` checks before it lists updates: the
cluster's firing alerts read as conditions, True for a happy signal, False for a sad one,
Unknown when there is not enough to say (openshift/oc pkg/cli/admin/upgrade/recommend
precheck.go, alerts.go). Each sad condition carries the name `--accept` takes for it, so
that a user can say which known issues they update through."""

from __future__ import annotations

from dataclasses import dataclass

from kupgrade.cluster.alerts import PRECHECK_LABEL, Alert

NODE_ALERTS = (
    "KubeletHealthState",
    "KubeNodeNotReady",
    "KubeNodeReadinessFlapping",
    "KubeNodeUnreachable",
)
VIRT_ALERTS = ("VirtHandlerDaemonSetRolloutFailing", "VMCannotBeEvicted")
SLOW_ROLL = "which may slow workload redistribution during rolling node updates."


@dataclass(frozen=True)
class Check:
    """oc's acceptableCondition: a metav1.Condition and the name `--accept` knows it by
    (several alerts of one name share it)."""

    type: str
    status: str
    reason: str
    message: str
    acceptance: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "type": self.type,
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "acceptanceName": self.acceptance,
        }


def no_test_data(alerts_path: str) -> list[Check]:
    """A mock run without an alerts file beside the capture (or an empty one): Unknown,
    accepted as AlertNoTestData (alerts.go, the mockData branch)."""
    return [
        Check(
            "recommended/Alert",
            "Unknown",
            "NoTestData",
            f"This --mock-clusterversion run did not have alert data available at {alerts_path}",
            "AlertNoTestData",
        )
    ]


def _details(alert: Alert) -> str:
    """Summary, description and runbook as oc joins them into one message."""
    summary = alert.annotation("summary") or alert.name
    if not summary.endswith("."):
        summary += "."
    description, message = alert.annotation("description"), alert.annotation("message")
    if message and description:
        said = f" The alert description is: {description} | {message}"
    elif description or message:
        said = f" The alert description is: {description or message}"
    else:
        said = " The alert has no description."
    runbook = alert.annotation("runbook_url") or "<alert does not have a runbook_url annotation>"
    return f"{summary}{said} {runbook}"


def _sad(group: str, alert: Alert, index: int, why: str, details: str) -> Check:
    severity, name, state = alert.label("severity"), alert.name, alert.state
    return Check(
        f"recommended/{group}/{name}/{index}",
        "False",
        f"Alert:{state}",
        f"{severity} alert {name} {state}, {why} {details}",
        name,
    )


def _classified(alert: Alert, index: int) -> tuple[tuple[str, ...], Check] | None:
    """The groups a firing alert falls in and its condition; None for an alert oc does
    not weigh. The first matching rule wins, in alerts.go's order."""
    name, details = alert.name, _details(alert)
    pdb = (
        f"Namespace={alert.label('namespace')}, "
        f"PodDisruptionBudget={alert.label('poddisruptionbudget')}. {details}"
    )
    if alert.label("severity") == "critical":
        # The upstream PDB alerts do not template namespace and budget in; oc injects them.
        # A critical PodDisruptionBudgetLimit counts as critical and as a budget alert.
        budget = name == "PodDisruptionBudgetLimit"
        why = "suggesting significant cluster issues worth investigating."
        groups = ("CriticalAlerts", "PodDisruptionBudgetAlerts") if budget else ("CriticalAlerts",)
        return groups, _sad("CriticalAlerts", alert, index, why, pdb if budget else details)
    if name == "PodDisruptionBudgetAtLimit":
        check = _sad(
            "PodDisruptionBudgetAlerts", alert, index, "which might slow node drains.", pdb
        )
        return ("PodDisruptionBudgetAlerts",), check
    if name == "KubeContainerWaiting":
        return ("PodImagePullAlerts",), _sad("PodImagePullAlerts", alert, index, SLOW_ROLL, details)
    if name in NODE_ALERTS:
        return ("NodeAlerts",), _sad("NodeAlerts", alert, index, SLOW_ROLL, details)
    if alert.label(PRECHECK_LABEL) == "true":
        why = "suggesting issues worth investigating before updating the cluster."
        return ("UpdatePrecheckAlerts",), _sad("UpdatePrecheckAlerts", alert, index, why, details)
    if name in VIRT_ALERTS:
        return ("VirtAlerts",), _sad("VirtAlerts", alert, index, SLOW_ROLL, details)
    return None


HAPPY = {
    "CriticalAlerts": "No critical alerts firing.",
    "PodDisruptionBudgetAlerts": "No PodDisruptionBudget alerts firing.",
    "PodImagePullAlerts": "No Pod container image pull alerts firing.",
    "NodeAlerts": "No Node alerts firing.",
    "UpdatePrecheckAlerts": "No alerts with the openShiftUpdatePrecheck label true are firing.",
}


def alert_checks(alerts: list[Alert]) -> list[Check]:
    """The conditions of the firing alerts (pending ones and nameless ones skipped), then
    a True condition for each group no alert fell in (alerts.go)."""
    checks: list[Check] = []
    seen: set[str] = set()
    for alert in alerts:
        if not alert.name or alert.state == "pending":
            continue
        found = _classified(alert, len(checks))
        if found is None:
            continue
        groups, check = found
        seen.update(groups)
        checks.append(check)
    checks += [
        Check(f"recommended/{group}", "True", "AsExpected", message)
        for group, message in HAPPY.items()
        if group not in seen
    ]
    return checks
