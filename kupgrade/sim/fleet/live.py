"""A staged rollout carried out on real clusters, each reached through a context of one
kubeconfig (SPEC X3, X6, X9), on the wall clock.

A live fleet (`fleet rollout start FILE --kubeconfig K --fleet NAME`) keeps only its
rollout in `$KUPGRADE_HOME/fleets/NAME/fleet.db`: the steps (one per cluster that is not
at the target), when each started and finished, the conductor's state and its events.
Each pass reads every cluster under way, lets the conductor (plan/rollout.py) move the
stages on at the wall clock's time, and asks each cluster that may start for its update
as `kupgrade upgrade --kubeconfig --to` does (its own update operator does the work).
The store is committed after every pass and after every request; a request asked again
after a crash asks what the cluster already does, so `resume` neither repeats nor
reorders work. Gates read each cluster's Prometheus (`--prometheus CONTEXT=URL`).

Clusters whose updates an API request starts (OpenShift's ClusterVersion) take part;
a distributed-cloud or kubeadm cluster, whose upgrades run from a machine (bmctl,
kubeadm), is refused by name before anything is asked.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.errors import InputError, KupgradeError
from kupgrade.plan.rollout import Conductor, Facts, Task, schedule
from kupgrade.plan.rollout_doc import Gate, Rollout, read_rollout
from kupgrade.plan.steps import BlockedError, Plan
from kupgrade.risks.prometheus import PrometheusBackend
from kupgrade.sim.fleet.home import FLEET_DB, INFO, fleets_root
from kupgrade.sim.fleet.rehearsal import PlanRefusedError
from kupgrade.sim.fleet.rollout import (
    ROLLOUT,
    largest,
    no_twin,
    stated_forecast,
    task_of,
)
from kupgrade.sim.fleet.rollouts import (
    placed_rows,
    refused_json,
    relative,
    stage_rows,
    window_rows,
)
from kupgrade.sim.homes import CLUSTER_NAME
from kupgrade.sim.platform import UpgradeAsk
from kupgrade.sim.platforms import platform_serving
from kupgrade.sim.store import Store, read_meta
from kupgrade.sim.upgrades import upgrade_over_api
from kupgrade.versions.times import rfc3339

LIVE = "live"  # the fleet's platform, and the store's key for the steps
DEFAULT_FORECAST = 7200.0  # a cluster update's forecast when nothing better is known
API_UPGRADE = "upgrade --kubeconfig"
OPENSHIFT = "openshift"  # the role a live fleet's clusters have for stage selectors


@dataclass(frozen=True)
class Reach:
    """How a live fleet reaches its clusters and their metrics."""

    kubeconfig: Path
    contexts: list[str]
    prometheus: dict[str, str]  # context -> Prometheus or Thanos querier URL
    token_file: Path | None = None
    ca_file: Path | None = None


def cluster_version(api: Backend, context: str) -> tuple[str, str, bool]:
    """(version it runs, version it is asked for, whether that update completed)."""
    cv = api.get("ClusterVersion", "version")
    if cv is None:
        raise InputError(
            f"context {context}: the cluster has no ClusterVersion",
            hint="a rollout over a kubeconfig upgrades clusters whose update an API "
            "request starts (OpenShift)",
        )
    status = cv.get("status") or {}
    history = status.get("history") or []
    running = next((h.get("version") for h in history if h.get("state") == "Completed"), None) or (
        status.get("desired") or {}
    ).get("version", "")
    desired = str((status.get("desired") or {}).get("version") or running)
    done = (
        bool(history)
        and history[0].get("state") == "Completed"
        and history[0].get("version") == desired
    )
    return str(running), desired, done


class LiveGauges:
    """Gate values from each cluster's Prometheus, at the wall clock's time."""

    def __init__(self, reach: Reach) -> None:
        self.reach = reach

    def __call__(self, gate: Gate, cluster: str, at: float) -> float | None:
        url = self.reach.prometheus.get(cluster)
        if url is None:
            return None
        ask = PrometheusBackend(
            url, token_file=self.reach.token_file, ca_file=self.reach.ca_file, time_s=at
        )
        return largest(ask(gate.promql))


class LiveRollout:
    """The rollout of a live fleet; see the module."""

    def __init__(
        self, store: Store, rollout: Rollout, apis: dict[str, Backend], gauges: LiveGauges
    ) -> None:
        self.store = store
        self.rollout = rollout
        self.apis = apis
        self.gauges = gauges
        self.conductor = self._conductor()

    @property
    def state(self) -> dict[str, Any]:
        return dict(self.store.meta(LIVE) or {})

    @property
    def steps(self) -> dict[str, dict[str, Any]]:
        return dict(self.state.get("steps") or {})

    def _conductor(self) -> Conductor:
        stored = self.store.meta(ROLLOUT) or {}
        return Conductor(
            self.rollout, _facts(self.apis), _tasks(self.steps), stored.get("conductor")
        )

    # --- beginning ----------------------------------------------------------------------

    def begin(self, target: str, file: str, now: float) -> None:
        """Start the rollout: refused (nothing written) as `prepare` refuses."""
        steps, _ = prepare(self.rollout, self.apis, target, now)
        self.store.set_meta(ROLLOUT, {"document": self.rollout.document, "file": file, "taken": []})
        self.store.set_meta(
            LIVE, {"status": "running", "target": target, "startedAt": now, "steps": steps}
        )
        self.store.event(
            now, "Normal", "fleet", "RolloutStarted", f"{len(steps)} clusters to {target}"
        )
        self.store.commit()
        self.conductor = self._conductor()

    # --- one pass -----------------------------------------------------------------------

    def step(self, now: float) -> str:
        """Follow what runs, move the stages on, start what may start; the status."""
        state = self.state
        steps = state["steps"]
        for step_id, record in steps.items():
            if "startedAt" in record and "finishedAt" not in record:
                self._follow(step_id, record, now)
        done = {i for i, r in steps.items() if "finishedAt" in r}
        self.conductor.advance(done, now, self.gauges)
        if self.conductor.halted is None:
            running = [i for i, r in steps.items() if "startedAt" in r and "finishedAt" not in r]
            for step_id, record in steps.items():
                if "startedAt" in record:
                    continue
                held = self.conductor.hold(
                    self.conductor.tasks[step_id], self.conductor.busy(running), now
                )
                if held is not None:
                    record["heldBy"] = held.why
                    continue
                self._start(step_id, record, now)
                running.append(step_id)
        state["status"] = self._status(steps)
        if state["status"] == "completed":
            state.setdefault("finishedAt", now)
        self.store.set_meta(LIVE, {**state, "steps": steps})
        self.save()
        self.store.commit()
        return str(state["status"])

    def _follow(self, step_id: str, record: dict[str, Any], now: float) -> None:
        running, desired, done = cluster_version(self.apis[record["cluster"]], record["cluster"])
        if done and running == record["to"]:
            record["finishedAt"] = now
            record.pop("blocked", None)
            self.store.event(now, "Normal", f"step/{step_id}", "StepDone", _what(record))
        elif desired != record["to"]:
            record["blocked"] = f"the cluster is asked for {desired}, not {record['to']}"
        else:
            record.pop("blocked", None)

    def _start(self, step_id: str, record: dict[str, Any], now: float) -> None:
        """Ask the cluster for its update (asking again asks what it already does)."""
        api = self.apis[record["cluster"]]
        try:
            said = upgrade_over_api(api, UpgradeAsk(to=record["to"]))
            refused = " ".join(said.errors or said.lines) if said.exit else ""
        except KupgradeError as exc:
            refused = exc.message
        if refused:
            raise KupgradeError(
                f"cluster {record['cluster']} refused the update to {record['to']}: {refused}",
                hint=f"see `kupgrade upgrade --kubeconfig KUBECONFIG --context {record['cluster']}`;"
                " once it would take it, `kupgrade fleet rollout resume` goes on",
            )
        record["startedAt"] = now
        told = " ".join(said.lines)[:200]
        self.store.event(
            now, "Normal", f"step/{step_id}", "StepStarted", f"{_what(record)}: {told}"
        )
        # committed before the next cluster is asked: a crash loses no request's record
        self.store.set_meta(LIVE, {**self.state, "steps": {**self.steps, step_id: record}})
        self.store.commit()

    def _status(self, steps: dict[str, dict[str, Any]]) -> str:
        if self.conductor.halted is not None:
            return "halted"
        if all("finishedAt" in r for r in steps.values()) and self.conductor.wake() is None:
            return "completed"
        idle = not any("startedAt" in r and "finishedAt" not in r for r in steps.values())
        if idle and self.conductor.waiting_for_approval() is not None:
            return "waiting"
        return "running"

    def save(self) -> None:
        for at, obj, reason, message in self.conductor.events:
            kind = "Warning" if reason == "RolloutHalted" else "Normal"
            self.store.event(at, kind, obj, reason, message)
        self.conductor.events.clear()
        stored = dict(self.store.meta(ROLLOUT) or {})
        stored["conductor"] = self.conductor.state
        self.store.set_meta(ROLLOUT, stored)

    # --- the loop -----------------------------------------------------------------------

    def run(
        self,
        poll: float,
        on_pass: Callable[[LiveRollout], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> str:
        """Passes until the rollout completes, halts or waits for a person."""
        while True:
            status = self.step(clock())
            if on_pass is not None:
                on_pass(self)
            if status != "running":
                return status
            wake = self.conductor.wake()
            pause = poll if wake is None else max(0.0, min(poll, wake - clock()))
            time.sleep(pause)


def _forecast(rollout: Rollout, context: str) -> tuple[float, str]:
    # a twin of the context's name is the cluster's own (`cluster import CONTEXT`)
    found = stated_forecast(rollout, context, context)
    return found or (DEFAULT_FORECAST, "default" + no_twin(rollout, context))


def _tasks(steps: dict[str, dict[str, Any]]) -> list[Task]:
    return [task_of(i, s, float(s["forecastSeconds"])) for i, s in steps.items()]


def _facts(apis: dict[str, Backend]) -> list[Facts]:
    return [Facts(name, OPENSHIFT) for name in apis]


def prepare(
    rollout: Rollout, apis: dict[str, Backend], target: str, now: float
) -> tuple[dict[str, dict[str, Any]], Conductor]:
    """A step per cluster not at `target` and the conductor over them, checked against
    the stages and windows: PlanRefusedError when a step fits no window; InputError when
    a cluster cannot take part."""
    steps: dict[str, dict[str, Any]] = {}
    for context, api in apis.items():
        platform = platform_serving(api)
        if API_UPGRADE not in platform.verbs:
            raise InputError(
                f"context {context} reaches a {platform.title} cluster, whose upgrades "
                "an API request does not start",
                hint="roll such clusters out on their simulated fleet, or run their "
                "own tool (bmctl, kubeadm) per cluster",
            )
        running, desired, _ = cluster_version(api, context)
        if running == target and desired == target:
            continue
        seconds, source = _forecast(rollout, context)
        steps[f"s{len(steps) + 1}"] = {
            "object": f"cluster/{context}",
            "cluster": context,
            "from": running,
            "to": target,
            "after": [],
            "forecastSeconds": seconds,
            "forecastFrom": source,
        }
    conductor = Conductor(rollout, _facts(apis), _tasks(steps))
    try:
        conductor.check(now, lambda _task, _needed: None)  # the clusters tie no rule
    except BlockedError as blocked:
        raise PlanRefusedError(Plan([], refused=blocked.refusal)) from None
    return steps, conductor


def live_plan(rollout: Rollout, apis: dict[str, Backend], target: str, name: str) -> dict[str, Any]:
    """Where each cluster's update lands on forecasts, from now (nothing written)."""
    now = time.time()
    try:
        steps, conductor = prepare(rollout, apis, target, now)
    except PlanRefusedError as refused:
        return refused_live(rollout, name, refused)
    placed = schedule(conductor, now, one_at_a_time=True)
    forecasts = {i: (s["forecastSeconds"], s["forecastFrom"]) for i, s in steps.items()}
    rows = placed_rows(placed, conductor, forecasts, now)
    return {
        "rollout": rollout.name,
        "fleet": name,
        "platform": LIVE,
        "target": target,
        "outcome": placed.outcome,
        "startedAt": rfc3339(now),
        "finishedAt": relative(placed.finish, now),
        "steps": rows,
        "stages": stage_rows(conductor, now),
        "windows": window_rows(rollout, now),
    }


