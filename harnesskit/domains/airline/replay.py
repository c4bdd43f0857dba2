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

import dataclasses
import json
import re
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

__all__ = [
    "REASON_RULES",
    "DerivedField",
    "ReplayResult",
    "derive_reason",
    "replay_harness",
    "replay_run",
]

#: How a strict replay derives `cancel_reservation`'s missing `reason` from what the user said
#: before the call: the first rule (in this order) whose words appear in a user turn (the
#: newest turn first) names the reason; no rule matches: `other`. Each is `(rule, reason,
#: regex)`.
REASON_RULES: tuple[tuple[str, str, str], ...] = (
    ("airline_cancelled", "airline_cancelled_flight",
     r"airline (?:has )?cancel+ed|cancel+ed by the airline|flight (?:was|got|has been) cancel+ed"),
    ("health", "health",
     r"\b(?:health|sick|ill|illness|medical|hospital|surgery|injur\w*|doctor|family emergency)\b"),
    ("weather", "weather", r"\b(?:weather|storm|hurricane|snow\w*|blizzard|typhoon)\b"),
    ("change_of_plan", "change_of_plan",
     r"change (?:of|in) (?:my )?plans?|plans? (?:have |has )?changed|no longer (?:need|going)"
     r"|(?:can't|cannot|won't) (?:make|go)|don't need"),
)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class DerivedField:
    """A field a strict tool needs that the recorded call lacked, derived from the chat."""

    call_index: int
    """The call's position among the run's recorded calls."""
    tool: str
    """The tool (`cancel_reservation`)."""
    field: str
    """The field filled in (`reason`)."""
    value: str
    """The value given."""
    rule: str
    """The `REASON_RULES` rule that decided, or `default` when none matched."""
    words: str | None
    """The user's words that matched, or `None`."""


def derive_reason(user_texts: list[str]) -> tuple[str, str, str | None]:
    """The cancellation reason the user gave, by `REASON_RULES`.

    Args:
        user_texts: the user's turns before the call, oldest first.

    Returns:
        `(reason, rule, words)`: e.g. `("health", "health", "sick")`; `("other", "default",
        None)` when no rule matches.
    """
    for text in reversed(user_texts):
        for rule, reason, rx in REASON_RULES:
            m = re.search(rx, text, re.IGNORECASE)
            if m:
                return reason, rule, m.group()
    return "other", "default", None


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
    mode: str = "tau_bench"
    """The tools' mode: `tau_bench` (as recorded) or `strict` (the policy enforced)."""
    derived: tuple[DerivedField, ...] = ()
    """Fields a strict tool needed that the recorded calls lacked, and how each was derived."""
    cancellations: tuple[tuple[str, bool], ...] = ()
    """Strict mode: `(deciding rule, allowed)` per `cancel_reservation` call, in order."""

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
    mode: str = "tau_bench",
) -> tuple[hk.Harness, Any]:
    """Build the harness that replays `run`: tau_bench-mode tools over a fresh database.

    Args:
        run: the recorded run.
        data_dir: the database folder (`None`: the shipped one).
        address_key: `"province"` reproduces the data as recorded (see `load_database`).
        log_dir: folder for the JSONL event log; `None` keeps it in memory.
        redact: keep the harness's default redaction of events: credentials are rewritten
            before anything is written, while personal data such as the e-mail addresses in
            user profiles is kept exact and the event marked with its kinds
            (`payload["personal_data"]`, R-S1); False turns the redactor off, so neither
            happens.
        mode: the tools' mode, `tau_bench` or `strict`.

    Returns:
        `(harness, db)`: the harness (its model is a `ReplayModel` of the recorded assistant
        turns) and the database its tools act on.
    """
    db = load_database(data_dir, address_key=address_key)
    turns = _turns(run, mode)[0]
    system = next((m.get("content") or "" for m in run.messages if m.get("role") == "system"), "")
    harness = hk.Harness(
        tools=tools(db, mode=mode),  # type: ignore[arg-type]
        model=hk.ReplayModel(turns, name="replay:gpt-4o"),
        limits=hk.Limits(max_steps=None, max_consecutive_errors=None),
        log_dir=log_dir,
        system_prompt=system,
        gate=hk.Gate(policy={"destructive": "allow"}),  # the recorded agent cancelled unasked
        redactor="default" if redact else None,
    )
    return harness, db


