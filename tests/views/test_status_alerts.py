"""The cluster's alerts in `upgrade status`'s health, as oc puts them there
(openshift/oc pkg/cli/admin/upgrade/status/alerts.go parseAlertDataToInsights): which
alerts show, at which level, with which description and reference; read from a capture's
alerts file, from a real Prometheus's /api/v1/alerts, and from the ALERTS series of a
metrics snapshot, all through the one reader."""

from __future__ import annotations

import json
import shutil
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from kupgrade.cluster.alerts import Alert
from kupgrade.cluster.kube import KubeBackend
from kupgrade.sim.loop import Local, Loop
from kupgrade.sim.profile import Spec
from kupgrade.views.status_health import CRITICAL, NO_RUNBOOK, WARNING, alert_insights
from kupgrade.views.upgrade_status import assess, read_objects
from tests.support.cli import kupgrade
from tests.support.conformance import SHARED
from tests.support.processes import PrometheusProcess, served_api
from tests.support.sim import runner, start
from tests.views.test_upgrade_status import SPEC

EXAMPLES = SHARED / "peer" / "oc" / "status-examples"
STARTED = 1000.0
DURING, BEFORE = 2000.0, 500.0


def _alert(name: str = "A", at: float | None = DURING, **more: str) -> Alert:
    labels = {"alertname": name, "severity": more.pop("severity", "warning")}
    labels |= {k: more.pop(k) for k in ("namespace",) if k in more}
    return Alert(labels=labels, annotations=more, state="firing", active_at=at)


def test_which_alerts_show_and_what_they_say() -> None:
    shown = alert_insights(
        [
            _alert("Before", BEFORE),  # fired before the update: not shown
            _alert("PodDisruptionBudgetAtLimit", BEFORE, summary="s"),  # allowed anyway
            _alert("PodDisruptionBudgetLimit", DURING, severity="critical"),
            _alert("Firing"),
            _alert("Info", severity="info"),
            _alert("Unknown", severity="page"),  # unknown severities are info: not shown
            _alert("", DURING),  # no alertname
            _alert("Zero", None),  # Go's zero activeAt: not during the update
            _alert("Both", description="d", message="m", runbook_url="https://r", namespace="ns"),
            _alert("Message", message="m"),
        ],
        STARTED,
    )
    assert [i.resources[0][1] for i in shown] == [
        "PodDisruptionBudgetAtLimit",
        "PodDisruptionBudgetLimit",
        "Firing",
        "ns/Both",
        "Message",
    ]
    by_name = {i.resources[0][1]: i for i in shown}
    allowed = by_name["PodDisruptionBudgetAtLimit"]
    assert allowed.summary == "Alert is firing: s"
    assert allowed.description == (
        "Alert known to affect updates has been firing since before the update started. "
        "The alert has no description."
    )
    assert allowed.reference == NO_RUNBOOK and allowed.level == WARNING
    limit = by_name["PodDisruptionBudgetLimit"]
    assert limit.level == CRITICAL and limit.summary == "Alert is firing: PodDisruptionBudgetLimit"
    assert limit.description.startswith("Alert known to affect updates started firing during")
    both = by_name["ns/Both"]
    assert both.description == (
        "Alert started firing during the update. The alert description is: d | m"
    )
    assert both.reference == "https://r"
    assert both.resources == [("alerts.config.openshift.io", "ns/Both")]
    assert both.scope == "Cluster" and both.impact == "Unknown" and both.started == DURING
    assert by_name["Message"].description.endswith("The alert description is: m")
    pending = Alert(
        labels={"alertname": "P", "severity": "critical"}, state="pending", active_at=DURING
    )
    assert alert_insights([pending], STARTED) == []


def _capture(tmp_path: Path, name: str = "4.14.1-degraded") -> Path:
    for path in EXAMPLES.glob(f"{name}-*"):
        shutil.copy(path, tmp_path / path.name)
    return tmp_path / f"{name}-cv.yaml"


needs_examples = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"{EXAMPLES} not found")


@needs_examples
def test_a_capture_s_alerts_file_is_read_and_a_broken_one_said_and_skipped(
    tmp_path: Path,
) -> None:
    cv = _capture(tmp_path)
    plain = kupgrade("upgrade", "status", "--mock-clusterversion", str(cv)).stdout
    alerts = tmp_path / "4.14.1-degraded-alerts.json"
    alerts.write_text(
        json.dumps(
            {
                "data": {
                    "alerts": [
                        {
                            "labels": {"alertname": "KubeNodeNotReady", "severity": "warning"},
                            "annotations": {"summary": "A node is not ready."},
                            "state": "firing",
                            "activeAt": "2030-01-01T00:00:00Z",
                        }
                    ]
                }
            }
        )
    )
    shown = kupgrade("upgrade", "status", "--mock-clusterversion", str(cv), "--details", "all")
    assert shown.returncode == 0
    assert "Message: Alert is firing: A node is not ready." in shown.stdout
    assert "    alerts.config.openshift.io: KubeNodeNotReady" in shown.stdout
    alerts.write_text('{"data": {"alerts": [{"state": 1}]}}')
    broken = kupgrade("upgrade", "status", "--mock-clusterversion", str(cv))
    assert broken.returncode == 0 and broken.stdout == plain
    assert broken.stderr.startswith("Unable to fetch alerts, ignoring alerts in 'Update Health'")
    assert "data.alerts[0].state" in broken.stderr and broken.stderr.count("\n") == 1


