"""The backend over a real Kubernetes API server, reached through a kubeconfig: the same
`cluster.Backend` the controllers act through on the simulator (SPEC X2).

Built on lightkube: it reads kubeconfig contexts, tokens, client certificates, CAs and
exec plugins as kubectl does, speaks to the API through httpx (which kupgrade already
uses), imports in about 0.2 s (the official client takes several times longer, for
generated models kupgrade would not use) and offers generic resources, so objects stay
plain dicts in the API's own shape, as every other backend hands them to the controllers.
"""

from __future__ import annotations

import builtins
import json
import os
import platform
import time
from functools import cache
from pathlib import Path
from typing import Any

import httpx
from lightkube import ApiError, Client, ConfigError, KubeConfig
from lightkube.generic_resource import create_global_resource, create_namespaced_resource
from lightkube.types import PatchType

from kupgrade import __version__
from kupgrade.cluster.apikinds import KINDS, STATE_CONFIGMAP, STATE_NAMESPACE
from kupgrade.cluster.backend import Key, Obj, Watch
from kupgrade.cluster.disruption import Answer
from kupgrade.cluster.kubeconfig import (
    RefreshingToken,
    TokenFile,
    default_kubeconfig,
    in_cluster,
    load_kubeconfig,
)
from kupgrade.errors import InputError

USER_AGENT = f"kupgrade/v{__version__} ({platform.system().lower()}/{platform.machine()})"


@cache
def _resource(kind: str) -> Any:
    group, version, plural, namespaced = KINDS[kind]
    make = create_namespaced_resource if namespaced else create_global_resource
    return make(group, version, kind, plural)


def _plain(obj: Any) -> Obj:
    data = obj.to_dict() if hasattr(obj, "to_dict") else dict(obj)
    return dict(data)


def eviction_request(pod: Obj) -> tuple[str, Obj]:
    """The path and body of a policy/v1 Eviction of `pod` (kubectl drain's request)."""
    meta = pod["metadata"]
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": meta["name"], "namespace": meta.get("namespace", "")},
    }
    return f"/api/v1/namespaces/{meta.get('namespace', '')}/pods/{meta['name']}/eviction", eviction


def eviction_answer(response: httpx.Response) -> Answer:
    """What the API server answered an Eviction: 200 for evicted (it says 201), else its
    code and message, with the budget it names (a DisruptionBudget cause)."""
    if response.status_code in (200, 201):
        return Answer(200, "evicted")
    doc = (
        response.json()
        if response.headers.get("content-type", "").startswith("application/json")
        else {}
    )
    causes = (doc.get("details") or {}).get("causes") or []
    cause = next(
        (c.get("message", "") for c in causes if c.get("reason") == "DisruptionBudget"), ""
    )
    return Answer(response.status_code, str(doc.get("message", response.text)), cause)


