"""`kupgrade upgrade recommend`: what `oc adm upgrade recommend` prints before an update,
line for line (openshift/oc pkg/cli/admin/upgrade/recommend/recommend.go Complete and
Run): the cluster's Failing and Progressing conditions, the prechecks (alerts,
views/recommend_checks.py), the update service and channel, then the updates by minor
(the latest two of each with their issues) or one target's issues; with `--version`,
every issue not named in `--accept` fails the run, so that a script can gate on it."""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kupgrade.errors import InputError
from kupgrade.versions.blang import blang_error, go_quote
from kupgrade.versions.semver import SemVer, parse_semver
from kupgrade.views.recommend_checks import Check

Obj = dict[str, Any]
FAILING, PROGRESSING, RETRIEVED, UPGRADEABLE = (
    "Failing",
    "Progressing",
    "RetrievedUpdates",
    "Upgradeable",
)
NO_KNOWN = "no known issues relevant to this cluster"


@dataclass(frozen=True)
class Asked:
    """recommend's flags: --version (raw), --show-outdated-releases, --quiet, --accept."""

    version: str | None = None
    show_outdated: bool = False
    quiet: bool = False
    accept: tuple[str, ...] = ()

    def target(self) -> SemVer | None:
        """The parsed --version, after oc's Complete checks (InputError in its words)."""
        if not self.version:
            if self.quiet:
                raise InputError("--quiet can only be set when --version is set", field="--quiet")
            return None
        if self.show_outdated:
            raise InputError(
                "when --version is set, --show-outdated-releases is unnecessary",
                field="--show-outdated-releases",
            )
        problem = blang_error(self.version)
        parsed = None if problem else parse_semver(self.version)
        if parsed is None:
            why = problem or "not a SemVer 2.0 version"
            raise InputError(
                f"cannot parse SemVer target {go_quote(self.version)}: {why}", field="--version"
            )
        return parsed


@dataclass
class Recommendation:
    """What the run printed (standard output, standard error), the error it ended with
    (oc exits 1 with it) and the same as data for -o json."""

    out: str
    err: str
    error: str | None
    data: Obj = field(default_factory=dict)


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    """A field that should be a list: as it is, else nothing (a hand-edited capture)."""
    return value if isinstance(value, list) else []


def _condition(conditions: Any, kind: str) -> Obj | None:
    """The first condition of that type (findClusterOperatorStatusCondition)."""
    for c in conditions if isinstance(conditions, list) else []:
        if isinstance(c, dict) and c.get("type") == kind:
            return c
    return None


def _indent(text: str) -> str:
    return text.replace("\n", "\n  ")


def _as_version(text: str) -> SemVer | None:
    """blang/semver's Parse: None where it fails."""
    return None if blang_error(text) else parse_semver(text)


@dataclass
class Update:
    """One conditional update (or an available one without risks), as oc buckets it."""

    version: str
    image: str
    url: str
    risks: list[Obj]
    conditions: list[Obj]

    @staticmethod
    def of(raw: Obj, conditional: bool) -> Update:
        """A conditionalUpdates entry (its release, risks and conditions), or an
        availableUpdates one (a release alone)."""
        release = raw.get("release") if conditional else raw
        release = release if isinstance(release, dict) else {}
        risks = _list(raw.get("risks")) if conditional else []
        conditions = _list(raw.get("conditions")) if conditional else []
        return Update(
            _s(release.get("version")),
            _s(release.get("image")),
            _s(release.get("url")),
            [r for r in risks if isinstance(r, dict)],
            [dict(c) for c in conditions if isinstance(c, dict)],
        )

    def not_recommended(self) -> Obj | None:
        """oc's notRecommendedCondition: None when there is no risk or Recommended=True."""
        if not self.risks:
            return None
        found = _condition(self.conditions, "Recommended")
        if found is not None:
            return None if found.get("status") == "True" else found
        # oc sizes the slice and then appends: one empty name per risk sorts first.
        names = sorted([""] * len(self.risks) + [_s(r.get("name")) for r in self.risks])
        return {
            "type": "Recommended",
            "status": "Unknown",
            "reason": "NoConditions",
            "message": f"Conditional update to {self.version} has risks "
            f"({', '.join(names)}), but no conditions.",
        }

    def to_json(self) -> Obj:
        issue = self.not_recommended()
        return {
            "version": self.version,
            "image": self.image,
            "url": self.url,
            "risks": sorted({_s(r.get("name")) for r in self.risks}),
            "recommended": None
            if issue is None
            else {k: _s(issue.get(k)) for k in ("status", "reason", "message")},
        }


