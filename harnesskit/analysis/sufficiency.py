"""Context sufficiency (R-C9): did the prompt at each step hold the values the model typed?

For every tool call of a run, each typed value in its arguments (ids, dates, codes, amounts,
found by ordered *value shapes*: regular expressions a domain can replace) is looked up in the
prompt sent (or, under `policy`, the prompt that policy would have built) at that step:

- `present`: the value's text is in the prompt (a message's content or an earlier call);
- `bindable`: the value is in a stored result whose artifact ref is in the prompt (the model
  could have bound it, R-A6);
- `missing`: neither; the policy lost it (or the model derived it, see `source`).

Where it came from (`source`): `user` (a user turn before the step held it), `tool` (a tool
result did; `source_label` names it, e.g. `TOOL-31`), else `derived` (the model computed or
invented it, e.g. a date from "tomorrow" or a sum). A call is *complete* when every value that
came from the user or a tool is present or bindable; derived values are reported, never
required, because no policy can hold what nobody said.

`sufficiency` returns a DataFrame (one row per typed value; a call without typed values gets
one row with `kind=None`) whose `attrs["summary"]` holds the figures that `summary_line`
prints.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from harnesskit._lazy import frozen_dataclass
from harnesskit.data.idmatch import amount_occurs, token_occurs
from harnesskit.errors import ContextError, HarnessError, UsageError
from harnesskit.log._types import (
    Event,
    ModelRequestEvent,
    ModelResponseEvent,
    ToolResultEvent,
    UserMessageEvent,
)
from harnesskit.log.events import EventLog
from harnesskit.log.trajectory import _calls_of

__all__ = [
    "DEFAULT_SHAPES",
    "COLUMNS",
    "ValueShape",
    "combine",
    "extract_values",
    "sufficiency",
    "summary_line",
]


@frozen_dataclass(kw_only=True)
class ValueShape:
    """One kind of typed value and the pattern that finds it in an argument string."""

    kind: str
    """The value's kind, e.g. `date`, `reservation_id`, `airport`."""
    pattern: str
    """A regular expression; each match in a string argument is one value."""


