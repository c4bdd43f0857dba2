"""The four-point audit of a run or an experiment (R-P2).

Guiding rule: the model understands intent, the system moves the bytes. The audit reads a
finished run's event log and lists where bytes travelled through model-generated text:

1. `copied_id` / `copied_array`: identifier-like values (UUIDs, codes such as `A1002` or
   `mia_li_3668`, long digit runs) and arrays in tool arguments that the model typed instead of
   binding (`{"$bind": ...}`), where each first appeared (`USER-3`, `TOOL-7`, or nowhere =
   invented), and whether it arrived altered. Typing a value the user gave is unavoidable and
   not flagged; copying one from a tool result, altering or inventing one is.
2. `two_forms`: a source in two forms within one prompt sent to the model — a tool result in
   full plus a restatement of at least `min_restatement_chars` of it in another message — and
   every `alert.representation` event (the assembly check of the artifacts layer).
3. `preview_mismatch`: a preview (`{"preview": ..., "ref": ..., "offset": ...}` in a tool
   result or in tool arguments) that is not byte-equal to its source at its offset.
4. `model_fact`: policy facts supplied by the model rather than the system: every
   `alert.mismatch` event (a claim that differed from the truth, R-F1), plus arguments named in
   `policy_fact_args`.

This is a minimal transport detector of its own: the transport audit of `harnesskit.data.bindings`
(R-A7) was not in main when it was written; when it lands, point 1 should delegate to it.

```python
report = hk.audit(run)            # or an EventLog, a log path
report.clean, report.counts()     # False, {'copied_id': 1, ...}
report.frame()                    # one row per finding
hk.audit(result).summary()        # an experiment: one row per policy × model
```
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from harnesskit import _repr
from harnesskit._lazy import frozen_dataclass
from harnesskit.data.artifacts import INSPECTION_TOOLS
from harnesskit.data.idmatch import altered_copy, token_occurs
from harnesskit.errors import UsageError, checked_path
from harnesskit.log.events import Event, EventLog

__all__ = ["POINTS", "AuditReport", "ExperimentAudit", "Finding", "audit", "is_identifier"]

POINTS = ("copied_id", "copied_array", "two_forms", "preview_mismatch", "model_fact")
"""The finding kinds, in the order of the four points (ids and arrays are point 1)."""

_ID_CHARS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-:.]{3,127}$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_DATEISH = re.compile(r"^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$|^\d{1,2}:\d{2}")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-:.]{3,127}")
_REF_KEYS = ("ref", "source", "artifact", "artifact_id", "source_ref")


def is_identifier(value: Any) -> bool:
    """True for identifier-like strings: UUIDs, letter+digit codes, runs of 6+ digits.

    Dates and times, words without digits and text with spaces are not identifiers.
    """
    if not isinstance(value, str) or _DATEISH.match(value):
        return False
    if _UUID.match(value):
        return True
    if not _ID_CHARS.match(value):
        return False
    has_digit = any(ch.isdigit() for ch in value)
    has_alpha = any(ch.isalpha() for ch in value)
    return (has_digit and has_alpha) or (value.isdigit() and len(value) >= 6)


@frozen_dataclass(kw_only=True)
class Finding:
    """One row of an audit table."""

    point: str
    """One of `POINTS`."""
    flag: bool
    """True when this is a violation; False for recorded, acceptable transport."""
    event_id: int | None
    """The event it was found in (a tool call, a model request, an alert)."""
    detail: str
    """What happened, in one line."""
    tool: str = ""
    """The tool called, when the finding is in a tool call."""
    argument: str = ""
    """JSON pointer of the argument inside the call, e.g. `/order_id`."""
    value: str = ""
    """The value concerned (cut to 120 chars)."""
    source: str = ""
    """Where the value first appeared (`USER-3`, `TOOL-7`), or `invented`."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "point": self.point,
            "flag": self.flag,
            "event_id": self.event_id,
            "tool": self.tool,
            "argument": self.argument,
            "value": self.value,
            "source": self.source,
            "detail": self.detail,
        }


