"""The event classes: one frozen dataclass per event type, joined in `AnyEvent` (R-V1).

Every event shares the envelope of `Event` (ids, branch, source, time, status, ...); each type
adds typed fields for the payload keys the code reads, with a literal `type` tag. Payload keys
a class does not declare are kept in `extra`, so any line reads and writes back the same JSON.
`Event.payload` is the whole payload as one dict (read-only by convention: never mutate it).

Readers match on the class (`isinstance(e, ToolResultEvent)`, `log.of_type(ToolResultEvent)`)
and read attributes (`e.content`); a misspelled class is a NameError, a misspelled type string
a `UsageError`, never an empty list.
"""

from __future__ import annotations

import builtins
import dataclasses
import operator
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, ClassVar, Literal

from harnesskit import _repr
from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import CorruptLogError, UsageError

__all__ = [
    "ENVELOPE",
    "EVENT_CLASSES",
    "EVENT_TYPES",
    "FACT_TYPES",
    "INTERPRETATION_TYPES",
    "SCHEMA_VERSION",
    "AnyEvent",
    "Event",
    "event_class",
    "make_event",
]  # the event classes are appended below

#: Version written on every line; older versions are read through `MIGRATIONS` (`_codec`).
SCHEMA_VERSION = 3
#: Envelope fields, in the order they are written on a line (`type` and `payload` go between).
ENVELOPE = (
    "event_id", "parent_id", "branch_id", "source", "created_at", "workspace_revision",
    "input_hash", "status", "summary", "supersedes", "data_class", "v",
)  # fmt: skip
_EMPTY: Mapping[str, Any] = types.MappingProxyType({})
_LABELS = {
    "tool.result": "TOOL",
    "human.decision": "HUMAN",
    "user.message": "USER",
    "model.response": "MODEL",
    "task.contract": "TASK",
}


@frozen_dataclass(kw_only=True, repr=False)
class Event:
    """One line of the log: the envelope every event type shares. Never modified once written.

    Statuses are derived by later events (R-V2). The concrete classes (`ToolResultEvent`, ...)
    add the typed payload fields; build one with its constructor, or `make_event(type,
    payload, ...)` from a payload dict.
    """

    type: ClassVar[str] = ""
    """The event type tag, e.g. `"tool.result"` (one of `EVENT_TYPES`)."""
    _KEYS: ClassVar[tuple[tuple[str, str], ...]] = ()  # (payload key, attribute), filled below
    _ATTR_KEYS: ClassVar[dict[str, str]] = {}  # attribute -> payload key
    _KEYSET: ClassVar[frozenset[str]] = frozenset()  # the declared payload keys

    event_id: int
    """1-based position in the run's log."""
    parent_id: int | None = None
    """The event this one follows causally (R-V4); `None` for a root."""
    branch_id: str = "main"
    """The trajectory branch (R-V5)."""
    source: str = "system"
    """Who produced it: `user`, `model`, `tool`, `human`, `system`."""
    created_at: str = ""
    """ISO 8601 UTC timestamp (informational: order is causal, not by time)."""
    workspace_revision: str | None = None
    """The workspace revision the event was produced against, if known."""
    input_hash: str | None = None
    """sha256 (16 hex) of what produced it (e.g. a tool call's arguments)."""
    status: str = "active"
    """Status as written (`active` or `audit-only`); later events may change the derived one."""
    summary: str = ""
    """One line for humans and tables."""
    supersedes: int | None = None
    """The event this one replaces, if any."""
    data_class: str = "internal"
    """`public`, `internal`, `restricted` or `secret` (R-S2)."""
    v: int = SCHEMA_VERSION
    """Schema version of this line."""
    step: int | None = None
    """The loop step it was written in (payload key `step`), if any."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Payload keys this class does not declare, as read or given (kept for the round trip)."""
    _payload: dict[str, Any] | None = field(default=None, init=False, compare=False)

    @property
    def payload(self) -> dict[str, Any]:
        """The whole payload: typed fields (set ones) and `extra`, as one JSON-ready dict.

        An event read from a line or appended from a dict returns that dict, in its key
        order; one built from fields builds it once, leaving out fields that are `None`.
        The dict is shared: read it, never mutate it.
        """
        p = self._payload
        if p is None:
            p = {k: v for k, a in self._KEYS if (v := getattr(self, a)) is not None}
            p.update(self.extra)
            object.__setattr__(self, "_payload", p)
        return p

    def __getattr__(self, name: str) -> Any:
        # Reached only for an unset slot: a typed field (or `extra`) of an event built from a
        # payload dict by `make_event`/the codec, decoded now and kept (the value is fixed by
        # the payload, so the frozen event does not change).
        cls = type(self)
        key = cls._ATTR_KEYS.get(name)
        if key is not None:
            value = object.__getattribute__(self, "_payload").get(key)
        elif name == "extra":
            payload = object.__getattribute__(self, "_payload")
            keys = cls._KEYSET
            value = (
                _EMPTY
                if keys.issuperset(payload)
                else {k: x for k, x in payload.items() if k not in keys}
            )
        else:
            raise AttributeError(f"{cls.__name__!r} object has no attribute {name!r}")
        object.__setattr__(self, name, value)
        return value

    @property
    def is_fact(self) -> bool:
        """True for fact kinds (tool results, human decisions, checks), R-V3."""
        return self.type in FACT_TYPES

    @property
    def label(self) -> str:
        """Short citation label such as `TOOL-31` or `HUMAN-12` (R-C7)."""
        return f"{_LABELS.get(self.type, 'EV')}-{self.event_id}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict written as one log line (envelope, `type`, `payload`)."""
        return {
            "v": self.v,
            "event_id": self.event_id,
            "parent_id": self.parent_id,
            "branch_id": self.branch_id,
            "type": self.type,
            "source": self.source,
            "created_at": self.created_at,
            "workspace_revision": self.workspace_revision,
            "input_hash": self.input_hash,
            "status": self.status,
            "summary": self.summary,
            "supersedes": self.supersedes,
            "data_class": self.data_class,
            "payload": self.payload,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnyEvent:
        """Inverse of `to_dict()` for a current-version line: the class its `type` names.

        Args:
            data: one decoded line (already migrated to `SCHEMA_VERSION`).

        Returns:
            The event, an instance of the class registered for `data["type"]`.

        Raises:
            CorruptLogError: a required field is missing or the type is unknown.
        """
        try:
            make = _MAKERS[data["type"]]
            return make(
                data.get("payload") or {},
                data["event_id"],
                data.get("parent_id"),
                data.get("branch_id", "main"),
                data.get("source", "system"),
                data.get("created_at", ""),
                data.get("workspace_revision"),
                data.get("input_hash"),
                data.get("status", "active"),
                data.get("summary", ""),
                data.get("supersedes"),
                data.get("data_class", "internal"),
                data["v"],
            )
        except KeyError as exc:
            key = exc.args[0]
            if key == data.get("type"):
                raise CorruptLogError(
                    f"unknown event type {key!r} in line {dict(data)!r:.200}; "
                    f"the known types are {sorted(EVENT_TYPES)}"
                ) from exc
            raise CorruptLogError(
                f"event line lacks required field {key!r}: {dict(data)!r:.200}"
            ) from exc

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.event_id} {self.summary[:60]!r}>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