Buckets = dict[int, dict[int, list[Update]]]


def _inject_upgradeable(current: str, cond: Obj, buckets: Buckets) -> str | None:
    """Upgradeable=False as a risk of every update to a later minor or major
    (injectUpgradeableAsCondition); the error text when the current version does not parse."""
    parsed = _as_version(current)
    if parsed is None:
        why = blang_error(current) or "not a SemVer 2.0 version"
        return f"cannot parse SemVer version {go_quote(current)}: {why}"
    major, minor = parsed.major, parsed.minor
    uri = (
        f"https://docs.openshift.com/container-platform/{major}.{minor}/updating/index.html"
        "#understanding_clusteroperator_conditiontypes_updating-clusters-overview"
        if minor <= 13
        else f"https://docs.openshift.com/container-platform/{major}.{minor}/updating/"
        "preparing_for_updates/updating-cluster-prepare.html"
        "#cluster-upgradeable_updating-cluster-prepare"
    )
    message, reason = _s(cond.get("message")), _s(cond.get("reason"))
    for to_major, minors in buckets.items():
        for to_minor, targets in minors.items():
            if to_major < major or (to_major == major and to_minor <= minor):
                continue
            for target in targets:
                if any(message in _s(r.get("message")) for r in target.risks):
                    continue
                target.risks = [
                    *target.risks,
                    {"name": "UpgradeableFalse", "message": message, "url": uri},
                ]
                _recommended_false(target, reason, message)
    return None


def _recommended_false(target: Update, reason: str, message: str) -> None:
    """ensureUpgradeableRisk's Recommended condition: now False, its reason the
    Upgradeable one's, or MultipleReasons beside one it already had."""
    found = _condition(target.conditions, "Recommended")
    if found is None:
        target.conditions.append(
            {"type": "Recommended", "status": "False", "reason": reason, "message": message}
        )
        return
    if found.get("status") == "True":
        found["reason"], found["message"] = reason, message
    else:
        found["reason"] = "MultipleReasons"
        found["message"] = f"{message}\n\n{_s(found.get('message'))}"
    found["status"] = "False"


class _Tabs:
    """Go's text/tabwriter as oc sets it up (minwidth 14, padding 1, spaces), for rows of
    one tab: cells buffered until Flush, then the first column as wide as its widest
    cell plus one. Text written to the output directly meanwhile comes before them."""

    def __init__(self, out: io.StringIO) -> None:
        self.out, self.rows = out, list[tuple[str, str]]()

    def write(self, first: str, rest: str) -> None:
        self.rows.append((first, rest))

    def flush(self) -> None:
        width = max([14, *(len(a) + 1 for a, _ in self.rows)])
        self.out.write("".join(f"{a.ljust(width)}{b}\n" for a, b in self.rows))
        self.rows = []