class AuditReport:
    """The four-point audit of one run: its findings, a verdict, a table."""

    def __init__(self, run_id: str, findings: Sequence[Finding]) -> None:
        """Wrap findings.

        Args:
            run_id: the run audited.
            findings: every finding, flagged or not, in log order.
        """
        self.run_id = run_id
        self.findings = list(findings)

    @property
    def flagged(self) -> list[Finding]:
        """The violations only."""
        return [f for f in self.findings if f.flag]

    @property
    def clean(self) -> bool:
        """True when no finding is flagged."""
        return not self.flagged

    def counts(self) -> dict[str, int]:
        """`{point: number of flagged findings}` for every point (zeros included)."""
        out = dict.fromkeys(POINTS, 0)
        for f in self.flagged:
            out[f.point] += 1
        return out

    @property
    def verdict(self) -> str:
        """One line: `clean` or the flagged counts."""
        if self.clean:
            return f"{self.run_id}: clean ({len(self.findings)} transports checked)"
        parts = ", ".join(f"{n} {p}" for p, n in self.counts().items() if n)
        return f"{self.run_id}: {len(self.flagged)} flagged — {parts}"

    def frame(self) -> Any:
        """A pandas DataFrame, one row per finding.

        Returns:
            Columns point, flag, event_id, tool, argument, value, source, detail.
        """
        import pandas as pd

        cols = ["point", "flag", "event_id", "tool", "argument", "value", "source", "detail"]
        return pd.DataFrame([f.to_dict() for f in self.findings], columns=cols)

    def __repr__(self) -> str:
        return f"<AuditReport {self.verdict}>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


class ExperimentAudit:
    """The audit of every run of an experiment: one row per run, one summary per experiment."""

    def __init__(self, rows: Sequence[Mapping[str, Any]], reports: Mapping[str, AuditReport]):
        """Wrap per-run reports.

        Args:
            rows: the experiment's result rows (case, policy, model, repeat, run_id).
            reports: `{run_id: AuditReport}`.
        """
        self.rows = [dict(r) for r in rows]
        self.reports = dict(reports)

    def runs(self) -> Any:
        """A pandas DataFrame, one row per run.

        Returns:
            Columns case, policy, model, repeat, run_id, the flagged count per point, clean.
        """
        import pandas as pd

        out = []
        for r in self.rows:
            rep = self.reports.get(r["run_id"])
            counts = rep.counts() if rep else dict.fromkeys(POINTS, 0)
            keys = ("case", "policy", "model", "repeat", "run_id")
            out.append({**{k: r.get(k) for k in keys}, **counts, "clean": bool(rep and rep.clean)})
        return pd.DataFrame(out, columns=[*keys, *POINTS, "clean"])

    def summary(self, *, by: Sequence[str] = ("policy", "model")) -> Any:
        """Per group: runs, clean_runs, clean_rate and the flagged total per point."""
        df = self.runs()
        agg = df.groupby(list(by), sort=False).agg(
            runs=("run_id", "count"), clean_runs=("clean", "sum"), **{p: (p, "sum") for p in POINTS}
        )
        agg.insert(2, "clean_rate", agg["clean_runs"] / agg["runs"])
        return agg

    def report(self, run_id: str) -> AuditReport:
        """The report of one run.

        Raises:
            UsageError: no such run.
        """
        if run_id not in self.reports:
            raise UsageError(f"no audited run {run_id!r}")
        return self.reports[run_id]

    def __repr__(self) -> str:
        clean = sum(1 for r in self.reports.values() if r.clean)
        return f"<ExperimentAudit {len(self.reports)} runs, {clean} clean>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


