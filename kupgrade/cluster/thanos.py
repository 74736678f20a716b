"""A cluster's alerts as oc reads them for `oc adm upgrade status`: from the
openshift-monitoring/thanos-querier Route's hosts, GET /api/v1/alerts with the session's
bearer token (openshift/oc pkg/cli/admin/inspectalerts/inspectalerts.go: GetAlerts,
getWithRoundTripper, checkedGet, ValidateRESTConfig), with oc's error texts, so that
a user who cannot read them sees why as oc says it.
"""

from __future__ import annotations

import httpx

from kupgrade.cluster.alerts import Alert, read_answer
from kupgrade.cluster.kube import KubeBackend
from kupgrade.errors import InputError, KupgradeError
from kupgrade.intake.http import bounded_get

NAMESPACE, NAME, PATH = "openshift-monitoring", "thanos-querier", "/api/v1/alerts"
TIMEOUT = 30.0


def route_alerts(api: KubeBackend) -> list[Alert]:
    """The alerts Thanos answers through its Route; InputError in oc's words otherwise."""
    try:
        return read_answer(_get(api), f"{NAMESPACE}/{NAME}{PATH}")
    except KupgradeError as exc:
        raise InputError(f"failed to get alerts from Thanos: {exc}") from None


def _get(api: KubeBackend) -> bytes:
    if not api.bearer:
        raise InputError("no token is currently in use for this session")
    route = api.get("Route", NAME, NAMESPACE)
    if route is None:
        raise InputError(f'routes.route.openshift.io "{NAME}" not found')
    ingresses = (route.get("status") or {}).get("ingress") or []
    errors = []
    for ingress in ingresses if isinstance(ingresses, list) else []:
        host = str(ingress.get("host", "")) if isinstance(ingress, dict) else ""
        try:
            return _checked_get(api, f"https://{host}{PATH}")
        except (httpx.HTTPError, KupgradeError) as exc:
            errors.append(f"{host}->{exc}")
    where = f"the {NAMESPACE}/{NAME} Route"
    if len(errors) == 1:
        raise InputError(f"unable to get {PATH} from URI in {where}: {errors[0]}")
    raise InputError(
        f"unable to get {PATH} from any of {len(errors)} URIs in {where}: {_aggregate(errors)}"
    )


def _aggregate(errors: list[str]) -> str:
    """apimachinery's errors.NewAggregate as %s prints it: none is a nil error, one is
    itself, several are bracketed, each message once."""
    if not errors:
        return "%!s(<nil>)"
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _checked_get(api: KubeBackend, url: str) -> bytes:
    """GET with the session's transport (its token and CA); a status other than 200 is
    an error, as checkedGet says it."""
    response, body = bounded_get(api.session(), url, total_timeout=TIMEOUT)
    if response.status_code != httpx.codes.OK:
        raise InputError(f"GET status code={response.status_code}")
    return body
