"""Recomputing recorded runs without a harness: execute each recorded tool call on a fresh DB.

This is the fast, harness-free check of the domain layer: every recorded assistant tool call
is dispatched in order against a private database, each recomputed output is compared with the
recorded one, and the final state is scored like τ-bench. (The harness replay, which records
events, is `replay.py`.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harnesskit.domains.airline.data import AddressKey, load_database
from harnesskit.domains.airline.ops import dispatch
from harnesskit.domains.airline.scoring import RewardResult, expected_state_hash, score
from harnesskit.domains.airline.trajectories import RecordedRun

__all__ = ["OutputDivergence", "Recomputation", "classify_divergence", "recompute_run"]


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputDivergence:
    """A tool output that differs between the recording and the recomputation."""

    call_index: int
    """Position of the call among the run's tool calls (0-based)."""
    call_id: str
    """The recorded tool-call id."""
    tool: str
    """The tool name."""
    cause: str
    """Why they differ, as far as it can be told (see `classify_divergence`)."""
    recorded: str | None
    """The recorded output."""
    recomputed: str | None
    """The output computed now."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Recomputation:
    """The result of recomputing one recorded run."""

    task_id: int
    """The run's task."""
    trial: int
    """The run's trial number."""
    recorded_reward: float
    """The reward the benchmark recorded."""
    result: RewardResult
    """The reward computed now, with its reasons."""
    tool_calls: int
    """How many tool calls were executed."""
    divergences: tuple[OutputDivergence, ...] = field(default=())
    """Recorded outputs that the recomputation did not reproduce."""
    reused_call_ids: tuple[str, ...] = ()
    """Tool-call ids the recording used for more than one call."""

    @property
    def agrees(self) -> bool:
        """The computed reward equals the recorded reward."""
        return self.result.reward == self.recorded_reward


_ADDRESS_RENAME = "address field renamed (province -> state) after the recording"


def classify_divergence(recorded: str | None, recomputed: str | None) -> str:
    """Name the likely cause of a difference between two outputs of the same tool call.

    Args:
        recorded: the output in the recording.
        recomputed: the output computed now.

    Returns:
        `"address field renamed (province -> state) after the recording"` when the outputs are
        equal once user addresses use the same key; otherwise `"output differs"`.
    """
    if recorded is not None and recomputed is not None:
        try:
            old, new = json.loads(recorded), json.loads(recomputed)
        except json.JSONDecodeError:
            return "output differs"
        if _normalise_addresses(old) == _normalise_addresses(new):
            return _ADDRESS_RENAME
    return "output differs"


def _normalise_addresses(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            ("state" if key == "province" else key): _normalise_addresses(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_normalise_addresses(item) for item in value]
    return value


def recompute_run(
    run: RecordedRun,
    *,
    data_dir: str | Path | None = None,
    address_key: AddressKey = "state",
) -> Recomputation:
    """Execute a recorded run's tool calls on a fresh database and score the outcome.

    Args:
        run: the recorded run.
        data_dir: the database folder (`None`: the shipped one).
        address_key: `"province"` reproduces the data as recorded (see `load_database`).

    Returns:
        The `Recomputation`: computed reward and every output divergence.
    """
    db = load_database(data_dir, address_key=address_key)
    divergences = []
    for number, call in enumerate(run.calls):
        if call.arguments is None:
            output: str | None = f"Error: arguments of {call.name} are not a JSON object"
        else:
            output = dispatch(db, call.name, call.arguments)
        if call.output is not None and output != call.output:
            divergences.append(
                OutputDivergence(
                    call_index=number,
                    call_id=call.call_id,
                    tool=call.name,
                    cause=classify_divergence(call.output, output),
                    recorded=call.output,
                    recomputed=output,
                )
            )
    expected = expected_state_hash(run.task.actions, data_dir=data_dir, address_key=address_key)
    result = score(
        final_hash=db.state_hash(),
        expected_hash=expected,
        required_outputs=run.task.outputs,
        agent_texts=run.agent_texts,
        completed=run.completed,
    )
    return Recomputation(
        task_id=run.task_id,
        trial=run.trial,
        recorded_reward=run.reward,
        result=result,
        tool_calls=len(run.calls),
        divergences=tuple(divergences),
        reused_call_ids=run.reused_call_ids,
    )


def recompute_all(
    runs: Iterable[RecordedRun],
    *,
    data_dir: str | Path | None = None,
    address_key: AddressKey = "state",
) -> list[Recomputation]:
    """`recompute_run` for each run, in order."""
    return [recompute_run(r, data_dir=data_dir, address_key=address_key) for r in runs]