@frozen_dataclass(kw_only=True, repr=False)
class TaskContractEvent(Event):
    """The run's task, system prompt and frozen configuration (written first)."""

    type: ClassVar[Literal["task.contract"]] = "task.contract"
    run_id: str | None = None
    """The run's id."""
    system_prompt: str | None = None
    """The system prompt sent to the model."""
    task: dict[str, Any] | None = None
    """The task record (e.g. `task_id`, inputs)."""
    model: str | None = None
    """The model's name."""
    policy: dict[str, Any] | None = None
    """The context policy as a dict."""
    tools: dict[str, str] | None = None
    """`{tool name: version}` of the registry."""
    gate: dict[str, Any] | None = None
    """The permission gate as a dict."""
    limits: dict[str, Any] | None = None
    """The run's limits (`max_steps`, ...; `None` = unlimited)."""
    idempotency: dict[str, Any] | None = None
    """Where the idempotency ledger lives (`{"ledger": name}`)."""


@frozen_dataclass(kw_only=True, repr=False)
class UserMessageEvent(Event):
    """A user turn."""

    type: ClassVar[Literal["user.message"]] = "user.message"
    content: str | None = None
    """The user's text."""


@frozen_dataclass(kw_only=True, repr=False)
class HumanDecisionEvent(Event):
    """A human decision (a fact, R-V3): approve, deny, pending, with what it is about."""

    type: ClassVar[Literal["human.decision"]] = "human.decision"
    decision: str | None = None
    """`approve`, `deny`, `reject`, `pending`, ..."""
    action: str | None = None
    """The action decided on."""
    reason: str | None = None
    """Why."""
    target: Any = None
    """The event id (or thing) decided about."""
    approved: bool | None = None
    """Whether it was approved (merge evidence)."""
    by: str | None = None
    """Who decided."""
    forbid: list[Any] | None = None
    """Actions forbidden from now on."""
    pending: list[Any] | None = None
    """Open items."""
    next_step: str | None = None
    """What to do next."""