def _turns(run: RecordedRun, mode: str) -> tuple[list[dict[str, Any]], list[DerivedField]]:
    """The assistant turns to replay; in strict mode with derived `reason`s filled in."""
    turns: list[dict[str, Any]] = []
    derived: list[DerivedField] = []
    users: list[str] = []
    index = 0
    for m in run.messages:
        if m.get("role") == "user":
            users.append(m.get("content") or "")
        if m.get("role") != "assistant":
            continue
        turn = {k: v for k, v in m.items() if k in ("content", "tool_calls")}
        calls = []
        for call in turn.get("tool_calls") or ():
            fn = call.get("function") or {}
            if mode == "strict" and fn.get("name") == "cancel_reservation":
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except json.JSONDecodeError:
                    args = None
                if isinstance(args, dict) and not args.get("reason"):
                    reason, rule, words = derive_reason(users)
                    args["reason"] = reason
                    derived.append(
                        DerivedField(
                            call_index=index,
                            tool="cancel_reservation",
                            field="reason",
                            value=reason,
                            rule=rule,
                            words=words,
                        )
                    )
                    fn = {**fn, "arguments": json.dumps(args)}
                    call = {**call, "function": fn}
            calls.append(call)
            index += 1
        if calls:
            turn["tool_calls"] = calls
        turns.append(turn)
    return turns, derived


def _decisions(harness: hk.Harness, db: Any, out: list[tuple[str, bool]]) -> None:
    """Wrap strict `cancel_reservation` to record the deciding rule of each call."""
    from harnesskit.domains.airline import truth

    tool = harness.tools.get("cancel_reservation")
    if tool is None:
        return
    inner = tool.fn

    def fn(*args: Any, **kwargs: Any) -> Any:
        rid = kwargs.get("reservation_id")
        facts = truth.cancellation_facts(db, str(rid), now=truth.benchmark_clock())
        if facts is not None:
            decision = truth.decide_cancellation(facts, kwargs.get("reason"))
            out.append((decision.rule, decision.allowed))
        else:
            out.append(("not_found", False))
        return inner(*args, **kwargs)

    harness.tools = hk.ToolRegistry(
        dataclasses.replace(t, fn=fn) if t.name == "cancel_reservation" else t
        for t in harness.tools
    )


def replay_run(
    run: RecordedRun,
    *,
    data_dir: str | Path | None = None,
    address_key: AddressKey = "state",
    log_dir: str | Path | None = None,
    redact: bool = True,
    mode: str = "tau_bench",
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
        mode: `tau_bench` replays as recorded; `strict` runs the strict tools, filling a
            `reason` the recorded `cancel_reservation` call lacks from the user's words by
            `REASON_RULES` (each in `ReplayResult.derived`) and recording each cancellation's
            deciding rule (`ReplayResult.cancellations`).

    Returns:
        The `ReplayResult`.
    """
    started = time.perf_counter()
    harness, db = replay_harness(
        run, data_dir=data_dir, address_key=address_key, log_dir=log_dir, redact=redact, mode=mode
    )
    derived = _turns(run, mode)[1]
    decided: list[tuple[str, bool]] = []
    if mode == "strict":
        _decisions(harness, db, decided)
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
            if live.finish_reason not in (None, "stop", "length", "paused"):
                break  # the live run ended for good (a transfer, an error): it takes no turn
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
        if event.payload.get("artifact"):  # stored as an artifact (R-A1): compare the whole
            content = live.transport.store.read(event.payload["artifact"])
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
                    cause=_cause(expected, {**event.payload, "content": content}),
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
        mode=mode,
        derived=tuple(derived),
        cancellations=tuple(decided),
    )


def _cause(recorded: str, payload: Mapping[str, Any]) -> str:
    if not payload.get("ok", True):
        return f"harness refused the call ({payload.get('error_type')})"
    return classify_divergence(recorded, payload.get("content"))
