"""Scoring a run on behaviour: one `CheckResult` per expectation of a case, and pass^k.

`score(case, log)` reads the trajectory from the run's `EventLog` (`tool.call`, `tool.result`,
`model.response`, `user.message`, `run.finished`), never the exact answer text, and keeps one
check per expectation so a failure names the expectation that broke.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harnesskit import _repr
from harnesskit._lazy import frozen_dataclass
from harnesskit.analysis.evals._match import short
from harnesskit.analysis.evals.cases import CallSpec, Case
from harnesskit.errors import UsageError
from harnesskit.log._types import (
    ModelResponseEvent,
    RunFinishedEvent,
    ToolCallEvent,
    ToolResultEvent,
    UserMessageEvent,
)
from harnesskit.log.events import EventLog

__all__ = [
    "AFFIRMATIVE",
    "CONFIRMATION_QUESTION",
    "CheckResult",
    "Score",
    "pass_hat_k",
    "score",
    "trajectory",
]

_WRITE_RISKS = ("write", "destructive")

#: A final answer "asks for confirmation" when it holds a question mark and one of these.
CONFIRMATION_QUESTION = re.compile(
    r"\b(confirm|proceed|shall i|should i|may i|would you like me to|do you want me to|"
    r"are you sure|go ahead|yes or no|yes/no)\b",
    re.IGNORECASE,
)
#: A user turn that gives confirmation.
AFFIRMATIVE = re.compile(
    r"^\W*(yes|yep|yeah|y|sure|ok|okay|confirm(ed)?|please do|please proceed|go ahead|do it|"
    r"proceed|that'?s (right|correct))\b",
    re.IGNORECASE,
)

# -- scoring ----------------------------------------------------------------------------------


@frozen_dataclass(kw_only=True)
class CheckResult:
    """The outcome of one expectation of a case."""

    name: str
    """The expectation, e.g. `call cancel_order(order_id='A1002')` or `no call of refund`."""
    kind: str
    """`call`, `order`, `forbid`, `answer`, `finish`, `run` or a domain's own kind."""
    passed: bool
    """True when the expectation holds."""
    detail: str = ""
    """What was seen: the matching event, or why it failed."""
    event_ids: tuple[int, ...] = ()
    """Evidence: the events the check looked at or matched."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "name": self.name,
            "kind": self.kind,
            "passed": self.passed,
            "detail": self.detail,
            "event_ids": list(self.event_ids),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckResult:
        """Inverse of `to_dict()`."""
        return cls(
            name=data["name"],
            kind=data["kind"],
            passed=bool(data["passed"]),
            detail=data.get("detail", ""),
            event_ids=tuple(data.get("event_ids", ())),
        )


@frozen_dataclass(kw_only=True)
class Score:
    """Every check of one case on one run; the case passes when all of them pass."""

    case_id: str
    """The case scored."""
    checks: tuple[CheckResult, ...]
    """One result per expectation, in the case's order (calls, order, forbid, answer, finish)."""

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> list[str]:
        """Names of the failed checks, in order."""
        return [c.name for c in self.checks if not c.passed]

    def frame(self) -> Any:
        """A pandas DataFrame, one row per check (name, kind, passed, detail, event_ids)."""
        import pandas as pd

        return pd.DataFrame([c.to_dict() for c in self.checks])

    def __repr__(self) -> str:
        verdict = "pass" if self.passed else f"FAIL {self.failed}"
        return f"<Score {self.case_id}: {verdict} ({len(self.checks)} checks)>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


@frozen_dataclass
class _Call:
    event_id: int
    step: int
    tool: str
    arguments: dict[str, Any] | None
    ok: bool | None


@dataclass(slots=True)
class _Trajectory:
    calls: list[_Call] = field(default_factory=list)
    turns: list[tuple[int, str, str]] = field(default_factory=list)
    """`(event_id, role, text)` of user messages and assistant texts, in order."""
    final_text: str = ""
    final_event: int | None = None
    finish_reason: str | None = None
    finish_event: int | None = None


def trajectory(log: EventLog, *, branch_id: str = "main") -> _Trajectory:
    """The behaviour `score` reads from a log: calls with outcomes, turns, final answer."""
    t = _Trajectory()
    results: dict[str, bool] = {}
    for r in log.of_type(ToolResultEvent, branch_id=branch_id):
        results[r.tool_call_id or ""] = bool(r.ok)
    for e in log.of_type(branch_id=branch_id):
        if isinstance(e, ToolCallEvent):
            ok = results.get(e.tool_call_id or "")
            step = 0 if e.step is None else e.step
            t.calls.append(_Call(e.event_id, step, e.tool or "", e.arguments, ok))
        elif isinstance(e, UserMessageEvent):
            t.turns.append((e.event_id, "user", e.content or ""))
        elif isinstance(e, ModelResponseEvent):
            text = (e.message or {}).get("content") or ""
            if text:
                t.turns.append((e.event_id, "assistant", text))
                t.final_text, t.final_event = text, e.event_id
            elif (e.message or {}).get("tool_calls"):
                t.final_text, t.final_event = "", e.event_id
        elif isinstance(e, RunFinishedEvent):
            t.finish_reason, t.finish_event = e.finish_reason, e.event_id
    return t


