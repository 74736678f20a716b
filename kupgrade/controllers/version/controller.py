"""The version controller's loop: observe the ClusterVersion, decide, act, record (SPEC C1-C11).

One `sync` is one pass. A new desired release goes through the steps of SPEC C in
order — resolve (C2), verify (C3), extract (C4, the `version-$version-$hash` Job),
validate (C5), preconditions (C6), record (C7) — then the task graph is applied
runlevel by runlevel (C8, D1-D4), each ClusterOperator waited on until it is healthy at
the new version. Every decision is written to the controller's state in the store before
it is acted on, so a controller killed at any point resumes where it was: a graph node
is never started before the nodes it depends on, and a history entry is never opened
twice for one release.
"""

from __future__ import annotations

import base64
import copy
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.conditions import find, remove, set_condition
from kupgrade.controllers.protocol import Progress
from kupgrade.controllers.version import preconditions as pre
from kupgrade.controllers.version import upgradeable
from kupgrade.controllers.version.errors import (
    PlainError,
    SyncError,
    UpdateError,
    summarize_task_graph_errors,
)
from kupgrade.controllers.version.health import check_operator_health
from kupgrade.controllers.version.progress import progress as applied
from kupgrade.controllers.version.record import (
    STATE_KEY,
    Refused,
    VersionState,
    save_version_state,
    version_state,
)
from kupgrade.controllers.version.status import (
    INITIALIZING,
    UPDATING,
    SyncState,
    invalid_message,
    merge_history,
    progress,
    release_accepted,
)
from kupgrade.errors import KupgradeError
from kupgrade.release.assemble import task_of
from kupgrade.release.inclusion import apply_action
from kupgrade.release.manifest import Manifest
from kupgrade.release.payload import (
    LoadOptions,
    Payload,
    PayloadFiles,
    load_payload,
    read_directory,
)
from kupgrade.release.schedule import Applied, Schedule
from kupgrade.release.sources import open_payload, write_tree
from kupgrade.release.taskgraph import build_graph, workers
from kupgrade.release.verify import NO_VERIFICATION_WARNING
from kupgrade.versions import go_quote
from kupgrade.versions.times import rfc3339

NAMESPACE = "openshift-cluster-version"
SELF_DEPLOYMENT = "cluster-version-operator"
RETRY_INTERVAL = 300.0  # simulated seconds before a refused release is tried again

# How a simulated or real cluster provides what the controller cannot do itself.
Verify = Callable[[str], None]  # raise KupgradeError when the digest is not verified
Source = Callable[[str, str], str]  # (pull spec, version) -> where to read the image


@dataclass
class Wiring:
    """The controller's connections to the outside: where payloads are kept and read."""

    workdir: Path
    source: Source
    verify: Verify | None = None
    architecture: str = "amd64"


class _RefusedError(Exception):
    """A release refused at one of the checks of SPEC C3-C6: the state that records it."""

    def __init__(self, state: VersionState) -> None:
        super().__init__("refused")
        self.state = state


def _digest(image: str) -> str:
    return image.rsplit("@", 1)[1] if "@" in image else ""


def job_name(version: str, image: str) -> str:
    """`version-$version-$hash`: the extraction Job's name (SPEC C4)."""
    digest = hashlib.sha256(image.encode()).digest()
    short = base64.b32encode(digest).decode().lower()[:5]
    return f"version-{version}-{short}"


