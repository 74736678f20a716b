"""Kubeconfigs and servers from the wild, as every command that takes --kubeconfig meets
them: a truncated or binary file, a server URL that does not parse, a certificate file
that is not there, exec credential plugins that fail, print garbage, never answer or are
not installed, and servers answering a login page, a redirect or plain text. Each ends
in one line naming the kubeconfig and what is wrong, exit 1, in bounded time; never a
traceback or an internal error (SPEC X6)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from tests.support.cli import kupgrade, run_cli
from tests.support.processes import served_api

CLUSTER = "clusters: [{name: c, cluster: {server: %s}}]\n"
REST = (
    "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
    "current-context: x\n"
    "users: [{name: u, user: %s}]\n"
)


def _exec(command: str, *args: str, version: str = "client.authentication.k8s.io/v1") -> str:
    listed = ", ".join(f"'{a}'" for a in args)
    return f"{{exec: {{apiVersion: {version}, command: {command}, args: [{listed}], installHint: 'brew install it'}}}}"


def _kubeconfig(server: str = '"https://127.0.0.1:1"', user: str = "{token: t}") -> str:
    return "apiVersion: v1\n" + CLUSTER % server + REST % user


CASES = {
    "truncated": (_kubeconfig()[:120], "not valid YAML"),
    "not a mapping": ("- just\n- a list\n", "is not a kubeconfig"),
    "no such context": (
        _kubeconfig().replace("current-context: x", "current-context: y"),
        "no context named 'y'",
    ),
    "bad server URL": (_kubeconfig('"https://[::1"'), "does not parse"),
    "not http": (_kubeconfig('"ftp://example.com"'), "not an http(s) URL"),
    "missing CA file": (
        _kubeconfig('"https://127.0.0.1:1", certificate-authority: /nope/ca.crt'),
        "certificate-authority /nope/ca.crt",
    ),
    "exec fails": (
        _kubeconfig(user=_exec("/bin/sh", "-c", "echo denied >&2; exit 3")),
        "failed with exit code 3: denied",
    ),
    "exec garbage": (_kubeconfig(user=_exec("/bin/echo", "garbage")), "decoding stdout"),
    "exec hangs": (_kubeconfig(user=_exec("/bin/sleep", "600")), "gave no answer within 2 s"),
    "exec missing": (_kubeconfig(user=_exec("no-such-auth-plugin")), "not found; brew install it"),
    "exec old version": (
        _kubeconfig(user=_exec("/bin/echo", "{}", version="client.authentication.k8s.io/v9")),
        "API version",
    ),
    "exec no token": (
        _kubeconfig(
            user=_exec(
                "/bin/echo",
                '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}}',
            )
        ),
        "didn't return a token",
    ),
}


def _run(tmp_path: Path, text: str | bytes, *command: str) -> tuple[int, str, float]:
    config = tmp_path / "kubeconfig"
    if isinstance(text, bytes):
        config.write_bytes(text)
    else:
        config.write_text(text)
    started = time.monotonic()
    done = kupgrade(*command, "--kubeconfig", str(config), env={"KUPGRADE_EXEC_SECONDS": "2"})
    return done.returncode, done.stderr, time.monotonic() - started


def _one_line(code: int, stderr: str) -> None:
    assert code == 1, stderr
    assert stderr.count("\n") == 1 and "kubeconfig" in stderr, stderr
    assert "internal error" not in stderr


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_misbehaving_kubeconfig_is_one_line(tmp_path: Path, case: str) -> None:
    text, said = CASES[case]
    code, stderr, took = _run(tmp_path, text, "upgrade", "status")
    _one_line(code, stderr)
    assert said in stderr, stderr
    assert took < 30


def test_a_binary_kubeconfig_is_named(tmp_path: Path) -> None:
    code, stderr, _ = _run(tmp_path, b"\xff\xfe\x00garbage", "upgrade", "status")
    _one_line(code, stderr)
    assert "not UTF-8" in stderr


def test_an_exec_plugin_of_api_v1_gives_the_token(tmp_path: Path) -> None:
    credential = '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"abc"}}'
    code, stderr, _ = _run(
        tmp_path, _kubeconfig(user=_exec("/bin/echo", credential)), "get", "nodes"
    )
    assert code == 1 and "cannot reach the API server" in stderr  # it got as far as the server


class _Answer(BaseHTTPRequestHandler):
    mode = "html"

    def _answer(self) -> None:
        if self.mode == "redirect":
            self.send_response(307)
            self.send_header("Location", "https://login.example.com/oauth")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b"<html><body>Please log in</body></html>" if self.mode == "html" else b"hello"
        self.send_response(200)
        self.send_header("Content-Type", "text/html" if self.mode == "html" else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PATCH = do_PUT = _answer  # noqa: N815 - the base's names

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture(params=["html", "redirect", "text"])
def wrong_server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    handler = type("Handler", (_Answer,), {"mode": request.param})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield request.param, f'"http://127.0.0.1:{server.server_address[1]}"'
    finally:
        server.shutdown()
        server.server_close()


COMMANDS = [
    ("upgrade",),
    ("upgrade", "status"),
    ("upgrade", "channel", "stable-4.14"),
    ("get", "nodes"),
    ("updates",),
    ("controller", "run"),
]


def test_a_server_that_is_not_an_api_server_is_named(
    tmp_path: Path, wrong_server: tuple[str, str]
) -> None:
    mode, url = wrong_server
    said = {
        "html": "answered text/html",
        "redirect": "redirect (307)",
        "text": "answered text/plain",
    }[mode]
    for command in COMMANDS:
        code, stderr, took = _run(tmp_path, _kubeconfig(url), *command)
        assert code == 1, (command, stderr)
        assert stderr.count("\n") == 1 and "internal error" not in stderr, (command, stderr)
        if command[0] != "controller":  # it asks for the simulated clock first, and says so
            assert said in stderr, (command, stderr)
        assert took < 30


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_with_a_kubeconfig_refuses_a_broken_one(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    for case in ("truncated", "exec fails", "bad server URL"):
        code, stderr, _ = _run(tmp_path, CASES[case][0], *command)
        _one_line(code, stderr)
        assert CASES[case][1] in stderr, (command, stderr)


def test_an_expired_exec_token_is_asked_for_again_on_a_401(tmp_path: Path) -> None:
    """client-go's exec authenticator: the plugin's token expired (the server answers
    401), so the plugin is run again and the request retried with its new token."""
    home = tmp_path / "home"
    assert run_cli(["cluster", "create", "demo"], home).exit_code == 0
    with served_api(home, "demo", "--no-controllers") as (_, info):
        served = yaml.safe_load(Path(info["kubeconfig"]).read_text())
        token = served["users"][0]["user"]["token"]
        calls = tmp_path / "calls"
        plugin = tmp_path / "plugin.sh"
        credential = (
            '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
            '"status":{"token":"%s"}}'
        )
        plugin.write_text(
            "#!/bin/sh\n"
            f"echo x >> {calls}\n"
            f"if [ \"$(wc -l < {calls})\" -eq 1 ]; then echo '{credential % 'expired'}'; "
            f"else echo '{credential % token}'; fi\n"
        )
        plugin.chmod(0o755)
        served["users"][0]["user"] = {
            "exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin)}
        }
        config = tmp_path / "kubeconfig"
        config.write_text(yaml.safe_dump(served))
        got = run_cli(["get", "nodes", "--kubeconfig", str(config)], home)
    assert got.exit_code == 0, got.stderr
    assert "master-0" in got.stdout
    assert calls.read_text().count("x") == 2  # once at start, once after the 401
