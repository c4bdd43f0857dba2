"""The injection record read back from a log (R-C5).

Private: import `InjectionRecord` and `injection_records` from `harnesskit.context.builder`. The
record is written by `ContextBuilder.record`; its excluded map may be a delta (`delta_of`), and
its selected list (schema v3) a delta against the branch's previous record (`selected_of`,
`selected_cut`, `selected_new`), so a record's size stays flat as the history grows.
"""

from __future__ import annotations

from typing import Any

from harnesskit import _repr
from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import UsageError
from harnesskit.log._types import ContextInjectedEvent, ModelRequestEvent
from harnesskit.log.events import EventLog
from harnesskit.messages import known_prefix


@frozen_dataclass(kw_only=True)
class InjectionRecord:
    """One `context.injected` event read back: what a model request was built from (R-C5)."""

    event_id: int
    """Id of the `context.injected` event."""
    request_id: int | None
    """Id of the `model.request` it belongs to (`None` if no request followed)."""
    step: int | None
    """The loop step."""
    policy: str
    """Policy name."""
    policy_version: str
    """Policy version."""
    model: str
    """The target model."""
    selected: tuple[int, ...]
    """Event ids whose content was sent, in order of appearance."""
    excluded: dict[int, str]
    """`{event_id: reason}` of content events left out."""
    summarized: tuple[int, ...] = ()
    """Event ids only named in the structured summary."""
    summary_hash: str | None = None
    """sha256 (16 hex) of the structured summary, if any."""
    token_estimate: int = 0
    """Estimated prompt tokens of the messages (tool specs not included)."""
    conflicts: tuple[dict[str, Any], ...] = ()
    """Conflicting fact keys surfaced in this assembly."""
    rows: tuple[tuple[int, str, str, str, str], ...] = ()
    """`(event_id, label, type, decision, reason)` per event, in id order, for tables."""

    @classmethod
    def from_log(cls, log: EventLog, event_id: int) -> InjectionRecord:
        """Read the `context.injected` event `event_id` of `log`.

        Raises:
            UsageError: that event is not a `context.injected`.
        """
        e = log[event_id]
        if not isinstance(e, ContextInjectedEvent):
            raise UsageError(f"event {event_id} is a {e.type}, not a context.injected")
        request_id = None
        for later in log.events[event_id:]:
            if isinstance(later, ModelRequestEvent) and later.parent_id == event_id:
                request_id = later.event_id
                break
            if isinstance(later, ContextInjectedEvent) and later.branch_id == e.branch_id:
                break
        selected, excluded = _resolve_ids(log, e)
        summarized = tuple(e.summarized or ())
        decisions = {
            **{i: ("excluded", r) for i, r in excluded.items()},
            **dict.fromkeys(summarized, ("summarized", "named in the summary")),
            **dict.fromkeys(selected, ("selected", "")),
        }
        rows = tuple(
            (i, log[i].label, log[i].type, d, r)
            for i, (d, r) in sorted(decisions.items())
            if 1 <= i <= len(log)
        )
        return cls(
            event_id=event_id,
            request_id=request_id,
            step=e.step,
            policy=e.policy or "",
            policy_version=str(e.policy_version or ""),
            model=e.model or "",
            selected=selected,
            excluded=excluded,
            summarized=summarized,
            summary_hash=e.summary_hash,
            token_estimate=int(e.token_estimate or 0),
            conflicts=tuple(e.conflicts or ()),
            rows=rows,
        )

    def frame(self) -> Any:
        """A pandas DataFrame, one row per event: event_id, label, type, decision, reason."""
        import pandas as pd

        cols = ["event_id", "label", "type", "decision", "reason"]
        return pd.DataFrame.from_records(list(self.rows), columns=cols)

    def __repr__(self) -> str:
        return (
            f"<InjectionRecord {self.policy} v{self.policy_version} step={self.step} "
            f"selected={len(self.selected)} excluded={len(self.excluded)} "
            f"tokens~{self.token_estimate}>"
        )

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


def selected_fields(
    log: EventLog, prev_id: int | None, prev: tuple[int, ...], selected: tuple[int, ...]
) -> dict[str, Any]:
    """The payload keys that write `selected`: in full, or as a delta against a record.

    A delta applies when `selected` is `prev` (the list the record `prev_id` of this log
    resolves to) with `selected_cut` ids dropped from its front and `selected_new` appended
    (a growing or sliding history); any other change is written in full.

    Args:
        log: the log about to get the record.
        prev_id: the branch's previous `context.injected` id in `log`, or `None`.
        prev: that record's selected ids, resolved.
        selected: the new record's selected ids, in order.

    Returns:
        `{"selected": [...]}` or `{"selected_of", "selected_cut", "selected_new"}`.
    """
    if prev_id is not None and prev and selected and 1 <= prev_id <= len(log):
        base = log.events[prev_id - 1]
        n = len(prev)
        if isinstance(base, ContextInjectedEvent) and base.n_selected == n:
            # O(1) when the builder's marks prove `prev` starts `selected` (a growing history)
            cut = 0 if known_prefix(prev, selected) or selected[:n] == prev else -1
            if cut < 0 and selected[0] in prev:
                cut = prev.index(selected[0])
                if selected[: n - cut] != prev[cut:]:
                    cut = -1
            if cut >= 0:
                return {
                    "selected_of": prev_id,
                    "selected_cut": cut,
                    "selected_new": list(selected[n - cut :]),
                }
    return {"selected": list(selected)}


def selected_ids(log: EventLog, event: ContextInjectedEvent) -> tuple[int, ...]:
    """The ids a `context.injected` record selected, in order (following `selected_of` links).

    Args:
        log: the log holding `event`.
        event: a `context.injected` event of `log`.

    Returns:
        The selected event ids, as `ContextBuilder` chose them.

    Raises:
        UsageError: a `selected_of` link names an event that is not a `context.injected`.
    """
    cuts = 0
    parts: list[list[int]] = []
    e = event
    while e.selected is None and e.selected_of is not None:
        parts.append(e.selected_new or [])
        cuts += e.selected_cut or 0
        link = log[e.selected_of]
        if not isinstance(link, ContextInjectedEvent) or link.event_id >= e.event_id:
            raise UsageError(f"EV-{event.event_id}'s selected_of names a {link.type}")
        e = link
    ids = list(e.selected or ())
    for part in reversed(parts):
        ids += part
    return tuple(ids[cuts:])


def _resolve_ids(
    log: EventLog, event: ContextInjectedEvent
) -> tuple[tuple[int, ...], dict[int, str]]:
    """The selected ids and the full excluded map of a record (following `delta_of` links)."""
    chain = [event]
    while chain[-1].delta_of is not None:
        link = log[chain[-1].delta_of]
        if not isinstance(link, ContextInjectedEvent):
            raise UsageError(f"EV-{event.event_id}'s delta_of names a {link.type}")
        chain.append(link)
    excluded = {int(k): v for k, v in (chain[-1].excluded or {}).items()}
    for link in reversed(chain[:-1]):
        for k in link.excluded_gone or ():
            excluded.pop(int(k), None)
        excluded.update({int(k): v for k, v in (link.excluded_new or {}).items()})
    return selected_ids(log, event), excluded


def injection_records(log: EventLog, *, branch_id: str | None = None) -> list[InjectionRecord]:
    """Every `context.injected` event of `log` (optionally of one branch), read back in order."""
    return [
        InjectionRecord.from_log(log, e.event_id)
        for e in log.of_type(ContextInjectedEvent, branch_id=branch_id)
    ]
