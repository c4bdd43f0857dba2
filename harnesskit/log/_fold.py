"""The one status fold (R-V2, R-V3) and the one branch view (R-V5) over an event log.

`Trajectory` and the context builder both read statuses and branch visibility from here, so
the two can never disagree about what is superseded or who sees what.

Status sources, in log order (a later one wins): a status written on the event itself (e.g.
`audit-only`); an event's `supersedes` field; `status.supersede`, `status.reject` and
`status.expire` events naming targets (`target`, an id or a list of ids); and the `supersedes`
list of a full (not reference-only) `branch.merge`. A change is refused (and listed) when its
target is not an earlier event, or when an interpretation would override a fact (R-V3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harnesskit.log._types import (
    FACT_TYPES,
    INTERPRETATION_TYPES,
    BranchForkEvent,
    BranchMergeEvent,
    Event,
)

__all__ = [
    "FOLDING_TYPES",
    "STATUS_EVENTS",
    "BranchView",
    "StatusFold",
    "folds",
    "kind_of",
    "status_targets",
]

#: Status event type → the status it gives the events it targets (R-V2).
STATUS_EVENTS = {
    "status.supersede": "superseded",
    "status.reject": "rejected",
    "status.expire": "expired",
}
_KINDS = dict.fromkeys(FACT_TYPES, "fact") | dict.fromkeys(INTERPRETATION_TYPES, "interpretation")
#: Event types that can change a status whatever their envelope: the status events and
#: `branch.merge` (`folds`).
FOLDING_TYPES = frozenset({*STATUS_EVENTS, "branch.merge"})


def folds(e: Event) -> bool:
    """True when `StatusFold.add(e)` can change a status: any other event leaves it as it was.

    That is an event with a status as written (not `active`), a `supersedes` field, a status
    event or a `branch.merge`.

    Args:
        e: any event.

    Returns:
        Whether to feed it to the fold (feeding every event gives the same statuses).
    """
    return (
        e.status != "active"
        or e.supersedes is not None
        or e.type in FOLDING_TYPES
        or isinstance(e, BranchMergeEvent)
    )


def kind_of(e: Event) -> str:
    """`fact`, `interpretation`, `reference` (a reference-only merge) or `record` (R-V3).

    Args:
        e: any event.

    Returns:
        The kind's name.
    """
    if isinstance(e, BranchMergeEvent):
        return "reference" if e.reference_only else "fact"
    return _KINDS.get(e.type, "record")


def status_targets(event: Event) -> list[int]:
    """Ids a status event targets: its `target` (an id or a list of ids), else `targets`.

    Args:
        event: a status event (any other event has no targets).

    Returns:
        The integer ids named, in order; malformed entries are left out.
    """
    p = event.payload
    t = p.get("target", p.get("targets"))
    items = t if isinstance(t, list) else [t]
    return [i for i in items if isinstance(i, int) and not isinstance(i, bool)]


class StatusFold:
    """Derived statuses folded from later events, one event at a time (R-V2, R-V3).

    Feed it events in log order with `add`; earlier results never change except through a
    later event, so a reader folds only what is new.
    """

    def __init__(self) -> None:
        """Start an empty fold."""
        self.statuses: dict[int, tuple[str, int]] = {}
        """`{event_id: (status, by_event_id)}` for every event that is not `active`."""
        self.refused: list[dict[str, Any]] = []
        """Changes not applied: `{"event_id", "target", "reason"}` each, in log order."""

    def add(self, e: Event, events: Sequence[Event]) -> list[int]:
        """Fold one event (the next in log order).

        Args:
            e: the event.
            events: the log's events (ids 1..n), to judge targets and evidence.

        Returns:
            Ids of earlier events whose status `e` changed, in order.
        """
        if e.status != "active":
            self.statuses[e.event_id] = (e.status, e.event_id)
        changes: list[tuple[Any, str]] = []
        status = STATUS_EVENTS.get(e.type)
        if status is not None:
            p = e.payload
            raw = p.get("target", p.get("targets"))
            if isinstance(raw, list):
                changes += [(t, status) for t in raw]
            else:
                changes.append((raw, status))
        if e.supersedes is not None:
            changes.append((e.supersedes, "superseded"))
        if isinstance(e, BranchMergeEvent):
            for t in e.replaces or ():
                if e.reference_only:
                    self._refuse(e, t, "a reference-only merge changes no fact")
                else:
                    changes.append((t, "superseded"))
        changed: list[int] = []
        for target, new in changes:
            if (
                isinstance(target, bool)
                or not isinstance(target, int)
                or not 1 <= target < e.event_id
            ):
                self._refuse(e, target, f"no event {target} before it")
                continue
            if self._interpretive(e, events) and kind_of(events[target - 1]) == "fact":
                self._refuse(e, target, "an interpretation never overrides a fact")
                continue
            self.statuses[target] = (new, e.event_id)
            changed.append(target)
        return changed

    def _interpretive(self, e: Event, events: Sequence[Event]) -> bool:
        if e.source == "model" or e.type in INTERPRETATION_TYPES:
            return True
        by = e.payload.get("by")
        if isinstance(by, int) and not isinstance(by, bool) and 1 <= by <= len(events):
            return kind_of(events[by - 1]) == "interpretation"
        return False

    def _refuse(self, e: Event, target: Any, reason: str) -> None:
        self.refused.append({"event_id": e.event_id, "target": target, "reason": reason})


class BranchView:
    """Which events a branch sees: its own, plus each ancestor's up to the fork point (R-V5).

    A `branch.fork` event links a branch (payload `branch_id`, else the branch the event sits
    on) to its parent (payload `from_branch`, else the branch of the fork point) at the fork
    point (payload `from_event`, else the event's `parent_id`). Siblings and descendants are
    never visible.
    """

    def __init__(self, branch_id: str, cutoffs: Mapping[str, int | None]) -> None:
        """Create a view.

        Args:
            branch_id: the branch seen from.
            cutoffs: `{branch: last visible event id}` (`None` = all of it).
        """
        self.branch_id = branch_id
        self.cutoffs = dict(cutoffs)

    @staticmethod
    def forked(e: BranchForkEvent) -> str:
        """The branch a `branch.fork` event creates."""
        return e.forked_branch or e.branch_id

    @classmethod
    def of(cls, events: Sequence[Event], branch_id: str) -> BranchView:
        """The view of `branch_id` given the `branch.fork` events among `events`.

        Args:
            events: the log's events (ids 1..n, in log order).
            branch_id: the branch seen from.

        Returns:
            The view; a branch's first fork event counts, later ones are ignored.
        """
        forks: dict[str, tuple[int, str]] = {}
        for e in events:
            if isinstance(e, BranchForkEvent):
                point = e.from_event if isinstance(e.from_event, int) else (e.parent_id or 0)
                parent = e.from_branch or (
                    events[point - 1].branch_id if 1 <= point <= len(events) else "main"
                )
                forks.setdefault(cls.forked(e), (point, parent))
        cutoffs: dict[str, int | None] = {branch_id: None}
        branch, limit = branch_id, None
        while branch in forks:
            point, parent = forks[branch]
            if parent in cutoffs:  # a cycle or a repeated ancestor: stop rather than loop
                break
            limit = point if limit is None else min(limit, point)
            cutoffs[parent] = limit
            branch = parent
        return cls(branch_id, cutoffs)

    def visible(self, event: Event) -> bool:
        """True when `event` is on this branch or on an ancestor at or before the fork."""
        if event.branch_id not in self.cutoffs:
            return False
        cut = self.cutoffs[event.branch_id]
        return cut is None or event.event_id <= cut

    def __repr__(self) -> str:
        return f"<BranchView {self.branch_id} sees {self.cutoffs}>"
