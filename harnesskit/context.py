"""Context building: which events become the prompt, under a policy that is data (R-C1–R-C8).

The builder turns the event log into the messages of the next request. It never calls a
model. Every assembly yields a `Prompt` whose selection (event ids included and excluded, with
reasons) the loop records as a `context.injected` event (R-C5).

The built-in `full-history` policy sends every message-bearing event of the branch in order,
built incrementally so each step costs the same however long the history is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harnesskit.errors import UsageError
from harnesskit.events import Event, EventLog
from harnesskit.messages import Message
from harnesskit.tokens import TokenEstimator
from harnesskit.trajectory import branch_filter

__all__ = ["ContextBuilder", "ContextPolicy", "Prompt", "event_to_message"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextPolicy:
    """A context policy as data: name, version and the rules the builder applies."""

    name: str = "full-history"
    """The policy's name, recorded in every `context.injected` event."""
    version: str = "1"
    """Its version, recorded likewise (resume checks it)."""
    spec: dict[str, Any] = field(default_factory=dict)
    """The full policy document (include, exclude, limits, require)."""

    @classmethod
    def resolve(cls, policy: str | dict[str, Any] | ContextPolicy | None) -> ContextPolicy:
        """Accept a policy name, a dict, or a `ContextPolicy`.

        Raises:
            UsageError: an unknown name or a malformed dict.
        """
        if policy is None:
            return cls()
        if isinstance(policy, ContextPolicy):
            return policy
        if isinstance(policy, str):
            if policy in ("full-history", "default"):
                return cls(name=policy, spec={"name": policy, "version": "1"})
            raise UsageError(f"unknown context policy {policy!r}; built in: 'full-history'")
        if isinstance(policy, dict):
            if "name" not in policy:
                raise UsageError("a context policy dict needs a 'name'")
            return cls(
                name=policy["name"], version=str(policy.get("version", "1")), spec=dict(policy)
            )
        raise UsageError(f"a policy is a name, dict or ContextPolicy, got {type(policy).__name__}")

    def to_dict(self) -> dict[str, Any]:
        """The policy document (with name and version)."""
        return {**self.spec, "name": self.name, "version": self.version}


@dataclass(frozen=True, slots=True, kw_only=True)
class Prompt:
    """One assembled prompt and the record of how it was made."""

    messages: tuple[Message, ...]
    """The messages to send, in order."""
    selected: tuple[int, ...]
    """Ids of the events whose content is in `messages`, in order."""
    excluded: dict[int, str] = field(default_factory=dict)
    """`{event_id: reason}` of message-bearing events left out."""
    token_estimate: int = 0
    """Estimated prompt tokens of `messages` (tool specs not included)."""
    summary_hash: str | None = None
    """Hash of the structured summary, when the policy made one."""


def event_to_message(event: Event) -> Message | None:
    """The chat message an event contributes to a prompt, or `None` for bookkeeping events."""
    p = event.payload
    t = event.type
    if t == "user.message":
        return Message(role="user", content=p.get("content", ""))
    if t == "model.response":
        return Message.from_openai(p["message"])
    if t == "tool.result":
        return Message(role="tool", content=p.get("content", ""), tool_call_id=p["tool_call_id"])
    if t == "task.contract":
        text = p.get("system_prompt")
        return Message(role="system", content=text) if text else None
    if t == "human.decision":
        return Message(
            role="user", content=f"[{event.label}] human decision: {json.dumps(p, default=str)}"
        )
    return None


class _BranchCache:
    __slots__ = ("index", "messages", "selected", "tokens", "tombstones", "visible")

    def __init__(self, log: EventLog, branch_id: str) -> None:
        self.visible = branch_filter(log, branch_id)  # its ancestors and itself, no sibling
        self.tombstones = log.tombstones  # a tombstone invalidates what was cached
        self.index = 0
        self.messages: list[Message] = []
        self.selected: list[int] = []
        self.tokens = 0


class ContextBuilder:
    """Builds prompts from an `EventLog` under a `ContextPolicy`.

    This core builder implements `full-history`: every message-bearing event of the branch,
    in causal order, processed incrementally (only events new since the last build are read).
    """

    def __init__(
        self,
        policy: ContextPolicy | str | dict[str, Any] | None = None,
        *,
        estimator: TokenEstimator | None = None,
    ) -> None:
        """Create a builder.

        Args:
            policy: the policy (name, dict or `ContextPolicy`); default `full-history`.
            estimator: token estimator for `Prompt.token_estimate`.

        Raises:
            UsageError: the policy is unknown or malformed.
        """
        self.policy = ContextPolicy.resolve(policy)
        self.estimator = estimator or TokenEstimator()
        self._cache: dict[str, _BranchCache] = {}

    def build(
        self, log: EventLog, *, branch_id: str = "main", extra: Sequence[Message] = ()
    ) -> Prompt:
        """Assemble the next prompt for `branch_id`.

        Args:
            log: the run's event log.
            branch_id: the branch whose view to build.
            extra: runtime messages appended at the end (e.g. a brake's closing instruction).

        Returns:
            The `Prompt`; its `messages` tuple extends the previous one when nothing was removed.
        """
        cache = self._cache.get(branch_id)
        if cache is None or cache.tombstones != log.tombstones:
            cache = self._cache[branch_id] = _BranchCache(log, branch_id)
        events = log.events
        for i in range(cache.index, len(events)):
            event = events[i]
            if not cache.visible(event):
                continue
            message = event_to_message(event)
            if message is not None:
                cache.messages.append(message)
                cache.selected.append(event.event_id)
                cache.tokens += self.estimator.count_message(message)
        cache.index = len(events)
        messages = tuple(cache.messages)
        tokens = cache.tokens + sum(self.estimator.count_message(m) for m in extra)
        return Prompt(
            messages=messages + tuple(extra), selected=tuple(cache.selected), token_estimate=tokens
        )
