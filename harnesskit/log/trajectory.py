"""Trajectories over an event log: statuses, causality, branches, merges, search, tombstones.

History is never rewritten (R-V2): a status changes because a later event says so
(`status.supersede`, `status.reject`, `status.expire`), folded when read. Fact events (tool
results, human decisions, checks) outrank interpretations (model responses): an interpretation
never overrides a fact (R-V3). Order is causal, by `parent_id`; an event whose parent is missing
is listed as a gap, never guessed into place (R-V4).

A branch (`fork`) starts at any event with a frozen start (workspace revision, tool versions,
permissions, policy); it sees its ancestors up to the fork point and itself, never a sibling
(`visible_events` is the authoritative view, used by context building). `merge` brings back an
evidence package, not the branch history; a merge missing evidence is reference-only (R-V5).

Checkpoints carry a stage (R-V6; resume and restart live in `resume.py`, replay in
`replay.py`). `Trajectory.search` returns a DataFrame (R-V8); `Trajectory.tombstone` revokes
content (R-S3).
"""

from __future__ import annotations

import bisect
import contextlib
import datetime as dt
import heapq
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from harnesskit import _repr
from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import ArtifactNotFoundError, UsageError
from harnesskit.log._fold import STATUS_EVENTS, BranchView, StatusFold, folds, kind_of
from harnesskit.log._search import SearchIndex
from harnesskit.log._types import (
    EVENT_TYPES,
    BranchForkEvent,
    Event,
    HumanDecisionEvent,
    ModelResponseEvent,
    RunRestartEvent,
    RunResumeEvent,
    TaskContractEvent,
    TombstoneEvent,
    ToolResultEvent,
)
from harnesskit.log.events import EventLog
from harnesskit.messages import Message, ToolCall

__all__ = [
    "STAGES",
    "STATUSES",
    "Evidence",
    "Gap",
    "Trajectory",
    "branch_filter",
    "branch_limits",
    "frozen_start",
    "visible_events",
]

STATUSES = ("active", "superseded", "rejected", "expired", "audit-only")
STAGES = ("context-ready", "analysis-complete", "patch-prepared", "tests-running", "human-approved")
_BRANCH_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_INF = float("inf")


# -- branches and visibility --------------------------------------------------------------------


def branch_limits(log: EventLog, branch_id: str) -> dict[str, float]:
    """`{branch: last visible event id}` for the view of `branch_id` (itself: unbounded).

    A forked branch sees its parent branch up to the fork point, that branch's parent up to
    its own fork point, and so on; every other branch is invisible (`BranchView`).

    Args:
        log: the run's log.
        branch_id: the branch seen from.

    Returns:
        `{branch: last visible event id}`, `inf` for `branch_id` itself.

    Raises:
        UsageError: no branch `branch_id` in the log (`EventLog.check_branch`).
    """
    log.check_branch(branch_id, where="branch_limits(branch_id)")
    view = BranchView.of(log.events, branch_id)
    return {b: _INF if cut is None else cut for b, cut in view.cutoffs.items()}


def branch_filter(log: EventLog, branch_id: str) -> Callable[[Event], bool]:
    """A predicate: is this event visible from `branch_id` (its ancestors and itself)?

    Computed once from the log's `branch.fork` events (fork points never change), so a
    context builder can apply it to every new event cheaply.

    Args:
        log: the run's log.
        branch_id: the branch seen from.

    Returns:
        `BranchView.visible` of that branch.

    Raises:
        UsageError: no branch `branch_id` in the log (`EventLog.check_branch`).
    """
    log.check_branch(branch_id, where="the branch view (branch_id)")
    return BranchView.of(log.events, branch_id).visible


def visible_events(log: EventLog, branch_id: str = "main") -> list[Event]:
    """The events `branch_id` may see: this is the authoritative branch view (R-V5).

    Its ancestors up to each fork point, then its own events; never a sibling branch's.

    Args:
        log: the run's log.
        branch_id: the branch.

    Returns:
        The visible events, in append order (a valid causal order within one log).

    Raises:
        UsageError: no branch `branch_id` in the log (`EventLog.check_branch`).
    """
    visible = branch_filter(log, branch_id)
    return [e for e in log.events if visible(e)]