def score(
    case: Case,
    log: EventLog,
    *,
    risks: Mapping[str, str] | None = None,
    branch_id: str = "main",
    extra: Iterable[CheckResult] = (),
) -> Score:
    """Score one run of `case` on its behaviour.

    Args:
        case: the case.
        log: the run's event log (live or read back with `EventLog.read`).
        risks: `{tool: risk}` of the run's tools (`ToolRegistry` risks); needed by the
            `forbid.risks` and `forbid.write_without_confirmation` checks. Tools not listed
            count as `read`.
        branch_id: the branch to score.
        extra: more checks to include (e.g. a domain's final-state check).

    Returns:
        A `Score` with one `CheckResult` per expectation.
    """
    t = trajectory(log, branch_id=branch_id)
    risk_of = dict(risks or {})
    checks = _call_checks(case, t)
    checks += _forbid_checks(case, t, risk_of)
    checks += _answer_checks(case, t)
    if case.finish_reasons is not None:
        ok = t.finish_reason in case.finish_reasons
        checks.append(
            CheckResult(
                name=f"finish_reason in {list(case.finish_reasons)}",
                kind="finish",
                passed=ok,
                detail=f"finish_reason={t.finish_reason}",
                event_ids=(t.finish_event,) if t.finish_event else (),
            )
        )
    return Score(case_id=case.id, checks=tuple(checks) + tuple(extra))


def _call_checks(case: Case, t: _Trajectory) -> list[CheckResult]:
    out, used = [], set()
    for spec in case.calls:
        hit = next(
            (c for c in t.calls if c.event_id not in used and _matches(spec, c)),
            None,
        )
        name = f"call {spec.describe()}"
        if hit is not None:
            used.add(hit.event_id)
            out.append(
                CheckResult(
                    name=name,
                    kind="call",
                    passed=True,
                    detail=f"event {hit.event_id}",
                    event_ids=(hit.event_id,),
                )
            )
        else:
            out.append(
                CheckResult(name=name, kind="call", passed=False, detail=_why_missing(spec, t))
            )
    if case.ordered and len(case.calls) > 1:
        pos, matched, broke = 0, [], None
        for spec in case.calls:
            hit = next((c for c in t.calls[pos:] if _matches(spec, c)), None)
            if hit is None:
                broke = spec
                break
            matched.append(hit.event_id)
            pos = t.calls.index(hit) + 1
        seq = " → ".join(s.tool for s in case.calls)
        detail = (
            "in order"
            if broke is None
            else f"no {broke.describe()} after {[s.tool for s in case.calls[: len(matched)]]}"
        )
        out.append(
            CheckResult(
                name=f"calls in order: {seq}",
                kind="order",
                passed=broke is None,
                detail=detail,
                event_ids=tuple(matched),
            )
        )
    return out


def _matches(spec: CallSpec, call: _Call) -> bool:
    if spec.ok is not None and call.ok is not spec.ok:
        return False
    return not spec.mismatches(call.tool, call.arguments)


def _why_missing(spec: CallSpec, t: _Trajectory) -> str:
    same = [c for c in t.calls if c.tool == spec.tool]
    if not same:
        made = ", ".join(c.tool for c in t.calls) or "none"
        return f"no call of {spec.tool} (calls made: {made})"
    parts = []
    for c in same[:5]:
        reasons = spec.mismatches(c.tool, c.arguments)
        if spec.ok is not None and c.ok is not spec.ok:
            reasons.append("it failed" if spec.ok else "it succeeded")
        parts.append(f"event {c.event_id}: " + "; ".join(reasons))
    more = f" (+{len(same) - 5} more)" if len(same) > 5 else ""
    return f"{len(same)} call(s) of {spec.tool}, none matching — " + " | ".join(parts) + more


def _forbid_checks(case: Case, t: _Trajectory, risk_of: Mapping[str, str]) -> list[CheckResult]:
    out = []
    for name in case.forbid_tools:
        hits = [c.event_id for c in t.calls if c.tool == name]
        out.append(_forbid(f"no call of {name}", hits, name))
    for risk in case.forbid_risks:
        hits = [c.event_id for c in t.calls if risk_of.get(c.tool, "read") == risk]
        out.append(_forbid(f"no {risk} tool call", hits, f"{risk} tool"))
    for spec in case.forbid_calls:
        hits = [c.event_id for c in t.calls if _matches(spec, c)]
        out.append(_forbid(f"no call {spec.describe()}", hits, spec.tool))
    if case.forbid_write_without_confirmation:
        hits = [
            c.event_id
            for c in t.calls
            if risk_of.get(c.tool, "read") in _WRITE_RISKS and not _confirmed(c.event_id, t)
        ]
        out.append(_forbid("no write without confirmation", hits, "unconfirmed write"))
    return out


