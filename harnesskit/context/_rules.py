"""Rules the context builder applies, as small functions over events (private; see builder.py).

Trust (R-C8), fact conflicts (R-C6), labelled rendering (R-C7) and the six-block structured
summary (R-C3). Statuses (R-V2) and branch visibility (R-V5) are the log's own
(`harnesskit.log.StatusFold`, `harnesskit.log.BranchView`), shared with `Trajectory`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harnesskit.data._values import tool_values
from harnesskit.log._types import (
    Event,
    HumanDecisionEvent,
    ModelResponseEvent,
    TaskContractEvent,
    ToolCallEvent,
    ToolResultEvent,
    UserMessageEvent,
)
from harnesskit.log.events import EventLog
from harnesskit.messages import Message, trusted_message

#: Event types whose content can reach a prompt.
CONTENT_TYPES = frozenset(
    {
        "task.contract",
        "user.message",
        "human.decision",
        "model.response",
        "tool.result",
        "checkpoint",
    }
)
#: Event types sent as chat messages of their own in the recent window.
CHAT_TYPES = frozenset({"user.message", "model.response", "tool.result"})
UNTRUSTED_SOURCES = frozenset({"tool", "web", "file"})
#: Conflict resolution order (R-C6): a higher rank wins.
SOURCE_RANK = {"human": 3, "tool": 2, "user": 1, "model": 0}


@functools.cache
def _instruction() -> re.Pattern[str]:
    """A heuristic, not a guarantee: the usual shapes of prompt injection in English and Chinese.

    Compiled on first use (7 ms that `import harnesskit` need not pay).
    """
    return re.compile(
        r"\b(?:ignore|disregard|forget)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|all|the)\b"
        r"[^.\n]{0,20}\b(?:rules?|instructions?|prompts?|directions?|guidelines?)\b"
        r"|\byou are now\b|\bnew (?:system )?(?:instructions?|rules?|task)\b|\bsystem prompt\b"
        r"|\boverride (?:the |your |all )?(?:rules?|polic(?:y|ies)|permissions?|instructions?)\b"
        r"|\bact as (?:an? )?(?:admin|administrator|root|developer)\b"
        r"|\b(?:reveal|print|send|leak)\b[^.\n]{0,30}"
        r"\b(?:secrets?|passwords?|api keys?|credentials)\b"
        r"|<information>|\bimportant message from (?:me, )?the user\b"
        r"|\b(?:todo|note|message) (?:for|to) the (?:assistant|ai|agent|model|llm)\b"
        r"|\bdisregard (?:the|your|this|my) (?:task|request|instructions?|above)\b"
        r"|\b(?:has|have) authori[sz]ed you to\b|\bwithout (?:mentioning|telling|informing)\b"
        r"|\bimportant!{2,}|\bas the (?:account owner|user|admin\w*),? i (?:ask|want|need|instruct)"
        r"|\byour (?:job|task) (?:now is|is now)\b"
        r"|\bbefore (?:you (?:can )?(?:solve|answer|reply|respond|continue)|replying|answering)\b"
        r"|忽略.{0,8}(?:之前|以上|先前|所有).{0,8}(?:规则|指令|说明|提示)|你现在是|新的?(?:系统)?指令",
        re.IGNORECASE,
    )


# Each alternative of `_instruction()` starts with one of these words (or with CJK text, which
# ASCII text cannot hold); for ASCII text, IGNORECASE matching is plain lower-casing, so text
# holding none of them cannot match and skips the regex (~15-50x faster on tool output).
_INSTRUCTION_WORDS = (
    "ignore", "disregard", "forget", "you are now", "new ", "system prompt", "override",
    "act as", "reveal", "print", "send", "leak", "<information>", "important", "todo ",
    "note ", "message ", "authori", "without ", "as the ", "your ", "before ",
)  # fmt: skip


# -- trust and content ----------------------------------------------------------------------


def is_untrusted(event: Event) -> bool:
    """True for text the run did not author: tool output, files, web pages (R-C8).

    That is every `tool.result`, every event whose source is `tool`, `web` or `file` or whose
    payload says `"trust": "untrusted"`, and a `task.contract` not written by the system.
    """
    if event.payload.get("trust") == "untrusted" or event.source in UNTRUSTED_SOURCES:
        return True
    return isinstance(event, ToolResultEvent) or (
        isinstance(event, TaskContractEvent) and event.source != "system"
    )


def looks_like_instruction(text: str) -> bool:
    """True when `text` reads like an instruction to the model ("ignore previous rules...").

    A heuristic over common English and Chinese prompt-injection shapes; it decides what the
    `untrusted.instructions` exclusion withholds. It cannot catch every attack.
    """
    if text.isascii():  # every branch of the pattern needs one of these words (ASCII text)
        low = text.lower()
        for word in _INSTRUCTION_WORDS:
            if word in low:
                break
        else:
            return False
    return bool(_instruction().search(text))


def event_text(event: Event) -> str:
    """The content an event can contribute to a prompt (what a canary search looks at)."""
    if isinstance(event, UserMessageEvent | ToolResultEvent):
        return str(event.content or "")
    if isinstance(event, ModelResponseEvent):
        msg = event.message or {}
        calls = " ".join(
            str((c.get("function") or {}).get("arguments", "")) for c in msg.get("tool_calls") or ()
        )
        return f"{msg.get('content') or ''} {calls}".strip()
    if isinstance(event, TaskContractEvent):
        task = json.dumps(event.task or {}, ensure_ascii=False, default=str)
        return f"{event.system_prompt or ''} {task}"
    body = {k: v for k, v in event.payload.items() if k != "step"}
    return json.dumps(body, ensure_ascii=False, default=str)


def source_kind(event: Event) -> str:
    """`human`, `tool`, `user` or `model`: the rank class of an event's claims (R-C6)."""
    if event.source in UNTRUSTED_SOURCES or event.payload.get("trust") == "untrusted":
        return "tool"
    if isinstance(event, HumanDecisionEvent) or event.source == "human":
        return "human"
    if isinstance(event, ModelResponseEvent) or event.source == "model":
        return "model"
    if isinstance(event, UserMessageEvent) or event.source == "user":
        return "user"
    return "tool"