class _Run:
    """One run of recommend over a ClusterVersion, writing as oc writes (Run)."""

    def __init__(self, cv: Obj, asked: Asked, target: SemVer | None) -> None:
        self.cv, self.asked, self.target = cv, asked, target
        self.out, self.err = io.StringIO(), io.StringIO()
        self.issues: set[str] = set()
        self.accept = set(asked.accept)
        self.data: Obj = {"conditions": [], "precheckError": None, "version": None}
        status = cv.get("status")
        self.status: Obj = status if isinstance(status, dict) else {}
        spec = cv.get("spec")
        self.spec: Obj = spec if isinstance(spec, dict) else {}

    def say(self, text: str) -> None:
        if not self.asked.quiet:
            self.out.write(text)

    def warn(self, text: str) -> None:
        if not self.asked.quiet:
            self.err.write(text)

    def accepted(self, name: str) -> str:
        return "accepted " if name in self.accept else ""

    def cluster_conditions(self) -> None:
        """Failing (missing counts as an issue too) and an update in progress."""
        conditions = self.status.get("conditions")
        failing = _condition(conditions, FAILING)
        if failing is None:
            self.warn(
                f"{self.accepted(FAILING)}warning: No current {FAILING} info, see "
                "`oc describe clusterversion` for more details.\n"
            )
            self.issues.add(FAILING)
        elif failing.get("status") != "False":
            self.say(
                f"{self.accepted(FAILING)}{FAILING}={_s(failing.get('status'))}:\n\n"
                f"  Reason: {_s(failing.get('reason'))}\n"
                f"  Message: {_indent(_s(failing.get('message')))}\n\n"
            )
            self.issues.add(FAILING)
        progressing = _condition(conditions, PROGRESSING)
        if progressing and progressing.get("status") == "True" and _s(progressing.get("message")):
            self.say(
                f"{self.accepted(PROGRESSING)}info: An update is in progress.  You may wish to "
                "let this update complete before requesting a new update.\n  "
                f"{_indent(_s(progressing.get('message')))}\n\n"
            )
            self.issues.add(PROGRESSING)

    def prechecks(self, checks: list[Check] | str) -> None:
        """The precheck conditions: happy ones listed, accepted ones named, the others
        named and then each printed in full; a precheck that failed is an issue itself."""
        if isinstance(checks, str):
            self.say(f"Failed to check for at least some preconditions: {checks}\n")
            self.issues.add("FailedToCompletePrecheck")
            self.data["precheckError"] = checks
            checks = []
        self.data["conditions"] = [c.to_json() for c in checks]
        happy: list[str] = []
        accepted: list[str] = []
        unhappy: list[str] = []
        for c in checks:
            if c.status == "True":
                happy.append(f"{c.type} ({c.reason})")
                continue
            self.issues.add(c.acceptance)
            (accepted if c.acceptance in self.accept else unhappy).append(c.type)
        head = "The following conditions found"
        later = "in updating this cluster to later releases"
        if happy:
            self.say(f"{head} no cause for concern {later}: {', '.join(sorted(happy))}\n\n")
        if accepted:
            self.say(
                f"{head} cause for concern {later}, but were explicitly accepted via --accept: "
                f"{', '.join(sorted(accepted))}\n\n"
            )
        if unhappy:
            self.say(f"{head} cause for concern {later}: {', '.join(sorted(unhappy))}\n\n")
            for c in checks:
                if c.status != "True":
                    self.say(
                        f"{c.type}={c.status}:\n\n  Reason: {c.reason}\n"
                        f"  Message: {_indent(c.message)}\n\n"
                    )

    def service(self) -> None:
        """RetrievedUpdates, then the update service and the channel when one is set."""
        retrieved = _condition(self.status.get("conditions"), RETRIEVED)
        if retrieved is not None and retrieved.get("status") != "True":
            self.warn(
                "warning: Cannot refresh available updates:\n"
                f"  Reason: {_s(retrieved.get('reason'))}\n"
                f"  Message: {_indent(_s(retrieved.get('message')))}\n\n"
            )
            self.issues.add("CannotRetrieveUpdates")
        channel, upstream = _s(self.spec.get("channel")), _s(self.spec.get("upstream"))
        desired = self.status.get("desired") if isinstance(self.status.get("desired"), dict) else {}
        assert isinstance(desired, dict)
        channels = [_s(c) for c in _list(desired.get("channels"))]
        self.data.update(channel=channel, upstream=upstream, channels=channels)
        if not channel:
            return
        if upstream:
            self.say(f"Upstream update service: {upstream}\n")
        else:
            self.say(
                "Upstream update service is unset, so the cluster will use an appropriate default.\n"
            )
        listed = f" (available channels: {', '.join(channels)})" if channels else ""
        self.say(f"Channel: {channel}{listed}\n")

    def buckets(self) -> Buckets:
        """Conditional updates, then available ones no conditional update has the image
        of, by major and minor; Upgradeable=False injected as a risk."""
        buckets: Buckets = {}
        conditional = [
            Update.of(u, True)
            for u in _list(self.status.get("conditionalUpdates"))
            if isinstance(u, dict)
        ]
        images = {u.image for u in conditional}
        available = [
            Update.of(u, False)
            for u in _list(self.status.get("availableUpdates"))
            if isinstance(u, dict) and _s(u.get("image")) not in images
        ]
        for update in [*conditional, *available]:
            parsed = _as_version(update.version)
            if parsed is None:
                why = blang_error(update.version) or "not a SemVer 2.0 version"
                # oc ends this warning without a newline.
                self.warn(
                    f"warning: Cannot parse SemVer available update {go_quote(update.version)}: {why}"
                )
                continue
            buckets.setdefault(parsed.major, {}).setdefault(parsed.minor, []).append(update)
        upgradeable = _condition(self.status.get("conditions"), UPGRADEABLE)
        if upgradeable is not None and upgradeable.get("status") == "False":
            desired = self.status.get("desired")
            current = _s(desired.get("version")) if isinstance(desired, dict) else ""
            if problem := _inject_upgradeable(current, upgradeable, buckets):
                self.warn(
                    f"warning: Cannot inject {UPGRADEABLE}=False as a conditional update risk: "
                    f"{problem}\n\nReason: {_s(upgradeable.get('reason'))}\n"
                    f"  Message: {_indent(_s(upgradeable.get('message')))}\n\n"
                )
        for minors in buckets.values():
            for updates in minors.values():
                updates.sort(key=_descending)
        self.data["updates"] = [
            {"minor": f"{major}.{minor}", **u.to_json()}
            for major in sorted(buckets, reverse=True)
            for minor in sorted(buckets[major], reverse=True)
            for u in buckets[major][minor]
        ]
        return buckets

    def one(self, buckets: Buckets, target: SemVer) -> str | None:
        """--version: that target's issues; the error oc ends with, if any."""
        wanted = str(target)
        if not buckets:
            return f"no updates available, so cannot display context for the requested release {wanted}"
        if target.major not in buckets:
            return f"no updates to {target.major} available, so cannot display context for the requested release {wanted}"
        minor = buckets[target.major].get(target.minor)
        if minor is None:
            return (
                f"no updates to {target.major}.{target.minor} available, so cannot display "
                f"context for the requested release {wanted}"
            )
        update = next((u for u in minor if u.version == wanted), None)
        if update is None:
            return f"no update to {wanted} available, so cannot display context for the requested release"
        self.data["version"] = update.to_json()
        self.say("\n")
        issue = update.not_recommended()
        if issue is None:
            self.say(
                f"Update to {update.version} has no known issues relevant to this cluster.\n"
                f"Image: {update.image}\nRelease URL: {update.url}\n"
            )
        else:
            reason = _s(issue.get("reason"))
            if "ConditionalUpdateRisk" in self.accept:
                reason = f"accepted {reason} via ConditionalUpdateRisk"
            self.say(
                f"Update to {update.version} {_s(issue.get('type'))}={_s(issue.get('status'))}:\n"
                f"Image: {update.image}\nRelease URL: {update.url}\nReason: {reason}\n"
                f"Message: {_indent(_s(issue.get('message')))}\n"
            )
            self.issues.add("ConditionalUpdateRisk")
        unaccepted = sorted(self.issues - self.accept)
        if unaccepted:
            return (
                "issues that apply to this cluster but which were not included in --accept: "
                + ",".join(unaccepted)
            )
        if self.issues:
            self.say(
                f"Update to {update.version} has no known issues relevant to this cluster other "
                f"than the accepted {','.join(sorted(self.issues))}.\n"
            )
        return None

    def table(self, buckets: Buckets) -> None:
        """Updates by minor, newest first: without --show-outdated-releases the latest two,
        a not-recommended one in full, and a count of the older ones."""
        if not buckets:
            self.out.write(
                "No updates available. You may still upgrade to a specific release image with "
                "--to-image or wait for new updates to be available.\n"
            )
            return
        for major in sorted(buckets, reverse=True):
            for minor in sorted(buckets[major], reverse=True):
                self._minor(major, minor, buckets[major][minor])

    def _minor(self, major: int, minor: int, updates: list[Update]) -> None:
        out, outdated = self.out, self.asked.show_outdated
        out.write(f"\nUpdates to {major}.{minor}:\n")
        tabs = _Tabs(out)
        tabs.write("  VERSION", "ISSUES")
        last_was_long, header_queued = False, True
        for i, update in enumerate(updates):
            issue = update.not_recommended()
            if last_was_long or (issue is not None and not outdated):
                out.write("\n")
                if issue is None and not header_queued:
                    tabs.write("  VERSION", "ISSUES")
                    header_queued = True
                last_was_long = False
            if i == 2 and not outdated:
                out.write(
                    f"And {len(updates) - 2} older {major}.{minor} updates you can see with "
                    "'--show-outdated-releases' or '--version VERSION'.\n"
                )
                last_was_long = True
                break
            if issue is None:
                tabs.write(f"  {update.version}", NO_KNOWN)
                if not outdated:
                    header_queued = False
                    tabs.flush()
            elif outdated:
                tabs.write(f"  {update.version}", _s(issue.get("reason")))
            else:
                out.write(f"  Version: {update.version}\n  Image: {update.image}\n")
                message = _indent(_s(issue.get("message")).strip())
                out.write(f"  Reason: {_s(issue.get('reason'))}\n  Message: {message}\n")
                last_was_long = True
        if outdated:
            tabs.flush()