class KubeBackend:
    """`cluster.Backend` on a real API server (and on a simulated cluster's API)."""

    def __init__(self, kubeconfig: Path | None = None, context: str | None = None) -> None:
        path = kubeconfig or default_kubeconfig()
        where = str(path) if path else "the default kubeconfig"
        # No kubeconfig file: in a pod, its service account (kubectl and clientcmd fall
        # back to rest.InClusterConfig so when they find no kubeconfig).
        pod = in_cluster() if path is None and not os.environ.get("KUBECONFIG") else None
        try:
            loaded = None
            if path is not None:  # read and checked as every file the user names
                loaded = load_kubeconfig(path, context)
                config = KubeConfig.from_dict(loaded.doc, fname=str(path))
            elif pod is not None:
                where = f"the pod's service account ({pod.server})"
                config = KubeConfig.from_dict(pod.doc)
            else:  # several merged by $KUBECONFIG
                config = KubeConfig.from_env()  # type: ignore[no-untyped-call]
            chosen = config.get(context_name=context)
            self.client = Client(config=chosen, field_manager="kupgrade")
            # Whether requests carry a bearer token (what oc needs to read alerts).
            self.bearer = bool(chosen.user is not None and chosen.user.token)
        except (ConfigError, OSError, KeyError, ValueError) as exc:
            raise InputError(
                f"cannot use {where}: {exc}",
                field="--kubeconfig",
                hint="give a kubeconfig file (and --context) that kubectl can use",
            ) from None
        self.where = where
        self._http().event_hooks["response"].append(self._is_api_answer)
        # Who asks, in the server's audit log (kube-apiserver records the userAgent), in
        # client-go's form (rest.DefaultKubernetesUserAgent: command/version (os/arch)).
        self._http().headers["User-Agent"] = USER_AGENT
        if loaded is not None and loaded.exec_spec is not None:
            # A token from an exec plugin is asked for again when it expires (a 401).
            self._http().auth = RefreshingToken(loaded.exec_spec, where, loaded.token)
        if pod is not None:  # the kubelet rotates the pod's token: read it again
            self._http().auth = TokenFile(pod.token_file, pod.doc["users"][0]["user"]["token"])
        self._wakes: list[tuple[float, Key]] = []
        self._simulated: bool | None = None  # whether it serves a simulator's Clock

    def _call(self, what: str, fn: Any, *args: Any, **kw: Any) -> Any:
        try:
            return fn(*args, **kw)
        except ApiError as exc:
            if exc.status.code == 404:
                return None
            raise InputError(
                f"{what}: {exc.status.message}", hint=f"the API server of {self.where}"
            ) from None
        except httpx.HTTPError as exc:
            raise InputError(
                f"cannot reach the API server of {self.where}: {exc}",
                hint="is the cluster up, and the kubeconfig's server right?",
            ) from None

    # --- Backend ------------------------------------------------------------------------

    def now(self) -> float:
        """The cluster's time: a simulated cluster's virtual clock, else the wall clock."""
        if self._simulated is not False:
            try:
                response = self._http().get("/apis/sim.kupgrade.io/v1/clocks/virtual")
            except httpx.HTTPError:
                response = None
            found = response is not None and response.status_code == 200
            self._simulated = found
            if response is not None and found:
                return float(response.json()["status"]["now"])
        return time.time()

    def get(self, kind: str, name: str, namespace: str = "") -> Obj | None:
        found = self._call(
            f"get {kind} {name}",
            self.client.get,
            _resource(kind),
            name,
            namespace=namespace or None,
        )
        return None if found is None else _plain(found)

    def list(self, kind: str, **selectors: Any) -> builtins.list[Obj]:
        namespaced = KINDS[kind][3]
        found = self._call(
            f"list {kind}",
            lambda: builtins.list(
                self.client.list(_resource(kind), namespace="*" if namespaced else "", **selectors)
            ),
        )
        return [_plain(o) for o in found or []]

    def watch(self, *kinds: str) -> Watch:
        """The keys of these kinds as they are now: a controller started against a real
        cluster looks at everything once (it polls; it keeps no informer)."""
        keys = []
        for kind in kinds:
            for obj in self.list(kind):
                meta = obj["metadata"]
                keys.append((kind, meta.get("namespace", ""), meta["name"]))
        return Watch(keys)

    def pods_on(self, node: str) -> builtins.list[Obj]:
        return self.list("Pod", fields={"spec.nodeName": node})

    def apply(self, obj: Obj) -> Obj:
        meta = obj["metadata"]
        existing = self.get(obj["kind"], meta["name"], meta.get("namespace", ""))
        if existing is None:
            created = self._call("create", self.client.create, _resource(obj["kind"])(obj))
            return _plain(created) if created is not None else obj
        return self._patch(obj, status=False)

    def write(self, obj: Obj) -> None:
        self._patch(obj, status=False)
        if "status" in obj:
            self._patch(obj, status=True)

    def _patch(self, obj: Obj, *, status: bool) -> Obj:
        """A merge patch of the object, or of its status through the status subresource."""
        meta = obj["metadata"]
        resource = _resource(obj["kind"])
        body = (
            {"status": obj["status"]} if status else {k: v for k, v in obj.items() if k != "status"}
        )
        patched = self._call(
            f"patch {obj['kind']} {meta['name']}",
            self.client.patch,
            resource.Status if status else resource,
            meta["name"],
            body,
            namespace=meta.get("namespace") or None,
            patch_type=PatchType.MERGE,
        )
        return _plain(patched) if patched is not None else obj

    def evict(self, pod: Obj) -> Answer:
        path, eviction = eviction_request(pod)
        try:
            response = self._http().post(path, json=eviction)
        except httpx.HTTPError as exc:
            return Answer(500, f"cannot reach the API server: {exc}")
        return eviction_answer(response)

    def requeue_at(self, at: float, kind: str, name: str, namespace: str = "") -> None:
        self._wakes.append((at, (kind, namespace, name)))

    def record(self, obj: str, reason: str, message: str) -> None:
        """Events go to the run's report, not to the cluster (kupgrade is a client)."""

    def state(self, key: str, default: Any = None) -> Any:
        found = self.get("ConfigMap", STATE_CONFIGMAP, STATE_NAMESPACE)
        data = (found or {}).get("data") or {}
        return json.loads(data[key]) if key in data else default

    def set_state(self, key: str, value: Any) -> None:
        self.apply(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": STATE_CONFIGMAP, "namespace": STATE_NAMESPACE},
                "data": {key: json.dumps(value)},
            }
        )

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        self._call(
            f"delete {kind} {name}",
            self.client.delete,
            _resource(kind),
            name,
            namespace=namespace or None,
        )

    # --- beyond the protocol ------------------------------------------------------------

    def server_version(self) -> dict[str, Any]:
        """GET /version."""
        try:
            response = self._http().get("/version")
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise InputError(
                f"cannot read the version of {self.where}: {exc}",
                hint="is the cluster up, and the kubeconfig's server right?",
            ) from None
        return dict(response.json())

    def _is_api_answer(self, response: httpx.Response) -> None:
        """Refuse what no Kubernetes API server answers (a redirect to a login page, an
        HTML or plain-text page of a proxy) before the client tries to read it as JSON."""
        if response.is_redirect:
            where = response.headers.get("location", "elsewhere")
            raise InputError(
                f"the server of {self.where} answered a redirect ({response.status_code}) to "
                f"{where[:200]}, not the Kubernetes API",
                hint="the kubeconfig's server is a login page or a proxy: give the API "
                "server's own URL, as `kubectl config view` shows it",
            )
        kind = response.headers.get("content-type", "")
        if "json" not in kind and "yaml" not in kind and response.status_code not in (101, 204):
            raise InputError(
                f"the server of {self.where} answered {kind or 'no content type'} "
                f"(HTTP {response.status_code}), not the Kubernetes API's JSON",
                hint="is the kubeconfig's server a Kubernetes API server, and are you logged in?",
            )

    def session(self) -> httpx.Client:
        """The client the kubeconfig's credentials and CA are set on, for a request
        elsewhere in the cluster (oc reads alerts from a Route's host with it)."""
        return self._http()

    def _http(self) -> httpx.Client:
        """lightkube's own httpx client (its credentials and CA), for the two requests
        its resource API does not cover: /version, and an eviction whose 429 we read."""
        http: httpx.Client = getattr(self.client._client, "_client")  # noqa: B009
        return http