RULES = """groups:
- name: update
  rules:
  - alert: KubePodNotReady
    expr: vector(1)
    labels: {severity: warning, namespace: openshift-kube-apiserver}
    annotations:
      summary: Pod has been in a non-ready state for more than 15 minutes.
      description: Pod p has been in a non-ready state for longer than 15 minutes.
      runbook_url: https://example.com/KubePodNotReady.md
  - alert: SlowToFire
    expr: vector(1)
    for: 1h
    labels: {severity: critical}
  - alert: JustInfo
    expr: vector(1)
    labels: {severity: info}
"""


def _firing(prometheus: PrometheusProcess) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        alerts = httpx.get(prometheus.base + "/api/v1/alerts", timeout=5).json()["data"]["alerts"]
        if any(a["state"] == "firing" for a in alerts) and len(alerts) == 3:
            return list(alerts)
        time.sleep(0.2)
    raise AssertionError("the rules did not fire within a minute")


def _series(prometheus: PrometheusProcess, name: str) -> tuple[float, list[dict[str, Any]]]:
    """The rules' own series, once written (the alerts API answers before they are)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        now = time.time()
        found = prometheus.query(name, now)["result"]
        if isinstance(found, list) and len(found) == 3:
            return now, found
        time.sleep(0.2)
    raise AssertionError(f"{name} was not written within 30 s")


@needs_examples
@pytest.mark.skipif(shutil.which("prometheus") is None, reason="no prometheus")
def test_alerts_from_a_real_prometheus_and_from_its_alerts_series(tmp_path: Path) -> None:
    cv = _capture(tmp_path)
    prometheus = PrometheusProcess(tmp_path / "prom", evaluation_interval="1s", rules=RULES)
    with prometheus:  # __enter__ starts it (once)
        prometheus.wait_for("/-/ready")
        alerts = _firing(prometheus)
        live = kupgrade(
            "upgrade",
            "status",
            "--mock-clusterversion",
            str(cv),
            "--details",
            "all",
            "--prometheus",
            prometheus.base,
        )
        series = []
        for name in ("ALERTS", "ALERTS_FOR_STATE"):
            now, found = _series(prometheus, name)
            for sample in found:
                labels = ",".join(
                    f'{k}="{v}"' for k, v in sorted(sample["metric"].items()) if k != "__name__"
                )
                series.append(f"{name}{{{labels}}} {sample['value'][1]} {int(now)}")
    assert live.returncode == 0, live.stderr
    assert (
        "Message: Alert is firing: Pod has been in a non-ready state for more than 15 minutes."
        in live.stdout
    )
    assert "  Reference:   https://example.com/KubePodNotReady.md" in live.stdout
    assert "    alerts.config.openshift.io: openshift-kube-apiserver/KubePodNotReady" in live.stdout
    assert "SlowToFire" not in live.stdout and "JustInfo" not in live.stdout  # pending, info
    assert {a["labels"]["alertname"] for a in alerts} == {
        "KubePodNotReady",
        "SlowToFire",
        "JustInfo",
    }
    snapshot = tmp_path / "alerts.om"
    snapshot.write_text("\n".join(series) + "\n# EOF\n")
    offline = kupgrade(
        "upgrade", "status", "--mock-clusterversion", str(cv), "--metrics", str(snapshot)
    )
    assert offline.returncode == 0, offline.stderr
    # The series carry no annotations: the summary is the alert's name.
    assert "Alert is firing: KubePodNotReady" in offline.stdout
    assert "SlowToFire" not in offline.stdout and "JustInfo" not in offline.stdout


@needs_examples
def test_an_unreachable_prometheus_is_said_and_the_status_shown(tmp_path: Path) -> None:
    cv = _capture(tmp_path)
    shown = kupgrade(
        "upgrade", "status", "--mock-clusterversion", str(cv), "--prometheus", "http://127.0.0.1:9"
    )
    assert shown.returncode == 0
    assert shown.stdout == (EXAMPLES / "4.14.1-degraded.output").read_text()
    assert shown.stderr.count("\n") == 1 and "127.0.0.1:9/api/v1/alerts" in shown.stderr
    both = kupgrade(
        "upgrade",
        "status",
        "--mock-clusterversion",
        str(cv),
        "--prometheus",
        "http://x",
        "--metrics",
        str(cv),
    )
    assert "give --metrics or --prometheus, not both" in both.stderr


def _updating(tmp_path: Path, spec: Spec) -> None:
    """A simulated cluster `c` under tmp_path, run until `upgrade status` sees it update,
    and committed there."""
    root, store = start(tmp_path, spec)
    loop = runner(root, store, spec)

    def updating(run: Loop[Local]) -> None:
        if assess(read_objects(run.transport.sim), run.transport.sim.now()) is not None:
            raise StopIteration

    with pytest.raises(StopIteration):
        loop.run(on_step=updating)
    loop.commit()
    store.close()


def test_a_simulated_cluster_s_alerts_come_from_its_metrics_snapshot(tmp_path: Path) -> None:
    """The ALERTS series of the snapshot the cluster's risks are evaluated on."""
    snapshot = tmp_path / "cluster.om"
    labels = 'alertname="KubeNodeNotReady",namespace="openshift-monitoring",severity="warning"'
    snapshot.write_text(
        f'ALERTS{{{labels},alertstate="firing"}} 1 1700000000\n'
        f"ALERTS_FOR_STATE{{{labels}}} 4102444800 1700000000\n# EOF\n"
    )
    spec = msgspec.structs.replace(SPEC, metrics=str(snapshot))
    _updating(tmp_path, spec)
    shown = kupgrade("upgrade", "status", "--cluster", "c", env={"KUPGRADE_HOME": str(tmp_path)})
    assert shown.returncode == 0, shown.stderr
    assert "Alert is firing: KubeNodeNotReady" in shown.stdout