def frozen_start(harness: Any) -> dict[str, Any]:
    """What a branch, resume or restart freezes from a harness: revision, tools, gate, policy.

    Args:
        harness: a `Harness` (anything with `tools`, `gate`, `policy` and `revision()`).

    Returns:
        `{"workspace_revision", "tools", "permissions", "policy"}`.
    """
    revision = harness.revision() if hasattr(harness, "revision") else None
    return {
        "workspace_revision": revision,
        "tools": harness.tools.versions(),
        "permissions": harness.gate.to_dict(),
        "policy": harness.policy.to_dict(),
    }


# -- value types ---------------------------------------------------------------------------------


@frozen_dataclass(kw_only=True)
class Gap:
    """One place where the stream is incomplete (R-V4): listed, never guessed away."""

    event_id: int
    """The event whose ancestry cannot be established."""
    missing: int | None
    """The event id it refers to that is missing or invisible, if any."""
    reason: str
    """What is wrong, e.g. `"parent 41 is not in the log"`."""
    kind: str = "parent"
    """`parent` (the ancestry: a missing, invisible or looping parent), `fork` (an event before
    its branch's fork) or `target` (a status event or tombstone naming no event)."""


@frozen_dataclass(kw_only=True)
class Evidence:
    """The evidence package a merge brings back instead of the branch history (R-V5).

    Every field but `open_questions` is required for a full merge; a merge missing any (or with
    one that does not hold up) is recorded as reference-only and changes no fact.
    """

    sample: Any = None
    """A reproducible sample: an event id on the branch, an artifact ref, or `{"hash": ...}`."""
    check: Any = None
    """A deterministic check that passed: a fact event id on the branch (a `tool.result` with
    `ok`), or `{"name": ..., "ok": True, ...}`."""
    revision: str | None = None
    """The workspace (code) revision the evidence holds for."""
    decision: Any = None
    """A human decision: a `human.decision` event id, or `{"by": ..., "approved": True}`."""
    open_questions: tuple[str, ...] = ()
    """What is still unresolved (kept with the merge)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready package stored in the `branch.merge` event."""
        return {
            "sample": self.sample,
            "check": self.check,
            "revision": self.revision,
            "decision": self.decision,
            "open_questions": list(self.open_questions),
        }


# -- the trajectory view -------------------------------------------------------------------------


