"""HTML for Jupyter (R-O2; STYLE.md §7): the helpers, the registry and the generic renderers.

Objects delegate their `_repr_html_` (through `harnesskit._repr.html`) to `render_html`, which
looks up a renderer registered for the object's class name (or a base class's), and otherwise
renders a dataclass as a field table. All model and tool text is escaped with `html.escape`;
output is bounded (head and tail rows, a short inline head with the rest behind `<details>`,
head and tail of long text, and a cap on the whole fragment); a failing renderer warns and
returns `None` so the plain repr shows.
`set_display("plain")` turns HTML off globally or within a `with` block.

Plugging in another module's object (an artifact ref, an injection record, a report):

```python
from harnesskit import _repr

class ArtifactRef:
    def _repr_html_(self) -> str | None:
        return _repr.html(self)             # a dataclass gets a field table for free

@display.renderer("ArtifactRef")            # optional: a dedicated view, in renderers.py
def _artifact_ref(ref) -> str:
    return display.card("ArtifactRef " + ref.id, display.fields_table({...}))
```

Objects with a `frame()` method (reports) render their frame as a bounded table by default.
The HTML uses inline styles only (no `<script>`, no classes), with translucent colours so it
reads in light and dark themes, in JupyterLab, VS Code, GitHub and nbviewer.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from harnesskit import _repr
from harnesskit.errors import UsageError


def _escape(s: str) -> str:
    """`html.escape(s)` (quotes too), without importing `html` (and its entity table)."""
    return (
        s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#x27;")
    )


__all__ = [
    "HEAD_ROWS",
    "INLINE_CHARS",
    "MAX_HTML_CHARS",
    "MAX_TEXT_CHARS",
    "TAIL_ROWS",
    "Safe",
    "badge",
    "card",
    "escape_bounded",
    "event_card",
    "events_table",
    "fields_table",
    "frame_table",
    "get_display",
    "json_block",
    "register",
    "render_html",
    "renderer",
    "request_view",
    "run_summary",
    "set_display",
    "table",
    "text_block",
]

#: Characters of one text kept in HTML (head and tail); the middle is replaced by a note.
MAX_TEXT_CHARS = 2_000
#: Characters of a text shown before the rest goes behind `<details>`.
INLINE_CHARS = 300
#: Cap on one rendered fragment (characters); beyond it a short summary is shown instead.
MAX_HTML_CHARS = 200_000
#: Rows kept at the head and tail of a long table.
HEAD_ROWS = 20
TAIL_ROWS = 10
#: Characters kept per table cell.
CELL_CHARS = 300

_MODE = {"value": "html"}
_RENDERERS: dict[str, Callable[[Any], str]] = {}

_FONT = "font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px"
_BORDER = "1px solid rgba(127,127,127,.35)"
_CELL = f"border:{_BORDER};padding:2px 6px;text-align:left;vertical-align:top"
_PRE = "white-space:pre-wrap;word-break:break-word;margin:2px 0"
_TONES = {
    "ok": "rgba(46,160,67,.18)",
    "error": "rgba(218,54,51,.20)",
    "warn": "rgba(210,153,34,.22)",
    "info": "rgba(56,139,253,.18)",
    "muted": "rgba(127,127,127,.15)",
}


_RULES = {
    "ok": "rgba(46,160,67,.9)",
    "error": "rgba(218,54,51,.9)",
    "warn": "rgba(210,153,34,.9)",
    "info": "rgba(56,139,253,.9)",
    "muted": "rgba(127,127,127,.5)",
}


class Safe(str):
    """A string of trusted HTML built by this module; `table` and `card` insert it unescaped."""

    __slots__ = ()


class _DisplayMode(contextlib.AbstractContextManager["_DisplayMode"]):
    """Returned by `set_display`: restores the previous mode when used as a context manager."""

    def __init__(self, previous: str) -> None:
        self.previous = previous

    def __exit__(self, *exc: object) -> None:
        _MODE["value"] = self.previous


def set_display(mode: str) -> contextlib.AbstractContextManager[Any]:
    """Switch rich display: `"html"` (default) or `"plain"` (objects show their plain repr).

    Takes effect at once and globally; used as a context manager (`with hk.set_display("plain"):`)
    the previous mode comes back on exit.

    Args:
        mode: `"html"` or `"plain"`.

    Returns:
        A context manager restoring the previous mode on exit.

    Raises:
        UsageError: an unknown mode.
    """
    if mode not in ("html", "plain"):
        raise UsageError(f"display mode must be 'html' or 'plain', got {mode!r}")
    previous = _MODE["value"]
    _MODE["value"] = mode
    return _DisplayMode(previous)


def get_display() -> str:
    """The current display mode, `"html"` or `"plain"`."""
    return _MODE["value"]


# -- text --------------------------------------------------------------------------------------


def _esc(value: Any) -> str:
    """Escape a short value (a number from a payload: logs read from disk are untrusted too)."""
    return escape_bounded(value, 80)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _cut(s: str, limit: int) -> str:
    if len(s) <= limit:
        return s
    half = max(limit // 2, 1)
    return f"{s[:half]}\n… [{len(s) - 2 * half:,} chars not shown] …\n{s[-half:]}"


def escape_bounded(text: Any, limit: int = MAX_TEXT_CHARS) -> str:
    """Escape `text` for HTML, keeping at most `limit` chars (head and tail) with a note between.

    Args:
        text: a string, or any value (shown as its JSON text).
        limit: characters kept, head and tail halves.

    Returns:
        HTML-escaped text (no tags of its own).
    """
    return _escape(_cut(_as_text(text), limit))


def text_block(
    text: Any, *, inline: int = INLINE_CHARS, limit: int = MAX_TEXT_CHARS, pre: bool = True
) -> Safe:
    """A bounded, escaped block of untrusted text.

    Short text is shown whole. Longer text shows its first `inline` chars, and a `<details>`
    holds the text cut to `limit` chars (head and tail) with its full length in the summary.

    Args:
        text: model or tool text (or any value, shown as JSON).
        inline: characters shown before the fold.
        limit: characters kept inside the fold (head and tail halves).
        pre: keep line breaks (`white-space: pre-wrap`).

    Returns:
        An HTML fragment.
    """
    s = _as_text(text)
    tag, style = ("div", _PRE) if pre else ("span", "")
    if len(s) <= inline:
        return Safe(f"<{tag} style='{style}'>{_escape(s)}</{tag}>")
    head = _escape(s[:inline])
    return Safe(
        f"<{tag} style='{style}'>{head}…</{tag}>"
        f"<details><summary style='cursor:pointer'>{len(s):,} chars — show more</summary>"
        f"<div style='{_PRE}'>{escape_bounded(s, limit)}</div></details>"
    )


def json_block(value: Any, *, inline: int = INLINE_CHARS, limit: int = MAX_TEXT_CHARS) -> Safe:
    """`value` as indented JSON in a bounded `text_block`.

    Args:
        value: any JSON-ready value (others are shown with `str`).
        inline: characters shown before the fold.
        limit: characters kept inside the fold.

    Returns:
        An HTML fragment.
    """
    return text_block(
        json.dumps(value, ensure_ascii=False, indent=1, default=str), inline=inline, limit=limit
    )


def badge(text: Any, tone: str = "muted") -> Safe:
    """A small escaped label with a translucent background.

    Args:
        text: the label.
        tone: `ok`, `error`, `warn`, `info` or `muted`.

    Returns:
        An HTML fragment.
    """
    bg = _TONES.get(tone, _TONES["muted"])
    return Safe(
        f"<span style='background:{bg};border-radius:3px;padding:0 4px'>"
        f"{escape_bounded(text, 80)}</span>"
    )


def _cell(value: Any) -> str:
    if isinstance(value, Safe):
        return str(value)
    if value is None:
        return ""
    return escape_bounded(value, CELL_CHARS)


def table(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    caption: str = "",
    head: int = HEAD_ROWS,
    tail: int = TAIL_ROWS,
) -> Safe:
    """A bounded, escaped HTML table: the first `head` and last `tail` rows of many.

    Args:
        columns: header labels.
        rows: cell values; `Safe` values are inserted as HTML, others escaped and cut to
            `CELL_CHARS` characters; `None` is an empty cell.
        caption: a caption (escaped).
        head: rows kept at the start when rows are cut.
        tail: rows kept at the end when rows are cut.

    Returns:
        An HTML fragment.
    """
    if len(rows) <= head + tail:
        return _table(columns, rows, [], 0, caption)
    last = rows[len(rows) - tail :] if tail else []
    return _table(columns, rows[:head], last, len(rows) - head - tail, caption)


def _table(
    columns: Sequence[str],
    first: Sequence[Sequence[Any]],
    last: Sequence[Sequence[Any]],
    omitted: int,
    caption: str,
) -> Safe:
    def row(values: Sequence[Any]) -> str:
        return "<tr>" + "".join(f"<td style='{_CELL}'>{_cell(v)}</td>" for v in values) + "</tr>"

    gap = (
        f"<tr><td style='{_CELL};opacity:.7' colspan='{len(columns)}'>"
        f"… {omitted:,} rows not shown …</td></tr>"
        if omitted
        else ""
    )
    header = "".join(f"<th style='{_CELL}'>{_escape(str(c))}</th>" for c in columns)
    cap = ""
    if caption:
        cap = f"<caption style='text-align:left'>{escape_bounded(caption, 200)}</caption>"
    body = "".join(map(row, first)) + gap + "".join(map(row, last))
    return Safe(
        f"<table style='{_FONT};border-collapse:collapse'>{cap}<tr>{header}</tr>{body}</table>"
    )


def fields_table(fields: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> Safe:
    """A two-column (field, value) table; strings become `text_block`s, containers JSON blocks.

    Args:
        fields: `{name: value}` or `(name, value)` pairs, in display order.

    Returns:
        An HTML fragment.
    """
    pairs = fields.items() if isinstance(fields, Mapping) else fields
    rows = []
    for name, value in pairs:
        if isinstance(value, Safe):
            cell: Any = value
        elif isinstance(value, str):
            cell = text_block(value)
        elif isinstance(value, dict | list | tuple):
            cell = json_block(value)
        else:
            cell = value
        rows.append([Safe(f"<b>{_escape(str(name))}</b>"), cell])
    return table(["field", "value"], rows, head=60, tail=0)


def frame_table(df: Any, *, caption: str = "") -> Safe:
    """A pandas DataFrame as a bounded, escaped `table` (its index is dropped).

    Only the rows shown (head and tail) are converted, so a large frame costs little.

    Args:
        df: the DataFrame.
        caption: a caption.

    Returns:
        An HTML fragment.
    """
    columns = [str(c) for c in df.columns]
    n = len(df)
    if n <= HEAD_ROWS + TAIL_ROWS:
        return _table(columns, [list(r) for r in df.itertuples(index=False)], [], 0, caption)
    first = [list(r) for r in df.head(HEAD_ROWS).itertuples(index=False)]
    last = [list(r) for r in df.tail(TAIL_ROWS).itertuples(index=False)]
    return _table(columns, first, last, n - HEAD_ROWS - TAIL_ROWS, caption)


def card(title: Any, *parts: str, tone: str = "muted") -> Safe:
    """A titled box around HTML fragments.

    Args:
        title: the heading (escaped; a `Safe` title is inserted as is).
        *parts: HTML fragments (`Safe` strings from this module).
        tone: the colour of the left rule (see `badge`).

    Returns:
        An HTML fragment.
    """
    head = str(title) if isinstance(title, Safe) else escape_bounded(title, 200)
    rule = _RULES.get(tone, _RULES["muted"])
    return Safe(
        f"<div style='{_FONT};border-left:3px solid {rule};padding:2px 0 2px 8px;margin:2px 0'>"
        f"<div style='margin-bottom:2px'>{head}</div>{''.join(parts)}</div>"
    )


# -- registry ----------------------------------------------------------------------------------


def register(kind: str, fn: Callable[[Any], str]) -> None:
    """Register `fn(obj) -> html` for objects whose class (or a base class) is named `kind`.

    Args:
        kind: a class name such as `"ArtifactRef"`; a later registration replaces an earlier one.
        fn: returns an HTML fragment built with this module's helpers (escape every text).
    """
    _RENDERERS[kind] = fn


def renderer(kind: str) -> Callable[[Callable[[Any], str]], Callable[[Any], str]]:
    """Decorator form of `register`.

    Args:
        kind: the class name the decorated function renders.

    Returns:
        The decorator (it returns the function unchanged).
    """

    def deco(fn: Callable[[Any], str]) -> Callable[[Any], str]:
        register(kind, fn)
        return fn

    return deco


def _find_renderer(obj: Any) -> Callable[[Any], str] | None:
    for cls in type(obj).__mro__:
        fn = _RENDERERS.get(cls.__name__)
        if fn is not None:
            return fn
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _dataclass
    if callable(getattr(obj, "frame", None)):
        return _report
    return None


def render_html(obj: Any) -> str | None:
    """HTML for `obj`, or `None` so that Jupyter shows the plain repr.

    `None` in plain mode, when no renderer fits, when the renderer raises (a warning says
    why), or, when the fragment passes `MAX_HTML_CHARS`, a one-line summary is shown instead.

    Args:
        obj: any object; renderers are looked up by class name along its MRO.

    Returns:
        An HTML fragment or `None`.
    """
    if _MODE["value"] != "html":
        return None
    fn = _find_renderer(obj)
    if fn is None:
        return None
    try:
        out = fn(obj)
    except Exception as exc:
        warnings.warn(
            f"harnesskit could not render {type(obj).__name__} as HTML "
            f"({type(exc).__name__}: {exc}); showing the plain repr",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    if len(out) > MAX_HTML_CHARS:
        return card(
            repr(obj),
            f"<div>HTML view of {len(out):,} chars is over the {MAX_HTML_CHARS:,} cap; "
            "use <code>.frame()</code> or <code>to_dict()</code> for the full data.</div>",
            tone="warn",
        )
    return out


# -- generic renderers -------------------------------------------------------------------------


def _dataclass(obj: Any) -> str:
    fields = []
    for f in dataclasses.fields(obj):
        if not f.repr:
            continue
        value = getattr(obj, f.name)
        if value is None or (isinstance(value, str | tuple | list | dict) and not value):
            continue
        fields.append((f.name, value if not dataclasses.is_dataclass(value) else repr(value)))
    return card(Safe(f"<b>{_escape(type(obj).__name__)}</b>"), fields_table(fields))


def _report(obj: Any) -> str:
    df = obj.frame()
    return card(repr(obj), frame_table(df))


# -- harnesskit objects ------------------------------------------------------------------------

_TYPE_TONE = {
    "tool.result": "ok",
    "model.response": "info",
    "user.message": "muted",
    "brake": "warn",
    "run.finished": "muted",
    "alert.mismatch": "warn",
    "alert.representation": "error",
    "alert.conflict": "warn",
}


def _event_tone(e: Any) -> str:
    if e.type == "tool.result" and e.payload.get("ok") is False:
        return "error"
    return _TYPE_TONE.get(e.type, "muted")


def _event_body(e: Any) -> str:
    """The readable content of an event: text, tool calls, results; the payload otherwise."""
    p = e.payload
    if e.type == "user.message":
        return text_block(p.get("content", ""))
    if e.type == "model.response":
        msg = p.get("message") or {}
        parts: list[str] = [text_block(msg["content"])] if msg.get("content") else []
        for call in msg.get("tool_calls") or ():
            fn = call.get("function") or {}
            parts.append(
                f"<div>→ <b>{escape_bounded(fn.get('name', ''), 80)}</b>"
                f"{text_block(fn.get('arguments', ''), inline=200)}</div>"
            )
        usage = p.get("usage") or {}
        if usage:
            est = " (estimated)" if usage.get("estimated") else ""
            parts.append(
                f"<div style='opacity:.7'>{_esc(usage.get('prompt_tokens', 0))} prompt + "
                f"{_esc(usage.get('completion_tokens', 0))} completion tokens{est}</div>"
            )
        return "".join(parts)
    if e.type == "tool.call":
        args = p.get("arguments") if p.get("arguments") is not None else p.get("raw_arguments")
        return Safe(f"<b>{escape_bounded(p.get('tool', ''), 80)}</b>{json_block(args)}")
    if e.type == "tool.result":
        return text_block(p.get("content", ""))
    if e.type == "model.request":
        return Safe(
            f"<div>{_esc(p.get('n_messages', '?'))} messages, "
            f"~{_esc(p.get('token_estimate', '?'))} tokens"
            f"{' (closing, tool-less)' if p.get('final') else ''}</div>"
        )
    return json_block(p, inline=200)


def event_card(e: Any) -> Safe:
    """A compact card for one event: label, type and its readable content (no raw payload).

    Args:
        e: an `Event`.

    Returns:
        An HTML fragment.
    """
    title = Safe(f"{_escape(e.label)} {badge(e.type, _event_tone(e))}")
    return card(title, _event_body(e), tone=_event_tone(e))


@renderer("Event")
def _event(e: Any) -> str:
    title = Safe(
        f"<b>{_escape(e.label)}</b> {badge(e.type, _event_tone(e))} "
        f"<span style='opacity:.7'>step {_esc(e.step if e.step is not None else '–')} · "
        f"{escape_bounded(e.source, 40)} · {escape_bounded(e.branch_id, 40)}"
        f"{' · ' + escape_bounded(e.status, 20) if e.status != 'active' else ''}</span>"
    )
    payload = json_block(e.payload, inline=0)
    return card(
        title,
        _event_body(e),
        f"<details><summary style='cursor:pointer'>payload</summary>{payload}</details>",
        tone=_event_tone(e),
    )


def _event_rows(events: Sequence[Any]) -> list[list[Any]]:
    rows = []
    for e in events:
        rows.append(
            [
                e.event_id,
                e.payload.get("step"),
                badge(e.type, _event_tone(e)),
                e.source,
                e.branch_id if e.branch_id != "main" else "",
                e.summary,
            ]
        )
    return rows


_EVENT_COLUMNS = ["id", "step", "type", "source", "branch", "summary"]


def events_table(events: Sequence[Any], *, caption: str = "") -> Safe:
    """A bounded table of events: id, step, type, source, branch, summary.

    Args:
        events: `Event`s, in order.
        caption: a caption.

    Returns:
        An HTML fragment.
    """
    return table(_EVENT_COLUMNS, _event_rows(events), caption=caption)


@renderer("EventLog")
def _event_log(log: Any) -> str:
    return card(repr(log), events_table(log.events))


def request_view(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], event: Any = None
) -> Safe:
    """The exact request sent to a model: every message (role, text, tool calls) and the tools.

    Args:
        messages: chat-completions message dicts as sent (`EventLog.request_messages`).
        tools: the tool specs as sent (`EventLog.request_tools`).
        event: the `model.request` event, for its step and token estimate (optional).

    Returns:
        An HTML fragment.
    """
    rows = []
    for i, m in enumerate(messages):
        parts = [f"[answers {m['tool_call_id']}] "] if m.get("tool_call_id") else []
        parts.append(m.get("content") or "")
        for call in m.get("tool_calls") or ():
            fn = call.get("function") or {}
            parts.append(f"\n→ {fn.get('name', '')}({fn.get('arguments', '')}) [{call.get('id')}]")
        rows.append([i, m.get("role", ""), text_block("".join(parts).strip(), inline=400)])
    names = ", ".join((t.get("function") or {}).get("name", "?") for t in tools) or "none"
    p = event.payload if event is not None else {}
    step = badge(f"step {p.get('step', '?')}", "info")
    title = Safe(
        f"<b>request sent</b> {step} "
        f"{len(messages)} messages · ~{_esc(p.get('token_estimate', '?'))} tokens (estimate, "
        f"messages only) · tools: {escape_bounded(names, 400)}"
        + (f" {badge('closing request, tool-less', 'warn')}" if p.get("final") else "")
    )
    body = json_block({"messages": list(messages), "tools": list(tools)}, inline=0)
    return card(
        title,
        table(["#", "role", "content and tool calls"], rows),
        f"<details><summary style='cursor:pointer'>raw JSON</summary>{body}</details>",
        tone="info",
    )


def _status(run: Any) -> Safe:
    st = run.state
    if st.finish_reason is None:
        return badge("running" if st.step else "ready", "info")
    if st.finish_reason == "stop":
        return badge("stop", "ok")
    if st.finish_reason == "error":
        return badge("error", "error")
    return badge(st.finish_reason, "warn")


def _limit(value: Any, limit: Any) -> str:
    return f"{value:,}" + (f" / {limit:,}" if limit is not None else "")


def run_summary(run: Any) -> Safe:
    """One line about a run: id, status, step against `max_steps`, tokens against `max_tokens`.

    Args:
        run: a `Run`.

    Returns:
        An HTML fragment.
    """
    st, lim = run.state, run.harness.limits
    return Safe(
        f"<b>Run {escape_bounded(st.run_id, 80)}</b> {_status(run)} "
        f"<span style='opacity:.8'>step {_limit(st.step, lim.max_steps)} · tokens "
        f"{_limit(st.total_tokens, lim.max_tokens)} ({st.prompt_tokens:,} prompt + "
        f"{st.completion_tokens:,} completion) · {len(st.tool_history)} tool calls · "
        f"{len(run.log):,} events · model {escape_bounded(run.harness.model.name, 60)}</span>"
    )


def _incomplete_text(finish_reason: str | None) -> str:
    if finish_reason == "length":  # the model's own output limit, not one of the run's brakes
        return "incomplete: the answer was cut by the output limit (max_tokens)"
    return f"incomplete: ended by the {finish_reason} brake; best-effort answer"


@renderer("Run")
def _run(run: Any) -> str:
    st = run.state
    title = run_summary(run)
    parts: list[str] = []
    if st.incomplete:
        parts.append(str(badge(_incomplete_text(st.finish_reason))))
    if run.error is not None:
        parts.append(str(card("error", text_block(f"{run.error}"), tone="error")))
    last = [e for e in run.log.events if e.branch_id == st.branch_id and e.step == st.step]
    shown = [e for e in last if e.type in ("model.response", "tool.result", "brake")]
    if shown:
        items = "".join(event_card(e) for e in shown[:HEAD_ROWS])
        more = f"<div>… {len(shown) - HEAD_ROWS} more</div>" if len(shown) > HEAD_ROWS else ""
        parts.append(f"<div style='margin:4px 0'><i>step {st.step}</i>{items}{more}</div>")
    elif st.step == 0:
        users = run.log.of_type("user.message", branch_id=st.branch_id)
        if users:
            parts.append(
                f"<div><i>user</i>{text_block(users[-1].payload.get('content', ''))}</div>"
            )
    events = events_table(run.log.events)
    parts.append(
        f"<details><summary style='cursor:pointer'>all {len(run.log):,} events</summary>"
        f"{events}</details>"
    )
    return card(title, *parts, tone="info" if st.finish_reason is None else "ok")


@renderer("RunState")
def _run_state(st: Any) -> str:
    return card(
        Safe(f"<b>RunState {escape_bounded(st.run_id, 80)}</b>"),
        fields_table(
            [
                ("step", st.step),
                ("finish_reason", st.finish_reason),
                ("incomplete", st.incomplete),
                ("cancelled", st.cancelled),
                ("prompt_tokens", st.prompt_tokens),
                ("completion_tokens", st.completion_tokens),
                ("consecutive_errors", st.consecutive_errors),
                ("tool calls", len(st.tool_history)),
                ("branch_id", st.branch_id),
            ]
        ),
    )


@renderer("ToolRegistry")
def _registry(reg: Any) -> str:
    rows = [
        [
            Safe(f"<b>{_escape(t.name)}</b>"),
            badge(t.risk, {"read": "ok", "write": "warn", "destructive": "error"}[t.risk]),
            t.group or "",
            ", ".join((t.parameters.get("properties") or {}).keys()),
            t.description.strip().split("\n")[0],
        ]
        for t in reg
    ]
    return card(repr(reg), table(["tool", "risk", "group", "parameters", "description"], rows))


@renderer("Tool")
def _tool(t: Any) -> str:
    props = t.parameters.get("properties") or {}
    required = set(t.parameters.get("required") or ())
    rows = [
        [
            Safe(f"<b>{_escape(name)}</b>" + (" *" if name in required else "")),
            _schema_type(schema),
            schema.get("description", ""),
        ]
        for name, schema in props.items()
    ]
    risk_tone = {"read": "ok", "write": "warn", "destructive": "error"}[t.risk]
    title = Safe(
        f"<b>{_escape(t.name)}</b> {badge(t.risk, risk_tone)}"
        + (f" {badge('group ' + t.group)}" if t.group else "")
        + (f" {badge('dry-run')}" if t.supports_dry_run else "")
    )
    return card(
        title,
        text_block(t.description, inline=600),
        table(["parameter", "type", "description"], rows) if rows else "",
        f"<details><summary style='cursor:pointer'>JSON schema</summary>"
        f"{json_block(t.parameters, inline=0)}</details>",
        tone=risk_tone,
    )


def _schema_type(schema: Mapping[str, Any]) -> str:
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " | ".join(_schema_type(s) for s in schema["anyOf"])
    kind = str(schema.get("type", "any"))
    if kind == "array":
        return f"array of {_schema_type(schema.get('items') or {})}"
    if "format" in schema:
        return f"{kind} ({schema['format']})"
    return kind


@renderer("ApprovalRequest")
def _approval(req: Any) -> str:
    parts: list[str] = [fields_table([("risk", req.risk), ("call id", req.tool_call_id)])]
    parts.append(f"<div><b>arguments</b>{json_block(req.arguments, inline=600)}</div>")
    if req.preview is not None:
        parts.append(f"<div><b>dry-run preview</b>{json_block(req.preview, inline=600)}</div>")
    else:
        parts.append("<div style='opacity:.7'>no dry-run preview (the tool has no dry run)</div>")
    return card(Safe(f"approve <b>{_escape(req.tool)}</b>?"), *parts, tone="warn")


@renderer("LintIssue")
def _lint_issue(issue: Any) -> str:
    where = f"{issue.tool}.{issue.param}" if issue.param else issue.tool
    title = Safe(f"{badge(issue.code, 'warn')} <b>{_escape(where)}</b>")
    return card(title, text_block(issue.message), tone="warn")


_DECISION_TONE = {"selected": "ok", "excluded": "warn", "summarized": "info"}


@renderer("InjectionRecord")
def _injection_record(rec: Any) -> str:
    title = Safe(
        f"<b>context.injected</b> EV-{_esc(rec.event_id)} "
        f"{badge(f'policy {rec.policy} v{rec.policy_version}', 'info')} "
        f"<span style='opacity:.8'>step {_esc(rec.step)} · model "
        f"{escape_bounded(rec.model, 60)} · {len(rec.selected):,} selected, "
        f"{len(rec.excluded):,} excluded, {len(rec.summarized):,} summarized · "
        f"~{_esc(rec.token_estimate)} tokens · summary "
        f"{escape_bounded(rec.summary_hash or '–', 20)}</span>"
    )
    rows = [
        [i, label, kind, badge(decision, _DECISION_TONE.get(decision, "muted")), reason]
        for i, label, kind, decision, reason in rec.rows
    ]
    parts = [table(["event", "label", "type", "decision", "reason"], rows)]
    if rec.conflicts:
        lines = [
            [c.get("key"), c.get("winner") or badge("unresolved: paused", "error"), c.get("rule")]
            for c in rec.conflicts
        ]
        parts.append(table(["conflict key", "winner", "rule"], lines, caption="conflicts"))
    return card(title, *parts, tone="info")


@renderer("ArtifactRef")
def _artifact_ref(r: Any) -> str:
    tone = "ok" if r.status == "active" else "warn"
    title = Safe(f"{badge(r.status, tone)} <b>{_escape(r.id)}</b> {_escape(r.kind)}")
    fields = [
        ("size", f"{r.size_chars:,} chars ({r.size_bytes:,} bytes)"),
        ("items", r.items),
        ("arrays", r.arrays),
        ("source", r.source),
        ("data class", r.data_class),
        ("flags", f"truncated={r.truncated} summary={r.summary} incomplete={r.incomplete}"),
        ("sha256", r.sha256),
    ]
    if r.status_reason:
        fields.append(("status", r.status_reason))
    parts: list[str] = [fields_table(fields)]
    if r.preview is not None:
        p = r.preview
        parts.append(
            f"<div><b>preview</b> chars {p.start}–{p.end - 1} of {p.of_chars:,}"
            f"{text_block(p.text, inline=300, limit=1000)}</div>"
        )
    return card(title, *parts, tone=tone)


@renderer("TransportAudit")
def _transport_audit(a: Any) -> str:
    tone = "ok" if a.verdict.startswith("clean") else "warn"
    cols = ["run_id", "step", "tool", "path", "kind", "value", "transport", "status", "source"]
    rows = [[row.get(c) for c in cols] for row in a.rows]
    return card(text_block(a.verdict, pre=False), table(cols, rows), tone=tone)


_repr.install(render_html)
