"""`make bench`: graph build, service throughput vs nginx, PromQL vs Prometheus, releases.

1. Build time of the 20211124.083150 parser fixture (1085 nodes, 19478 raw edges), split
   into its steps, median of several runs; also against the current graph-data.
2. The update service under wrk (64 connections, loopback), side by side with nginx
   serving the very same response bytes as a static file, in the same run. The ratio
   nginx/kupgrade is what matters; absolute numbers depend on the machine.
3. PromQL against a real Prometheus (bench/promql.py), when Prometheus is installed.
4. Release payloads (bench/release.py): load and graph 1,000 manifests; extract and
   verify throughput against tar and sha256sum on the same layer.
5. A simulated cluster upgraded at 50, 500 and 5,000 nodes (bench/sim.py), a
   distributed-cloud cluster rehearsed at 50 and 500 nodes (bench/gdc.py), and the
   Kubernetes API of a 5,000-node simulated cluster listed and watched (bench/kubeapi.py),
   and a 500-node rehearsal in process against the same over the API (bench/remote.py).
6. A distributed-cloud fleet planned at 100, 1,000 and 10,000 clusters (bench/fleet.py).
7. Plain Kubernetes clusters of 500 and 2,000 nodes rehearsed minor to minor (bench/kube.py),
   and 200 OLM subscriptions walked to their heads on a cluster (bench/olm.py), and one
   channel of 5,000 and 50,000 bundles validated and rendered (bench/catalog_growth.py).
9. The web console's time to first render of the largest channel and its bytes over the
   wire, in headless Chromium (bench/console.py), when Chromium and Playwright are there.
11. A must-gather of 5,000 nodes and 100,000 pods imported as a twin and preflighted
   (bench/twin_import.py; each step in its own process, with its peak memory).
10. How quickly the CLI starts (`--help`, `get nodes`, `skew check`) as a ratio to
   `kubectl version --client`, paired runs (bench/cli_start.py).
12. A staged rollout of 100 and 1,000 distributed-cloud clusters planned and carried out
   on forecasts, windows and stages (bench/rollout.py), each size in its own process.
13. Fleets of 100 and 1,000 Kubernetes clusters rehearsed in one process and on Ray (its
   tasks on this machine's cores), and a sweep of 4 settings × 20 seeds (bench/fleet_engines.py).
8. A fleet of 100 distributed-cloud clusters (one admin, 99 users with 3 pools of 5 nodes)
   rehearsed along its plan from 1.28 to 1.30 (bench/fleet_rehearsal.py), in its own
   process so that its peak memory is its own.

Uses ../shared when present and the sample dataset otherwise (and says so).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import yaml

from bench.catalog_growth import bench_catalog_growth
from bench.cli_start import bench_cli_start
from bench.console import bench_console
from bench.fleet import bench_fleet
from bench.gdc import bench_gdc
from bench.olm import bench_olm, bench_olm_cluster
from bench.promql import bench_promql
from bench.release import bench_release, describe
from bench.rollout import bench_rollout
from bench.sim import bench_sim
from bench.twin_import import bench_twin_import
from kupgrade.graph.builder import build_graph
from kupgrade.graph.codec import encode_graph
from kupgrade.graph.graphdata import load_graph_data
from kupgrade.graph.releases import load_releases
from kupgrade.graph.tree import open_tree
from kupgrade.sim.sample import write_sample
from kupgrade.updateservice.process import ChildProcess, ServiceProcess, free_port

REPO = Path(__file__).resolve().parents[1]
SHARED = (
    Path(os.environ.get("KUPGRADE_SHARED", REPO.parent / "shared")) / "conformance" / "cincinnati"
)


def timed(func: Callable[[], object], runs: int) -> tuple[float, object]:
    samples, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = func()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples), result


def bench_build(raw: Path, graph_data: Path, runs: int) -> dict[str, float]:
    t_raw, graph = timed(lambda: load_releases(raw), runs)
    # Each run reads, parses and builds the graph-data, then libyaml parses the same
    # files: a pair that shares the machine's load of its moment.
    pairs = [
        (_graph_data_phases(graph, graph_data), _seconds(lambda: _libyaml_only(graph_data)))
        for _ in range(runs)
    ]
    t_tree, t_parse, t_build = (statistics.median(p[0][i] for p in pairs) for i in range(3))
    built = build_graph(graph, load_graph_data(open_tree(graph_data)))  # type: ignore[arg-type]
    t_encode, _ = timed(lambda: encode_graph(built), runs)
    total = t_raw + t_tree + t_parse + t_build + t_encode
    return {
        "read raw graph": t_raw,
        "read graph-data": t_tree,
        "parse graph-data": t_parse,
        "build": t_build,
        "encode": t_encode,
        "total": total,
        # The yardstick: reading and parsing the same graph-data files with libyaml alone,
        # and the ratio of reading, parsing and building the graph-data to it (goal <= 2),
        # the median of the pairs' ratios.
        "libyaml parse only": statistics.median(y for _, y in pairs),
        "ratio graph-data to libyaml": statistics.median(sum(p) / y for p, y in pairs),
    }


def _seconds(func: Callable[[], object]) -> float:
    started = time.perf_counter()
    func()
    return time.perf_counter() - started


def _graph_data_phases(graph: object, graph_data: Path) -> tuple[float, float, float]:
    """Seconds to read, to parse and to build the graph-data, once."""
    started = time.perf_counter()
    tree = open_tree(graph_data)
    read = time.perf_counter()
    data = load_graph_data(tree)
    parsed = time.perf_counter()
    build_graph(graph, data)  # type: ignore[arg-type]
    return read - started, parsed - read, time.perf_counter() - parsed


def _libyaml_only(graph_data: Path) -> int:
    files = [p for p in sorted(graph_data.rglob("*")) if p.suffix in (".yaml", ".yml")]
    for path in files:
        yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)
    return len(files)


WRK_RE = {
    "rps": re.compile(r"Requests/sec:\s+([\d.]+)"),
    "p50": re.compile(r"50%\s+([\d.]+)(us|ms|s)\b"),
    "p99": re.compile(r"99%\s+([\d.]+)(us|ms|s)\b"),
}


def wrk(url: str, seconds: int, connections: int) -> dict[str, float]:
    command = [
        "wrk",
        "-t2",
        f"-c{connections}",
        f"-d{seconds}s",
        "--latency",
        "-H",
        "Accept: application/json",
        url,
    ]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    result = {"rps": float(WRK_RE["rps"].search(out).group(1))}  # type: ignore[union-attr]
    for key in ("p50", "p99"):
        value, unit = WRK_RE[key].search(out).groups()  # type: ignore[union-attr]
        result[key + "_ms"] = float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    result["non_2xx"] = float(errors.group(1)) if errors else 0.0
    return result


ROUNDS = 3

NGINX_CONF = """worker_processes auto;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  sendfile on; tcp_nopush on; keepalive_requests 1000000;
  client_body_temp_path {tmp}; proxy_temp_path {tmp}; fastcgi_temp_path {tmp};
  uwsgi_temp_path {tmp}; scgi_temp_path {tmp};
  server {{
    listen 127.0.0.1:{port};
    root {tmp}/www;
    location / {{ default_type application/json; }}
  }}
}}
"""


def bench_service(
    releases: Path,
    graph_data: Path,
    channel: str,
    seconds: int,
    workers: int = 1,
    *,
    churn: bool = False,
) -> dict[str, dict[str, float]]:
    """The graph route under wrk against nginx serving its very bytes. `workers` service
    processes; with `churn`, a graph-data file is rewritten every second and the service
    re-checks its inputs every second, so it rebuilds all through the measurement."""
    for tool in ("wrk", "nginx"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed: apt-get install -y wrk nginx-light")
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="kupgrade-bench-") as tmp_name:
        tmp = Path(tmp_name)
        extra = ["--workers", str(workers)]
        if churn:
            shutil.copytree(graph_data, tmp / "graph-data")
            graph_data = tmp / "graph-data"
            extra += ["--refresh", "1"]
        with ServiceProcess(releases, graph_data, tmp / "serve.log", *extra) as service:
            service.wait_for("/readyz")
            url = f"{service.base}/api/upgrades_info/graph?channel={channel}&arch=amd64"
            body = httpx.get(url, headers={"Accept": "application/json"}).content
            (tmp / "www").mkdir()
            (tmp / "www" / "graph.json").write_bytes(body)
            nginx_port = free_port()
            (tmp / "nginx.conf").write_text(NGINX_CONF.format(tmp=tmp, port=nginx_port))
            static = f"http://127.0.0.1:{nginx_port}/graph.json"
            nginx_command = ["nginx", "-c", str(tmp / "nginx.conf")]
            with (
                ChildProcess(
                    nginx_command, f"http://127.0.0.1:{nginx_port}", tmp / "nginx.log"
                ) as nginx,
                _churning(graph_data if churn else None),
            ):
                nginx.wait_for("/graph.json")
                assert httpx.get(static).content == body, "nginx must serve the same bytes"
                built = _builds(service.base)
                wrk(url, 2, 64)  # warm up both
                wrk(static, 2, 64)
                # Alternate the two servers over several rounds so that both see the same
                # machine load; report the median round (shared machines are noisy).
                rounds = [(wrk(url, seconds, 64), wrk(static, seconds, 64)) for _ in range(ROUNDS)]
                ratios = [ours["rps"] / theirs["rps"] for ours, theirs in rounds]
                median = sorted(range(ROUNDS), key=lambda i: ratios[i])[ROUNDS // 2]
                results["kupgrade"], results["nginx"] = rounds[median]
                results["ratios"] = {f"round{i + 1}": r for i, r in enumerate(ratios)}
                results["rebuilds"] = {"during": _builds(service.base) - built}
                for name in ("kupgrade", "nginx"):
                    results[name]["body_bytes"] = float(len(body))
    return results


def _builds(base: str) -> float:
    """Graph builds so far, added up over the service's workers (from /metrics)."""
    text = httpx.get(f"{base}/metrics").text
    found = re.search(r'^kupgrade_graph_refreshes_total\{result="built"\} ([\d.]+)', text, re.M)
    return float(found.group(1)) if found else 0.0