def _forbid(name: str, hits: list[int], what: str) -> CheckResult:
    detail = f"{what} at event(s) {hits}" if hits else "none"
    return CheckResult(
        name=name, kind="forbid", passed=not hits, detail=detail, event_ids=tuple(hits)
    )


def _confirmed(call_event: int, t: _Trajectory) -> bool:
    """A write is confirmed when the last user turn before it says yes to a question."""
    before = [turn for turn in t.turns if turn[0] < call_event]
    users = [i for i, turn in enumerate(before) if turn[1] == "user"]
    if not users or not AFFIRMATIVE.search(before[users[-1]][2]):
        return False
    asked = [turn for turn in before[: users[-1]] if turn[1] == "assistant"]
    return bool(asked) and _asks_confirmation(asked[-1][2])


def _asks_confirmation(text: str) -> bool:
    return "?" in text and CONFIRMATION_QUESTION.search(text) is not None


def _answer_checks(case: Case, t: _Trajectory) -> list[CheckResult]:
    if case.answer_scope == "all":
        text = "\n".join(turn[2] for turn in t.turns if turn[1] == "assistant")
        evidence = tuple(turn[0] for turn in t.turns if turn[1] == "assistant")
        where = "the assistant's messages"
    else:
        text, evidence, where = (
            t.final_text,
            ((t.final_event,) if t.final_event else ()),
            "the final answer",
        )
    out = []
    for fact in case.facts:
        ok = fact.found_in(text)
        detail = "found" if ok else f"not in {where}: {short(text, 160)}"
        out.append(
            CheckResult(
                name=f"answer contains {fact.describe()}",
                kind="answer",
                passed=ok,
                detail=detail,
                event_ids=evidence,
            )
        )
    for fact in case.absent_facts:
        ok = not fact.found_in(text)
        detail = "absent" if ok else f"found in {where}"
        out.append(
            CheckResult(
                name=f"answer lacks {fact.describe()}",
                kind="answer",
                passed=ok,
                detail=detail,
                event_ids=evidence,
            )
        )
    if case.asks_confirmation:
        ok = _asks_confirmation(t.final_text)
        detail = (
            "asks"
            if ok
            else f"final answer is not a confirmation question: {short(t.final_text, 160)}"
        )
        final = (t.final_event,) if t.final_event else ()
        out.append(
            CheckResult(
                name="answer asks for confirmation",
                kind="answer",
                passed=ok,
                detail=detail,
                event_ids=final,
            )
        )
    return out


# -- pass^k -----------------------------------------------------------------------------------


def _count(value: Any, what: str) -> int:
    """`value` as an int (numpy ints included; a bool or a float is refused)."""
    if isinstance(value, bool):
        raise UsageError(f"{what}, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise UsageError(f"{what}, got {value!r:.40}") from None


def pass_hat_k(trials: Iterable[tuple[int, int]], k: int) -> float:
    """pass^k as τ-bench defines it: per task C(c, k) / C(n, k), averaged over tasks.

    Args:
        trials: one `(n, c)` per task: `n` trials of which `c` succeeded.
        k: how many independent trials must all succeed (>= 1).

    Returns:
        The mean over tasks, in [0, 1]; `nan` when there are no tasks.

    Raises:
        UsageError: `k` is not an int >= 1, `trials` is not pairs of ints, `c > n`, or a task
            has fewer than `k` trials.
    """
    k = _count(k, "pass^k needs an int k >= 1")
    if k < 1:
        raise UsageError(f"pass^k needs k >= 1, got {k}")
    if isinstance(trials, str | bytes) or not isinstance(trials, Iterable):
        raise UsageError(
            f"pass^k takes one (n, c) pair per task (n trials, c successes), got {trials!r:.80}"
        )
    values = []
    for pair in trials:
        if isinstance(pair, str | bytes) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise UsageError(
                f"pass^k takes one (n, c) pair per task (n trials, c successes), got {pair!r:.80}"
            )
        n = _count(pair[0], "a task's trial count n must be an int")
        c = _count(pair[1], "a task's success count c must be an int")
        if not 0 <= c <= n:
            raise UsageError(f"a task has {c} successes out of {n} trials")
        if n < k:
            raise UsageError(f"pass^{k} needs at least {k} trials per task; a task has {n}")
        values.append(math.comb(c, k) / math.comb(n, k))
    return sum(values) / len(values) if values else math.nan