@frozen_dataclass(kw_only=True, repr=False)
class ModelRequestEvent(Event):
    """The exact messages and tool list sent; a delta when it can be (`EventLog.append_request`)."""

    type: ClassVar[Literal["model.request"]] = "model.request"
    messages: list[dict[str, Any]] | None = None
    """The messages in full (chat-completions dicts), when not a delta."""
    prefix_of: int | None = None
    """The earlier request whose messages this one extends."""
    prefix_len: int | None = None
    """How many of that request's messages are kept."""
    new_messages: list[dict[str, Any] | int] | None = None
    """The messages added after the prefix; from schema v3 a message already in the log is
    the id of its event (`EventLog.request_messages` rebuilds it)."""
    n_messages: int | None = None
    """Number of messages sent."""
    tools: list[dict[str, Any]] | None = None
    """The tool specs sent, when they changed."""
    tools_sha: str | None = None
    """sha256 (16 hex) of `tools`."""
    tools_from: int | None = None
    """The request whose tool list this one reuses."""
    final: bool | None = None
    """True for the closing request after a brake (no tools)."""
    settings: dict[str, Any] | None = None
    """Sampling settings."""
    model: str | None = None
    """The model asked."""
    token_estimate: int | None = None
    """Estimated prompt tokens."""


@frozen_dataclass(kw_only=True, repr=False)
class ModelResponseEvent(Event):
    """The model's reply (an interpretation, R-V3)."""

    type: ClassVar[Literal["model.response"]] = "model.response"
    message: dict[str, Any] | None = None
    """The assistant message (chat-completions dict, with `tool_calls`)."""
    usage: dict[str, Any] | None = None
    """Token usage (`prompt_tokens`, `completion_tokens`)."""
    finish_reason: str | None = None
    """The provider's finish reason."""
    model: str | None = None
    """The model that answered."""
    seconds: float | None = None
    """Wall time of the request, in seconds."""
    final: bool | None = None
    """True for the closing answer after a brake."""
    incomplete: bool | None = None
    """True when the run did not finish its task."""
    id_replacements: dict[str, str] | None = None
    """`{new tool-call id: id the model sent}` for replaced ids."""
    recovered_calls: list[str] | None = None
    """Ids of the tool calls recovered from the message text (no structured field); absent
    when every call came structured."""
    original_content: str | None = None
    """The text exactly as the model wrote it, when calls were recovered from it."""
    model_info: dict[str, Any] | None = None
    """The model's own description (`model.info`: a local server's `server_version`, the
    weights' `sha256`, its flags), on the first response of a log whose model has one."""


@frozen_dataclass(kw_only=True, repr=False)
class ModelRetryEvent(Event):
    """A failed or corrective model attempt that was retried."""

    type: ClassVar[Literal["model.retry"]] = "model.retry"
    context_event_id: int | None = None
    """The `context.injected` event of the request."""
    error: str | None = None
    """What went wrong."""


@frozen_dataclass(kw_only=True, repr=False)
class ModelSwitchEvent(Event):
    """A fallback chain switched models."""

    type: ClassVar[Literal["model.switch"]] = "model.switch"
    context_event_id: int | None = None
    """The `context.injected` event of the request."""
    old: str | None = None
    """The model switched from."""
    new: str | None = None
    """The model switched to."""
    reason: str | None = None
    """Why."""


@frozen_dataclass(kw_only=True, repr=False)
class ToolCallEvent(Event):
    """A tool call the model made (flushed before a write tool acts)."""

    type: ClassVar[Literal["tool.call"]] = "tool.call"
    tool: str | None = None
    """The tool's name."""
    tool_call_id: str | None = None
    """The call's id."""
    arguments: dict[str, Any] | None = None
    """The parsed arguments; `None` when they were not valid JSON."""
    raw_arguments: str | None = None
    """The argument text as sent, when it did not parse."""


@frozen_dataclass(kw_only=True, repr=False)
class ToolResultEvent(Event):
    """A tool's result (a fact, R-V3), matched to its call by `tool_call_id`."""

    type: ClassVar[Literal["tool.result"]] = "tool.result"
    tool: str | None = None
    """The tool's name."""
    tool_call_id: str | None = None
    """The call it answers."""
    ok: bool | None = None
    """False for a failure; `None` when not recorded (read as success)."""
    content: str | None = None
    """The JSON text sent to the model."""
    error_type: str | None = None
    """For failures: `unknown_tool`, `invalid_argument`, `timeout`, ..."""
    seconds: float | None = None
    """Wall time of the call, in seconds."""
    artifact: Any = None
    """The artifact id (or ref dict) the result was stored as, if externalized."""
    circuit_opened: bool | None = None
    """True when this failure disabled the tool (R-E3)."""
    outcome_unknown: bool | None = None
    """True when a write's outcome is unknown (R-E5)."""