class Trajectory:
    """Derived views and trajectory operations over one `EventLog`.

    Reading never changes the log; the operations (`supersede`, `reject`, `expire`, `fork`,
    `merge`, `checkpoint`, `tombstone`) append events. Derived data (statuses, the search
    index) is cached and refreshed when the log grows.

    Args:
        log: the run's event log (writable for the operations).

    Raises:
        UsageError: `log` is not an `EventLog`.
    """

    def __init__(self, log: EventLog) -> None:
        if not isinstance(log, EventLog):
            raise UsageError(
                f"Trajectory(log) takes an hk.EventLog (e.g. run.log or "
                f"hk.EventLog.read(path)), got {type(log).__name__}: {log!r}"[:200]
            )
        self.log = log
        self._fold_key = -1  # the log's tombstone count the fold was made under
        self._status: list[str] = []
        self._statuses = StatusFold()
        self._index: SearchIndex | None = None

    # -- statuses (R-V2, R-V3) ----------------------------------------------------------------

    def kind(self, event: Event | int) -> str:
        """`fact`, `interpretation`, `reference` (a reference-only merge) or `record`."""
        e = self.log[event] if isinstance(event, int) else event
        return _kind(e)

    def statuses(self, *, now: dt.datetime | None = None) -> dict[int, str]:
        """`{event_id: derived status}` for every event, folding the status events.

        Args:
            now: when given, events whose payload has an `expires_at` (ISO 8601) at or before
                `now` count as `expired` (e.g. a permission lease).
        """
        self._fold()
        out = dict(zip(range(1, len(self._status) + 1), self._status, strict=True))
        if now is not None:
            cutoff = _iso(now, "statuses(now=...)")
            for e in self.log.events:
                expires = e.payload.get("expires_at")
                active = out[e.event_id] == "active"
                if isinstance(expires, str) and active and _iso(expires) <= cutoff:
                    out[e.event_id] = "expired"
        return out

    def status(self, event_id: int) -> str:
        """The derived status of one event (`active`, `superseded`, `rejected`, ...).

        Raises:
            UsageError: no such event.
        """
        self.log[event_id]
        self._fold()
        return self._status[event_id - 1]

    @property
    def refused(self) -> list[dict[str, Any]]:
        """Status changes that were not applied: `{"event_id", "target", "reason"}` each.

        An interpretation trying to override a fact, a target that does not exist, or the
        supersedes of a reference-only merge.
        """
        self._fold()
        return list(self._statuses.refused)

    def supersede(
        self,
        target: int,
        *,
        reason: str,
        by: int | None = None,
        source: str = "system",
        branch_id: str | None = None,
    ) -> Event:
        """Mark `target` superseded by later evidence (appends `status.supersede`).

        When the superseding evidence is an interpretation (a model response, or `source` is
        `"model"`) and `target` is a fact, nothing is superseded: an `alert.conflict` is
        appended instead and returned (R-V3).

        Args:
            target: the event replaced.
            reason: why.
            by: the event holding the new evidence, if any.
            source: who decided (`system`, `human`, `model`, `tool`).
            branch_id: the branch the status event belongs to; default the target's.

        Raises:
            UsageError: no such target or `by` event.
        """
        return self._status_event("status.supersede", target, reason, by, source, branch_id)

    def reject(
        self, target: int, *, reason: str, source: str = "human", branch_id: str | None = None
    ) -> Event:
        """Mark `target` rejected (a human veto of a plan or conclusion): `status.reject`.

        Raises:
            UsageError: no such target.
        """
        return self._status_event("status.reject", target, reason, None, source, branch_id)

    def expire(
        self, target: int, *, reason: str, source: str = "system", branch_id: str | None = None
    ) -> Event:
        """Mark `target` expired (a lapsed permission, a stale cache): `status.expire`.

        Raises:
            UsageError: no such target.
        """
        return self._status_event("status.expire", target, reason, None, source, branch_id)

    def _status_event(
        self,
        type_: str,
        target: int,
        reason: str,
        by: int | None,
        source: str,
        branch_id: str | None,
    ) -> Event:
        t = self.log[target]
        branch = branch_id or t.branch_id
        if by is not None:
            self.log[by]
        if _kind(t) == "fact" and (
            source == "model" or (by is not None and _kind(self.log[by]) == "interpretation")
        ):
            return self.log.append(
                "alert.conflict",
                {
                    "target": target,
                    "by": by,
                    "attempted": type_,
                    "reason": reason,
                    "rule": "an interpretation never overrides a fact",
                },
                branch_id=branch,
                source="system",
                summary=f"refused: {type_} of fact {t.label} by an interpretation",
            )
        return self.log.append(
            type_,
            {"target": target, "reason": reason, "by": by},
            branch_id=branch,
            source=source,
            summary=f"{STATUS_EVENTS[type_]} {t.label}: {reason}"[:80],
        )

    def _fold(self) -> None:
        """Fold status events into `_status` (the log's one `StatusFold`), incrementally.

        A status event can only target an earlier event, so earlier results never change.
        """
        events = self.log.events
        if self._fold_key != self.log.tombstones:  # unknown log state: start over
            self._status, self._statuses, self._fold_key = [], StatusFold(), self.log.tombstones
        status, fold = self._status, self._statuses
        done = len(status)
        if self.log._folding_seen == len(events):  # the log's index of the events that fold
            index = self.log._folding
            # every other event is `active` as written, and no event changes it (a status
            # event targets earlier events only, so an event's own status is set first)
            status.extend(["active"] * (len(events) - done))
            for i in index[bisect.bisect_right(index, done) :]:
                e = events[i - 1]
                status[i - 1] = e.status
                for target in fold.add(e, events):
                    status[target - 1] = fold.statuses[target][0]
            return
        for e in events[done:]:  # events put in `log.events` by hand: look at each
            status.append(e.status)
            if folds(e):  # (the fold would do nothing for any other event)
                for target in fold.add(e, events):
                    status[target - 1] = fold.statuses[target][0]

    # -- causality (R-V4) ---------------------------------------------------------------------

    @property
    def gaps(self) -> list[Gap]:
        """Where the stream is incomplete (R-V4); empty for a complete stream.

        Missing or invisible parents, parent chains that loop (an event that is its own parent
        or ancestor: each event on the loop is listed), events before their branch's fork,
        status events and tombstones whose target is missing.
        """
        events = self.log.events
        ids = {e.event_id for e in events}
        looping = _parent_loops(events)
        fork_at: dict[str, int] = {}
        for e in events:
            if isinstance(e, BranchForkEvent):
                fork_at.setdefault(e.branch_id, e.event_id)
        limits_cache: dict[str, dict[str, float]] = {}
        gaps: list[Gap] = []
        for e in events:
            if e.branch_id in fork_at and e.event_id < fork_at[e.branch_id]:
                gaps.append(
                    Gap(
                        event_id=e.event_id,
                        missing=fork_at[e.branch_id],
                        reason=f"event precedes the fork of its branch {e.branch_id!r} "
                        f"(EV-{fork_at[e.branch_id]})",
                        kind="fork",
                    )
                )
            p = e.parent_id
            if e.event_id in looping:
                gaps.append(
                    Gap(
                        event_id=e.event_id,
                        missing=p,
                        reason=f"parent chain loops: {looping[e.event_id]} (an event cannot be "
                        "its own ancestor)",
                    )
                )
            elif p is not None and p not in ids:
                gaps.append(
                    Gap(event_id=e.event_id, missing=p, reason=f"parent {p} is not in the log")
                )
            elif p is not None:
                parent = self.log.events[p - 1] if 1 <= p <= len(events) else None
                if parent is not None and parent.branch_id != e.branch_id:
                    limits = limits_cache.setdefault(
                        e.branch_id, branch_limits(self.log, e.branch_id)
                    )
                    if parent.event_id > limits.get(parent.branch_id, 0):
                        gaps.append(
                            Gap(
                                event_id=e.event_id,
                                missing=p,
                                reason=f"parent {p} is on branch {parent.branch_id!r}, which "
                                f"{e.branch_id!r} cannot see",
                            )
                        )
            if e.type in STATUS_EVENTS or e.type == "tombstone":
                p_ = e.payload  # status events and tombstones alike; `target` an id or a list
                raw = p_.get("target", p_.get("targets") if e.type in STATUS_EVENTS else None)
                for t in raw if isinstance(raw, list) and e.type in STATUS_EVENTS else [raw]:
                    if isinstance(t, bool) or not isinstance(t, int) or t not in ids:
                        gaps.append(
                            Gap(
                                event_id=e.event_id,
                                missing=t if isinstance(t, int) else None,
                                reason=f"target {str(t)[:40]} is not in the log",
                                kind="target",
                            )
                        )
        return gaps

    @property
    def complete(self) -> bool:
        """True when `gaps` is empty."""
        return not self.gaps

    def causal_order(self) -> list[Event]:
        """Events ordered by causality: every event after its parent (ties by event id).

        Events with a gap in their ancestry (see `gaps`) and their descendants are left out,
        not guessed into place.
        """
        events = self.log.events
        by_id = {e.event_id: e for e in events}
        bad = {g.event_id for g in self.gaps if g.kind == "parent"}
        children: dict[int, list[int]] = {}
        roots: list[int] = []
        for e in events:
            if e.event_id in bad:
                continue
            if e.parent_id is None:
                roots.append(e.event_id)
            else:
                children.setdefault(e.parent_id, []).append(e.event_id)
        heap = list(roots)
        heapq.heapify(heap)
        out: list[Event] = []
        while heap:
            i = heapq.heappop(heap)
            out.append(by_id[i])
            for c in children.get(i, ()):
                heapq.heappush(heap, c)
        return out

    # -- branches (R-V5) -------------------------------------------------------------------------

    def branches(self) -> dict[str, Event | None]:
        """`{branch: its fork event}`; root branches (e.g. `main`) map to `None`."""
        out: dict[str, Event | None] = {}
        for e in self.log.events:
            if isinstance(e, BranchForkEvent):
                out.setdefault(e.branch_id, e)
            else:
                out.setdefault(e.branch_id, None)
        return out

    def visible(self, branch_id: str = "main") -> list[Event]:
        """`visible_events(self.log, branch_id)`."""
        return visible_events(self.log, branch_id)

    def start_of(self, branch_id: str = "main") -> dict[str, Any]:
        """The frozen start in force on a branch (`frozen_start` shape).

        The latest of the task contract, fork, resume or restart records the branch sees.
        """
        start: dict[str, Any] = {}
        for e in visible_events(self.log, branch_id):
            if isinstance(e, TaskContractEvent):
                start = {
                    "workspace_revision": e.extra.get("workspace_revision", e.workspace_revision),
                    "tools": e.tools,
                    "permissions": e.gate,
                    "policy": e.policy,
                }
            elif isinstance(e, BranchForkEvent | RunResumeEvent) and e.frozen:
                start = dict(e.frozen)
            elif isinstance(e, RunRestartEvent) and e.extra.get("frozen"):
                start = dict(e.extra["frozen"])
        return start

    def fork(
        self,
        event_id: int,
        name: str,
        *,
        frozen: Mapping[str, Any] | None = None,
        reason: str = "",
        source: str = "human",
    ) -> Event:
        """Start branch `name` at `event_id`: appends a `branch.fork` with its frozen start.

        The branch sees every event visible from `event_id`'s branch up to `event_id`, then
        its own; never a sibling's.

        Args:
            event_id: the fork point; every tool call visible there must have its result.
            name: the new branch's name (letters, digits, `_.:-`; unused so far).
            frozen: the frozen start (`frozen_start(harness)`); default: inherited from the
                branch forked from.
            reason: why (e.g. the hypothesis the branch tests).
            source: who forked.

        Raises:
            UsageError: bad or taken name, no such event, or a tool call without its result
                at the fork point (the error names the nearest event to fork from instead).
        """
        if not isinstance(name, str) or not _BRANCH_NAME.fullmatch(name):
            raise UsageError(
                f"branch name {name!r} must be a str and must match {_BRANCH_NAME.pattern}"
            )
        if isinstance(event_id, bool) or not isinstance(event_id, int):
            raise UsageError(f"fork needs an event id (int), got {event_id!r}")
        at = self.log[event_id]
        event_id = at.event_id  # log[-1] is allowed: fork at the last event
        if name in self.branches():
            raise UsageError(f"branch {name!r} already exists; pick another name")
        view = [e for e in visible_events(self.log, at.branch_id) if e.event_id <= event_id]
        dangling = _dangling_calls(view)
        if dangling:
            raise UsageError(
                f"cannot fork at EV-{event_id}: tool call(s) {', '.join(dangling)} have no result "
                "there yet; fork at the event after their results (or before the model response)"
            )
        start = dict(frozen) if frozen is not None else self.start_of(at.branch_id)
        return self.log.append(
            "branch.fork",
            {
                "name": name,
                "from_event": event_id,
                "from_branch": at.branch_id,
                "reason": reason,
                "frozen": start,
            },
            parent_id=event_id,
            branch_id=name,
            source=source,
            workspace_revision=start.get("workspace_revision"),
            summary=f"fork {name} at {at.label}: {reason}"[:80],
        )

    def merge(
        self,
        branch: str,
        *,
        evidence: Evidence | Mapping[str, Any] | None,
        conclusion: str,
        into: str | None = None,
        supersedes: Sequence[int] = (),
        source: str = "human",
    ) -> Event:
        """Bring a branch's result back as an evidence package (`branch.merge` on `into`).

        With every piece of evidence present and holding up, the merge is a fact on `into`
        (and supersedes `supersedes`); otherwise it is reference-only, lists what is missing
        or invalid, and changes no fact. The branch's history stays on the branch.

        Args:
            branch: the branch merged.
            evidence: the package (`Evidence` or a dict with its fields); `None` = nothing.
            conclusion: the finding, one paragraph.
            into: the receiving branch; default the branch it was forked from.
            supersedes: events on `into` the finding replaces (applied only for a full merge).
            source: who merged.

        Raises:
            UsageError: unknown branch, or `into` equals `branch`.
        """
        self.log.check_branch(branch, where="merge(branch)")
        if into is not None:
            self.log.check_branch(into, where="merge(into=...)")
        forks = self.branches()
        fork = forks[branch]
        target = into or (
            (fork.from_branch or "main") if isinstance(fork, BranchForkEvent) else None
        )
        if target is None or target == branch:
            raise UsageError(f"merge {branch!r} into which branch? pass into=...")
        package = evidence.to_dict() if isinstance(evidence, Evidence) else dict(evidence or {})
        branch_view = {e.event_id: e for e in visible_events(self.log, branch)}
        target_view = {e.event_id: e for e in visible_events(self.log, target)}
        missing, invalid = _judge_evidence(package, branch_view, target_view)
        reference_only = bool(missing or invalid)
        own = [e for e in self.log.events if e.branch_id == branch]
        return self.log.append(
            "branch.merge",
            {
                "branch": branch,
                "into": target,
                "conclusion": conclusion,
                "evidence": package,
                "reference_only": reference_only,
                "missing": missing,
                "invalid": invalid,
                "supersedes": list(supersedes),
                "branch_head": own[-1].event_id if own else None,
            },
            branch_id=target,
            source=source,
            summary=(
                f"merge {branch} ({'reference only' if reference_only else 'evidence complete'})"
                f": {conclusion}"
            )[:80],
        )

    def checkpoint(
        self,
        stage: str,
        *,
        branch_id: str = "main",
        note: str = "",
        workspace_revision: str | None = None,
        step: int | None = None,
    ) -> Event:
        """Append a `checkpoint` with a stage (R-V6): one of `STAGES`.

        Args:
            stage: `context-ready`, `analysis-complete`, `patch-prepared`, `tests-running` or
                `human-approved`.
            branch_id: the branch.
            note: what holds at this point.
            workspace_revision: the revision it holds for (a `human-approved` checkpoint is
                void once the workspace moves on).
            step: the loop step, if known.

        Raises:
            UsageError: an unknown stage.
        """
        if stage not in STAGES:
            raise UsageError(f"unknown checkpoint stage {stage!r}; use one of {STAGES}")
        return self.log.append(
            "checkpoint",
            {"stage": stage, "note": note, "step": step, "workspace_revision": workspace_revision},
            branch_id=branch_id,
            workspace_revision=workspace_revision,
            summary=f"checkpoint {stage}: {note}"[:80],
        )

    # -- tombstones (R-S3) -----------------------------------------------------------------------

    def tombstone(
        self,
        target: int,
        *,
        reason: str,
        store: Any = None,
        artifacts: Iterable[str] = (),
        source: str = "human",
    ) -> Event:
        """Revoke an event's content: delete its artifacts' bytes, then append a `tombstone`.

        Every reader of the log (events, frames, request rebuilding, context building, search)
        returns the redacted copy from then on, also after re-reading the file; the earlier
        lines' bytes are not rewritten (append-only), so truly secret text belongs in artifacts.

        Args:
            target: the event whose content is revoked.
            reason: why (kept in the log).
            store: an artifact store with `delete(artifact_id)`; artifacts referenced by the
                target's payload (`artifact`, `artifact_id`, `artifacts`, `ref`) are deleted.
            artifacts: more artifact ids to delete with it.
            source: who deleted.

        Raises:
            UsageError: no such event, or it is itself a tombstone.
        """
        t = self.log[target]
        if isinstance(t, TombstoneEvent):
            raise UsageError(f"EV-{target} is a tombstone; tombstones cannot be revoked")
        ids = list(dict.fromkeys([*_artifact_refs(t.payload), *artifacts]))
        deleted = []
        if store is not None:
            for a in ids:
                with contextlib.suppress(ArtifactNotFoundError):
                    store.delete(a)
                deleted.append(a)
        return self.log.append(
            "tombstone",
            {"target": target, "reason": reason, "artifacts": ids, "deleted": deleted},
            parent_id=target,
            branch_id=t.branch_id,
            source=source,
            summary=f"tombstone {t.label}: {reason}"[:80],
        )

    # -- search (R-V8) ---------------------------------------------------------------------------

    def search(
        self,
        text: str | None = None,
        *,
        type: str | Iterable[str] | None = None,
        branch: str | Iterable[str] | None = None,
        status: str | Iterable[str] | None = None,
        since: dt.datetime | str | float | None = None,
        until: dt.datetime | str | float | None = None,
        kind: str | Iterable[str] | None = None,
    ) -> Any:
        """Find events; returns a pandas DataFrame, one row per match, in log order.

        Args:
            text: case-insensitive substring of the summary or the payload's values.
            type: event type(s), e.g. `"tool.result"`.
            branch: branch id(s) the events are on.
            status: derived status(es), e.g. `"active"`.
            since: created at or after (aware datetime, ISO 8601 string or epoch seconds).
            until: created before (same forms).
            kind: `fact`, `interpretation`, `reference` or `record`.

        Returns:
            Columns: event_id, parent_id, branch_id, type, source, created_at, step, status,
            kind, summary.

        Raises:
            UsageError: an unknown event type, status, kind or branch (a typo would match
                nothing; a branch with a did-you-mean), a filter that is not a string or an
                iterable of strings, or a `since`/`until` that is not one of the time forms
                above.
        """
        type, branch = _filter("type", type), _filter("branch", branch)
        status, kind = _filter("status", status), _filter("kind", kind)
        for name, value, known in (
            ("type", type, EVENT_TYPES),
            ("status", status, STATUSES),
            ("kind", kind, ("fact", "interpretation", "reference", "record")),
        ):
            values = [value] if isinstance(value, str) else list(value or ())
            bad = [v for v in values if v not in known]
            if bad:
                raise UsageError(f"search({name}=...): unknown {bad}; use one of {sorted(known)}")
        for b in [branch] if isinstance(branch, str) else list(branch or ()):
            self.log.check_branch(b, where="search(branch=...)")  # a typo would match nothing
        if text is not None and not isinstance(text, str):
            raise UsageError(f"search(text=...) takes a string, got {text!r}")
        idx = self._search_index(with_text=text is not None)
        self._fold()
        return idx.query(
            self._status,
            text=text,
            filters={"types": type, "branches": branch, "kinds": kind},
            status=status,
            since=_iso(since, "search(since=...)") if since is not None else None,
            until=_iso(until, "search(until=...)") if until is not None else None,
        )

    def frame(self) -> Any:
        """Every event as a DataFrame row with its derived status and kind (see `search`)."""
        return self.search()

    def _search_index(self, *, with_text: bool) -> SearchIndex:
        idx = self._index
        if idx is None or idx.tombstones != self.log.tombstones:
            idx = self._index = SearchIndex(self.log.tombstones, kind_of=_kind)
        if idx.size != len(self.log) or (with_text and idx.texts is None):
            idx.extend(self.log.events, with_text=with_text)
        return idx

    def __repr__(self) -> str:
        return f"<Trajectory {len(self.log)} events, {len(self.branches())} branches>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