def stored_live(store: Store) -> Rollout | None:
    stored = store.meta(ROLLOUT)
    if not stored:
        return None
    return read_rollout(stored["document"], str(stored.get("file", "the fleet's store")))


def _what(record: dict[str, Any]) -> str:
    return f"{record['object']} {record['from']} -> {record['to']}"


# --- the fleet and its reports ---------------------------------------------------------------


def live_info(reach: Reach) -> dict[str, Any]:
    """What a live fleet's store keeps of how it reaches its clusters."""
    return {
        "platform": LIVE,
        "members": [],
        "kubeconfig": str(reach.kubeconfig.resolve()),
        "contexts": reach.contexts,
        "prometheus": reach.prometheus,
        "tokenFile": str(reach.token_file) if reach.token_file else None,
        "caFile": str(reach.ca_file) if reach.ca_file else None,
    }


def reach_of(info: dict[str, Any]) -> Reach:
    return Reach(
        Path(info["kubeconfig"]),
        list(info["contexts"]),
        dict(info.get("prometheus") or {}),
        Path(info["tokenFile"]) if info.get("tokenFile") else None,
        Path(info["caFile"]) if info.get("caFile") else None,
    )


def live_report(live: LiveRollout, name: str) -> dict[str, Any]:
    """The rollout as far as it got, in the shape of a simulated fleet's report."""
    state = live.state
    start = float(state.get("startedAt", time.time()))
    steps = []
    for step_id, record in live.steps.items():
        index = live.conductor.stage_of.get(record["cluster"])
        steps.append(
            {
                "id": step_id,
                "object": record["object"],
                "cluster": record["cluster"],
                "stage": live.rollout.stages[index].name if index is not None else None,
                "from": record["from"],
                "to": record["to"],
                "after": [],
                "state": _state(record),
                "startedAt": relative(record.get("startedAt"), start),
                "finishedAt": relative(record.get("finishedAt"), start),
                "forecastSeconds": record["forecastSeconds"],
                "forecastFrom": record["forecastFrom"],
                "heldBy": record.get("heldBy"),
                "blocked": record.get("blocked"),
            }
        )
    out: dict[str, Any] = {
        "rollout": live.rollout.name,
        "fleet": name,
        "platform": LIVE,
        "target": state.get("target"),
        "outcome": state.get("status", "not started"),
        "startedAt": rfc3339(start) if state else None,
        "finishedAt": relative(state.get("finishedAt"), start),
        "steps": steps,
        "stages": stage_rows(live.conductor, start),
        "windows": window_rows(live.rollout, time.time()),
        "events": [{**e, "at": relative(e["at"], start)} for e in live.store.events()],
    }
    halt = live.conductor.halted
    if halt is not None:
        out["halt"] = {
            **halt,
            "at": relative(halt.get("at"), start),
            "since": relative(halt.get("since"), start),
        }
    waiting = live.conductor.waiting_for_approval()
    if out["outcome"] == "waiting" and waiting is not None:
        out["waitingFor"] = (
            f"stage {waiting} waits for approval: `kupgrade fleet rollout approve {waiting} "
            f"--fleet {name}`"
        )
    return out