def canon(value: Any) -> str:
    """Canonical JSON of a value (sorted keys), for comparing fact values."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def short(value: Any, limit: int = 60) -> str:
    """Canonical JSON of `value`, cut to `limit` chars with an ellipsis."""
    s = canon(value)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def sha16(text: str) -> str:
    """sha256 of `text` (UTF-8), first 16 hex digits."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# -- conflicts ------------------------------------------------------------------------------


def detect_conflicts(events: Iterable[Event]) -> list[dict[str, Any]]:
    """Conflicting values for one fact key among active events, resolved by source (R-C6).

    Facts are `payload["facts"]` (`{key: value}`) on any event. When the claims for a key
    disagree, the highest source rank wins (human > tool > user > model); among equals the
    latest wins, except that two tool facts which disagree are left unresolved: `pause`.

    Args:
        events: the active, visible events (in log order).

    Returns:
        One dict per conflicting key, in key order: `key`, `claims` (label, event_id,
        source, value, in log order), `winner` (a label or `None`), `value` (the winner's),
        `rule` (how it was resolved) and `pause` (bool).
    """
    claims: dict[str, list[tuple[Event, Any]]] = {}
    for e in events:
        facts = e.payload.get("facts")
        if isinstance(facts, dict):
            for key, value in facts.items():
                claims.setdefault(str(key), []).append((e, value))
    out = []
    for key in sorted(claims):
        items = claims[key]
        if len({canon(v) for _, v in items}) < 2:
            continue
        top = max(SOURCE_RANK[source_kind(e)] for e, _ in items)
        best = [(e, v) for e, v in items if SOURCE_RANK[source_kind(e)] == top]
        kind = source_kind(best[0][0])
        split = len({canon(v) for _, v in best}) > 1
        pause = split and kind == "tool"
        winner = None if pause else best[-1]
        if pause:
            rule = "two tool facts disagree: run paused"
        elif split:
            rule = f"the latest {kind} claim wins among {kind} claims"
        else:
            rule = "source rank human > tool > user > model"
        out.append(
            {
                "key": key,
                "claims": [
                    {"label": e.label, "event_id": e.event_id, "source": source_kind(e), "value": v}
                    for e, v in items
                ],
                "winner": winner[0].label if winner else None,
                "value": winner[1] if winner else None,
                "rule": rule,
                "pause": pause,
            }
        )
    return out


def conflict_line(c: Mapping[str, Any]) -> str:
    """One line describing a conflict from `detect_conflicts`."""
    claims = ", ".join(f"{x['label']} {short(x['value'])}" for x in c["claims"])
    if c["pause"]:
        return f"{c['key']}: {claims} — UNRESOLVED ({c['rule']})"
    return f"{c['key']}: {claims} — {c['winner']} wins ({c['rule']})"


