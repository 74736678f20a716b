"""A kubeconfig read as the project reads every file the user names (intake: a regular
file, bounded, UTF-8, YAML errors with line and column), checked before any client is
built: the context, its cluster's server URL, the certificate files it names, and its
exec credential plugin run here with a bounded wait.

lightkube (which then talks to the cluster) would otherwise fail on these with its own
exceptions, or never return: its exec support runs the plugin without a time limit and
refuses the client.authentication.k8s.io/v1 plugins most clouds now write. The plugin's
failures are said in client-go's words (plugin/pkg/client/auth/exec/exec.go), as kubectl
says them (SPEC X6: the commands work against a real API server through a kubeconfig).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any, NamedTuple

import httpx

from kupgrade.errors import InputError
from kupgrade.intake.files import read_file
from kupgrade.intake.yamldoc import load_yaml

EXEC_SECONDS = 60.0  # how long a credential plugin may take (it may open a browser)
EXEC_WAIT_VARIABLE = "KUPGRADE_EXEC_SECONDS"  # the user's own bound, when SSO is slower
EXEC_VERSIONS = (
    "client.authentication.k8s.io/v1",
    "client.authentication.k8s.io/v1beta1",
    "client.authentication.k8s.io/v1alpha1",
)
FILE_FIELDS = (
    ("cluster", "certificate-authority"),
    ("user", "client-certificate"),
    ("user", "client-key"),
    ("user", "tokenFile"),
)


def default_kubeconfig() -> Path | None:
    """The one kubeconfig file kubectl would read ($KUBECONFIG naming one file, or
    ~/.kube/config); None when there is none or $KUBECONFIG merges several (left to the
    client's own merging)."""
    named = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    if len(named) > 1:
        return None
    path = Path(named[0]) if named else Path.home() / ".kube" / "config"
    return path if named or path.exists() else None


class Loaded(NamedTuple):
    doc: dict[str, Any]  # what a client takes: an exec plugin's credentials already got
    exec_spec: dict[str, Any] | None = None  # a plugin that gave a token (RefreshingToken)
    token: str = ""  # the token it gave


def context_names(path: Path) -> list[str]:
    """Every context a kubeconfig names, in its order (a fleet of the clusters it reaches)."""
    source = str(path)
    doc = load_yaml(read_file(path, "kubeconfig"), source)
    contexts = doc.get("contexts") if isinstance(doc, dict) else None
    if not isinstance(contexts, list) or not contexts:
        raise InputError(
            "names no contexts",
            file=source,
            hint="give a kubeconfig with a context per cluster (`kubectl config set-context`)",
        )
    names = [c.get("name") for c in contexts if isinstance(c, dict)]
    if not all(isinstance(n, str) and n for n in names):
        raise InputError("has a context without a name", file=source)
    return [str(n) for n in names]


def load_kubeconfig(path: Path, context: str | None = None) -> Loaded:
    """The kubeconfig at `path` as a dictionary a client can take, checked for the
    `context` used (or its current context)."""
    source = str(path)
    doc = load_yaml(read_file(path, "kubeconfig"), source)
    if not isinstance(doc, dict):
        raise InputError(
            "is not a kubeconfig (a YAML mapping with clusters, contexts, users)", file=source
        )
    name = context or doc.get("current-context")
    if not name:
        raise InputError("has no current-context", file=source, hint="give --context NAME")
    ctx = _part(_named(doc, "contexts", str(name), source), "context", source)
    cluster = _part(_named(doc, "clusters", str(ctx.get("cluster", "")), source), "cluster", source)
    user_entry = _named(doc, "users", str(ctx.get("user", "")), source) if ctx.get("user") else {}
    user = _part(user_entry, "user", source)
    _check_server(cluster, source)
    base = path.resolve().parent
    for part, key in FILE_FIELDS:
        given = (cluster if part == "cluster" else user).get(key)
        if given and not isinstance(given, str):
            raise InputError(f"its {key} is not a file name", file=source)
        if given and not (base / given).is_file():
            raise InputError(f"its {key} {given} is not a file that can be read", file=source)
    spec = user.get("exec")
    if not isinstance(spec, dict):
        return Loaded(doc)
    credentials = exec_credentials(spec, source)
    user_entry["user"] = {k: v for k, v in {**user, **credentials}.items() if k != "exec"}
    token = credentials.get("token")
    return Loaded(doc, spec, token) if isinstance(token, str) else Loaded(doc)


class RefreshingToken(httpx.Auth):
    """An exec plugin's token, asked for again when the server answers 401 Unauthorized,
    as client-go's exec authenticator does when its credentials expire during a long run
    (k8s.io/client-go plugin/pkg/client/auth/exec/exec.go: refreshCredsLocked on a 401)."""

    def __init__(self, spec: dict[str, Any], source: str, token: str) -> None:
        self.spec = spec
        self.source = source
        self.token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self.token}"
        response = yield request
        if response.status_code != 401:
            return
        fresh = exec_credentials(self.spec, self.source).get("token")
        if isinstance(fresh, str) and fresh != self.token:
            self.token = fresh
            request.headers["Authorization"] = f"Bearer {fresh}"
            yield request


SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
TOKEN_PERIOD = 60.0  # how long a token read from a file is used before it is read again


class InCluster(NamedTuple):
    doc: dict[str, Any]  # a kubeconfig naming the pod's API server, CA and token
    token_file: Path
    server: str


def in_cluster(account: Path | None = None) -> InCluster | None:
    """The pod's own access to its cluster, as client-go's rest.InClusterConfig builds it
    (staging/src/k8s.io/client-go/rest/config.go): the server from KUBERNETES_SERVICE_HOST
    and KUBERNETES_SERVICE_PORT, the service account's token (BearerTokenFile: read
    again as the kubelet rotates it), its ca.crt when there is one, and its namespace as
    the context's. None when not in a pod (either variable unset: ErrNotInCluster), so
    that a kubeconfig is asked for as before."""
    host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        return None
    account = account or SERVICE_ACCOUNT
    token_file = account / "token"
    token = _account_file(token_file)
    if not token:
        raise InputError(
            f"in a pod, but its service account token {token_file} is empty",
            field="--kubeconfig",
            hint="mount the service account's token (automountServiceAccountToken) or give --kubeconfig",
        )
    server = f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"  # JoinHostPort
    cluster: dict[str, Any] = {"server": server}
    if (account / "ca.crt").is_file():  # client-go goes on without it, as here
        cluster["certificate-authority"] = str(account / "ca.crt")
    context: dict[str, Any] = {"cluster": "in-cluster", "user": "in-cluster"}
    if (account / "namespace").is_file():
        context["namespace"] = _account_file(account / "namespace")
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "in-cluster", "cluster": cluster}],
        "users": [{"name": "in-cluster", "user": {"token": token}}],
        "contexts": [{"name": "in-cluster", "context": context}],
        "current-context": "in-cluster",
    }
    return InCluster(doc, token_file, server)


def _account_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(
            f"in a pod, but its service account's {path} cannot be read: {exc}",
            field="--kubeconfig",
            hint="mount the service account's token (automountServiceAccountToken) or give --kubeconfig",
        ) from None


class TokenFile(httpx.Auth):
    """A bearer token read from a file and read again once a minute, as client-go's
    cached file token source does for BearerTokenFile (transport/token_source.go): a
    projected service account token is rotated by the kubelet while the pod runs."""

    def __init__(self, path: Path, token: str, clock: Any = time.monotonic) -> None:
        self.path = path
        self.token = token
        self.clock = clock
        self.read_at = clock()

    def current(self) -> str:
        if self.clock() - self.read_at >= TOKEN_PERIOD:
            self.read_at = self.clock()
            with contextlib.suppress(OSError):  # a failed read keeps the last token
                self.token = self.path.read_text(encoding="utf-8").strip() or self.token
        return self.token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self.current()}"
        yield request


def _named(doc: dict[str, Any], section: str, name: str, source: str) -> dict[str, Any]:
    entries = doc.get(section)
    if not isinstance(entries, list):
        raise InputError(f"has no {section}", file=source)
    for entry in entries:
        if isinstance(entry, dict) and entry.get("name") == name:
            return entry
    raise InputError(f"has no {section[:-1]} named {name!r}", file=source)


def _part(entry: dict[str, Any], key: str, source: str) -> dict[str, Any]:
    """An entry's body (`context`, `cluster`, `user`): a mapping, or none at all."""
    found = entry.get(key)
    if found is None:
        return {}
    if not isinstance(found, dict):
        raise InputError(f"its {key} entry {entry.get('name')!r} is not a mapping", file=source)
    return found