def audit(
    target: Any,
    *,
    min_restatement_chars: int = 200,
    policy_fact_args: Sequence[str] = (),
    resolve: Callable[[str], str | None] | None = None,
    branch_id: str = "main",
) -> Any:
    """Run the four-point audit.

    Args:
        target: a `Run`, an `EventLog`, a log file path, an `ExperimentResult`, or an
            experiment's run directory.
        min_restatement_chars: chars of a source repeated in another message of one prompt
            that count as a second form.
        policy_fact_args: argument names that carry policy facts (e.g. `"membership"`); a model
            supplying one is flagged.
        resolve: `resolve(ref) -> text | None` for preview refs that are not tool_call ids or
            event labels (e.g. an artifact store's reader).
        branch_id: the branch to audit.

    Returns:
        An `AuditReport` for a run or log; an `ExperimentAudit` for an experiment.

    Raises:
        UsageError: `target` is none of those, or a path that is not usable (a NUL byte, a
            name too long, a file in the way: `errors.checked_path`).
    """

    def run_audit(log: EventLog) -> AuditReport:
        return _audit_log(
            log,
            min_restatement_chars=min_restatement_chars,
            policy_fact_args=tuple(policy_fact_args),
            resolve=resolve,
            branch_id=branch_id,
        )

    if isinstance(target, str | os.PathLike):
        path = checked_path(
            target,
            "audit(target)",
            fix="pass a run, an EventLog, a .jsonl log, or an experiment's run directory",
        )
        if path.is_dir():
            from harnesskit.analysis.evals.results import ExperimentResult

            target = ExperimentResult.load(path)
        else:
            target = EventLog.read(path)
    if hasattr(target, "rows") and hasattr(target, "log"):  # an ExperimentResult
        reports = {}
        for row in target.rows:
            try:
                reports[row["run_id"]] = run_audit(target.log(row["run_id"]))
            except UsageError:
                continue  # a trial that crashed before its log was written
        return ExperimentAudit(target.rows, reports)
    log = getattr(target, "log", target)
    if not isinstance(log, EventLog):
        raise UsageError(
            f"cannot audit a {type(target).__name__}; give a Run, an EventLog, a log path, an "
            "ExperimentResult or an experiment directory"
        )
    return run_audit(log)


def _audit_log(
    log: EventLog,
    *,
    min_restatement_chars: int,
    policy_fact_args: tuple[str, ...],
    resolve: Callable[[str], str | None] | None,
    branch_id: str,
) -> AuditReport:
    events = log.of_type(branch_id=branch_id)
    findings: list[Finding] = []
    shared: dict[tuple[str, str], int] = {}  # each prompt repeats the last one's messages
    for i, e in enumerate(events):
        if e.type == "tool.call":
            findings += _transport(e, events[:i], policy_fact_args)
        elif e.type == "model.request":
            findings += _two_forms(log, e, min_restatement_chars, shared)
        elif e.type == "alert.representation":
            findings.append(
                Finding(point="two_forms", flag=True, event_id=e.event_id, detail=_alert_text(e))
            )
        elif e.type == "alert.mismatch":
            findings.append(_mismatch(e))
    findings += _previews(log, events, resolve)
    findings.sort(key=lambda f: (f.event_id or 0, POINTS.index(f.point)))
    return AuditReport(log.run_id, findings)


# -- point 1: ids and arrays typed by the model ------------------------------------------------