#: Shapes used when no domain gives its own: ISO dates, ids that mix letters and digits
#: (`mia_li_3668`, `certificate_7504069`, `4WQ150`) and three-letter upper-case codes.
DEFAULT_SHAPES: tuple[ValueShape, ...] = (
    ValueShape(kind="date", pattern=r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b"),
    ValueShape(kind="id", pattern=r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*_\d{3,}\b"),
    ValueShape(kind="id", pattern=r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,}\b"),
    ValueShape(kind="code", pattern=r"\b[A-Z]{3}\b"),
)
#: Argument keys whose numbers are amounts (money) rather than counts.
_AMOUNT_KEYS = re.compile(r"amount|price|balance|cost|fee", re.IGNORECASE)
#: Columns of the frame, in order.
COLUMNS = (
    "run_id",
    "step",
    "request_id",
    "built",
    "call",
    "tool",
    "arg",
    "kind",
    "value",
    "source",
    "source_label",
    "held",
)

Shapes = Sequence[ValueShape] | Mapping[str, str]


def _compile(shapes: Shapes | None) -> list[tuple[str, re.Pattern[str]]]:
    if shapes is None:
        shapes = DEFAULT_SHAPES
    if isinstance(shapes, Mapping):
        items = list(shapes.items())
    else:
        items = [(s.kind, s.pattern) for s in shapes]
    try:
        return [(kind, re.compile(p)) for kind, p in items]
    except re.error as exc:
        raise UsageError(f"a value shape is not a valid regular expression: {exc}") from exc


def extract_values(arguments: Any, shapes: Shapes | None = None) -> list[tuple[str, str, str]]:
    """The typed values in a tool call's arguments.

    Shapes are tried in order; a span claimed by an earlier shape is not claimed again, so a
    domain puts its most specific shape first (e.g. a reservation id before a flight number).

    Args:
        arguments: the parsed arguments (any JSON value).
        shapes: ordered `ValueShape`s, or a `{kind: pattern}` mapping (in its order); `None`
            uses `DEFAULT_SHAPES`.

    Returns:
        `(json_pointer, kind, value)` triples in argument order; numbers under an
        amount-like key (`amount`, `price`, ...) are `amount` values.

    Raises:
        UsageError: a pattern is not a valid regular expression.
    """
    compiled = _compile(shapes)
    out: list[tuple[str, str, str]] = []

    def walk(value: Any, pointer: str, key: str) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(v, f"{pointer}/{k}", str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{pointer}/{i}", key)
        elif isinstance(value, bool) or value is None:
            return
        elif isinstance(value, int | float):
            if _AMOUNT_KEYS.search(key):
                out.append((pointer, "amount", _number_text(value)))
        elif isinstance(value, str):
            claimed: list[tuple[int, int]] = []
            found: list[tuple[int, str, str]] = []
            for kind, rx in compiled:
                for m in rx.finditer(value):
                    a, b = m.span()
                    if a == b or any(a < y and x < b for x, y in claimed):
                        continue
                    claimed.append((a, b))
                    found.append((a, kind, m.group()))
            out.extend((pointer, kind, text) for _, kind, text in sorted(found))

    walk(arguments, "", "")
    return out


def _number_text(value: int | float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _prompt_text(messages: Iterable[Any]) -> str:
    """Everything the model could read in a prompt: contents and earlier call arguments."""
    parts: list[str] = []
    for m in messages:
        if isinstance(m, Mapping):
            parts.append(str(m.get("content") or ""))
            for c in m.get("tool_calls") or ():
                fn = c.get("function") or {}
                args = fn.get("arguments")
                parts.append(args if isinstance(args, str) else json.dumps(args))
        else:
            parts.append(m.content or "")
            for c in m.tool_calls:
                parts.append(c.raw_arguments or json.dumps(c.arguments))
    return "\n".join(parts)


def _held(value: str, kind: str, text: str) -> bool:
    """Whether `text` holds `value` whole: `ABC12` is not held by `ABC123`, nor 150 by $1500."""
    if kind == "amount":  # 150 may be written 150.0, 150.00 or $150
        return amount_occurs(value, text)
    return token_occurs(value, text)


def _as_log(log_or_run: Any) -> EventLog:
    if isinstance(log_or_run, EventLog):
        return log_or_run
    if isinstance(log_or_run, str | os.PathLike):
        return EventLog.read(log_or_run)
    log = getattr(log_or_run, "log", None)
    if isinstance(log, EventLog):
        return log
    raise UsageError(
        "sufficiency needs an EventLog, a log path, or an object with a .log "
        f"(a Run, a replay result), got {type(log_or_run).__name__}"
    )


def _requests(
    log: EventLog, builder: Any, branch_id: str
) -> Iterator[tuple[ModelRequestEvent, list[Any] | None, str | None, list[Event]]]:
    """Each request of `branch_id` with the messages the policy sends (or why it cannot)."""
    view = EventLog(None, run_id=log.run_id)
    for e in log.events:
        if isinstance(e, ModelRequestEvent) and e.branch_id == branch_id:
            if builder is None:
                yield e, list(log.request_messages(e.event_id)), None, view.events
            else:
                try:
                    prompt = builder.build(view, branch_id=branch_id)
                except ContextError as exc:
                    yield e, None, str(exc), view.events
                else:
                    yield e, list(prompt.messages), None, view.events
        view.events.append(e)


def _tokens(estimator: Any, messages: Sequence[Any]) -> tuple[int, int]:
    """(tokens without system messages, tokens of system messages) of a prompt."""
    from harnesskit.messages import Message

    msgs = [Message.from_openai(dict(m)) if isinstance(m, Mapping) else m for m in messages]
    system = [m for m in msgs if m.role == "system"]
    rest = [m for m in msgs if m.role != "system"]
    return estimator.count_messages(rest), estimator.count_messages(system)


def sufficiency(
    log_or_run: Any,
    policy: Any = None,
    *,
    shapes: Shapes | None = None,
    branch_id: str = "main",
    store: Any = None,
    estimator: Any = None,
) -> Any:
    """Per tool call and typed value: was it in the prompt at that step (R-C9)?

    Args:
        log_or_run: an `EventLog`, a log path, or anything with a `.log` (a `Run`, an
            airline `ReplayResult`).
        policy: `None` judges the prompts as recorded; a policy name, dict, `ContextPolicy`
            or ready builder judges the prompts that policy would have built from the same
            events (counterfactual, R-V7). A request the policy cannot build counts as
            `unbuildable` and its values as missing.
        shapes: the value shapes, most specific first (a domain's, e.g.
            `harnesskit.domains.airline.VALUE_SHAPES`); `None` uses `DEFAULT_SHAPES`.
        branch_id: the branch whose requests to judge.
        store: an `ArtifactStore` holding the run's externalized results; without it a value
            only inside an artifact cannot be found (it counts as `derived`).
        estimator: token estimator for the token figures (default `TokenEstimator()`).

    Returns:
        A DataFrame with `COLUMNS`, one row per typed value (a call without one: one row with
        `kind` None and `held` None). `attrs["summary"]` is a dict: `calls`,
        `calls_complete` (share 0-1 of calls whose user/tool values are all present or
        bindable), `values` (user/tool values), `values_present`, `values_bindable`
        (shares 0-1), `values_derived` (count), `requests`, `unbuildable` (requests the
        policy could not build), `history_tokens`, `full_history_tokens` (estimated tokens
        of the built requests without system messages, under the policy and under
        full-history), `system_tokens`, `full_system_tokens`, `tool_tokens`, and the ratios
        `history_token_ratio`, `with_system_ratio`, `with_tools_ratio`.

    Raises:
        UsageError: `log_or_run` is none of those, or a shape is not a valid pattern.
    """
    import pandas as pd

    from harnesskit.context.builder import ContextBuilder
    from harnesskit.context.tokens import TokenEstimator

    log = _as_log(log_or_run)
    est = estimator or TokenEstimator()
    compiled_shapes: Shapes | None = shapes
    _compile(shapes)  # fail early on a bad pattern
    builder = None
    if policy is not None:
        builder = policy if hasattr(policy, "build") else ContextBuilder(policy, estimator=est)
    full = ContextBuilder("full-history", estimator=est)
    full_iter = _requests(log, full, branch_id)
    responses = _responses_after(log, branch_id)
    rows: list[dict[str, Any]] = []
    fig = dict.fromkeys(
        (
            "history_tokens",
            "full_history_tokens",
            "system_tokens",
            "full_system_tokens",
            "tool_tokens",
        ),
        0,
    )
    requests = unbuildable = 0
    artifacts: dict[str, str] = {}
    for request, messages, _error, before in _requests(log, builder, branch_id):
        _, full_messages, _, _ = next(full_iter)
        requests += 1
        response = responses.get(request.event_id)
        calls = _calls_of(response) if response is not None else []
        built = messages is not None
        if not built:
            unbuildable += 1
        else:
            h, s = _tokens(est, messages or [])
            fh, fs = _tokens(est, full_messages or [])
            fig["history_tokens"] += h
            fig["system_tokens"] += s
            fig["full_history_tokens"] += fh
            fig["full_system_tokens"] += fs
            fig["tool_tokens"] += est.count_tools(log.request_tools(request.event_id))
        if not calls:
            continue
        text = _prompt_text(messages or []) if built else ""
        sources = _sources(before, store, artifacts)
        for n, call in enumerate(calls, start=1):
            base = {
                "run_id": log.run_id,
                "step": request.step,
                "request_id": request.event_id,
                "built": built,
                "call": n,
                "tool": call.name,
            }
            values = extract_values(call.arguments or {}, compiled_shapes)
            if not values:
                rows.append({**base, "arg": None, "kind": None, "value": None})
                continue
            for pointer, kind, value in values:
                source, label, ref = _source_of(value, kind, sources)
                if not built:
                    held = "missing"
                elif _held(value, kind, text):
                    held = "present"
                elif ref is not None and ref in text:
                    held = "bindable"
                else:
                    held = "missing"
                rows.append(
                    {
                        **base,
                        "arg": pointer,
                        "kind": kind,
                        "value": value,
                        "source": source,
                        "source_label": label,
                        "held": held,
                    }
                )
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame.attrs["summary"] = _summarize(frame, requests, unbuildable, fig)
    frame.attrs["policy"] = (
        "recorded"
        if builder is None
        else getattr(getattr(builder, "policy", None), "name", type(builder).__name__)
    )
    return frame


def _responses_after(log: EventLog, branch_id: str) -> dict[int, ModelResponseEvent]:
    """The model response that answered each request, by request event id."""
    out: dict[int, ModelResponseEvent] = {}
    last: int | None = None
    for e in log.events:
        if e.branch_id != branch_id:
            continue
        if isinstance(e, ModelRequestEvent):
            last = e.event_id
        elif isinstance(e, ModelResponseEvent) and last is not None:
            out[last] = e
            last = None
    return out


def _sources(
    before: Sequence[Event], store: Any, artifacts: dict[str, str]
) -> list[tuple[str, str, str, str | None]]:
    """(source, label, text, artifact ref) of every user turn and tool result so far."""
    out: list[tuple[str, str, str, str | None]] = []
    for e in before:
        if isinstance(e, UserMessageEvent):
            out.append(("user", e.label, e.content or "", None))
        elif isinstance(e, ToolResultEvent) and e.ok is not False:
            ref = e.payload.get("artifact")
            text = e.content or ""
            if isinstance(ref, str) and store is not None:
                if ref not in artifacts:
                    try:
                        artifacts[ref] = str(store.read(ref))
                    except (HarnessError, OSError, KeyError):  # expired or foreign: keep ours
                        artifacts[ref] = text
                text = artifacts[ref]
            out.append(("tool", e.label, text, ref if isinstance(ref, str) else None))
    return out


def _source_of(
    value: str, kind: str, sources: Sequence[tuple[str, str, str, str | None]]
) -> tuple[str, str | None, str | None]:
    """Where `value` first appeared: (source, label, artifact ref of that source)."""
    for source, label, text, ref in sources:
        if _held(value, kind, text):
            return source, label, ref
    return "derived", None, None


def _summarize(frame: Any, requests: int, unbuildable: int, fig: dict[str, int]) -> dict[str, Any]:
    typed = frame[frame["kind"].notna()]
    needed = typed[typed["source"] != "derived"]
    ok = needed["held"].isin(["present", "bindable"])
    calls = frame.groupby(["run_id", "request_id", "call"], sort=False)
    n_calls = int(calls.ngroups)
    bad = needed[~ok].groupby(["run_id", "request_id", "call"]).ngroups if len(needed) else 0
    full_h = fig["full_history_tokens"]
    full_s = full_h + fig["full_system_tokens"]

    def ratio(a: int, b: int) -> float:
        return a / b if b else 1.0

    return {
        "calls": n_calls,
        "calls_complete": ratio(n_calls - int(bad), n_calls),
        "values": len(needed),
        "values_present": ratio(int((needed["held"] == "present").sum()), len(needed)),
        "values_bindable": ratio(int((needed["held"] == "bindable").sum()), len(needed)),
        "values_derived": int((typed["source"] == "derived").sum()),
        "requests": requests,
        "unbuildable": unbuildable,
        **fig,
        "history_token_ratio": ratio(fig["history_tokens"], full_h),
        "with_system_ratio": ratio(fig["history_tokens"] + fig["system_tokens"], full_s),
        "with_tools_ratio": ratio(
            fig["history_tokens"] + fig["system_tokens"] + fig["tool_tokens"],
            full_s + fig["tool_tokens"],
        ),
    }


def combine(frames: Iterable[Any]) -> Any:
    """Concatenate per-run sufficiency frames and recompute the summary over all of them.

    Args:
        frames: frames returned by `sufficiency` (one per run, same policy).

    Returns:
        One DataFrame with `COLUMNS`; `attrs["summary"]` as in `sufficiency`, summed over runs.
    """
    import pandas as pd

    frames = list(frames)
    keys = (
        "history_tokens",
        "full_history_tokens",
        "system_tokens",
        "full_system_tokens",
        "tool_tokens",
    )
    fig = {k: sum(int(f.attrs["summary"][k]) for f in frames) for k in keys}
    requests = sum(int(f.attrs["summary"]["requests"]) for f in frames)
    unbuildable = sum(int(f.attrs["summary"]["unbuildable"]) for f in frames)
    nonempty = [f for f in frames if len(f)]
    frame = (
        pd.concat(nonempty, ignore_index=True) if nonempty else pd.DataFrame(columns=list(COLUMNS))
    )
    frame.attrs["summary"] = _summarize(frame, requests, unbuildable, fig)
    frame.attrs["policy"] = frames[0].attrs.get("policy") if frames else None
    return frame


def summary_line(frame: Any, policy: str | None = None) -> str:
    """The one-line figures of a sufficiency frame.

    Args:
        frame: a frame from `sufficiency` or `combine`.
        policy: the name to print (default: the frame's own).

    Returns:
        `policy=NAME calls_complete=PCT values_present=PCT values_bindable=PCT unbuildable=N
        history_token_ratio=R` (PCT in percent with one decimal, R with three decimals,
        without system messages).
    """
    s: dict[str, Any] = frame.attrs["summary"]
    name = policy or frame.attrs.get("policy") or "recorded"
    return (
        f"policy={name} calls_complete={100 * s['calls_complete']:.1f} "
        f"values_present={100 * s['values_present']:.1f} "
        f"values_bindable={100 * s['values_bindable']:.1f} unbuildable={s['unbuildable']} "
        f"history_token_ratio={s['history_token_ratio']:.3f}"
    )
