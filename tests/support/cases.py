"""Drivers for the bug-report cases in `../shared/cases/` (format: its README.md).

`load(case_id)` reads one case; `tools_of(case)` builds real `hk.Tool`s from the case's specs
(each behaviour a small function that records its calls); `StrictProvider` serves a case's
model turns from a real loopback server and answers 400, as a strict production provider does,
when a request breaks a rule: argument strings that are not one strict JSON object, tool
messages not directly after their assistant call, empty or unanswered ids, chat control tokens,
or a prompt over the case's context window.
"""

from __future__ import annotations

import json
import pathlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import harnesskit as hk
from tests.support.loopback import LoopbackServer, Reply

CASES_DIR = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "cases"
_NAME = re.compile(r"\A[a-zA-Z0-9_-]{1,64}\Z")
_CONTROL = re.compile(r"<\|[^|<>]{0,40}\|>|</?tool_call>|\[TOOL_CALLS\]")


def case_ids() -> list[str]:
    """Ids of the case files present (empty when the folder is absent)."""
    if not CASES_DIR.is_dir():
        return []
    return sorted(p.stem for p in CASES_DIR.glob("*.json"))


def load(case_id: str) -> dict[str, Any]:
    """One case as a dict."""
    return json.loads((CASES_DIR / f"{case_id}.json").read_text(encoding="utf-8"))


@dataclass
class Calls:
    """What the case's tools were called with, per tool name, in order."""

    by_tool: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def of(self, name: str) -> list[dict[str, Any]]:
        return self.by_tool.get(name, [])


def tools_of(
    case: dict[str, Any],
    calls: Calls,
    behaviours: dict[str, Callable[..., Any]] | None = None,
) -> list[hk.Tool]:
    """Real tools from the case's specs; `behaviours[name](**args)` gives the result."""
    out = []
    for spec in case["input"].get("tools", []):
        name = spec["name"]
        act = (behaviours or {}).get(name, lambda **_: {"ok": True})

        def fn(__name: str = name, __act: Callable[..., Any] = act, **kwargs: Any) -> Any:
            calls.by_tool.setdefault(__name, []).append(kwargs)
            return __act(**kwargs)

        out.append(
            hk.Tool(
                name=name,
                description=spec.get("behaviour", name),
                parameters=spec["parameters"],
                fn=fn,
                risk=spec.get("risk", "read"),
                idempotency_fields=tuple(spec.get("idempotency_fields", ())),
                timeout_seconds=None,
            )
        )
    return out


def rule_violations(body: Any, *, window: int | None = None, count_chars: bool = True) -> list[str]:
    """What a strict provider refuses in a chat-completions request body."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return ["the body is not a chat-completions request"]
    bad: list[str] = []
    msgs = body["messages"]
    for i, m in enumerate(msgs):
        if _CONTROL.search(str(m.get("content") or "")):
            bad.append(f"message {i} holds a chat control token")
        if m.get("role") == "assistant" and m.get("tool_calls"):
            ids = []
            for c in m["tool_calls"]:
                args = c.get("function", {}).get("arguments")
                try:
                    value = json.loads(args, parse_constant=_refuse)
                except (TypeError, ValueError) as exc:
                    bad.append(f"message {i}: arguments of {c.get('id')!r} fail json.loads: {exc}")
                    continue
                if not isinstance(value, dict):
                    bad.append(f"message {i}: arguments of {c.get('id')!r} are not an object")
                if _CONTROL.search(args):
                    bad.append(f"message {i}: arguments of {c.get('id')!r} hold a control token")
                if not c.get("id"):
                    bad.append(f"message {i}: a tool call has an empty id")
                if not _NAME.match(str(c.get("function", {}).get("name"))):
                    bad.append(f"message {i}: tool name {c.get('function', {}).get('name')!r}")
                ids.append(c.get("id"))
            answered = []
            for m2 in msgs[i + 1 :]:
                if m2.get("role") != "tool":
                    break
                answered.append(m2.get("tool_call_id"))
            if sorted(map(str, answered)) != sorted(map(str, ids)):
                bad.append(
                    f"message {i}: calls {ids} are answered by {answered} right after the "
                    "assistant message"
                )
        if m.get("role") == "tool":
            j = i - 1
            while j >= 0 and msgs[j].get("role") == "tool":
                j -= 1
            owner = msgs[j] if j >= 0 else {}
            ids = [c.get("id") for c in owner.get("tool_calls") or []]
            if owner.get("role") != "assistant" or m.get("tool_call_id") not in ids:
                bad.append(f"message {i}: tool message without its assistant call")
    if window is not None:
        size = len(json.dumps(body, ensure_ascii=False)) // 4
        out = body.get("max_tokens") or 0
        if size + out > window:
            bad.append(f"context_length_exceeded: {size} + {out} > {window}")
    return bad


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class StrictProvider:
    """A loopback chat-completions server that enforces the strict rules on every request.

    `turns` are the case's responses (`{status, headers, body}` or `{status, sse_lines}`), served
    in order; `repeat_last` serves the last one forever. A request that breaks a rule is
    answered `400` and listed in `violations`.
    """

    def __init__(
        self,
        turns: list[dict[str, Any]],
        *,
        repeat_last: bool = False,
        window: int | None = None,
    ) -> None:
        self.turns = list(turns)
        self.repeat_last = repeat_last
        self.window = window
        self.violations: list[list[str]] = []
        self.statuses: list[int] = []
        self._served = 0
        self.server = LoopbackServer()
        self.server.script(*[self._answer] * 1000)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def requests(self) -> list[Any]:
        """The request bodies the server received, in order."""
        return [r.body for r in self.server.requests]

    def __enter__(self) -> StrictProvider:
        self.server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)

    def _answer(self, body: Any) -> Reply:
        bad = rule_violations(body, window=self.window)
        if bad:
            self.violations.append(bad)
            self.statuses.append(400)
            code = "context_length_exceeded" if "context_length" in bad[-1] else "invalid_request"
            return Reply(status=400, json={"error": {"message": "; ".join(bad), "code": code}})
        if self._served >= len(self.turns):
            if not (self.repeat_last and self.turns):
                self.statuses.append(599)
                return Reply(status=599, json={"error": {"message": "no scripted turn left"}})
            turn = self.turns[-1]
        else:
            turn = self.turns[self._served]
        self._served += 1
        self.statuses.append(turn.get("status", 200))
        headers = {k: v for k, v in turn.get("headers", {}).items() if k != "content-type"}
        if "sse_lines" in turn:
            return Reply(status=turn["status"], sse=[line + "\n" for line in turn["sse_lines"]])
        return Reply(status=turn.get("status", 200), headers=headers, json=turn["body"])


class FakeClock:
    """A monotonic clock that sleeping advances (seconds); records every sleep."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def events(run: hk.Run, cls: type) -> list[Any]:
    """The run's events of one class, in order."""
    return [e for e in run.log if isinstance(e, cls)]


def tool_message(request: dict[str, Any], call_id: str) -> dict[str, Any]:
    """The decoded content of the tool message answering `call_id` in a request body."""
    (m,) = [m for m in request["messages"] if m.get("tool_call_id") == call_id]
    return json.loads(m["content"])