# -- helpers ---------------------------------------------------------------------------------------


_kind = kind_of


_TIME_FORMS = (
    "a timezone-aware datetime, an ISO 8601 string with a timezone "
    "('2026-01-02T03:04:05+00:00') or epoch seconds (a finite number)"
)


def _iso(value: dt.datetime | str | float, name: str = "time") -> str:
    """Normalize a time to the log's `created_at` form (UTC, milliseconds).

    Raises:
        UsageError: `value` is not one of the accepted forms; the message names `name`.
    """
    if isinstance(value, bool):
        raise UsageError(f"{name}={value!r} is not a time; give {_TIME_FORMS}")
    if isinstance(value, int | float):
        try:
            moment = dt.datetime.fromtimestamp(value, dt.UTC)
        except (ValueError, OverflowError, OSError):  # NaN, inf, beyond year 9999
            raise UsageError(
                f"{name}={value!r} is not a usable time in epoch seconds; give {_TIME_FORMS}"
            ) from None
    elif isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            raise UsageError(
                f"{name}={value[:80]!r} is not an ISO 8601 time; give {_TIME_FORMS}"
            ) from None
        if moment.tzinfo is None:
            raise UsageError(f"{name}={value!r} has no timezone; give one (e.g. +00:00)")
    elif isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise UsageError(f"{name}: a naive datetime is ambiguous; pass a timezone-aware one")
        moment = value
    else:
        raise UsageError(f"{name}={value!r} is not a time; give {_TIME_FORMS}")
    try:
        return moment.astimezone(dt.UTC).isoformat(timespec="milliseconds")
    except OverflowError:  # a time near year 1 or 9999 that UTC moves out of range
        raise UsageError(f"{name}={value!r} is out of range; give {_TIME_FORMS}") from None


