"""The only module that builds HTML for Jupyter (R-O2; STYLE.md §7).

Objects delegate their `_repr_html_` to `render_html`. All model and tool text is escaped with
`html.escape`; output is bounded (head and tail rows, `<details>` for long text, a char cap);
a failing renderer warns and returns `None` so the plain repr shows. `set_display("plain")`
turns HTML off globally or within a `with` block.
"""

from __future__ import annotations

import contextlib
import html
import json
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["escape_bounded", "render_html", "set_display"]

_MODE = {"value": "html"}
MAX_TEXT_CHARS = 2_000
HEAD_ROWS = 20
TAIL_ROWS = 10
_RENDERERS: dict[str, Callable[[Any], str]] = {}


class _DisplayMode(contextlib.AbstractContextManager["_DisplayMode"]):
    def __init__(self, previous: str) -> None:
        self.previous = previous

    def __exit__(self, *exc: object) -> None:
        _MODE["value"] = self.previous


def set_display(mode: str) -> _DisplayMode:
    """Switch rich display: `"html"` (default) or `"plain"`; usable as a context manager.

    Raises:
        ValueError: an unknown mode.
    """
    if mode not in ("html", "plain"):
        raise ValueError(f"display mode must be 'html' or 'plain', got {mode!r}")
    previous = _MODE["value"]
    _MODE["value"] = mode
    return _DisplayMode(previous)


def escape_bounded(text: Any, limit: int = MAX_TEXT_CHARS) -> str:
    """Escape `text` for HTML, cutting it to `limit` chars (head and tail kept) with a note."""
    s = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, default=str)
    if len(s) > limit:
        half = limit // 2
        s = f"{s[:half]}\n… [{len(s) - limit} chars not shown] …\n{s[-half:]}"
    return html.escape(s)


def renderer(kind: str) -> Callable[[Callable[[Any], str]], Callable[[Any], str]]:
    """Register an HTML renderer for objects whose class name is `kind`."""

    def deco(fn: Callable[[Any], str]) -> Callable[[Any], str]:
        _RENDERERS[kind] = fn
        return fn

    return deco


def render_html(obj: Any) -> str | None:
    """HTML for `obj`, or `None` (plain repr) in plain mode, for unknown kinds, or on failure."""
    if _MODE["value"] != "html":
        return None
    fn = _RENDERERS.get(type(obj).__name__)
    if fn is None:
        return None
    try:
        return fn(obj)
    except Exception as exc:
        warnings.warn(f"harnesskit could not render {type(obj).__name__}: {exc}", stacklevel=2)
        return None


_STYLE = "font-family:ui-monospace,monospace;font-size:12px;border-collapse:collapse"
_CELL = "border:1px solid rgba(127,127,127,.35);padding:2px 6px;text-align:left;vertical-align:top"


def table(columns: list[str], rows: list[list[Any]], *, caption: str = "") -> str:
    """A bounded, escaped HTML table (head and tail rows kept when there are many)."""
    shown: list[list[Any] | None] = list(rows)
    if len(rows) > HEAD_ROWS + TAIL_ROWS:
        shown = [*rows[:HEAD_ROWS], None, *rows[-TAIL_ROWS:]]
    head = "".join(f"<th style='{_CELL}'>{html.escape(c)}</th>" for c in columns)
    body = []
    for row in shown:
        if row is None:
            gap = len(rows) - HEAD_ROWS - TAIL_ROWS
            body.append(
                f"<tr><td style='{_CELL}' colspan='{len(columns)}'>"
                f"… {gap} rows not shown …</td></tr>"
            )
            continue
        cells = "".join(f"<td style='{_CELL}'>{escape_bounded(v, 300)}</td>" for v in row)
        body.append(f"<tr>{cells}</tr>")
    cap = f"<caption style='text-align:left'>{html.escape(caption)}</caption>" if caption else ""
    return f"<table style='{_STYLE}'>{cap}<tr>{head}</tr>{''.join(body)}</table>"


@renderer("Event")
def _event(e: Any) -> str:
    payload = escape_bounded(json.dumps(e.payload, ensure_ascii=False, indent=1, default=str))
    return (
        f"<div><b>{html.escape(e.label)}</b> <code>{html.escape(e.type)}</code> "
        f"{escape_bounded(e.summary, 200)}<details><summary>payload</summary><pre>{payload}</pre>"
        "</details></div>"
    )


@renderer("EventLog")
def _event_log(log: Any) -> str:
    rows = [[e.event_id, e.type, e.branch_id, e.payload.get("step"), e.summary] for e in log.events]
    return table(["id", "type", "branch", "step", "summary"], rows, caption=repr(log))


@renderer("Run")
def _run(run: Any) -> str:
    st = run.state
    head = (
        f"<div><b>Run {html.escape(st.run_id)}</b> — step {st.step}, finish_reason "
        f"<code>{html.escape(str(st.finish_reason))}</code>, {st.prompt_tokens} prompt + "
        f"{st.completion_tokens} completion tokens, {len(run.log)} events</div>"
    )
    return head + _event_log(run.log)


@renderer("ToolRegistry")
def _registry(reg: Any) -> str:
    rows = [[t.name, t.risk, t.group or "", t.description.split("\n")[0]] for t in reg]
    return table(["tool", "risk", "group", "description"], rows, caption=repr(reg))


@renderer("Tool")
def _tool(t: Any) -> str:
    spec = escape_bounded(json.dumps(t.parameters, indent=1))
    return (
        f"<div><b>{html.escape(t.name)}</b> ({html.escape(t.risk)})<pre>"
        f"{escape_bounded(t.description)}</pre><details><summary>schema</summary><pre>{spec}"
        "</pre></details></div>"
    )


@renderer("InjectionRecord")
def _injection_record(rec: Any) -> str:
    caption = (
        f"context.injected EV-{rec.event_id} · policy {rec.policy} v{rec.policy_version} · "
        f"step {rec.step} · model {rec.model} · {len(rec.selected)} selected, "
        f"{len(rec.excluded)} excluded, {len(rec.summarized)} summarized · "
        f"~{rec.token_estimate} tokens · summary {rec.summary_hash or '—'}"
    )
    rows = [list(r) for r in rec.rows]
    out = table(["event", "label", "type", "decision", "reason"], rows, caption=caption)
    if rec.conflicts:
        items = "".join(
            f"<li>{escape_bounded(c.get('key'), 200)}: {escape_bounded(c.get('rule'), 200)}"
            f" (winner {escape_bounded(c.get('winner') or 'none', 50)})</li>"
            for c in rec.conflicts
        )
        out += f"<div><b>conflicts</b><ul>{items}</ul></div>"
    return out
