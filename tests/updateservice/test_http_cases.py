"""Every case of ../shared/conformance/cincinnati/http-cases.yaml against a real server (SPEC A3).

The cases are interpreted generically from the schema in the file's header, so further
cases of the same kind run the same way. Requests are sent with http.client so that
nothing but Host and the listed headers goes on the wire.
"""

from __future__ import annotations

import gzip
import http.client
import io
import json
import socket
import tarfile
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
import yaml

from tests.support.caseuse import case_params
from tests.support.conformance import CINCINNATI
from tests.support.service import Server

CASES_FILE = CINCINNATI / "http-cases.yaml"


def _cases() -> list[Any]:
    """One tracked param per case: a field the test leaves unread fails it (caseuse)."""
    if not CASES_FILE.exists():
        return []
    return case_params(yaml.safe_load(CASES_FILE.read_text())["cases"])


def send(
    server: Server, request: dict[str, Any]
) -> tuple[int, dict[str, str], list[tuple[str, str]], bytes]:
    """Send one case's request; returns status, headers (lower-cased), raw header list, body."""
    path = request["path"]
    if "raw_query" in request:
        path += "?" + request["raw_query"]
    elif "query" in request:
        pairs = request["query"].items() if isinstance(request["query"], dict) else request["query"]
        path += "?" + "&".join(
            f"{quote(str(k), safe='')}={quote(str(v), safe='')}" for k, v in pairs
        )
    host = urlsplit(server.base)
    conn = http.client.HTTPConnection(host.hostname, host.port, timeout=10)
    try:
        conn.putrequest(request.get("method", "GET"), path, skip_accept_encoding=True)
        for name, value in (request.get("headers") or {}).items():
            conn.putheader(name, value)
        conn.endheaders()
        response = conn.getresponse()
        body = response.read()
        raw = response.getheaders()
        return response.status, {k.lower(): v for k, v in raw}, raw, body
    finally:
        conn.close()


