"""A Prometheus or Thanos querier as the backend of PromQL rules (SPEC A4).

The version controller asks the cluster's Thanos querier with GET /api/v1/query (the
OpenShift proxy maps POST to a different RBAC verb), a bearer token read from a file and
the service CA, and gives up after five minutes. Every failure becomes an evaluation
failure of the rule, never an exception out of the walk.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import httpx

from kupgrade import intake
from kupgrade.cluster.alerts import Alert, read_answer
from kupgrade.errors import InputError
from kupgrade.intake.http import bounded_get
from kupgrade.risks.rules import EvaluationError

QUERY_TIMEOUT = 300.0


class PrometheusBackend:
    """Instant queries against `url` (a Prometheus or Thanos querier base URL)."""

    def __init__(
        self,
        url: str,
        *,
        token_file: Path | None = None,
        ca_file: Path | None = None,
        timeout: float = QUERY_TIMEOUT,
        time_s: float | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.time_s = time_s
        self.timeout = timeout
        headers = {"Accept": "application/json"}
        if token_file is not None:
            headers["Authorization"] = "Bearer " + _read_token(token_file)
        verify: ssl.SSLContext | bool = True
        if ca_file is not None:
            try:
                verify = ssl.create_default_context(cafile=str(ca_file))
            except (OSError, ssl.SSLError) as exc:
                raise InputError(
                    f"cannot load the CA bundle: {exc}", file=str(ca_file), field="--ca-file"
                ) from None
        self.client = httpx.Client(headers=headers, verify=verify, timeout=timeout)

    def close(self) -> None:
        self.client.close()

    def __call__(self, expr: str) -> dict[str, Any]:
        params = {"query": expr}
        if self.time_s is not None:
            params["time"] = repr(self.time_s)
        endpoint = self.url + "/api/v1/query"
        try:
            answer, body = bounded_get(
                self.client, endpoint, total_timeout=self.timeout, params=params
            )
        except httpx.HTTPError as exc:
            raise EvaluationError(f'executing PromQL query: Get "{endpoint}": {exc}') from None
        try:
            doc = intake.decode_json(body, endpoint)
        except InputError:
            raise EvaluationError(
                f"executing PromQL query: server returned HTTP status {answer.status_code} {answer.reason_phrase}"
            ) from None
        if not isinstance(doc, dict):
            raise EvaluationError("executing PromQL query: the answer is not a JSON object")
        if doc.get("status") == "success" and isinstance(doc.get("data"), dict):
            return dict(doc["data"])
        return {
            "errorType": doc.get("errorType", "unknown"),
            "error": doc.get("error", f"HTTP {answer.status_code}"),
        }


def fetch_alerts(backend: PrometheusBackend) -> list[Alert]:
    """GET /api/v1/alerts: the alerts of the rules Prometheus (or Thanos) evaluates, as
    `oc adm upgrade status` and `recommend` read them from the cluster's thanos-querier.
    InputError names the endpoint when there is no answer or not an alerts answer."""
    endpoint = backend.url + "/api/v1/alerts"
    try:
        answer, body = bounded_get(backend.client, endpoint, total_timeout=backend.timeout)
    except httpx.HTTPError as exc:
        raise InputError(f"failed to get alerts: {exc}", file=endpoint) from None
    if answer.status_code != httpx.codes.OK:
        raise InputError(
            f"failed to get alerts: server returned HTTP status {answer.status_code} "
            f"{answer.reason_phrase}",
            file=endpoint,
        )
    return read_answer(body, endpoint)


def _read_token(path: Path) -> str:
    data = intake.read_file(path, "bearer token file", max_bytes=64 * 1024)
    token = intake.decode_utf8(data, str(path)).strip()
    if not token:
        raise InputError("the bearer token file is empty", file=str(path), field="--token-file")
    if not token.isascii() or not token.isprintable():
        raise InputError(
            "the bearer token must be one line of printable ASCII",
            file=str(path),
            field="--token-file",
        )
    return token