def _parent_loops(events: Sequence[Event]) -> dict[int, str]:
    """`{event_id: "EV-a -> EV-b -> EV-a"}` for every event on a parent loop (self included).

    Each chain is walked once (states kept across walks), so this is linear in the events.
    """
    by_id = {e.event_id: e for e in events}
    done: set[int] = set()
    loops: dict[int, str] = {}
    for start in by_id:
        path: list[int] = []
        on_path: dict[int, int] = {}
        i: Any = start
        while isinstance(i, int) and i in by_id and i not in done and i not in on_path:
            on_path[i] = len(path)
            path.append(i)
            i = by_id[i].parent_id
        if isinstance(i, int) and i in on_path:  # back on this walk: a loop
            ring = path[on_path[i] :]
            text = " -> ".join(f"EV-{j}" for j in [*ring, ring[0]])
            for j in ring:
                loops[j] = text
        done.update(path)
    return loops


def _calls_of(event: Event) -> list[ToolCall]:
    message = (event.message if isinstance(event, ModelResponseEvent) else None) or {}
    return list(Message.from_openai({"role": "assistant", **message}).tool_calls)


def _filter(name: str, value: Any) -> str | list[str] | None:
    """A `search` filter as given (`None`, one string) or as a list; `UsageError` otherwise."""
    if value is None or isinstance(value, str):
        return value
    values = list(value) if isinstance(value, Iterable) else None
    if values is None or not all(isinstance(v, str) for v in values):
        raise UsageError(
            f"search({name}=...) takes a string or a list of strings, got {value!r:.80}"
        )
    return values