def _state(record: dict[str, Any]) -> str:
    if "finishedAt" in record:
        return "done"
    if "startedAt" in record:
        return "blocked" if record.get("blocked") else "running"
    return "waiting"


def live_fleet(name: str, info: dict[str, Any]) -> Path:
    """The directory of live fleet `name`, made with its store on first use; refused when
    a simulated fleet has the name."""
    if not CLUSTER_NAME.fullmatch(name):
        raise InputError(
            f"invalid fleet name {name!r}", field="--fleet", hint="use letters, digits and dashes"
        )
    root = fleets_root() / name
    if (root / FLEET_DB).exists():
        found = read_meta(root / FLEET_DB, INFO) or {}
        if found.get("platform") != LIVE:
            raise InputError(
                f"fleet {name} is a fleet of simulated clusters",
                field="--fleet",
                hint="name the fleet of the kubeconfig's clusters otherwise (--fleet NAME)",
            )
        return root
    tmp = fleets_root() / f".{name}.creating"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    store = Store(tmp / FLEET_DB)
    try:
        store.set_meta(INFO, info)
        store.set_meta("now", time.time())
        store.commit()
    finally:
        store.close()
    tmp.rename(root)
    return root


def is_live(info: dict[str, Any]) -> bool:
    return info.get("platform") == LIVE


def refused_live(rollout: Rollout, name: str, refused: PlanRefusedError) -> dict[str, Any]:
    return refused_json(rollout, name, LIVE, refused, time.time())