@contextlib.contextmanager
def _churning(graph_data: Path | None) -> Iterator[None]:
    """Rewrite one channel file every second (a comment toggled) until the block ends."""
    if graph_data is None:
        yield
        return
    target = sorted((graph_data / "channels").glob("*.yaml"))[0]
    original = target.read_bytes()
    stop = threading.Event()

    def churn() -> None:
        flip = False
        while not stop.wait(1.0):
            flip = not flip
            target.write_bytes(original + (b"# churn\n" if flip else b""))

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _own_process(module: str, *args: str) -> dict[str, object]:
    """A bench run in a process of its own (its peak memory is then its own)."""
    out = subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--sim-sizes", default="50,500,5000,20000", help="cluster sizes (nodes)")
    parser.add_argument("--api-nodes", type=int, default=5000, help="cluster size for the API")
    parser.add_argument(
        "--remote-nodes", type=int, default=500, help="cluster size of the rehearsal over the API"
    )
    parser.add_argument("--gdc-sizes", default="50,500", help="distributed-cloud sizes (nodes)")
    parser.add_argument(
        "--kube-nodes", default="500,2000", help="plain Kubernetes sizes, comma-separated"
    )
    parser.add_argument("--fleet-sizes", default="100,1000,10000", help="fleet sizes (clusters)")
    args = parser.parse_args()
    report: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="kupgrade-sample-") as tmp:
        if SHARED.exists():
            fixture = SHARED / "parser-fixtures" / "20211124.083150"
            report["build 20211124.083150"] = bench_build(
                fixture / "graph-gb-raw.json", fixture / "cincinnati-graph-data", args.runs
            )
            report["build 20211124.083150 with graph-data-head"] = bench_build(
                fixture / "graph-gb-raw.json", SHARED / "graph-data-head", args.runs
            )
            releases, graph_data, channel = (
                SHARED / "e2e" / "synthetic-raw.json",
                SHARED / "e2e" / "graph-data-134475077",
                "stable-4.7",
            )
            data_note = "e2e synthetic-raw + graph-data-134475077"
        else:
            print(
                "note: ../shared not found; benchmarking the sample dataset instead",
                file=sys.stderr,
            )
            root = write_sample(Path(tmp) / "sample")
            report["build sample"] = bench_build(root / "releases", root / "graph-data", args.runs)
            releases, graph_data, channel, data_note = (
                root / "releases",
                root / "graph-data",
                "stable-4.14",
                "sample",
            )
        workers = max(2, min(os.cpu_count() or 1, 4))
        services = {
            "one worker": bench_service(releases, graph_data, channel, args.seconds),
            "one worker, rebuilding every second": bench_service(
                releases, graph_data, channel, args.seconds, churn=True
            ),
            f"{workers} workers": bench_service(
                releases, graph_data, channel, args.seconds, workers
            ),
        }
        service = services["one worker"]
        if SHARED.exists():
            report["console"] = bench_console(
                SHARED / "parser-fixtures" / "20211124.083150" / "graph-gb-raw.json",
                SHARED / "graph-data-head",
            )
        else:
            report["console"] = bench_console(releases, graph_data)
    report["service"] = {"data": data_note, "channel": channel, **services}
    ratio = service["kupgrade"]["rps"] / service["nginx"]["rps"]
    report["service_ratio_rps_kupgrade_over_nginx"] = round(ratio, 3)
    if shutil.which("prometheus") is not None and SHARED.parent.exists():
        report["promql"] = bench_promql(SHARED.parent.parent, 10_000, 5)
    report["release"] = bench_release(1000, 7)
    report["simulated upgrade"] = bench_sim([int(n) for n in args.sim_sizes.split(",")])
    report["kubernetes api"] = _own_process("bench.kubeapi", "--nodes", str(args.api_nodes))
    report["rehearsal over the api"] = _own_process(
        "bench.remote", "--nodes", str(args.remote_nodes)
    )
    report["gdc rehearsal"] = bench_gdc([int(n) for n in args.gdc_sizes.split(",")])
    report["kubernetes rehearsal"] = [
        _own_process("bench.kube", "--nodes", size) for size in args.kube_nodes.split(",")
    ]
    report["fleet plan"] = bench_fleet([int(n) for n in args.fleet_sizes.split(",")])
    report["fleet rehearsal"] = _own_process("bench.fleet_rehearsal")
    report["update service replicas"] = _own_process("bench.updateservice_replicas")
    report["fleet engines"] = _own_process("bench.fleet_engines")
    report["staged rollout"] = bench_rollout((100, 1000))
    report["olm"] = bench_olm(SHARED.parent)
    report["olm on a cluster"] = bench_olm_cluster(SHARED.parent)
    report["catalog growth"] = bench_catalog_growth([5_000, 50_000])
    report["twin import and preflight"] = bench_twin_import(5000, 100_000, "json")
    report["cli start"] = bench_cli_start()
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for name, value in report.items():
        if name.startswith("build"):
            steps = ", ".join(
                f"{k} {v * 1000:.1f} ms"
                for k, v in value.items()  # type: ignore[union-attr]
                if not k.startswith("ratio")
            )
            print(
                f"{name}: {steps}; graph-data read, parsed and built in "
                f"{value['ratio graph-data to libyaml']:.2f}x libyaml's parse"
            )  # type: ignore[index]
    print(
        f"service ({data_note}, {channel}, {int(service['nginx']['body_bytes'])} bytes, wrk -t2 -c64 -d{args.seconds}s):"
    )
    for setup, measured in services.items():
        rounds = ", ".join(f"{r:.2f}" for r in measured["ratios"].values())
        mine, theirs = measured["kupgrade"], measured["nginx"]
        print(
            f"  {setup}: kupgrade/nginx requests per second {mine['rps'] / theirs['rps']:.2f} "
            f"(median of {ROUNDS} alternating rounds: {rounds}; goal >= 0.8), p99 "
            f"{mine['p99_ms'] / theirs['p99_ms']:.2f}x nginx's (goal <= 1), "
            f"{int(measured['rebuilds']['during'])} rebuilds during the rounds"
        )
        for name in ("kupgrade", "nginx"):
            r = measured[name]
            print(
                f"    {name:9s} {r['rps']:>10.0f} req/s   p50 {r['p50_ms']:6.2f} ms   "
                f"p99 {r['p99_ms']:6.2f} ms   non-2xx {int(r['non_2xx'])}"
            )
    console = report["console"]
    if "skipped" in console:  # type: ignore[operator]
        print(f"console: skipped ({console['skipped']})")  # type: ignore[index]
    else:
        print(
            f"console: first render of {console['channel']} ({console['versions']} versions, "  # type: ignore[index]
            f"{console['edges']} edges) in {console['first_render_ms']} ms, "  # type: ignore[index]
            f"{console['bytes']} bytes over the wire"  # type: ignore[index]
        )
    if "promql" in report:
        p = report["promql"]
        print(
            f"promql (64 graph-data expressions, {p['series']} series, {p['samples']} samples; "  # type: ignore[index]
            f"snapshot parse {p['parse_s']} s): kupgrade {p['kupgrade_pass_ms']} ms per pass, "  # type: ignore[index]
            f"Prometheus over HTTP {p['prometheus_http_pass_ms']} ms; Prometheus/kupgrade "  # type: ignore[index]
            f"{p['ratio_prometheus_over_kupgrade']} (goal >= 1), agree {p['agree']}"  # type: ignore[index]
        )
        print(
            f"snapshot parse from the file: {p['parse_file_s']} s ({p['samples_per_s']} samples/s) "  # type: ignore[index]
            f"vs promtool create-blocks-from openmetrics {p['promtool_create_blocks_s']} s: ratio "  # type: ignore[index]
            f"{p['ratio_parse_over_promtool']} (goal <= 1); line-by-line reader alone "  # type: ignore[index]
            f"{p['line_by_line_s']} s, {p['ratio_line_by_line_over_bulk']}x the bulk reader's time"  # type: ignore[index]
        )
    print(describe(report["release"]))  # type: ignore[arg-type]
    print("simulated upgrade (20 pods per worker, a budget per 20 pods, ~1,000 manifests):")
    for row in report["simulated upgrade"]["sizes"]:  # type: ignore[index]
        print(
            f"  {row['nodes']:>5} nodes {row['pods']:>6} pods: {row['wall_s']:7.1f} s wall for "
            f"{row['simulated_min']} simulated min ({row['simulated_per_wall']}x real time, "
            f"goal 225x at 5,000 nodes), {row['steps']} steps, peak {row['peak_rss_mb']} MB"
            + (
                f", x{row['wall_ratio_to_previous']} the previous size's wall time, "
                f"x{row['growth_per_10x_nodes']} per x10 nodes (goal <= x11)"
                if "growth_per_10x_nodes" in row
                else ""
            )
        )
    api = report["kubernetes api"]
    print(
        f"kubernetes api ({api['nodes']} nodes, HTTPS on loopback, "  # type: ignore[index]
        f"peak {api['peak_rss_mb']} MB):"
    )  # type: ignore[index]
    for name, row in api.items():  # type: ignore[union-attr]
        if isinstance(row, dict):
            count = row.get("objects", row.get("events"))
            print(f"  {name:15s} {count:>7} in {row['seconds']:6.3f} s ({row['per_second']}/s)")
    remote = report["rehearsal over the api"]
    print(
        f"rehearsal over the api ({remote['nodes']} nodes): in process "  # type: ignore[index]
        f"{remote['in_process']['wall_s']} s, controllers over the API "  # type: ignore[index]
        f"{remote['over_api']['wall_s']} s ({remote['over_api']['requests']} requests), "  # type: ignore[index]
        f"ratio {remote['ratio_api_over_in_process']}x, same end: {remote['same_end']}, "  # type: ignore[index]
        f"peak {remote['peak_rss_mb']} MB"  # type: ignore[index]
    )
    print("distributed-cloud rehearsal (1.28 -> 1.29, 5 worker pools, 20 pods per worker):")
    for row in report["gdc rehearsal"]["sizes"]:  # type: ignore[index]
        print(
            f"  {row['nodes']:>5} nodes {row['pods']:>6} pods: {row['wall_s']:7.1f} s wall for "
            f"{row['simulated_min']} simulated min ({row['simulated_per_wall']}x real time), "
            f"{row['steps']} steps, peak {row['peak_rss_mb']} MB"
        )
    start = report["cli start"]
    if "skipped" in start:  # type: ignore[operator]
        print(f"cli start: skipped ({start['skipped']})")  # type: ignore[index]
    else:
        print("cli start (median of paired runs, ratio to `kubectl version --client`):")
        for name, row in start.items():  # type: ignore[attr-defined]
            print(
                f"  kupgrade {name:11s} {row['kupgrade_s'] * 1000:7.1f} ms   kubectl "
                f"{row['kubectl_s'] * 1000:6.1f} ms   ratio {row['ratio']}"
            )
    print("kubernetes rehearsal (v1.30.4 -> v1.31.2 through v1.30.9, a node at a time):")
    previous: dict[str, float] | None = None
    for kube in report["kubernetes rehearsal"]:  # type: ignore[attr-defined]
        growth = (
            f", x{kube['wall_s'] / previous['wall_s']:.1f} the previous size's wall time "
            f"for x{kube['nodes'] / previous['nodes']:.0f} nodes"
            if previous
            else ""
        )
        print(
            f"  {kube['nodes']:5d} nodes {kube['pods']:6d} pods: {kube['wall_s']} s wall for "
            f"{kube['simulated_min']} simulated min, {kube['steps']} steps, "
            f"peak {kube['peak_rss_mb']} MB{growth}"
        )
        previous = kube
    fleet = report["fleet rehearsal"]
    print(
        f"fleet rehearsal ({fleet['clusters']} clusters, {fleet['nodes']} nodes, 1.28 -> 1.30): "  # type: ignore[index]
        f"{fleet['wall_s']} s wall for {fleet['simulated_min']} simulated min, {fleet['steps']} steps, "  # type: ignore[index]
        f"{fleet['states']} states checked, peak {fleet['peak_rss_mb']} MB"  # type: ignore[index]
    )
    rollout = report["staged rollout"]
    print("staged rollout (4 stages, nightly windows, 1.28 -> 1.29; each size its own process):")
    for row in rollout["runs"]:  # type: ignore[index]
        print(
            f"  {row['clusters']:>5} clusters: plan {row['plan_s']} s, rehearse "
            f"{row['rehearse_s']} s for {row['simulated_days']} simulated days, "
            f"peak {row['peak_rss_mb']} MB"
        )
    if "growth" in rollout:  # type: ignore[operator]
        print(f"  growth for x10 clusters: {rollout['growth']}")  # type: ignore[index]
    print("fleet plan (20 user clusters per manager, 5 pools each, 1.28 -> 1.30):")
    for row in report["fleet plan"]["sizes"]:  # type: ignore[index]
        print(
            f"  {row['clusters']:>6} clusters: {row['total_s']:6.2f} s (parse {row['parse_s']} s), "
            f"peak {row['peak_rss_mb']} MB, {row['steps']} steps, {row['states_checked']} states"
            + (
                f", x{row['time_ratio']} time for x{row['size_ratio']} clusters"
                if "time_ratio" in row
                else ""
            )
        )
    olm = report["olm"]
    if "skipped" in olm:  # type: ignore[operator]
        print(f"olm: skipped ({olm['skipped']})")  # type: ignore[index]
    else:
        print(
            f"olm ({olm['catalog']}, {olm['bytes']} bytes): load+validate+index {olm['load_validate_index_s']} s, "  # type: ignore[index]
            f"JSON parse alone {olm['parse_json_s']} s, ratio {olm['ratio']} (goal < 3); peak RSS "  # type: ignore[index]
            f"{olm['full_peak_rss_mb']} MB vs {olm['parse_peak_rss_mb']} MB parsing only"  # type: ignore[index]
        )
        for policy, row in olm["resolutions"].items():  # type: ignore[index]
            print(
                f"  resolve {policy:7s} {row['resolutions']} triples in {row['seconds']} s: {row['per_second']}/s"
            )
    cluster = report["olm on a cluster"]
    if "skipped" not in cluster:  # type: ignore[operator]
        print(
            f"olm on a cluster: {cluster['subscriptions']} subscriptions walked to their heads "  # type: ignore[index]
            f"({cluster['install_plans']} install plans, {cluster['at_channel_head']} at the head) "  # type: ignore[index]
            f"in {cluster['wall_s']} s wall for {cluster['simulated_min']} simulated min"  # type: ignore[index]
        )
    growth = report["catalog growth"]
    print(
        f"catalog growth (one channel, 5,000 -> 50,000 bundles): time x{json.dumps(growth['time_ratio'])}, "  # type: ignore[index]
        f"peak {json.dumps(growth['peak_rss_mb'])} MB"  # type: ignore[index]
    )


if __name__ == "__main__":
    main()
