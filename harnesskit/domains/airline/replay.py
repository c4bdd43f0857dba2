"""Replaying recorded τ-bench runs through the harness (R-V7) and scoring them like τ-bench.

A recorded run's assistant turns are fed, in order, by a `hk.ReplayModel` to a `hk.Harness`
whose tools are the airline tools in `tau_bench` mode over a fresh database; the simulated
user's turns become user messages between the steps. Everything is recorded as events:
requests, responses, tool calls and results, `alert.mismatch` checks. Afterwards the tool
results in the log are compared with the recorded outputs (each divergence named), and the
final database is scored.

Recorded quirks stay data: reused `tool_call` ids are replaced by the loop with fresh unique
ids (the original id is kept in the `model.response` event's `id_replacements`), and the
recorded outputs are matched to calls by position, never by id.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import harnesskit as hk
from harnesskit.domains.airline.data import AddressKey, load_database
from harnesskit.domains.airline.recompute import OutputDivergence, classify_divergence
from harnesskit.domains.airline.scoring import RewardResult, expected_state_hash, score
from harnesskit.domains.airline.tools import tools
from harnesskit.domains.airline.trajectories import STOP_MARKER, TERMINATING_TOOLS, RecordedRun

__all__ = ["ReplayResult", "replay_harness", "replay_run"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayResult:
    """One recorded run replayed through the harness and scored."""

    task_id: int
    """The run's task."""
    trial: int
    """The run's trial number."""
    recorded_reward: float
    """The reward the benchmark recorded."""
    result: RewardResult
    """The reward computed from the replayed run's events and final database."""
    log: hk.EventLog = field(repr=False, compare=False)
    """The run's event log (the run itself is not kept: it holds the whole database)."""
    finish_reason: str | None = None
    """The harness run's finish reason (`cancelled` when the recording simply ended)."""
    steps: int = 0
    """Model turns replayed."""
    tool_calls: int = 0
    """Tool calls executed."""
    divergences: tuple[OutputDivergence, ...] = ()
    """Tool results that differ from the recorded outputs."""
    mismatches: int = 0
    """`alert.mismatch` events logged (claims contradicting the database)."""
    replaced_call_ids: int = 0
    """Tool-call ids the loop replaced because the recording reused them."""
    seconds: float = 0.0
    """Wall-clock time of the replay, including scoring."""

    @property
    def agrees(self) -> bool:
        """The computed reward equals the recorded one."""
        return self.result.reward == self.recorded_reward


def replay_harness(
    run: RecordedRun,
    *,
    data_dir: str | Path | None = None,
    address_key: AddressKey = "state",
    log_dir: str | Path | None = None,
    redact: bool = True,
) -> tuple[hk.Harness, Any]:
    """Build the harness that replays `run`: tau_bench-mode tools over a fresh database.

    Args:
        run: the recorded run.
        data_dir: the database folder (`None`: the shipped one).
        address_key: `"province"` reproduces the data as recorded (see `load_database`).
        log_dir: folder for the JSONL event log; `None` keeps it in memory.
        redact: keep the harness's default secret redaction of events (e-mail addresses in
            user profiles become `[REDACTED:email]` in the log); False logs them verbatim.

    Returns:
        `(harness, db)`: the harness (its model is a `ReplayModel` of the recorded assistant
        turns) and the database its tools act on.
    """
    db = load_database(data_dir, address_key=address_key)
    turns = [
        {k: v for k, v in m.items() if k in ("content", "tool_calls")}
        for m in run.messages
        if m.get("role") == "assistant"
    ]
    system = next((m.get("content") or "" for m in run.messages if m.get("role") == "system"), "")
    harness = hk.Harness(
        tools=tools(db, mode="tau_bench"),
        model=hk.ReplayModel(turns, name="replay:gpt-4o"),
        limits=hk.Limits(max_steps=None, max_consecutive_errors=None),
        log_dir=log_dir,
        system_prompt=system,
        gate=hk.Gate(policy={"destructive": "allow"}),  # the recorded agent cancelled unasked
        redactor="default" if redact else None,
    )
    return harness, db