@frozen_dataclass(kw_only=True, repr=False)
class ArtifactCreatedEvent(Event):
    """A tool result stored as an artifact (R-A1)."""

    type: ClassVar[Literal["artifact.created"]] = "artifact.created"
    artifact_id: str | None = field(default=None, metadata={"key": "id"})
    """The artifact's id (payload key `id`)."""
    sha256: str | None = None
    """sha256 of the stored text."""
    size_chars: int | None = None
    """Size of the stored text, in characters."""
    items: int | None = None
    """Item count of the top-level array, if any."""
    reason: str | None = None
    """Why it was externalized."""
    tool_call_id: str | None = None
    """The call whose result it holds."""


@frozen_dataclass(kw_only=True, repr=False)
class ContextInjectedEvent(Event):
    """How one prompt was assembled (R-C5); see `InjectionRecord`."""

    type: ClassVar[Literal["context.injected"]] = "context.injected"
    policy: str | None = None
    """The policy's name."""
    policy_version: str | None = None
    """The policy's version."""
    model: str | None = None
    """The target model."""
    n_selected: int | None = None
    """How many events were selected."""
    n_excluded: int | None = None
    """How many were excluded."""
    excluded: dict[str, str] | None = None
    """`{event id (str): reason}` in full, when not a delta."""
    delta_of: int | None = None
    """The record this one is a delta against."""
    excluded_new: dict[str, str] | None = None
    """Exclusions added since `delta_of`."""
    excluded_gone: list[int] | None = None
    """Exclusions lifted since `delta_of`."""
    selected: list[int] | None = None
    """Ids whose content was sent, in order, when written in full."""
    selected_of: int | None = None
    """The record whose selected ids this one's extend (schema v3): they are that list with
    `selected_cut` ids dropped from its front and `selected_new` appended."""
    selected_cut: int | None = None
    """How many of `selected_of`'s ids were dropped from the front."""
    selected_new: list[int] | None = None
    """Ids appended to `selected_of`'s list."""
    summarized: list[int] | None = None
    """Ids only named in the summary."""
    summary_hash: str | None = None
    """sha256 (16 hex) of the structured summary."""
    conflicts: list[dict[str, Any]] | None = None
    """Conflicting fact keys (see `detect_conflicts`)."""
    token_estimate: int | None = None
    """Estimated prompt tokens."""


@frozen_dataclass(kw_only=True, repr=False)
class AlertMismatchEvent(Event):
    """A model claim that differs from the system's truth (R-F1)."""

    type: ClassVar[Literal["alert.mismatch"]] = "alert.mismatch"
    tool: str | None = None
    """The tool that checked the claim."""
    field: str | None = None
    """What was claimed about."""
    claimed: Any = None
    """The model's value."""
    actual: Any = None
    """The system's value."""


@frozen_dataclass(kw_only=True, repr=False)
class AlertRepresentationEvent(Event):
    """A source in two forms in one prompt (R-A5)."""

    type: ClassVar[Literal["alert.representation"]] = "alert.representation"
    ref: str | None = None
    """The artifact ref."""
    forms: list[dict[str, Any]] | None = None
    """The two forms found."""
    message: str | None = None
    """What is wrong and what to do."""
    refused: bool | None = None
    """True when the prompt was refused."""


@frozen_dataclass(kw_only=True, repr=False)
class AlertConflictEvent(Event):
    """A refused status change or conflicting facts that paused the run."""

    type: ClassVar[Literal["alert.conflict"]] = "alert.conflict"
    target: Any = None
    """The event a refused status change was aimed at."""
    by: int | None = None
    """The event holding the refused evidence."""
    attempted: str | None = None
    """The status event type that was refused."""
    reason: str | None = None
    """Why."""
    rule: str | None = None
    """The rule that refused it."""
    conflicts: list[dict[str, Any]] | None = None
    """Conflicting fact keys that paused the run."""


@frozen_dataclass(kw_only=True, repr=False)
class BrakeEvent(Event):
    """A limit tripped (the run then closes normally)."""

    type: ClassVar[Literal["brake"]] = "brake"
    brake: str | None = None
    """The limit's name, e.g. `max_steps`."""
    value: float | None = None
    """The value reached, in `unit`."""
    limit: float | None = None
    """The limit, in `unit`."""
    unit: str | None = None
    """The unit, e.g. `steps`, `tokens`, `s`."""


@frozen_dataclass(kw_only=True, repr=False)
class CheckpointEvent(Event):
    """A checkpoint with a stage (R-V6)."""

    type: ClassVar[Literal["checkpoint"]] = "checkpoint"
    stage: str | None = None
    """One of `STAGES`."""
    note: str | None = None
    """What holds at this point."""