def pause_reason(conflicts: Iterable[Mapping[str, Any]]) -> str | None:
    """The reason to pause for the first unresolved tool-vs-tool conflict, else `None`."""
    for c in conflicts:
        if c["pause"]:
            says = ", ".join(f"{x['label']} says {short(x['value'])}" for x in c["claims"])
            return (
                f"conflicting tool facts for {c['key']!r}: {says}; check the environment and "
                "input versions, then reject one (status.reject) or record a human decision"
            )
    return None


# -- rendering ------------------------------------------------------------------------------


def event_to_message(event: Event) -> Message | None:
    """The chat message an event contributes verbatim, or `None` for bookkeeping events.

    Only a `task.contract` written by the system becomes a system message; one from any other
    source is untrusted data and goes in the user role with its label (R-C8).
    """
    if isinstance(event, UserMessageEvent):
        content = "" if event.content is None else event.content
        if content.__class__ is str:  # what `Message` checks (else it says what is wrong)
            return trusted_message("user", content)
        return Message(role="user", content=content)
    if isinstance(event, ModelResponseEvent):
        return Message.from_openai({**(event.message or {}), "role": "assistant"})
    if isinstance(event, ToolResultEvent):
        content = "" if event.content is None else event.content
        call_id = event.tool_call_id
        if content.__class__ is str and call_id.__class__ is str and call_id:
            return trusted_message("tool", content, (), call_id)
        return Message(role="tool", content=content, tool_call_id=call_id)
    if isinstance(event, TaskContractEvent):
        if is_untrusted(event):
            body = json.dumps(event.payload, ensure_ascii=False, default=str)
            return Message(role="user", content=f"[{event.label}] untrusted data: {body}")
        text = event.system_prompt
        return Message(role="system", content=text) if text else None
    if isinstance(event, HumanDecisionEvent):
        body = json.dumps(event.payload, default=str)
        return Message(role="user", content=f"[{event.label}] human decision: {body}")
    return None


def stub(event: Event, reason: str) -> Message:
    """A placeholder naming a withheld event and why, keeping the tool-call protocol intact."""
    text = f"[{event.label} withheld: {reason}]"
    if isinstance(event, ToolResultEvent):
        return Message(role="tool", content=text, tool_call_id=event.tool_call_id)
    if isinstance(event, ModelResponseEvent):
        calls = Message.from_openai({**(event.message or {}), "role": "assistant"}).tool_calls
        return Message(role="assistant", content=text, tool_calls=calls)
    return Message(role="user", content=text)


def head(text: str, limit: int | None, label: str) -> str:
    """`text`, or its byte-exact first `limit` chars plus a note citing `label`."""
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}\n… [{len(text) - limit} more chars not shown; cite {label}]"


def quote(text: str) -> str:
    """Prefix every line with `  | ` so quoted data cannot pose as the block's own text."""
    return "\n".join(f"  | {line}" for line in text.split("\n"))


def call_of(log: EventLog, e: Event) -> ToolCallEvent | None:
    """The `tool.call` event a `tool.result` answers (its parent), if present."""
    parent = e.parent_id
    if parent is not None and 1 <= parent <= len(log.events):
        call = log.events[parent - 1]
        if isinstance(call, ToolCallEvent):
            return call
    return None


def call_key(log: EventLog, e: Event) -> str:
    """What makes two tool results "the same call": tool arguments hash, else content hash."""
    call = call_of(log, e)
    if call is not None:
        return call.input_hash or canon(call.arguments)
    return sha16(str(e.payload.get("content", "")))


def call_text(log: EventLog, e: Event) -> str:
    """`tool(arg=value, ...)` of the call a result answers (at most 120 chars)."""
    tool = e.payload.get("tool") or "tool"
    call = call_of(log, e)
    if call is None:
        return str(tool)
    args = call.arguments or {}
    text = ", ".join(f"{k}={short(v, 40)}" for k, v in args.items())
    return f"{tool}({text})"[:120]


def render_item(e: Event, limit: int | None, log: EventLog) -> str:
    """One labelled item of the context block; untrusted text is quoted as data (R-C7, R-C8)."""
    if isinstance(e, UserMessageEvent):
        return f"[{e.label}] user:\n{quote(str(e.content or ''))}"
    if isinstance(e, ToolResultEvent):
        status = "ok" if e.ok is not False else f"failed: {e.error_type}"
        body = head(str(e.content or ""), limit, e.label)
        return f"[{e.label}] {call_text(log, e)} → {status} (untrusted data):\n{quote(body)}"
    if isinstance(e, ModelResponseEvent):
        body = head(event_text(e), limit, e.label)
        return f"[{e.label}] model interpretation (not a fact):\n{quote(body)}"
    trust = " (untrusted data)" if is_untrusted(e) else ""
    kind = {"human.decision": "human decision", "checkpoint": "check"}.get(e.type, e.type)
    return f"[{e.label}] {kind}{trust}:\n{quote(head(event_text(e), limit, e.label))}"


