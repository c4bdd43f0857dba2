"""Reading τ-bench's recorded airline runs (`historical_trajectories/gpt-4o-airline.json`).

The file is a JSON list; each record holds `task_id`, `trial`, the recorded `reward`, `info`
(with the task: user id, instruction, expected `actions`, required `outputs`; and, for runs that
finished, `reward_info`) and `traj`, the chat in OpenAI chat-completions format (system policy,
user and assistant turns, assistant tool calls and tool outputs).

Quirks are kept as data, never "fixed": some runs reuse one `tool_call` id for different calls
(`RecordedRun.reused_call_ids`), and runs cut off by the step limit have no `reward_info`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import harnesskit as hk

__all__ = [
    "STOP_MARKER",
    "TERMINATING_TOOLS",
    "ExpectedAction",
    "RecordedCall",
    "RecordedRun",
    "Task",
    "load_recorded_runs",
]

#: The text a simulated user sends to end the conversation.
STOP_MARKER = "###STOP###"
#: Tools whose call ends the episode (and that the ground truth does not replay).
TERMINATING_TOOLS = frozenset({"transfer_to_human_agents"})


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectedAction:
    """One tool call of a task's reference solution."""

    name: str
    """The tool name."""
    kwargs: Mapping[str, Any]
    """Its arguments, as JSON values."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """A benchmark task: who the simulated user is, and what counts as solved."""

    user_id: str
    """The simulated user's id in the database."""
    instruction: str
    """The simulated user's instruction (hidden from the agent)."""
    actions: tuple[ExpectedAction, ...] = ()
    """The reference solution; applying it to a fresh database gives the expected state."""
    outputs: tuple[str, ...] = ()
    """Strings the agent must say (matched case-insensitively with commas removed)."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Task:
        """Build a task from the `info.task` object of a recorded run."""
        return cls(
            user_id=str(data.get("user_id", "")),
            instruction=str(data.get("instruction", "")),
            actions=tuple(
                ExpectedAction(name=a["name"], kwargs=dict(a.get("kwargs") or {}))
                for a in data.get("actions") or ()
            ),
            outputs=tuple(str(o) for o in data.get("outputs") or ()),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedCall:
    """One tool call of a recorded run and the output recorded for it."""

    index: int
    """Position of the calling assistant message in `RecordedRun.messages`."""
    call_id: str
    """The recorded `tool_call` id (not unique in every run)."""
    name: str
    """The tool name."""
    raw_arguments: str
    """The argument text as the model wrote it."""
    arguments: Mapping[str, Any] | None
    """Parsed arguments, or `None` when the text was not a JSON object."""
    output: str | None
    """The recorded tool output (matched by position), or `None` when the run stopped first."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRun:
    """One recorded conversation of the benchmark, with its task and recorded reward."""

    task_id: int
    """The task's index in the benchmark's test split (0-49 for airline)."""
    trial: int
    """Which repetition of the task this is (0-based)."""
    reward: float
    """The reward the benchmark recorded (0.0 or 1.0)."""
    task: Task
    """The task definition stored with the run."""
    messages: tuple[Mapping[str, Any], ...]
    """The chat, as chat-completions message dicts, exactly as recorded."""
    reward_info: Mapping[str, Any] | None = None
    """The benchmark's reward details; `None` for runs stopped by the step limit."""
    calls: tuple[RecordedCall, ...] = field(default=())
    """Every assistant tool call with its recorded output, in order."""

    @property
    def key(self) -> str:
        """A short label such as `"task 7 / trial 2"`."""
        return f"task {self.task_id} / trial {self.trial}"

    @property
    def agent_texts(self) -> tuple[str, ...]:
        """What the agent said to the user: assistant contents of turns without tool calls."""
        return tuple(
            m.get("content") or ""
            for m in self.messages
            if m.get("role") == "assistant" and not m.get("tool_calls")
        )

    @property
    def user_texts(self) -> tuple[str, ...]:
        """What the simulated user said, in order."""
        return tuple(m.get("content") or "" for m in self.messages if m.get("role") == "user")

    @property
    def completed(self) -> bool:
        """True when the episode ended normally (user stop marker or a transfer to a human).

        The benchmark only computes a reward for such runs; a run cut off by the step limit
        scores 0 whatever its database looks like.
        """
        return any(STOP_MARKER in t for t in self.user_texts) or any(
            c.name in TERMINATING_TOOLS for c in self.calls
        )

    @property
    def reused_call_ids(self) -> tuple[str, ...]:
        """Tool-call ids that this run used for more than one call (sorted)."""
        counts = Counter(c.call_id for c in self.calls)
        return tuple(sorted(i for i, n in counts.items() if n > 1))

    def __repr__(self) -> str:
        return (
            f"RecordedRun(task_id={self.task_id}, trial={self.trial}, reward={self.reward}, "
            f"messages={len(self.messages)}, calls={len(self.calls)})"
        )