def _walk(value: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """Leaves and arrays of an argument object, skipping `$bind` objects (system-moved)."""
    if isinstance(value, Mapping):
        if "$bind" in value:
            return
        for k, v in value.items():
            yield from _walk(v, f"{pointer}/{k}")
    elif isinstance(value, list):
        yield pointer, value
        for i, v in enumerate(value):
            yield from _walk(v, f"{pointer}/{i}")
    else:
        yield pointer, value


def _source_texts(before: Sequence[Event]) -> list[tuple[Event, str]]:
    out = []
    for e in before:
        p = e.payload
        if e.type in ("user.message", "tool.result"):
            out.append((e, p.get("content") or ""))
        elif e.type == "model.response":
            out.append((e, (p.get("message") or {}).get("content") or ""))
        elif e.type == "task.contract":
            out.append((e, p.get("system_prompt") or ""))
        elif e.type == "human.decision":
            out.append((e, json.dumps(p, ensure_ascii=False, default=str)))
    return out


_UNFLAGGED_SOURCES = ("user.message", "task.contract", "human.decision")


def _transport(call: Event, before: Sequence[Event], fact_args: tuple[str, ...]) -> list[Finding]:
    args = call.payload.get("arguments")
    if not isinstance(args, Mapping):
        return []
    tool = call.payload.get("tool", "")
    if tool in INSPECTION_TOOLS:  # reading a stored artifact (R-A4) moves no data into an action
        return []
    texts = _source_texts(before)
    out = []
    for pointer, value in _walk(args):
        name = pointer.rsplit("/", 1)[-1]
        if name in fact_args:
            out.append(
                Finding(
                    point="model_fact",
                    flag=True,
                    event_id=call.event_id,
                    tool=tool,
                    argument=pointer,
                    value=_cut(value),
                    source="model",
                    detail=f"the model supplied the policy fact {name!r}",
                )
            )
        if isinstance(value, list):
            found = _array_source(value, texts)
            if found is not None:
                out.append(found._replace_call(call.event_id, tool, pointer))
        elif is_identifier(value):
            out.append(_id_finding(value, texts)._replace_call(call.event_id, tool, pointer))
    return out


@frozen_dataclass
class _Partial:
    point: str
    flag: bool
    value: str
    source: str
    detail: str

    def _replace_call(self, event_id: int, tool: str, pointer: str) -> Finding:
        return Finding(
            point=self.point,
            flag=self.flag,
            event_id=event_id,
            tool=tool,
            argument=pointer,
            value=self.value,
            source=self.source,
            detail=self.detail,
        )


def _id_finding(value: str, texts: list[tuple[Event, str]]) -> _Partial:
    for e, text in texts:
        if token_occurs(value, text):
            if e.type in _UNFLAGGED_SOURCES:
                return _Partial(
                    "copied_id",
                    False,
                    value,
                    e.label,
                    f"typed from {e.label} (given by {e.source})",
                )
            what = "a tool result" if e.type == "tool.result" else "the model's own earlier text"
            return _Partial(
                "copied_id",
                True,
                value,
                e.label,
                f"copied from {what} ({e.label}) instead of bound with $bind",
            )
    near = _nearest(value, texts)
    if near is not None:
        e, original = near
        return _Partial(
            "copied_id",
            True,
            value,
            e.label,
            f"altered: {original!r} in {e.label} arrived as {value!r}",
        )
    return _Partial("copied_id", True, value, "invented", "appears nowhere before the call")


def _nearest(value: str, texts: list[tuple[Event, str]]) -> tuple[Event, str] | None:
    """The closest earlier id `value` is an altered copy of (`data.idmatch`, up to 2 edits)."""
    best: tuple[int, Event, str] | None = None
    for e, text in texts:
        for token in sorted(set(_TOKEN.findall(text))):
            if token == value or not is_identifier(token):
                continue
            found = altered_copy(value, token, max_edits=2)
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], e, token)
    return (best[1], best[2]) if best else None


def _array_source(items: list[Any], texts: list[tuple[Event, str]]) -> _Partial | None:
    if len(items) < 2:
        return None
    needles = [
        v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, separators=(",", ":"))
        for v in items
    ]
    shown = _cut(items)
    for e, text in texts:
        compact = text.replace(": ", ":").replace(", ", ",")
        if all(n in text or n in compact for n in needles):
            if e.type in _UNFLAGGED_SOURCES:
                return _Partial(
                    "copied_array",
                    False,
                    shown,
                    e.label,
                    f"{len(items)} items typed from {e.label}",
                )
            return _Partial(
                "copied_array",
                True,
                shown,
                e.label,
                f"{len(items)} items copied from {e.label} instead of bound with $bind",
            )
    if not any(is_identifier(v) or isinstance(v, Mapping | list) for v in items):
        return None  # a list of plain words or numbers the model chose, not transported data
    return _Partial(
        "copied_array",
        True,
        shown,
        "invented",
        f"{len(items)} items not all found in any earlier message (altered or invented)",
    )


# -- point 2: a source in two forms in one prompt ---------------------------------------------


