"""The update service as one builder and replicas, on loopback under wrk (issue 45).

A builder rebuilds and publishes a snapshot every second (a blocked-edges file is
rewritten every second, alternating between two contents, so every publication is a
real change) while 1, then 3, replicas (`serve --role replica`, polling every 0.2 s)
answer behind one port: nginx as the balancer, HTTP/1.1 with kept-alive upstream
connections. The baseline is one `serve --role all` process rebuilding on the same churn
behind the same nginx. wrk's Lua hooks record, for every response, its snapshot header,
ETag and body size; each recorded (snapshot, ETag, size) is then checked against the
snapshot it names (the builder keeps them all here): no answer mixes two generations.

Reported: requests per second, p50/p99, errors (non-2xx and socket errors), snapshots
published and seen, the throughput ratio of 3 replicas to 1 and the p99 ratio of 3
replicas to the one `--role all` process. On a 2-core machine wrk, nginx, the builder and
the replicas share the same two cores, so the ratios say more than the absolute numbers.
Run alone: `python -m bench.updateservice_replicas [--seconds N]` (needs wrk and nginx:
`make bench-deps`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kupgrade.sim.sample import write_sample
from kupgrade.updateservice.process import ChildProcess, free_port
from kupgrade.updateservice.snapshot_stores import DirectoryStore

CHANNEL, ARCH = "stable-4.14", "amd64"
PATH = f"/api/upgrades_info/graph?channel={CHANNEL}&arch={ARCH}"

NGINX = """worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path {tmp}; proxy_temp_path {tmp}; fastcgi_temp_path {tmp};
  uwsgi_temp_path {tmp}; scgi_temp_path {tmp};
  upstream service {{ {servers} keepalive 64; }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://service;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }}
  }}
}}
"""

# Per wrk thread: every (snapshot, etag, size) answered, and answers with no snapshot.
LUA = """
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) seen = {}; unnamed = 0 end
function response(status, headers, body)
  local digest = headers["kupgrade-snapshot"] or headers["Kupgrade-Snapshot"]
  if digest == nil then unnamed = unnamed + 1; return end
  seen[digest .. " " .. (headers["etag"] or headers["ETag"] or "") .. " " .. #body] = true
end
function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    io.write("unnamed " .. tostring(thread:get("unnamed")) .. "\\n")
    for key, _ in pairs(thread:get("seen")) do io.write("seen " .. key .. "\\n") end
  end
end
"""

_WRK = {
    "rps": re.compile(r"Requests/sec:\s+([\d.]+)"),
    "p50": re.compile(r"50%\s+([\d.]+)(us|ms|s)\b"),
    "p99": re.compile(r"99%\s+([\d.]+)(us|ms|s)\b"),
}


def wrk(url: str, seconds: int, script: Path) -> tuple[dict[str, float], list[str]]:
    command = ["wrk", "-t2", "-c64", f"-d{seconds}s", "--latency", "-s", str(script), url]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    result = {"rps": float(_WRK["rps"].search(out).group(1))}  # type: ignore[union-attr]
    for key in ("p50", "p99"):
        value, unit = _WRK[key].search(out).groups()  # type: ignore[union-attr]
        result[key + "_ms"] = float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sockets = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out
    )
    result["errors"] = float(non_2xx.group(1)) if non_2xx else 0.0
    result["errors"] += sum(float(n) for n in sockets.groups()) if sockets else 0.0
    return result, [line for line in out.splitlines() if line.startswith(("seen ", "unnamed "))]


@contextlib.contextmanager
def churning(graph_data: Path) -> Iterator[None]:
    """A blocked-edges file rewritten every second, alternating between two edges."""
    target = graph_data / "blocked-edges" / "bench-churn.yaml"
    stop = threading.Event()

    def churn() -> None:
        flip = False
        while not stop.wait(1.0):
            flip = not flip
            target.write_text(f"to: {'4.14.26' if flip else '4.14.27'}\nfrom: .*\n")

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def serve(log: Path, *args: str) -> ChildProcess:
    port = free_port()
    command = [sys.executable, "-m", "kupgrade", "serve", "--port", str(port), *args]
    return ChildProcess(command, f"http://127.0.0.1:{port}", log)


def balanced(tmp: Path, name: str, backends: list[ChildProcess]) -> ChildProcess:
    port = free_port()
    servers = " ".join(f"server {b.base.removeprefix('http://')};" for b in backends)
    conf = tmp / f"nginx-{name}.conf"
    conf.write_text(NGINX.format(tmp=tmp, port=port, servers=servers))
    return ChildProcess(["nginx", "-c", str(conf)], f"http://127.0.0.1:{port}", tmp / f"{name}.log")


def measure(tmp: Path, name: str, backends: list[ChildProcess], seconds: int) -> dict[str, Any]:
    script = tmp / "check.lua"
    script.write_text(LUA)
    with contextlib.ExitStack() as stack:
        for backend in backends:
            stack.enter_context(backend)
            backend.wait_for()
        front = stack.enter_context(balanced(tmp, name, backends))
        front.wait_for(PATH)
        wrk(front.base + PATH, 1, script)  # warm up
        result, lines = wrk(front.base + PATH, seconds, script)
    seen = [line.split()[1:] for line in lines if line.startswith("seen ")]
    result["unnamed"] = float(
        sum(int(line.split()[1]) for line in lines if line.startswith("unnamed"))
    )
    result["snapshots_seen"] = float(len({digest for digest, _, _ in seen}))
    return {**result, "_seen": seen}


def mixed(store: DirectoryStore, seen: list[list[str]]) -> int:
    """Answers whose ETag or size is not their named snapshot's answer."""
    cache: dict[str, tuple[str, int]] = {}
    bad = 0
    for digest, etag, size in seen:
        if digest not in cache:
            rendered = store.read(digest).renders[CHANNEL, ARCH]
            cache[digest] = (rendered.etag, len(rendered.body))
        bad += cache[digest] != (etag, int(size))
    return bad


def bench(seconds: int) -> dict[str, Any]:
    for tool in ("wrk", "nginx"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed: make bench-deps")
    with tempfile.TemporaryDirectory(prefix="kupgrade-replicas-") as name:
        tmp = Path(name)
        data = write_sample(tmp / "data")
        releases, graph_data = str(data / "releases"), str(data / "graph-data")
        inputs = ("--releases", releases, "--graph-data", graph_data, "--refresh", "1")
        report: dict[str, Any] = {}
        with churning(data / "graph-data"):
            alone = serve(tmp / "all.log", *inputs)
            report["one --role all"] = measure(tmp, "all", [alone], seconds)
            snaps = tmp / "snaps"
            builder = serve(
                tmp / "builder.log",
                *("--role", "builder", *inputs, "--snapshots", str(snaps), "--keep", "100000"),
            )
            with builder:
                builder.wait_for()
                for count in (1, 3):
                    replicas = [
                        serve(
                            tmp / f"replica-{count}-{i}.log",
                            *("--role", "replica", "--snapshots", str(snaps), "--refresh", "0.2"),
                        )
                        for i in range(count)
                    ]
                    report[f"{count} replicas"] = measure(tmp, f"r{count}", replicas, seconds)
                published = builder.logs().count("published snapshot")
        store = DirectoryStore(snaps)
        for key, value in report.items():
            seen = value.pop("_seen")
            value["mixed"] = float(mixed(store, seen) if key != "one --role all" else 0)
        one, three, alone_r = report["1 replicas"], report["3 replicas"], report["one --role all"]
        report["snapshots published"] = published
        report["throughput 3 replicas / 1"] = round(three["rps"] / one["rps"], 3)
        report["p99 3 replicas / one --role all"] = round(three["p99_ms"] / alone_r["p99_ms"], 3)
        return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps(bench(args.seconds), indent=2))


if __name__ == "__main__":
    main()