def _alerts_server(cert: Path, key: Path, body: bytes) -> tuple[ThreadingHTTPServer, int]:
    """HTTPS on loopback with the served API's own certificate (for 127.0.0.1, signed by
    the kubeconfig's CA), answering /api/v1/alerts as Thanos does."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            ok = self.path == "/api/v1/alerts" and bool(self.headers.get("Authorization"))
            self.send_response(200 if ok else 403)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body if ok else b"{}")

        def log_message(self, *_: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def test_a_live_cluster_s_alerts_come_from_its_thanos_querier_route(tmp_path: Path) -> None:
    """As oc reads them: the openshift-monitoring/thanos-querier Route's hosts, with the
    session's token; and oc's words when they cannot be read."""
    _updating(tmp_path, SPEC)
    env = {"KUPGRADE_HOME": str(tmp_path)}
    answer = json.dumps(
        {
            "data": {
                "alerts": [
                    {
                        "labels": {"alertname": "KubeletDown", "severity": "critical"},
                        "annotations": {"summary": "Kubelet has disappeared."},
                        "state": "firing",
                        "activeAt": "2100-01-01T00:00:00Z",
                    }
                ]
            }
        }
    ).encode()
    with served_api(tmp_path, "c", "--no-controllers") as (_, info):
        kubeconfig = info["kubeconfig"]
        status = ("upgrade", "status", "--kubeconfig", kubeconfig)
        missing = kupgrade(*status, env=env)
        assert missing.returncode == 0
        assert missing.stderr == (
            "Unable to fetch alerts, ignoring alerts in 'Update Health':  failed to get alerts "
            'from Thanos: routes.route.openshift.io "thanos-querier" not found\n'
        )
        (cert,) = tmp_path.rglob("api/tls.crt")
        server, port = _alerts_server(cert, cert.with_name("tls.key"), answer)
        api = KubeBackend(Path(kubeconfig))
        api.apply(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "openshift-monitoring"}}
        )
        route = {
            "apiVersion": "route.openshift.io/v1",
            "kind": "Route",
            "metadata": {"name": "thanos-querier", "namespace": "openshift-monitoring"},
            "spec": {"host": f"127.0.0.1:{port}"},
            "status": {"ingress": [{"host": f"127.0.0.1:{port}"}]},
        }
        api.apply(route)
        api.write(route)
        try:
            shown = kupgrade(*status, "--details", "all", env=env)
        finally:
            server.shutdown()
        assert shown.returncode == 0, shown.stderr
        assert "Message: Alert is firing: Kubelet has disappeared." in shown.stdout
        assert "  Level:       Critical" in shown.stdout
        route["status"] = {"ingress": [{"host": "127.0.0.1:9"}, {"host": "127.0.0.1:7"}]}
        api.write(route)
        dead = kupgrade(*status, env=env)
    assert dead.returncode == 0
    assert (
        "unable to get /api/v1/alerts from any of 2 URIs in the openshift-monitoring/"
        in dead.stderr
    )
    assert "[127.0.0.1:9->" in dead.stderr and ", 127.0.0.1:7->" in dead.stderr
