"""HTML renderers for reports and views defined below the notebook floor (STYLE.md §7).

Each renderer is registered by class name with `display.renderer`, so the classes themselves
only call `harnesskit._repr.html(self)` and import nothing from this layer. The generic
renderers (runs, events, tools, artifacts) live in `display.py`; these are the tables of the
trajectory, resume, replay, audit and eval reports. Importing `harnesskit.notebook` registers
them. Every cell goes through `display.table`, which escapes and bounds it.
"""

from __future__ import annotations

from typing import Any

from harnesskit.notebook import display

__all__: list[str] = []


def _round(v: Any) -> Any:
    return round(v, 3) if isinstance(v, float) else v


def _summary_table(obj: Any) -> str:
    summ = obj.summary().reset_index()
    rows = [[_round(v) for v in row] for row in summ.itertuples(index=False)]
    return display.table(list(summ.columns), rows, caption=repr(obj))


@display.renderer("Trajectory")
def _trajectory(tr: Any) -> str:
    statuses = tr.statuses()
    rows = [
        [e.event_id, e.branch_id, e.type, statuses[e.event_id], tr.kind(e), e.summary]
        for e in tr.log.events
    ]
    columns = ["id", "branch", "type", "status", "kind", "summary"]
    return display.table(columns, rows, caption=repr(tr))


@display.renderer("ResumeReport")
def _resume_report(report: Any) -> str:
    rows = [["ok" if c.ok else "FAILED", c.name, c.detail] for c in report.checks]
    return display.table(["", "check", "detail"], rows, caption=repr(report))


@display.renderer("ReplayReport")
def _replay_report(report: Any) -> str:
    rows = [[d.step, d.what, d.recorded, d.replayed] for d in report.divergences]
    return display.table(["step", "what", "recorded", "replayed"], rows, caption=repr(report))


@display.renderer("AuditReport")
def _audit_report(report: Any) -> str:
    rows = [
        [
            "⚑" if f.flag else "",
            f.point,
            f.event_id,
            f.tool,
            f.argument,
            f.value,
            f.source,
            f.detail,
        ]
        for f in report.findings
    ]
    cols = ["", "point", "event", "tool", "argument", "value", "source", "detail"]
    return display.table(cols, rows, caption=report.verdict)


@display.renderer("Score")
def _score(score: Any) -> str:
    rows = [["✓" if c.passed else "✗", c.kind, c.name, c.detail] for c in score.checks]
    return display.table(["", "kind", "check", "detail"], rows, caption=repr(score))


display.register("ExperimentAudit", _summary_table)
display.register("ExperimentResult", _summary_table)