def _check_server(cluster: dict[str, Any], source: str) -> None:
    server = cluster.get("server")
    if not isinstance(server, str) or not server:
        raise InputError("its cluster has no server", file=source)
    try:
        url = httpx.URL(server)
        _ = url.port
    except (httpx.InvalidURL, ValueError) as exc:
        raise InputError(f"its server URL {server!r} does not parse: {exc}", file=source) from None
    if url.scheme not in ("http", "https") or not url.host:
        raise InputError(
            f"its server URL {server!r} is not an http(s) URL with a host", file=source
        )


def exec_credentials(spec: dict[str, Any], source: str) -> dict[str, Any]:
    """Run an exec credential plugin once, within EXEC_SECONDS: the user fields it gives
    (a token, or a client certificate and key as data)."""
    command = spec.get("command")
    version = spec.get("apiVersion")
    if not command:
        raise InputError("its exec plugin has no command", file=source)
    if version not in EXEC_VERSIONS:
        raise InputError(
            f"its exec plugin asks for API version {version!r}, which is not one of {', '.join(EXEC_VERSIONS)}",
            file=source,
        )
    for key in ("env", "args"):
        if not isinstance(spec.get(key) or [], list):
            raise InputError(f"its exec plugin's {key} is not a list", file=source)
    if not isinstance(command, str):
        raise InputError("its exec plugin's command is not a string", file=source)
    env = dict(os.environ)
    for var in spec.get("env") or []:
        if isinstance(var, dict) and "name" in var:
            env[str(var["name"])] = str(var.get("value", ""))
    env["KUBERNETES_EXEC_INFO"] = json.dumps(
        {"apiVersion": version, "kind": "ExecCredential", "spec": {"interactive": False}}
    )
    argv = [str(command), *(str(a) for a in spec.get("args") or [])]
    wait = _exec_seconds(source)
    try:
        done = subprocess.run(
            argv,
            env=env,
            capture_output=True,
            timeout=wait,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        hint = str(spec.get("installHint") or "install it or fix the kubeconfig's command")
        raise InputError(
            f"getting credentials: exec: executable {command} not found", file=source, hint=hint
        ) from None
    except subprocess.TimeoutExpired:
        raise InputError(
            f"getting credentials: exec: executable {command} gave no answer within {wait:g} s",
            file=source,
            hint=f"run it yourself to see what it waits for; {EXEC_WAIT_VARIABLE} sets the wait",
        ) from None
    except OSError as exc:
        raise InputError(f"getting credentials: exec: {exc.strerror or exc}", file=source) from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        tail = f": {said[-1][:200]}" if said else ""
        raise InputError(
            f"getting credentials: exec: executable {command} failed with exit code {done.returncode}{tail}",
            file=source,
        )
    return _credential(done.stdout, str(version), source)


def _exec_seconds(source: str) -> float:
    given = os.environ.get(EXEC_WAIT_VARIABLE, "")
    if not given:
        return EXEC_SECONDS
    try:
        seconds = float(given)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 3600:
        raise InputError(
            f"{EXEC_WAIT_VARIABLE}={given!r} is not a number of seconds from 0 to 3600",
            hint=f"unset it or give seconds, for the exec plugin of {source}",
        )
    return seconds


def _credential(stdout: bytes, version: str, source: str) -> dict[str, Any]:
    try:
        doc = json.loads(stdout)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"getting credentials: decoding stdout: {exc}", file=source) from None
    if not isinstance(doc, dict) or doc.get("kind") != "ExecCredential":
        raise InputError("getting credentials: decoding stdout: not an ExecCredential", file=source)
    if doc.get("apiVersion") != version:
        raise InputError(
            f"exec plugin is configured to use API version {version}, plugin returned version {doc.get('apiVersion')}",
            file=source,
        )
    found = doc.get("status")
    status: dict[str, Any] = found if isinstance(found, dict) else {}
    if isinstance(status.get("token"), str) and status["token"]:
        return {"token": status["token"]}
    cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
    if isinstance(cert, str) and isinstance(key, str) and cert and key:
        return {
            "client-certificate-data": base64.b64encode(cert.encode()).decode(),
            "client-key-data": base64.b64encode(key.encode()).decode(),
        }
    raise InputError("exec plugin didn't return a token or cert/key pair", file=source)