def _dangling_calls(view: Sequence[Event]) -> list[str]:
    """Ids of tool calls in `view` (model responses) that have no tool.result in `view`."""
    answered = {e.tool_call_id for e in view if isinstance(e, ToolResultEvent)}
    dangling: list[str] = []
    for e in view:
        if isinstance(e, ModelResponseEvent):
            dangling.extend(c.id for c in _calls_of(e) if c.id not in answered)
    return dangling


def _artifact_refs(payload: Mapping[str, Any]) -> list[str]:
    refs: list[str] = []
    for key in ("artifact", "ref"):
        v = payload.get(key)
        if isinstance(v, dict) and isinstance(v.get("id"), str):
            refs.append(v["id"])
        elif isinstance(v, str):
            refs.append(v)
    if isinstance(payload.get("artifact_id"), str):
        refs.append(payload["artifact_id"])
    for v in payload.get("artifacts") or ():
        refs.append(v["id"] if isinstance(v, dict) else str(v))
    return refs


def _judge_evidence(
    package: Mapping[str, Any], branch_view: Mapping[int, Event], target_view: Mapping[int, Event]
) -> tuple[list[str], dict[str, str]]:
    """Which evidence is missing, and which is present but does not hold up (with why)."""
    missing = [
        k
        for k in ("sample", "check", "revision", "decision")
        if package.get(k) in (None, "", {}, [])
    ]
    invalid: dict[str, str] = {}
    sample = package.get("sample")
    if isinstance(sample, int) and sample not in branch_view:
        invalid["sample"] = f"EV-{sample} is not visible on the branch"
    check = package.get("check")
    if isinstance(check, int):
        e = branch_view.get(check)
        if e is None:
            invalid["check"] = f"EV-{check} is not visible on the branch"
        elif _kind(e) != "fact":
            invalid["check"] = f"{e.label} is a {e.type} ({_kind(e)}), not a deterministic fact"
        elif isinstance(e, ToolResultEvent) and e.ok is False:
            invalid["check"] = f"{e.label} failed (ok=false)"
    elif isinstance(check, Mapping) and check and check.get("ok") is not True:
        invalid["check"] = "the check did not pass (ok is not true)"
    decision = package.get("decision")
    if isinstance(decision, int):
        e = branch_view.get(decision) or target_view.get(decision)
        if not isinstance(e, HumanDecisionEvent):
            invalid["decision"] = f"EV-{decision} is not a visible human.decision"
        elif e.approved is False:
            invalid["decision"] = f"{e.label} did not approve"
    elif (
        isinstance(decision, Mapping)
        and decision
        and (not decision.get("by") or decision.get("approved") is not True)
    ):
        invalid["decision"] = "a decision needs 'by' and approved=true"
    return missing, invalid