@frozen_dataclass(kw_only=True, repr=False)
class StatusSupersedeEvent(Event):
    """Marks earlier event(s) superseded (R-V2)."""

    type: ClassVar[Literal["status.supersede"]] = "status.supersede"
    target: int | list[int] | None = None
    """The event id (or ids) superseded."""
    reason: str | None = None
    """Why."""
    by: int | None = None
    """The event holding the new evidence."""


@frozen_dataclass(kw_only=True, repr=False)
class StatusRejectEvent(Event):
    """Marks earlier event(s) rejected (R-V2)."""

    type: ClassVar[Literal["status.reject"]] = "status.reject"
    target: int | list[int] | None = None
    """The event id (or ids) rejected."""
    reason: str | None = None
    """Why."""
    by: int | None = None
    """The event holding the evidence."""


@frozen_dataclass(kw_only=True, repr=False)
class StatusExpireEvent(Event):
    """Marks earlier event(s) expired (R-V2)."""

    type: ClassVar[Literal["status.expire"]] = "status.expire"
    target: int | list[int] | None = None
    """The event id (or ids) expired."""
    reason: str | None = None
    """Why."""
    by: int | None = None
    """The event holding the evidence."""


@frozen_dataclass(kw_only=True, repr=False)
class BranchForkEvent(Event):
    """A new branch, on the new branch, parented at the fork point (R-V5)."""

    type: ClassVar[Literal["branch.fork"]] = "branch.fork"
    name: str | None = None
    """The new branch's name."""
    from_event: int | None = None
    """The last event the branch inherits."""
    from_branch: str | None = None
    """The branch it was forked from."""
    reason: str | None = None
    """Why."""
    frozen: dict[str, Any] | None = None
    """The frozen start (revision, tools, permissions, policy)."""
    forked_branch: str | None = field(default=None, metadata={"key": "branch_id"})
    """The new branch, when named in the payload (key `branch_id`)."""


@frozen_dataclass(kw_only=True, repr=False)
class BranchMergeEvent(Event):
    """A branch's result brought back as an evidence package (R-V5)."""

    type: ClassVar[Literal["branch.merge"]] = "branch.merge"
    branch: str | None = None
    """The branch merged."""
    into: str | None = None
    """The receiving branch."""
    conclusion: str | None = None
    """The finding."""
    evidence: dict[str, Any] | None = None
    """The evidence package (see `Evidence`)."""
    reference_only: bool | None = None
    """True when evidence was missing or invalid: it changes no fact."""
    missing: list[str] | None = None
    """Evidence that was missing."""
    invalid: dict[str, str] | None = None
    """Evidence that did not hold up, with why."""
    replaces: list[int] | None = field(default=None, metadata={"key": "supersedes"})
    """Events on `into` the finding supersedes (payload key `supersedes`)."""
    branch_head: int | None = None
    """The branch's last event at the merge."""


@frozen_dataclass(kw_only=True, repr=False)
class RunResumeEvent(Event):
    """A run resumed after its checks (R-V6)."""

    type: ClassVar[Literal["run.resume"]] = "run.resume"
    checks: list[dict[str, Any]] | None = None
    """The resume checks and their verdicts."""
    pending: list[str] | None = None
    """Tool-call ids that had no result."""
    settled: list[str] | None = None
    """Idempotency keys settled."""
    torn_tail: bool | None = None
    """True when the log ended in a cut-off line."""
    from_step: int | None = None
    """The step resumed from."""
    frozen: dict[str, Any] | None = None
    """The frozen start of the resumed run."""


@frozen_dataclass(kw_only=True, repr=False)
class RunRestartEvent(Event):
    """A restart on a new branch, keeping the evidence (R-V6)."""

    type: ClassVar[Literal["run.restart"]] = "run.restart"
    from_branch: str | None = None
    """The branch restarted."""
    reason: str | None = None
    """Why."""
    evidence_head: int | None = None
    """The old branch's last event."""


@frozen_dataclass(kw_only=True, repr=False)
class RunFinishedEvent(Event):
    """The run stopped (a finish reason from AGENTS.md)."""

    type: ClassVar[Literal["run.finished"]] = "run.finished"
    finish_reason: str | None = None
    """`stop`, a brake name, `cancelled`, `paused` or `error`."""
    incomplete: bool | None = None
    """True when the task was not finished."""
    prompt_tokens: int | None = None
    """Prompt tokens used in the run."""
    completion_tokens: int | None = None
    """Completion tokens used in the run."""
    seconds: float | None = None
    """Wall time of the run, in seconds."""


@frozen_dataclass(kw_only=True, repr=False)
class TombstoneEvent(Event):
    """Revokes an event's content (R-S3)."""

    type: ClassVar[Literal["tombstone"]] = "tombstone"
    target: int | None = None
    """The event whose content is revoked."""
    reason: str | None = None
    """Why."""
    artifacts: list[Any] | None = None
    """Artifact ids revoked with it."""
    deleted: list[str] | None = None
    """Artifact ids whose bytes were deleted."""