def _two_forms(
    log: EventLog, request: Event, min_chars: int, shared: dict[tuple[str, str], int]
) -> list[Finding]:
    """Tool results of one request restated in another of its messages.

    `shared` caches `_shared_run` by `(message, source)` across the requests of one audit.
    """
    messages = log.request_messages(request.event_id)
    # inspection answers (`{"artifact_ref": ..., "form": "excerpt"}`) are labelled parts of a
    # stored whole that the model asked for; pages of one artifact share structure, not forms
    messages = [m for m in messages if not _excerpt(m)]
    sources = [
        (m.get("tool_call_id"), m.get("content") or "") for m in messages if m.get("role") == "tool"
    ]
    out = []
    for call_id, text in sources:
        if len(text) < min_chars:
            continue
        for j, m in enumerate(messages):
            other = m.get("content") or ""
            if m.get("role") == "tool" and (m.get("tool_call_id") == call_id or other == text):
                continue
            n = shared.get((other, text), -1)
            if n < 0:
                n = shared[other, text] = _shared_run(other, text, min_chars)
            if n >= min_chars:
                role = m.get("role")
                out.append(
                    Finding(
                        point="two_forms",
                        flag=True,
                        event_id=request.event_id,
                        source=f"call {call_id}",
                        value=_cut(other, 120),
                        detail=f"tool result of {call_id} is in the prompt in full and again "
                        f"as {n} chars restated in message {j} ({role})",
                    )
                )
    return out


def _excerpt(message: Mapping[str, Any]) -> bool:
    content = message.get("content") or ""
    return (
        message.get("role") == "tool"
        and content.startswith('{"artifact_ref"')
        and '"form": "excerpt"' in content[:80]
    )