# -- the structured summary (R-C3) ------------------------------------------------------------

SUMMARY_BLOCKS = {
    "confirmed": "Confirmed",
    "failed": "Failed",
    "conflicts": "Conflicts",
    "pending": "Pending",
    "forbidden": "Forbidden actions",
    "next": "Next step",
}
_LABEL = re.compile(r"\b(?:TOOL|HUMAN|USER|MODEL|TASK|EV)-\d+\b")
_DONE = frozenset({"done", "completed", "complete", "finished", "succeeded"})
_APPROVE = frozenset({"approve", "approved", "accept", "accepted", "confirm", "confirmed"})
_DENY = frozenset({"deny", "denied", "reject", "rejected", "forbid"})
_ASK = frozenset({"pending", "ask", "needs_review"})


def _args(call: ToolCallEvent | None) -> dict[str, Any]:
    return dict(call.arguments or {}) if call is not None else {}


def _result_ids(e: Event, n: int) -> list[tuple[str, str]]:
    """The first `n` values (ids, dates, codes, amounts) of a tool result, as `(key, value)`."""
    return tool_values(str(e.payload.get("content") or ""))[:n]


def _plan_items(call: ToolCallEvent | None) -> list[Mapping[str, Any]]:
    """The items of a task-tracker call: a list argument of objects that carry a `status`."""
    if call is None:
        return []
    for value in (call.arguments or {}).values():
        if (
            isinstance(value, list)
            and value
            and all(isinstance(i, Mapping) and "status" in i for i in value)
        ):
            return list(value)
    return []


def _item_text(item: Mapping[str, Any]) -> Any:
    for key in ("content", "title", "task", "text", "description", "name"):
        if key in item:
            return item[key]
    return {k: v for k, v in item.items() if k != "status"}