AnyEvent = (
    TaskContractEvent
    | UserMessageEvent
    | HumanDecisionEvent
    | ModelRequestEvent
    | ModelResponseEvent
    | ModelRetryEvent
    | ModelSwitchEvent
    | ToolCallEvent
    | ToolResultEvent
    | ArtifactCreatedEvent
    | ContextInjectedEvent
    | AlertMismatchEvent
    | AlertRepresentationEvent
    | AlertConflictEvent
    | BrakeEvent
    | CheckpointEvent
    | StatusSupersedeEvent
    | StatusRejectEvent
    | StatusExpireEvent
    | BranchForkEvent
    | BranchMergeEvent
    | RunResumeEvent
    | RunRestartEvent
    | RunFinishedEvent
    | TombstoneEvent
)
"""Any event of the vocabulary: match on the class (`isinstance`, `match`)."""

#: The tag → class registry the codec uses.
EVENT_CLASSES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        TaskContractEvent,
        UserMessageEvent,
        HumanDecisionEvent,
        ModelRequestEvent,
        ModelResponseEvent,
        ModelRetryEvent,
        ModelSwitchEvent,
        ToolCallEvent,
        ToolResultEvent,
        ArtifactCreatedEvent,
        ContextInjectedEvent,
        AlertMismatchEvent,
        AlertRepresentationEvent,
        AlertConflictEvent,
        BrakeEvent,
        CheckpointEvent,
        StatusSupersedeEvent,
        StatusRejectEvent,
        StatusExpireEvent,
        BranchForkEvent,
        BranchMergeEvent,
        RunResumeEvent,
        RunRestartEvent,
        RunFinishedEvent,
        TombstoneEvent,
    )
}

EVENT_TYPES = frozenset(EVENT_CLASSES)
"""Every event type tag (DESIGN.md "Event vocabulary")."""
FACT_TYPES = frozenset(
    {"tool.result", "human.decision", "checkpoint", "user.message", "task.contract"}
)
"""Fact kinds (R-V3): tool results, human decisions, checks, user turns, the task."""
INTERPRETATION_TYPES = frozenset({"model.response"})
"""Interpretation kinds (R-V3): model plans and hypotheses."""
__all__ += sorted(cls.__name__ for cls in EVENT_CLASSES.values())


def _payload_keys(cls: type[Event]) -> tuple[tuple[str, str], ...]:
    skip = {*ENVELOPE, "extra", "_payload"}
    return tuple(
        (f.metadata.get("key", f.name), f.name)
        for f in dataclasses.fields(cls)
        if f.name not in skip
    )


def _maker(cls: type[Event]) -> Callable[..., Any]:
    """A constructor from (payload, envelope values in `ENVELOPE` order) for `cls`, fast.

    A frozen dataclass sets each field through `object.__setattr__`; this sets the envelope
    slots through their descriptors (several times faster) and keeps the payload dict as
    given, so it is written back byte for byte. The typed fields and `extra` are left unset:
    `Event.__getattr__` decodes each from the payload on its first read (most events of a long
    run are never read field by field, and a step must not pay for decoding them).
    """
    (s_id, s_parent, s_branch, s_source, s_created, s_revision, s_hash, s_status, s_summary,
     s_supersedes, s_class, s_v) = (getattr(cls, n).__set__ for n in ENVELOPE)  # fmt: skip
    s_payload = getattr(cls, "_payload").__set__  # noqa: B009 - the slot, not the field
    new = object.__new__

    def make(
        payload: dict[str, Any], event_id: int, parent_id: int | None, branch_id: str,
        source: str, created_at: str, workspace_revision: str | None, input_hash: str | None,
        status: str, summary: str, supersedes: int | None, data_class: str,
        v: int = SCHEMA_VERSION,
    ) -> Event:  # fmt: skip
        event = new(cls)
        s_id(event, event_id)
        s_parent(event, parent_id)
        s_branch(event, branch_id)
        s_source(event, source)
        s_created(event, created_at)
        s_revision(event, workspace_revision)
        s_hash(event, input_hash)
        s_status(event, status)
        s_summary(event, summary)
        s_supersedes(event, supersedes)
        s_class(event, data_class)
        s_v(event, v)
        s_payload(event, payload)  # typed fields and `extra` are read from it when first used
        return event

    return make


_ALL: tuple[type[Event], ...] = (Event, *EVENT_CLASSES.values())
for _cls in _ALL:
    _cls._KEYS = _payload_keys(_cls)
    _cls._ATTR_KEYS = {a: k for k, a in _cls._KEYS}
    _cls._KEYSET = frozenset(k for k, _ in _cls._KEYS)