def _calls(messages: Sequence[Mapping[str, Any]]) -> tuple[RecordedCall, ...]:
    """Pair each tool call with the tool message that follows it (by position, not by id)."""
    calls = []
    for index, message in enumerate(messages):
        requested = message.get("tool_calls") or []
        if message.get("role") != "assistant" or not requested:
            continue
        outputs = []
        for later in messages[index + 1 :]:
            if later.get("role") != "tool":
                break
            outputs.append(later.get("content"))
        for position, call in enumerate(requested):
            fn = call.get("function") or {}
            raw = fn.get("arguments")
            text = raw if isinstance(raw, str) else json.dumps(raw or {})
            try:
                parsed = json.loads(text) if text.strip() else {}
            except (RecursionError, ValueError):  # not JSON, too deep, an int too long
                parsed = None
            calls.append(
                RecordedCall(
                    index=index,
                    call_id=str(call.get("id") or ""),
                    name=str(fn.get("name") or ""),
                    raw_arguments=text,
                    arguments=parsed if isinstance(parsed, dict) else None,
                    output=outputs[position] if position < len(outputs) else None,
                )
            )
    return tuple(calls)


def load_recorded_runs(path: str | Path, *, limit: int | None = None) -> list[RecordedRun]:
    """Load recorded runs from a τ-bench historical trajectory file.

    Args:
        path: the JSON file (a list of run records).
        limit: keep only the first `limit` records (`None` keeps all).

    Returns:
        One `RecordedRun` per record, in file order.

    Raises:
        UsageError: the file is missing or is not a list of run records.
    """
    file = Path(path)
    if not file.is_file():
        raise hk.UsageError(f"recorded runs file not found: {file}")
    if limit is not None and limit < 1:
        raise hk.UsageError(f"limit must be a positive number of runs, got {limit}")
    records = hk.errors.load_file_json(
        file.read_bytes(),
        str(file),
        fix="not a JSON trajectory file (one JSON list of tau-bench run records)",
    )
    if not isinstance(records, list):
        raise hk.UsageError(f"{file} must hold a JSON list of runs, got {type(records).__name__}")
    if not records:
        raise hk.UsageError(f"{file} holds no runs (an empty list); nothing to replay")
    runs = []
    for number, record in enumerate(records[:limit] if limit is not None else records):
        try:
            info = record.get("info") or {}
            messages = tuple(record["traj"])
            runs.append(
                RecordedRun(
                    task_id=int(record["task_id"]),
                    trial=int(record.get("trial", 0)),
                    reward=float(record.get("reward") or 0.0),
                    task=Task.from_dict(info.get("task") or {}),
                    messages=messages,
                    reward_info=info.get("reward_info"),
                    calls=_calls(messages),
                )
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise hk.UsageError(
                f"{file}: record {number} is not a τ-bench run record ({exc!r}); expected "
                "task_id, trial, reward, info.task and traj"
            ) from exc
    return runs