def replay_run(
    run: RecordedRun,
    *,
    data_dir: str | Path | None = None,
    address_key: AddressKey = "state",
    log_dir: str | Path | None = None,
    redact: bool = True,
) -> ReplayResult:
    """Replay one recorded run through the harness and score it like τ-bench.

    User turns before each assistant turn are sent as user messages; each assistant turn is
    one `run.step()`. When the recording ends the run is closed with `cancel()` (finish reason
    `cancelled`: the recording, not the model, ended it). The episode counts as completed when
    the log shows the user's stop marker or a transfer to a human, as in the benchmark.

    Args:
        run: the recorded run.
        data_dir: the database folder (`None`: the shipped one).
        address_key: `"province"` reproduces the data as recorded.
        log_dir: folder for the event log (`<run_id>.jsonl`); `None` keeps it in memory.
        redact: see `replay_harness`; recorded outputs are redacted the same way before they
            are compared with the logged results.

    Returns:
        The `ReplayResult`.
    """
    started = time.perf_counter()
    harness, db = replay_harness(
        run, data_dir=data_dir, address_key=address_key, log_dir=log_dir, redact=redact
    )
    conversation = [m for m in run.messages if m.get("role") in ("user", "assistant")]
    opening = []
    while conversation and conversation[0].get("role") == "user":
        opening.append(conversation.pop(0).get("content") or "")
    live = harness.start(
        opening,
        run_id=f"tau-airline-t{run.task_id:02d}-r{run.trial}",
        task={"benchmark": "tau-bench airline", "task_id": run.task_id, "trial": run.trial},
    )
    for message in conversation:
        if message.get("role") == "user":
            live.send(message.get("content") or "")
        else:
            live.step()
    if live.finish_reason is None:
        live.cancel()
        live.step()
    log = live.log
    results = log.of_type("tool.result")
    calls = log.of_type("tool.call")
    redactor = harness.redactor if not isinstance(harness.redactor, str) else None
    divergences = []
    for number, (recorded, event) in enumerate(zip(run.calls, results, strict=False)):
        content = event.payload.get("content")
        # the log holds results after redaction (R-S1): compare like with like
        expected = recorded.output
        if expected is not None and redactor is not None and redactor.needs(expected):
            expected = redactor.redact(expected)[0]
        if expected is not None and content != expected:
            divergences.append(
                OutputDivergence(
                    call_index=number,
                    call_id=recorded.call_id,
                    tool=recorded.name,
                    cause=_cause(expected, event.payload),
                    recorded=recorded.output,
                    recomputed=content,
                )
            )
    agent_texts = [
        e.payload["message"].get("content") or ""
        for e in log.of_type("model.response")
        if not e.payload["message"].get("tool_calls")
    ]
    completed = any(
        STOP_MARKER in (e.payload.get("content") or "") for e in log.of_type("user.message")
    ) or any(e.payload.get("tool") in TERMINATING_TOOLS for e in calls)
    result = score(
        final_hash=db.state_hash(),
        expected_hash=expected_state_hash(
            run.task.actions, data_dir=data_dir, address_key=address_key
        ),
        required_outputs=run.task.outputs,
        agent_texts=agent_texts,
        completed=completed,
    )
    replaced = sum(
        len(e.payload.get("id_replacements") or {}) for e in log.of_type("model.response")
    )
    return ReplayResult(
        task_id=run.task_id,
        trial=run.trial,
        recorded_reward=run.reward,
        result=result,
        log=log,
        finish_reason=live.finish_reason,
        steps=live.state.step,
        tool_calls=len(calls),
        divergences=tuple(divergences),
        mismatches=len(log.of_type("alert.mismatch")),
        replaced_call_ids=replaced,
        seconds=time.perf_counter() - started,
    )


def _cause(recorded: str, payload: Mapping[str, Any]) -> str:
    if not payload.get("ok", True):
        return f"harness refused the call ({payload.get('error_type')})"
    return classify_divergence(recorded, payload.get("content"))