_MAKERS: dict[str, Callable[..., AnyEvent]] = {t: _maker(c) for t, c in EVENT_CLASSES.items()}


def check_shape(data: dict[str, Any]) -> None:
    """Refuse a read line whose payload, or a field the run reads back, has the wrong type.

    Cheap type checks only (one per listed field), for `EventLog.read`: a hand-edited line
    fails here, naming the event, instead of as a raw error in resume, replay or `frame()`.

    Args:
        data: one decoded line.

    Raises:
        CorruptLogError: the payload is not an object, or a field in `_SHAPES` has another type.
    """
    payload = data.get("payload")
    if payload is None:
        if "payload" in data:  # `null`: the event's facts are gone (read as `{}`, they mislead)
            raise CorruptLogError(
                f"event {data.get('event_id')!r:.40} ({data.get('type')!s:.40}): its payload is "
                "null, not an object"
            )
        return
    if type(payload) is not dict:
        raise CorruptLogError(
            f"event {data.get('event_id')!r:.40}: its payload is a {type(payload).__name__}, "
            "not an object"
        )
    kind = data.get("type")
    step = payload.get("step")
    if step is not None and (type(step) is not int or not 0 <= step < _INT64):
        raise _bad_field(
            data,
            "'step'",
            f"{type(step).__name__} {step!r:.40}, not a step number (a whole number >= 0)",
        )
    checks = _SHAPES.get(kind)  # type: ignore[arg-type]
    if checks is not None:
        _check_types(data, payload, checks, "")
        for field, inner in _INNER.get(kind, ()):  # type: ignore[arg-type]
            if payload.get(field):  # an object, checked just above
                _check_types(data, payload[field], inner, f"{field}.")
        if kind == "model.response":
            usage = payload.get("usage")
            if usage:
                for key, _ in _USAGE:
                    value = usage.get(key)
                    if type(value) is int and not 0 <= value < _INT64:
                        raise _bad_field(
                            data,
                            f"'usage.{key}'",
                            f"{str(value)[:24]}, not a token count (0 to 2**63 - 1)",
                        )


def _check_types(
    data: dict[str, Any],
    obj: dict[str, Any],
    checks: tuple[tuple[str, tuple[type, ...]], ...],
    prefix: str,
) -> None:
    """Refuse a field of `obj` (the payload, or an object in it at `prefix`) of another type.

    Raises:
        CorruptLogError: naming the field (`'usage.prompt_tokens'`), its type (and a nested
            field's value).
    """
    for key, kinds in checks:
        value = obj.get(key)
        if value is not None and type(value) not in kinds:
            shown = f" {value!r:.40}" if prefix else ""  # a nested value: show it too
            raise _bad_field(
                data,
                f"'{prefix}{key}'",
                f"a {type(value).__name__}{shown}, not a {kinds[0].__name__}",
            )


def _bad_field(data: dict[str, Any], field: str, what: str) -> CorruptLogError:
    """The error for a read line whose payload `field` (quoted as shown) is `what`."""
    return CorruptLogError(
        f"event {data.get('event_id')!r:.40} ({data.get('type')!s:.40}): payload field "
        f"{field} is {what}"
    )


#: Counts and steps must fit the frame's 64-bit integer columns.
_INT64 = 2**63
#: The counts in a `model.response`'s `usage` that resume, replay and the frame add up.
_USAGE: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("prompt_tokens", (int,)),
    ("completion_tokens", (int,)),
    ("cached_tokens", (int,)),
    ("estimated", (bool,)),
)


#: Payload fields the run reads back (resume, replay, context) whose wrong type would surface
#: later as a raw `TypeError`; `Event.from_dict` refuses them as a `CorruptLogError` instead.
_SHAPES: dict[str, tuple[tuple[str, tuple[type, ...]], ...]] = {
    "user.message": (("content", (str,)),),
    "tool.call": (("arguments", (dict,)), ("tool_call_id", (str,)), ("tool", (str,))),
    "tool.result": (
        ("content", (str,)),
        ("tool_call_id", (str,)),
        ("tool", (str,)),
        ("ok", (bool,)),
    ),
    "model.response": (("message", (dict,)), ("usage", (dict,)), ("finish_reason", (str,))),
    "run.finished": (("finish_reason", (str,)),),
    "model.request": (("messages", (list,)), ("new_messages", (list,))),
    # the contract and the frozen starts resume, restart and replay compare and read back
    "task.contract": (
        ("run_id", (str,)),
        ("system_prompt", (str,)),
        ("model", (str,)),
        ("task", (dict,)),
        ("policy", (dict,)),
        ("tools", (dict,)),
        ("gate", (dict,)),
        ("limits", (dict,)),
        ("idempotency", (dict,)),
    ),
    "branch.fork": (("frozen", (dict,)),),
    "run.resume": (("frozen", (dict,)),),
    "run.restart": (("frozen", (dict,)),),
}