class VersionController:
    def __init__(self, backend: Backend, wiring: Wiring) -> None:
        self.api = backend
        self.wiring = wiring
        self._payload: tuple[str, Payload] | None = None
        self.handoff = False
        # Woken by its ClusterVersion and the ClusterOperators it waits on (and by the
        # periodic resync, which requeues the ClusterVersion), not by every pod and node.
        self.changes = backend.watch("ClusterVersion", "ClusterOperator")
        self.again = True

    # --- state --------------------------------------------------------------------------

    def _state(self) -> VersionState:
        return version_state(self.api)

    def _save(self, state: VersionState) -> None:
        save_version_state(self.api, state)

    def _stamp(self) -> str:
        return rfc3339(self.api.now())

    # --- the pass -----------------------------------------------------------------------

    def sync(self) -> None:
        """One pass when something it watches changed or it made progress last time; its
        timers (retries, resyncs) are queued through the backend."""
        if not self.changes and not self.again:
            return
        self.changes.drain()
        before = self.api.state(STATE_KEY)
        self._sync()
        # set_state stores a new object only when the state changed: its own progress.
        self.again = self.api.state(STATE_KEY) is not before

    def progress(self) -> list[Progress]:
        """The manifests applied, then runlevel by runlevel (controllers/version/progress.py)."""
        return applied(self.api)

    def _sync(self) -> None:
        found = self.api.get("ClusterVersion", "version")
        if found is None:
            return
        cv = copy.deepcopy(found)
        state = self._state()
        desired, invalid = self._desired(cv)
        if invalid:
            self._write_status(cv, state, invalid)
            return
        new = bool(desired and desired.get("image") and desired["image"] != state.image)
        refused = state.refused
        if (
            new
            and desired
            and (refused is None or refused.image != desired["image"] or self._retry_due(state))
        ):
            state = self._accept(cv, state, desired)
        if state.updating:
            self._apply(state)
        self._write_status(cv, state, [])

    def _retry_due(self, state: VersionState) -> bool:
        return state.refused is None or self.api.now() >= state.refused.retry_at

    def _desired(self, cv: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
        """SPEC C1-C2: the release spec.desiredUpdate names, resolved through the graph."""
        wanted = (cv.get("spec") or {}).get("desiredUpdate")
        if not wanted:
            return dict(cv["status"].get("desired") or {}), []
        version, image = wanted.get("version", ""), wanted.get("image", "")
        if image:
            return {"version": version, "image": image, "force": bool(wanted.get("force"))}, []
        status = cv["status"]
        if version == (status.get("desired") or {}).get("version"):
            return dict(status["desired"]), []
        found = next(
            (u for u in status.get("availableUpdates") or [] if u.get("version") == version), None
        )
        if found is None:
            found = next(
                (
                    u["release"]
                    for u in status.get("conditionalUpdates") or []
                    if u.get("release", {}).get("version") == version
                ),
                None,
            )
        if found is None:
            return None, [
                f'spec.desiredUpdate.version: Invalid value: "{version}": when image is empty the '
                "update must be a previous version or an available update"
            ]
        return {**found, "force": bool(wanted.get("force"))}, []

    # --- C3-C7: accept a new release ------------------------------------------------------

    def _refuse(
        self, state: VersionState, image: str, condition: dict[str, str], failure: SyncError
    ) -> VersionState:
        earlier = state.refused
        retry_at = self.api.now() + RETRY_INTERVAL
        state.refused = Refused(
            image=image,
            condition=condition,
            failure=_dump(failure),
            retry_at=retry_at,
            attempts=earlier.attempts + 1 if earlier is not None and earlier.image == image else 1,
        )
        self._save(state)
        # The sync worker tries the same release again after its interval (a payload that
        # could not be retrieved or loaded may be there next time).
        self.api.requeue_at(retry_at, "ClusterVersion", "version")
        self.api.record("clusterversion/version", condition["reason"], condition["message"])
        return state

    def _accept(
        self, cv: dict[str, Any], state: VersionState, desired: dict[str, Any]
    ) -> VersionState:
        """SPEC C3-C7: verify, load, check and record the release asked for; the state
        the controller goes on with, or the refusal it records (and retries)."""
        image, version = desired["image"], desired.get("version", "")
        force = bool(desired.get("force"))
        risks: list[str] = []
        try:
            verified = self._verify(state, image, version, force, risks)
            payload = self._loaded(state, image, version)
            version = version or payload.version
            self._preconditions(cv, state, image, version, force=force, risks=risks)
        except _RefusedError as refused:
            return refused.state
        return self._record(cv, state, payload, (image, version, verified), risks)

    def _verify(
        self, state: VersionState, image: str, version: str, force: bool, risks: list[str]
    ) -> bool:
        """C3: signatures over the digest; whether the release was verified."""
        if self.wiring.verify is None:
            # Not refused, only unverified: say why history will show verified=false.
            self.api.record("clusterversion/version", "Unverified", NO_VERIFICATION_WARNING)
            return False
        try:
            self.wiring.verify(_digest(image))
        except KupgradeError as exc:
            text = f"The update cannot be verified: {exc.message}"
            if not force:
                raise _RefusedError(
                    self._refuse(
                        state,
                        image,
                        release_accepted("RetrievePayload", version, image, failure=text),
                        UpdateError("ImageVerificationFailed", text),
                    )
                ) from None
            # updatepayload.go RetrievePayload: a forced update goes on, and says so.
            risks.append(
                f"Target release version={go_quote(version)} image={go_quote(image)} cannot "
                f"be verified, but continuing anyway because the update was forced: {exc.message}"
            )
            return False
        return True

    def _loaded(self, state: VersionState, image: str, version: str) -> Payload:
        """C4-C5: the payload extracted (the Job) and loaded, the release asked for."""
        try:
            payload = self._extract(image, version)
        except KupgradeError as exc:
            text = exc.message if not exc.file else str(exc)
            raise _RefusedError(
                self._refuse(
                    state,
                    image,
                    release_accepted("LoadPayload", version, image, failure=text),
                    UpdateError("UpdatePayloadIntegrity", text),
                )
            ) from None
        if version and payload.version != version:
            # sync_worker.go syncPayload: the payload must be the release that was asked for.
            text = (
                f"release image version {payload.version} does not match the expected "
                f"upstream version {version}"
            )
            raise _RefusedError(
                self._refuse(
                    state,
                    image,
                    release_accepted("VerifyPayloadVersion", version, image, failure=text),
                    UpdateError("VerifyPayloadVersion", text),
                )
            )
        return payload

    def _preconditions(
        self,
        cv: dict[str, Any],
        state: VersionState,
        image: str,
        version: str,
        *,
        force: bool,
        risks: list[str],
    ) -> None:
        """C6: preconditions, only when updating from a completed release."""
        history = cv["status"].get("history") or []
        if not any(e.get("state") == "Completed" for e in history):
            return
        summary = pre.summarize(pre.run_checks(cv, version), force)
        if summary.blocking:
            raise _RefusedError(
                self._refuse(
                    state,
                    image,
                    release_accepted(
                        "PreconditionChecks", version, image, failure=summary.error or ""
                    ),
                    UpdateError("UpgradePreconditionCheckFailed", summary.error or ""),
                )
            )
        if summary.error:
            risks.append(summary.error)

    def _record(
        self,
        cv: dict[str, Any],
        state: VersionState,
        payload: Payload,
        release: tuple[str, str, bool],
        risks: list[str],
    ) -> VersionState:
        """C7: the release recorded, with its task graph to apply (release, version, and
        whether it was verified)."""
        image, version, verified = release
        history = cv["status"].get("history") or []
        mode = INITIALIZING if not any(e.get("state") == "Completed" for e in history) else UPDATING
        graph = build_graph(
            [task_of(m, i + 1, payload.total) for i, m in enumerate(payload.included)],
            "install" if mode == INITIALIZING else "update",
        )
        index = {m.file: i for i, m in enumerate(payload.included)}
        accepted = release_accepted(
            "PayloadLoaded",
            version,
            image,
            architecture=payload.metadata.architecture or self.wiring.architecture,
        )
        state = VersionState(
            image=image,
            version=version,
            mode=mode,
            verified=verified,
            risks="\n".join(risks),
            release={**payload.release_json(), "image": image, "version": version},
            accepted=accepted,
            version_hash=payload.version_hash,
            total=payload.total,
            nodes=[[index[t.payload.file] for t in node.tasks] for node in graph.nodes],
            deps=[list(node.into) for node in graph.nodes],
            runlevels=[_runlevel(node.tasks) for node in graph.nodes],  # for the live view
            operators=_operators(graph.nodes),  # for the web console's live view
            workers=workers("install" if mode == INITIALIZING else "update", graph),
            cursor=[0] * len(graph.nodes),
            deletes=list(state.deletes),  # outlive the release that asked
            started=self.api.now(),
        )
        self._save(state)
        self.api.record("clusterversion/version", "PayloadLoaded", accepted["message"])
        return state

    def _extract(self, image: str, version: str) -> Payload:
        """SPEC C4: the payload, extracted once by a Job into the controller's work dir."""
        target = self._extracted(image)
        job = job_name(version or "unknown", image)
        if self.api.get("Job", job, NAMESPACE) is None:
            self.api.apply(
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": {"name": job, "namespace": NAMESPACE},
                    "spec": {
                        "template": {"spec": {"containers": [{"name": "payload", "image": image}]}}
                    },
                }
            )
        opened = open_payload(self.wiring.source(image, version))
        if target is not None and not target.exists():
            write_tree(target, opened.files.files)
        found = self.api.get("Job", job, NAMESPACE)
        if found is not None and not found.get("status", {}).get("succeeded"):
            found["status"] = {"succeeded": 1, "completionTime": self._stamp()}
            self.api.write(found)
        return self._load(image, opened.files)

    def _extracted(self, image: str) -> Path | None:
        digest = _digest(image)
        return self.wiring.workdir / digest.replace(":", "-") if digest else None

    def _load(self, image: str, files: PayloadFiles) -> Payload:
        if self._payload is None or self._payload[0] != image:
            self._payload = (image, load_payload(files, LoadOptions(release_image=image)))
        return self._payload[1]

    def _payload_for(self, state: VersionState) -> Payload:
        """The accepted payload; a restarted controller reads what its Job already extracted."""
        if self._payload is not None and self._payload[0] == state.image:
            return self._payload[1]
        target = self._extracted(state.image)
        if target is not None and target.is_dir():
            return self._load(state.image, read_directory(target))
        return self._extract(state.image, state.version)

    # --- C8-C11: apply the graph --------------------------------------------------------

    def _apply(self, state: VersionState) -> None:
        """One step of the release's task graph (release/schedule.py): the nodes that may
        start, each from where it stopped; stops at once when this process hands over."""
        payload = self._payload_for(state)
        nodes, cursor = state.nodes, state.cursor
        schedule: Schedule[int, SyncError] = Schedule(nodes, state.deps, state.workers)

        def apply(index: int) -> Applied | SyncError:
            error = self._apply_one(payload.included[index], state)
            if error is not None:
                return error
            return Applied.STOP if self.handoff else Applied.DONE

        errors = schedule.step(cursor, apply).errors
        state.failure = _dump(summarize_task_graph_errors(errors))
        state.done = sum(min(c, len(t)) for c, t in zip(cursor, nodes, strict=True))
        if len(schedule.finished(cursor)) == len(nodes) and not errors:
            state.completed = True
            state.failure = None
            self.api.record(
                "clusterversion/version", "Completed", f"Cluster version is {state.version}"
            )
        self._save(state)

    def _apply_one(self, manifest: Manifest, state: VersionState) -> SyncError | None:
        obj = manifest.obj
        kind = obj.get("kind")
        action = apply_action(manifest.annotations, manifest.file)
        if action == "delete":
            self._delete(obj, state)
            return None
        if kind == "ClusterOperator":
            name = obj["metadata"]["name"]
            state.waiting.setdefault(name, self.api.now())
            if self.api.get("ClusterOperator", name) is None:
                self.api.apply({k: v for k, v in obj.items() if k != "status"})
            expected = (obj.get("status") or {}).get("versions") or []
            return check_operator_health(
                name, expected, self.api.get("ClusterOperator", name), state.mode
            )
        before = self.api.get(
            str(kind), obj["metadata"]["name"], obj["metadata"].get("namespace", "")
        )
        if action == "create-only" and before is not None:
            return None  # created when missing, never updated
        self.api.apply(obj)
        if (
            kind == "Deployment"
            and obj["metadata"]["name"] == SELF_DEPLOYMENT
            and obj["metadata"].get("namespace") == NAMESPACE
            and (before is None or before.get("spec") != obj.get("spec"))
            and before is not None
        ):
            # SPEC C9: our own new version is rolling out; this process hands over to it.
            self.handoff = True
            self.api.record(
                "deployment/openshift-cluster-version/cluster-version-operator",
                "Handoff",
                f"the controller for {state.version} takes over",
            )
        return None

    def _delete(self, obj: dict[str, Any], state: VersionState) -> None:
        """A release.openshift.io/delete manifest (lib/resourcedelete): ask once for the
        deletion; until the object is gone the deletion is in progress, which holds back
        minor updates (Upgradeable ResourceDeletesInProgress) but not this one."""
        kind, meta = str(obj.get("kind")), obj["metadata"]
        name, namespace = str(meta["name"]), str(meta.get("namespace") or "")
        found = self.api.get(kind, name, namespace)
        if found is None:
            return
        if (kind, namespace, name) not in state.deletes:
            state.deletes.append((kind, namespace, name))
        if not found["metadata"].get("deletionTimestamp"):
            self.api.delete(kind, name, namespace)
            self.api.record(
                f"{kind.lower()}/{name}", "DeleteRequested", "deleted by the release's manifest"
            )

    def _config_map_data(self, namespace: str, name: str) -> dict[str, str] | None:
        """A ConfigMap's data (admin-gates, admin-acks), or None when there is none."""
        found = self.api.get("ConfigMap", name, namespace)
        if found is None:
            return None
        data = found.get("data") or {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def _deletes_in_progress(self, state: VersionState) -> list[tuple[str, str, str]]:
        """Deletions asked for and not yet done (DeletesInProgress)."""
        return [
            (kind, namespace, name)
            for kind, namespace, name in state.deletes
            if self.api.get(kind, name, namespace) is not None
        ]

    # --- status -------------------------------------------------------------------------

    def _write_status(self, cv: dict[str, Any], state: VersionState, invalid: list[str]) -> None:
        status = cv["status"]
        now = self._stamp()
        conditions: list[dict[str, Any]] = status.setdefault("conditions", [])
        refused = state.refusal
        if refused is not None:
            set_condition(conditions, refused.condition, now)
        elif state.accepted:
            set_condition(conditions, state.accepted, now)
        if state.image:
            release = state.release
            status["history"] = merge_history(
                status.get("history"),
                release,
                now=now,
                completed=state.completed,
                verified=state.verified,
                accepted_risks=state.risks,
            )
            status["desired"] = release
            status["versionHash"] = state.version_hash
        version = (status.get("desired") or {}).get("version") or (status.get("desired") or {}).get(
            "image", ""
        )
        if state.completed:
            set_condition(
                conditions,
                {"type": "Available", "status": "True", "message": f"Done applying {version}"},
                now,
            )
        elif find(conditions, "Available") is None:
            set_condition(conditions, {"type": "Available", "status": "False"}, now)
        waited = {k: (self.api.now() - v) / 60 for k, v in state.waiting.items()}
        history = status.get("history") or []
        sync = SyncState(
            version=version,
            done=state.done,
            total=state.total,
            reconciling=state.completed or not state.image,
            failure=_load(state.failure),
            validation_errors=invalid,
            waiting_minutes=waited,
        )
        shown = progress(sync, history_empty=not history)
        set_condition(conditions, {"type": "Failing", **shown.failing}, now)
        set_condition(conditions, {"type": "Progressing", **shown.progressing}, now)
        if invalid:
            set_condition(
                conditions,
                {
                    "type": "Invalid",
                    "status": "True",
                    "reason": "InvalidClusterVersion",
                    "message": invalid_message(invalid),
                },
                now,
            )
        else:
            remove(conditions, "Invalid")
        found = upgradeable.checks(
            operators=[
                {
                    "name": co["metadata"]["name"],
                    "upgradeable": find(co["status"].get("conditions"), "Upgradeable"),
                }
                for co in self.api.list("ClusterOperator")
            ],
            overrides=any(o.get("unmanaged") for o in cv["spec"].get("overrides") or []),
            progressing=shown.progressing["status"] == "True",
            deletes=self._deletes_in_progress(state),
            version=pre.current_version(status.get("history")),
            admin_gates=self._config_map_data("openshift-config-managed", upgradeable.ADMIN_GATES),
            admin_acks=self._config_map_data("openshift-config", upgradeable.ADMIN_ACKS),
        )
        upgradeable.apply(conditions, found, now)
        if find(conditions, "RetrievedUpdates") is None:
            set_condition(conditions, {"type": "RetrievedUpdates", "status": "False"}, now)
        if cv != self.api.get("ClusterVersion", "version"):
            self.api.write(cv)


def _dump(error: SyncError | None) -> dict[str, Any] | None:
    if error is None:
        return None
    if isinstance(error, PlainError):
        return {"plain": error.message}
    return {
        "reason": error.reason,
        "message": error.message,
        "effect": error.effect,
        "name": error.name,
        "names": list(error.names),
        "nested": [_dump(e) for e in error.nested],
    }


def _load(data: dict[str, Any] | None) -> SyncError | None:
    if data is None:
        return None
    if "plain" in data:
        return PlainError(data["plain"])
    return UpdateError(
        reason=data["reason"],
        message=data["message"],
        effect=data["effect"],
        name=data["name"],
        names=tuple(data["names"]),
        nested=tuple(e for n in data["nested"] if (e := _load(n)) is not None),
    )


def _operators(nodes: Any) -> list[tuple[str, str]]:
    """[runlevel, ClusterOperator name] for each operator the payload declares, in the
    order the update reaches them: the web console lists each runlevel's operators."""
    out = []
    for node in nodes:
        for task in node.tasks:
            obj = getattr(task.payload, "obj", None) or {}
            if obj.get("kind") == "ClusterOperator":
                parsed = task.runlevel_component
                out.append((parsed[0] if parsed else "none", str(obj["metadata"]["name"])))
    return out


def _runlevel(tasks: Any) -> list[tuple[str, int]]:
    """A task-graph node's manifests as runs of one runlevel: [["00", 2], ["10", 3]].

    Serial stretches merge several runlevels into one node; the live view counts per
    runlevel from these runs and the node's cursor.
    """
    runs: list[tuple[str, int]] = []
    for task in tasks:
        parsed = task.runlevel_component
        level = parsed[0] if parsed else "none"
        if runs and runs[-1][0] == level:
            runs[-1] = (level, runs[-1][1] + 1)
        else:
            runs.append((level, 1))
    return runs