def _descending(update: Update) -> tuple[int, Any]:
    """sortConditionalUpdatesBySemanticVersions: parsed versions first, highest first;
    unparsed ones after, by text descending."""
    parsed = _as_version(update.version)
    if parsed is None:
        return (1, _Reversed(update.version))
    return (0, _Reversed(parsed))


class _Reversed:
    """A sort key that orders its value descending."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: _Reversed) -> bool:
        return bool(other.value < self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and bool(self.value == other.value)

    __hash__ = None  # type: ignore[assignment]


def recommend(cv: Obj, checks: list[Check] | str, asked: Asked) -> Recommendation:
    """oc's Run over a ClusterVersion and the prechecks' conditions (or why they could
    not be had). `asked.target()` is checked first, as oc's Complete does."""
    target = asked.target()
    run = _Run(cv, asked, target)
    run.cluster_conditions()
    run.prechecks(checks)
    run.service()
    buckets = run.buckets()
    error = run.one(buckets, target) if target is not None else None
    if target is None:
        run.table(buckets)
    issues = sorted(run.issues)
    run.data.update(
        issues=issues,
        accepted=[i for i in issues if i in run.accept],
        unaccepted=[i for i in issues if i not in run.accept],
        error=error,
    )
    return Recommendation(run.out.getvalue(), run.err.getvalue(), error, run.data)


def accepted_names(given: Iterable[str]) -> tuple[str, ...]:
    """--accept's names, comma-delimited and repeatable as oc's StringSlice."""
    return tuple(n for text in given for n in text.split(",") if n)