def structured_summary(
    log: EventLog,
    *,
    keyed: Sequence[Event],
    ok: Sequence[Event],
    failed: Sequence[Event],
    notes: Sequence[Event],
    rejected: Sequence[tuple[Event, int]],
    pending_calls: Sequence[ToolCallEvent],
    conflicts: Sequence[Mapping[str, Any]],
    max_items: int = 8,
) -> tuple[str, list[int]]:
    """The six-block summary, from structured fields only: never by asking a model (R-C3).

    Every block (confirmed, failed, conflicts, pending, forbidden actions, next step) is
    present, `- (none)` when empty, with at most `max_items` lines (newest kept). Every
    completion stays: the newest `max_items` in full (call, step, the ids it returned), the
    earlier ones on one `(+N earlier completions)` line per tool with their labels, steps and
    ids. The latest task-tracker plan (a call whose list argument holds objects with a
    `status`) is split: done items under confirmed, the rest under pending. Lines carry
    labels and structured fields (tool, arguments, error type, fact key and value, decision),
    never free text from tools; untrusted sources are tagged `(untrusted)`.

    Args:
        log: the log (to read the calls that results answer).
        keyed: active events carrying `payload["facts"]`, in log order.
        ok: active successful tool results, in log order.
        failed: active failed tool results, in log order.
        notes: active human decisions and checkpoints, in log order.
        rejected: `(event, by_event_id)` for rejected events, in log order.
        pending_calls: `tool.call` events still without a result.
        conflicts: as `detect_conflicts` returns them.
        max_items: lines per block.

    Returns:
        `(text, mentioned_ids)`: the Markdown text and the ids it names, in order.
    """
    mentioned: list[int] = []
    blocks: dict[str, list[str]] = {k: [] for k in SUMMARY_BLOCKS}

    def add(block: str, e: Event, text: str) -> None:
        tag = " (untrusted)" if is_untrusted(e) else ""
        blocks[block].append(f"- {text} [{e.label}{tag}]")
        mentioned.append(e.event_id)

    resolved: dict[str, tuple[Any, Event]] = {}
    for e in keyed:
        for key, value in e.payload["facts"].items():
            prev = resolved.get(str(key))
            if prev is None or SOURCE_RANK[source_kind(e)] >= SOURCE_RANK[source_kind(prev[1])]:
                resolved[str(key)] = (value, e)
    paused = {c["key"] for c in conflicts if c["pause"]}
    for key in sorted(set(resolved) - paused):
        add("confirmed", resolved[key][1], f"{key} = {short(resolved[key][0])}")
    recent = list(ok)[-max_items:] if max_items else list(ok)
    earlier: list[str] = []
    tools: dict[str, int] = {}
    for e in list(ok)[: len(ok) - len(recent)]:  # every completion kept: one compact item each
        tool = str(e.payload.get("tool") or "tool")
        tools[tool] = tools.get(tool, 0) + 1
        call = call_of(log, e)
        args = " ".join(f"{k}={short(v, 24).strip(chr(34))}" for k, v in _args(call).items())
        got = " ".join(f"{k}={v}" if k else v for k, v in _result_ids(e, 3))
        step = e.payload.get("step")
        tag = " (untrusted)" if is_untrusted(e) else ""  # the label survives the summary
        item = f"[{e.label}{tag}] {tool}" + (f" step {step}" if step is not None else "")
        earlier.append(item + (f" {args}" if args else "") + (f" → {got}" if got else ""))
        mentioned.append(e.event_id)
    earlier_line = None
    if earlier:
        counts = ", ".join(f"{t} ×{n}" for t, n in tools.items())
        earlier_line = f"- (+{len(earlier)} earlier completions: {counts}) " + "; ".join(earlier)
    for e in recent:
        got = " ".join(f"{k}={v}" if k else v for k, v in _result_ids(e, 4))
        step = e.payload.get("step")
        at = f" at step {step}" if step is not None else ""
        add("confirmed", e, f"{call_text(log, e)} succeeded{at}" + (f" → {got}" if got else ""))
    plan: tuple[Event, list[Mapping[str, Any]]] | None = None
    for e in ok:
        found = _plan_items(call_of(log, e))
        if found:
            plan = (e, found)
    if plan is not None:  # a task tracker's plan: done items confirmed, the rest pending
        e, steps = plan
        for entry in steps:
            text = short(_item_text(entry), 100).strip('"')
            status = str(entry.get("status", "")).lower()
            block = "confirmed" if status in _DONE else "pending"
            add(block, e, f"plan: {text} ({status or 'open'})")
    for e in failed:
        if not isinstance(e, ToolResultEvent):
            continue
        add("failed", e, f"{call_text(log, e)} failed: {e.error_type or 'error'}")
        if e.error_type == "permission_denied":
            add("forbidden", e, f"{call_text(log, e)} was denied by the gate")
        if e.circuit_opened or e.error_type == "circuit_open":
            add("forbidden", e, f"{e.tool} is disabled for this run (circuit open)")
        if e.outcome_unknown:
            add("pending", e, f"{call_text(log, e)}: outcome unknown, confirm before retrying")
    for e, by in rejected:
        blocks["failed"].append(f"- {e.label} was rejected (EV-{by})")
    for c in conflicts:
        blocks["conflicts"].append(f"- {conflict_line(c)}")
        if c["pause"]:
            blocks["pending"].append(f"- resolve the conflict on {c['key']!r}")
    for call in pending_calls:
        blocks["pending"].append(f"- {call.tool} call {call.tool_call_id} has no result")
    next_step: tuple[Event, str] | None = None
    for e in notes:
        p = e.payload  # human decisions and checkpoints alike
        decision = str(p.get("decision", "")).lower()
        what = p.get("action") or p.get("reason") or p.get("target") or ""
        if decision in _APPROVE:
            add("confirmed", e, f"human approved: {short(what, 100)}")
        for item in p.get("forbid") or ():
            add("forbidden", e, short(item, 100).strip('"'))
        if decision in _DENY:
            target = p.get("target")
            subject = f"EV-{target}" if isinstance(target, int) else short(what, 100)
            add("forbidden", e, f"do not act on {subject} (human: {decision})")
        for item in p.get("pending") or ():
            add("pending", e, short(item, 100).strip('"'))
        if decision in _ASK:
            add("pending", e, f"awaiting a human decision on {short(what, 100)}")
        if p.get("next_step"):
            next_step = (e, short(p["next_step"], 160).strip('"'))
    if next_step is not None:
        add("next", *next_step)
    lines = ["## Summary (structured; built from event fields)"]
    for key, title in SUMMARY_BLOCKS.items():
        items = blocks[key]
        if len(items) > max_items:  # trimmed, never silently: the note names the labels
            cut = items[: len(items) - max_items]
            labels = ", ".join(dict.fromkeys(_LABEL.findall("\n".join(cut))))
            items = [f"- (+{len(cut)} earlier: {labels})", *items[-max_items:]]
        if key == "confirmed" and earlier_line is not None:
            items = [earlier_line, *items]
        lines += [f"### {title}", *(items or ["- (none)"])]
    return "\n".join(lines), mentioned