def json_subset(expected: Any, actual: Any, where: str = "$") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{where}.{key}: missing"
            json_subset(value, actual[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), (
            f"{where}: {actual!r} != {expected!r}"
        )
        for i, (a, b) in enumerate(zip(expected, actual, strict=True)):
            json_subset(a, b, f"{where}[{i}]")
    else:
        assert expected == actual, f"{where}: expected {expected!r}, got {actual!r}"


def check_graph(expect: dict[str, Any], doc: dict[str, Any]) -> None:
    versions = [n["version"] for n in doc["nodes"]]
    edges = {(versions[a], versions[b]) for a, b in doc["edges"]}
    conditional = {
        (e["from"], e["to"]) for entry in doc["conditionalEdges"] for e in entry["edges"]
    }
    risks = {r["name"] for entry in doc["conditionalEdges"] for r in entry["risks"]}
    if "nodes" in expect:
        assert len(doc["nodes"]) == expect["nodes"]
    if "edges" in expect:
        assert len(edges) == expect["edges"]
    if "conditional_edges" in expect:
        assert len(conditional) == expect["conditional_edges"]
    if "risks" in expect:
        assert risks == set(expect["risks"])
    for version in expect.get("versions_include", []):
        assert version in versions
    for version in expect.get("versions_exclude", []):
        assert version not in versions
    for key in expect.get("metadata_keys_absent", []):
        assert all(key not in (n.get("metadata") or {}) for n in doc["nodes"])
    for wanted in expect.get("nodes_include", []):
        found = [n for n in doc["nodes"] if n["version"] == wanted["version"]]
        assert found, f"node {wanted['version']} missing"
        json_subset(wanted, found[0], f"node {wanted['version']}")
    for pair in expect.get("conditional_edges_include", []):
        assert (pair["from"], pair["to"]) in conditional


@pytest.mark.parametrize("case", _cases())
def test_http_case(e2e_server: Server, case: dict[str, Any]) -> None:
    status, headers, raw_headers, body = send(e2e_server, case["request"])
    expect = case["expect"]
    assert status == expect["status"], body[:300]
    if "content_type" in expect:
        media = headers.get("content-type", "").split(";")[0].strip().lower()
        assert media == expect["content_type"].lower()
    if expect.get("body_empty"):
        assert body == b""
    if "body_json_subset" in expect:
        json_subset(expect["body_json_subset"], json.loads(body))
    for name, value in (expect.get("headers_subset") or {}).items():
        values = [v for k, v in raw_headers if k.lower() == name.lower()]
        assert values, f"header {name} missing"
        if name.lower() == "vary":
            tokens = {t.strip().lower() for v in values for t in v.split(",")}
            assert {t.strip().lower() for t in value.split(",")} <= tokens
        else:
            assert value in values
    for name in expect.get("headers_absent", []):
        assert name.lower() not in headers
    if "graph" in expect:
        check_graph(expect["graph"], json.loads(body))
    if "tar_members_include" in expect:
        with tarfile.open(fileobj=io.BytesIO(body), mode="r:*") as archive:
            names = {n.removeprefix("./") for n in archive.getnames()}
        assert set(expect["tar_members_include"]) <= names


def test_cases_file_present() -> None:
    if not CASES_FILE.exists():
        pytest.skip(f"{CASES_FILE} not found (../shared absent)")
    assert len(_cases()) >= 40


# --- extensions and robustness beyond Cincinnati's behaviour -------------------------------

GRAPH = "/api/upgrades_info/graph?channel=stable-4.7&arch=amd64"


def test_etag_and_if_none_match(e2e_server: Server) -> None:
    status, headers, _, _ = send(
        e2e_server, {"path": GRAPH, "headers": {"Accept": "application/json"}}
    )
    assert status == 200 and headers["etag"].startswith('"')
    status, headers2, _, body2 = send(
        e2e_server,
        {
            "path": GRAPH,
            "headers": {"Accept": "application/json", "If-None-Match": headers["etag"]},
        },
    )
    assert status == 304 and body2 == b"" and headers2["etag"] == headers["etag"]
    status, _, _, _ = send(
        e2e_server, {"path": GRAPH, "headers": {"If-None-Match": '"something-else"'}}
    )
    assert status == 200


def test_gzip_when_asked(e2e_server: Server) -> None:
    _, _, _, plain = send(e2e_server, {"path": GRAPH})
    status, headers, _, packed = send(
        e2e_server, {"path": GRAPH, "headers": {"Accept-Encoding": "gzip"}}
    )
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert gzip.decompress(packed) == plain and len(packed) < len(plain)
    _, headers, _, body = send(
        e2e_server, {"path": GRAPH, "headers": {"Accept-Encoding": "gzip;q=0, identity"}}
    )
    assert "content-encoding" not in headers and body == plain


def test_same_answer_every_time(e2e_server: Server) -> None:
    bodies = {send(e2e_server, {"path": GRAPH})[3] for _ in range(3)}
    assert len(bodies) == 1


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_other_methods_refused(e2e_server: Server, method: str) -> None:
    status, _, _, _ = send(e2e_server, {"method": method, "path": GRAPH})
    assert status == 405


def test_oversized_and_garbage_queries(e2e_server: Server) -> None:
    status, _, _, body = send(
        e2e_server, {"path": "/api/upgrades_info/graph", "raw_query": "channel=" + "a" * 20000}
    )
    assert status in (400, 414) and json.loads(body)["kind"] == "invalid_params"
    status, _, _, body = send(
        e2e_server, {"path": "/api/upgrades_info/graph", "raw_query": "channel=%FF%FE&arch=%zz"}
    )
    assert status == 400 and json.loads(body)["kind"] == "invalid_params"
    many = "&".join(f"k{i}=v" for i in range(500)) + "&channel=stable-4.7"
    status, _, _, body = send(e2e_server, {"path": "/api/upgrades_info/graph", "raw_query": many})
    assert status == 400 and json.loads(body)["kind"] == "invalid_params"


def test_garbage_on_the_wire_does_not_hurt(e2e_server: Server) -> None:

    host = urlsplit(e2e_server.base)
    for junk in (
        b"\x00\xff garbage\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\n\r\n",
    ):
        with socket.create_connection((host.hostname, host.port), timeout=5) as sock:
            sock.sendall(junk)
            sock.shutdown(socket.SHUT_WR)
            try:
                while sock.recv(65536):
                    pass
            except OSError:
                pass
    status, _, _, _ = send(e2e_server, {"path": GRAPH})
    assert status == 200


def test_metrics_count_requests_and_errors(e2e_server: Server) -> None:
    send(e2e_server, {"path": "/api/upgrades_info/graph"})  # a 400 missing_params
    status, headers, _, body = send(e2e_server, {"path": "/metrics"})
    text = body.decode()
    assert status == 200 and headers["content-type"].startswith("text/plain")
    assert 'kupgrade_http_requests_total{code="200",route="graph"}' in text
    assert 'kupgrade_http_errors_total{code="400",kind="missing_params"}' in text
    assert "kupgrade_http_request_duration_seconds_bucket" in text
    assert "kupgrade_graph_last_successful_refresh_timestamp_seconds" in text


def test_openapi_names_channel_required(e2e_server: Server) -> None:
    _, _, _, body = send(e2e_server, {"path": "/api/upgrades_info/openapi"})
    doc = json.loads(body)
    params = doc["paths"]["/api/upgrades_info/graph"]["get"]["parameters"]
    assert any(p["name"] == "channel" and p["required"] for p in params)


def test_unknown_channel_still_validates_arch(e2e_server: Server) -> None:
    status, _, _, body = send(
        e2e_server, {"path": "/api/upgrades_info/graph", "query": {"channel": "zzz-1", "arch": "X"}}
    )
    assert status == 400 and "arch 'X'" in json.loads(body)["value"]


def test_livez(e2e_server: Server) -> None:
    assert send(e2e_server, {"path": "/livez"})[0] == 200