def _shared_run(text: str, source: str, min_chars: int) -> int:
    """Length of the longest stretch of `text` that is also in `source` (0 if < min_chars).

    `text` is sampled at windows of `max(16, min_chars // 2)` chars every half window; a window
    found in `source` grows right as far as it stays in `source`, then left from that end. The
    grown stretch only depends on where it ends, so the windows inside it are skipped up to the
    first one (bisected) whose own stretch reaches further right. Growing gallops (1, 2, 4, ...
    chars, then bisects), so each stretch costs O(log length) substring tests, not one per char
    or per window.

    Args:
        text: the message that may restate `source`.
        source: a tool result's text.
        min_chars: the shortest stretch that counts.

    Returns:
        The length in chars, or 0 when it is shorter than `min_chars`.
    """
    if len(text) < min_chars:
        return 0
    window = max(16, min_chars // 2)
    step = max(1, window // 2)
    last = (len(text) - window) // step  # the index of the last window sampled
    best = 0
    reach = -1  # where the last grown stretch ends: every window inside it is in `source`
    i = 0
    while i <= last:
        start = i * step
        if start + window <= reach:
            if reach == len(text):
                break  # no later window can end further right
            # windows inside the stretch whose own stretch stops at `reach` are that stretch
            # again; the first one that passes it (passing is monotone in start) is bisected
            lo, hi = i, (reach - window) // step + 1
            while lo < hi:
                mid = (lo + hi) // 2
                if text[mid * step : reach + 1] in source:
                    hi = mid
                else:
                    lo = mid + 1
            if lo > (reach - window) // step:
                i = lo
                continue
            i, start, known = lo, lo * step, reach + 1
        elif text[start : start + window] in source:
            known = start + window
        else:
            i += 1
            continue
        reach = _grow_right(text, source, start, known)
        best = max(best, _grow_left(text, source, reach, reach - start))
        i += 1
    return best if best >= min_chars else 0


def _grow_right(text: str, source: str, start: int, known: int) -> int:
    """The largest end `hi` with `text[start:hi]` in `source`, given `text[start:known]` is."""
    return _gallop(known, len(text), lambda hi: text[start:hi] in source)


def _grow_left(text: str, source: str, end: int, known: int) -> int:
    """The largest `n` with `text[end - n:end]` in `source`, given `n = known` is."""
    return _gallop(known, end, lambda n: text[end - n : end] in source)


def _gallop(known: int, limit: int, holds: Callable[[int], bool]) -> int:
    """The largest `x` in `[known, limit]` with `holds(x)`, for `holds` true up to a point.

    `holds(known)` is given; gallops up by 1, 2, 4, ... then bisects: O(log(x - known)) calls.
    """
    step = 1
    while known < limit:
        probe = min(known + step, limit)
        if not holds(probe):
            limit = probe - 1
            break
        known, step = probe, step * 2
    while known < limit:
        mid = (known + limit + 1) // 2
        if holds(mid):
            known = mid
        else:
            limit = mid - 1
    return known


def _alert_text(e: Event) -> str:
    p = e.payload
    return str(p.get("message") or p.get("detail") or e.summary or json.dumps(p, default=str))[:200]


# -- point 3: previews byte-equal to their source ---------------------------------------------


def _previews(
    log: EventLog, events: Sequence[Event], resolve: Callable[[str], str | None] | None
) -> list[Finding]:
    by_call = {
        e.payload.get("tool_call_id"): e.payload.get("content") or ""
        for e in events
        if e.type == "tool.result"
    }
    by_label = {e.label: e.payload.get("content") or "" for e in events if e.type == "tool.result"}
    out = []
    for e in events:
        if e.type == "tool.result":
            try:
                data = json.loads(e.payload.get("content") or "")
            except (json.JSONDecodeError, TypeError):
                continue
        elif e.type in ("tool.call", "artifact.created"):
            data = e.payload.get("arguments") if e.type == "tool.call" else e.payload
        else:
            continue
        for obj in _preview_objects(data):
            ref = next(str(obj[k]) for k in _REF_KEYS if k in obj)
            source = by_call.get(ref) if ref in by_call else by_label.get(ref)
            if source is None and isinstance(obj.get("text"), str):
                source = obj["text"]
            if source is None and resolve is not None:
                source = resolve(ref)
            out.append(_check_preview(e, obj, ref, source))
    return out


def _preview_objects(data: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(data, Mapping):
        if isinstance(data.get("preview"), str) and any(k in data for k in _REF_KEYS):
            yield data
        for v in data.values():
            yield from _preview_objects(v)
    elif isinstance(data, list):
        for v in data:
            yield from _preview_objects(v)


def _check_preview(e: Event, obj: Mapping[str, Any], ref: str, source: str | None) -> Finding:
    preview = obj["preview"]
    base = {
        "point": "preview_mismatch",
        "event_id": e.event_id,
        "value": _cut(preview, 120),
        "source": ref,
        "tool": e.payload.get("tool", ""),
    }
    if source is None:
        return Finding(
            flag=False, detail=f"preview of {ref!r}: source not available, unverified", **base
        )
    offset = obj.get("offset", obj.get("start"))
    if isinstance(offset, int):
        actual = source[offset : offset + len(preview)]
        if actual == preview:
            return Finding(flag=False, detail=f"byte-equal to {ref} at offset {offset}", **base)
        at = next(
            (i for i, (a, b) in enumerate(zip(actual, preview, strict=False)) if a != b),
            min(len(actual), len(preview)),
        )
        return Finding(
            flag=True,
            detail=f"differs from {ref} at offset {offset}+{at}: "
            f"{actual[at : at + 20]!r} became {preview[at : at + 20]!r}",
            **base,
        )
    if preview in source:
        return Finding(flag=False, detail=f"a substring of {ref}", **base)
    return Finding(flag=True, detail=f"not a substring of {ref}", **base)


# -- point 4: policy facts from the model -----------------------------------------------------


def _mismatch(e: Event) -> Finding:
    p = e.payload
    field_ = p.get("field") or p.get("claim") or "?"
    claimed = p.get("claimed", p.get("claim_value"))
    truth = p.get("truth", p.get("actual"))
    return Finding(
        point="model_fact",
        flag=True,
        event_id=e.event_id,
        tool=p.get("tool", ""),
        argument=str(field_),
        value=_cut(claimed),
        source="model",
        detail=f"model claimed {field_}={claimed!r}; the system's truth is {truth!r}",
    )


def _cut(value: Any, limit: int = 120) -> str:
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return s if len(s) <= limit else s[: limit - 1] + "…"