#: A frozen start (`frozen_start`): the contract's fields a fork, resume or restart records.
_FROZEN: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("tools", (dict,)),
    ("permissions", (dict,)),
    ("policy", (dict,)),
    ("workspace_revision", (str,)),
)

#: The text and calls of a `model.response`'s message, which later requests, resume, replay and
#: the transport audit read back as the assistant's turn.
_MESSAGE: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("role", (str,)),
    ("content", (str,)),
    ("tool_calls", (list,)),
)

#: `{type: ((payload field, its fields' checks), ...)}`: objects in the payload checked too.
_INNER: dict[str, tuple[tuple[str, tuple[tuple[str, tuple[type, ...]], ...]], ...]] = {
    "model.response": (("usage", _USAGE), ("message", _MESSAGE)),
    "branch.fork": (("frozen", _FROZEN),),
    "run.resume": (("frozen", _FROZEN),),
    "run.restart": (("frozen", _FROZEN),),
}


_PAYLOAD_SLOT = operator.attrgetter("_payload")


def payloads_of(events: Sequence[Event]) -> list[dict[str, Any]]:
    """Each event's `payload`, in order, reading the stored dicts in one C-level pass.

    Events read from a log or appended from a dict hold their payload already; the few built
    from fields and never read build theirs here, as `Event.payload` does.
    """
    payloads: list[dict[str, Any]] = list(map(_PAYLOAD_SLOT, events))
    if None in payloads:
        payloads = [
            p if p is not None else e.payload for p, e in zip(payloads, events, strict=True)
        ]
    return payloads


def event_class(type: str | type[Event]) -> type[Event]:
    """The class for an event type tag (or the class itself).

    Args:
        type: a tag such as `"tool.result"`, or an event class.

    Returns:
        The registered class (`Event` itself stands for every type).

    Raises:
        UsageError: an unknown tag; the message lists the valid ones.
    """
    if isinstance(type, str):
        cls = EVENT_CLASSES.get(type)
        if cls is None:
            raise UsageError(f"unknown event type {type!r}; use one of {sorted(EVENT_TYPES)}")
        return cls
    if isinstance(type, builtins.type) and issubclass(type, Event):
        return type
    raise UsageError(f"an event type is a tag string or an Event class, not {type!r}")


def make_event(
    type: str,
    payload: dict[str, Any] | None = None,
    *,
    event_id: int,
    parent_id: int | None = None,
    branch_id: str = "main",
    source: str = "system",
    created_at: str = "",
    workspace_revision: str | None = None,
    input_hash: str | None = None,
    status: str = "active",
    summary: str = "",
    supersedes: int | None = None,
    data_class: str = "internal",
    v: int = SCHEMA_VERSION,
) -> AnyEvent:
    """Build the event of `type` from a payload dict (the codec's and `EventLog.append`'s way).

    Args:
        type: the tag, one of `EVENT_TYPES`.
        payload: the payload; declared keys fill the typed fields, the rest `extra`. The
            dict is kept (not copied) as the event's `payload`.
        event_id: 1-based id.
        parent_id: the causal parent, or `None`.
        branch_id: the branch.
        source: who produced it.
        created_at: ISO 8601 UTC time.
        workspace_revision: the workspace revision, if known.
        input_hash: hash of the producing input.
        status: as written.
        summary: one line.
        supersedes: an event it replaces.
        data_class: the data class.
        v: schema version.

    Returns:
        An instance of the class registered for `type`.

    Raises:
        UsageError: an unknown type.
    """
    make = _MAKERS.get(type)
    if make is None:
        event_class(type)  # raises with the valid names
        raise AssertionError(type)  # unreachable: event_class raised
    return make(
        payload if payload is not None else {},
        event_id, parent_id, branch_id, source, created_at, workspace_revision, input_hash,
        status, summary, supersedes, data_class, v,
    )  # fmt: skip


def with_payload(event: Event, payload: dict[str, Any], **envelope: Any) -> AnyEvent:
    """A copy of `event` with another payload (and envelope fields), of the same class.

    Args:
        event: the event to copy.
        payload: the new payload; declared keys fill the typed fields, the rest `extra`.
        **envelope: envelope fields to change (names from `ENVELOPE`, e.g. `summary`).

    Returns:
        The new event; `event` is unchanged.

    Raises:
        UsageError: a name in `envelope` is not an envelope field.
    """
    bad = envelope.keys() - set(ENVELOPE)
    if bad:
        raise UsageError(f"not envelope fields: {sorted(bad)}; use names from {ENVELOPE}")
    values = [envelope[n] if n in envelope else getattr(event, n) for n in ENVELOPE]
    return _MAKERS[event.type](payload, *values)
