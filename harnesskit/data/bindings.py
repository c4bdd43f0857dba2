"""Parameter bindings and the transport audit (R-A6, R-A7).

The guiding rule: the model says *which* value, the system moves the bytes.

- `Binder` resolves a tool argument written as `{"$bind": "<source>#/json/pointer"}` from stored
  results before validation; `<source>` is an artifact id, a tool_call_id or `TOOL-<n>`. A bad
  binding is an `invalid_argument` result naming the argument, the pointer and what exists there.
- `transport_audit()` reads a finished run's log: every identifier-like value and array the
  model typed into tool arguments, where it first appeared (system prompt, which user message,
  which tool result; nowhere = invented), and whether it arrived altered.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harnesskit import _repr
from harnesskit._lazy import frozen_dataclass, lazy_pattern
from harnesskit.data import _jsontext as jt
from harnesskit.data.artifacts import (
    INSPECTION_TOOLS,
    ArtifactStore,
    RepresentationChecker,
    _decode,
    _max_class,
)
from harnesskit.data.idmatch import altered_copy, token_occurs
from harnesskit.errors import (
    ArtifactNotFoundError,
    ToolArgumentsError,
    ToolNotFoundError,
    UsageError,
)
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
from harnesskit.log.redact import placeholders
from harnesskit.messages import ToolCall

__all__ = ["BINDINGS_NOTE", "ID_PATTERNS", "Binder", "TransportAudit", "transport_audit"]

#: What the model is told about bindings (appended to the system prompt of runs with tools).
BINDINGS_NOTE = (
    "Never retype ids or copy arrays from tool results: pass a value as "
    '{"$bind": "<tool_call_id or art_… id>#<JSON pointer>"}, e.g. {"$bind": "call_1#/items/0"}. '
    "Large results arrive as an artifact summary; read parts with the artifact_* tools."
)


class Binder:
    """Resolves `$bind` arguments of one run from its artifacts and tool results (R-A6).

    Args:
        store: the artifact store (`art_…` sources).
        log: the run's event log (tool_call_id and `TOOL-<n>` sources).
    """

    def __init__(self, store: ArtifactStore, log: EventLog | None = None) -> None:
        self.store = store
        self.log = log
        self._results: dict[str, ToolResultEvent] = {}
        self._indexed = 0
        #: `{tool_call_id: data class}`: the highest class among the sources a call's
        #: arguments were bound from, when above `internal` (R-S2: what the tool makes of
        #: them is at least that class); `bound_class` takes an entry out.
        self.classes: dict[str, str] = {}
        #: `{artifact id: exact text}`: a result the store holds redacted (R-S1), as the tool
        #: returned it, in memory only (this process's run), so a `$bind` moves the real value.
        self.exact: dict[str, str] = {}
        self._class = "internal"

    def bind(self, arguments: dict[str, Any], call: ToolCall) -> dict[str, Any]:
        """Replace every `{"$bind": "<source>#<pointer>"}` in `arguments` by the exact value.

        `<source>` is an artifact id, a tool_call_id of this run, or an event label `TOOL-<n>`.
        A source's data class above `internal` (a restricted artifact, a restricted tool
        result) is remembered for the call (`classes`, `bound_class`).

        Raises:
            ToolArgumentsError: malformed binding, unknown source, failed call, or a pointer
                that does not resolve (`invalid_argument`, naming the argument, the pointer and
                what exists there).
            ToolNotFoundError: the artifact expired or was deleted (`not_found`, saying why).
        """
        if not _has_binding(arguments):
            return arguments
        self._class = "internal"
        try:
            out: dict[str, Any] = self._bind_value(arguments, "")
        finally:  # a failed binding may have read a classed value too (its error names it)
            if self._class != "internal":
                self.classes[call.id] = self._class
        return out

    def bound_class(self, tool_call_id: str) -> str | None:
        """The class of the values bound into a call's arguments, once; `None`: none above internal.

        Args:
            tool_call_id: the call's id.

        Returns:
            `restricted` or `secret` (the highest among the call's sources), or `None`.
        """
        return self.classes.pop(tool_call_id, None)

    def _raise_class(self, data_class: str) -> None:
        self._class = _max_class(self._class, data_class)

    def _bind_value(self, value: Any, path: str) -> Any:
        if isinstance(value, dict):
            if "$bind" in value:
                return self._resolve(value, path or "/")
            return {k: self._bind_value(v, f"{path}/{k}") for k, v in value.items()}
        if isinstance(value, list):
            return [self._bind_value(v, f"{path}/{i}") for i, v in enumerate(value)]
        return value

    def _resolve(self, obj: dict[str, Any], path: str) -> Any:
        spec = obj["$bind"]
        if len(obj) != 1 or not isinstance(spec, str):
            raise ToolArgumentsError(
                f'argument {path}: a binding is exactly {{"$bind": "<source>#<pointer>"}}, '
                f"got {json.dumps(obj, default=str)[:200]}",
                hint='write e.g. {"$bind": "call_1#/flights/0/flight_number"}',
            )
        source, _, pointer = spec.partition("#")
        kind, target = self._source(source.strip(), path)
        try:
            if kind == "artifact":
                self._raise_class(self.store.ref(target).data_class)
                exact = self.exact.get(target)
                if exact is None:  # as stored: redacted, may hold placeholders
                    value = self.store.value(target, pointer)
                else:
                    self.store.read(target)  # expired, archived or deleted: refused as such
                    decoded, how = _decode(exact)
                    value = jt.resolve(decoded if how == "json" else exact, pointer)
            else:
                value = jt.resolve(target, pointer)
        except ArtifactNotFoundError as exc:
            raise ToolNotFoundError(
                f"argument {path}: $bind {spec!r}: {exc}",
                hint="call the tool that produced it again and bind to the new result",
            ) from None
        except (jt.PointerError, ToolArgumentsError) as exc:
            raise ToolArgumentsError(
                f"argument {path}: $bind {spec!r} does not resolve: {exc}",
                hint="fix the JSON pointer (after '#') to name a value that exists",
            ) from None
        exact_held = kind == "value" or (kind == "artifact" and target in self.exact)
        if not exact_held and (found := placeholders(value)):
            # the log (or the artifact store) holds a placeholder where the secret was, and
            # the clear value was in memory only (a resumed run, or one reading another's
            # log or store): it cannot be moved
            raise ToolArgumentsError(
                f"argument {path}: $bind {spec!r} names a value that was redacted when it was "
                f"logged or stored ({', '.join(found[:3])}); the real value is not kept "
                "anywhere the run can read it now, so it cannot be moved, and the placeholder "
                "is not the value",
                hint="call the tool that produced it again and bind to the new result, or ask "
                "the user for the value",
            )
        return value

    def _source(self, source: str, path: str) -> tuple[str, Any]:
        if source in self.store:
            return "artifact", source
        event = self._result_event(source)
        if event is None:
            known = [f"{k} ({e.tool})" for k, e in list(self._results.items())[-8:]]
            raise ToolArgumentsError(
                f"argument {path}: $bind source {source!r} is neither an artifact id nor a "
                f"tool_call_id of this run; known: {', '.join(known) or 'none yet'}",
                hint="bind to the tool_call_id of an earlier successful call",
            )
        if not event.ok:
            raise ToolArgumentsError(
                f"argument {path}: call {source!r} failed ({event.error_type}); there is no "
                "value to bind",
                hint="bind to a call that succeeded",
            )
        self._raise_class(event.data_class)
        if event.artifact:
            return "artifact", event.artifact
        source_kind = "logged"  # as read from the log: may hold redaction placeholders
        if self.log is not None:  # the runtime binds the exact value, not the redacted one
            exact = self.log.exact(event)
            if isinstance(exact, ToolResultEvent) and exact is not event:
                event, source_kind = exact, "value"
        content = "" if event.content is None else event.content
        value, kind = _decode(content)
        return source_kind, value if kind == "json" else content

    def _result_event(self, source: str) -> ToolResultEvent | None:
        if self.log is None:
            return None
        events = self.log.events
        for e in events[self._indexed :]:
            if isinstance(e, ToolResultEvent) and e.tool_call_id:
                self._results[e.tool_call_id] = e
        self._indexed = len(events)
        m = re.fullmatch(r"TOOL-(\d+)", source)
        if m and 1 <= int(m.group(1)) <= len(events):
            e = events[int(m.group(1)) - 1]
            return e if isinstance(e, ToolResultEvent) else None
        return self._results.get(source)


def _has_binding(value: Any) -> bool:
    """True when an object with a `$bind` key is anywhere `_bind_value` looks (dicts, lists)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if "$bind" in v:
                return True
            stack.extend(x for x in v.values() if isinstance(x, dict | list))
        elif isinstance(v, list):
            stack.extend(x for x in v if isinstance(x, dict | list))
    return False


# --- R-A7: the transport audit -----------------------------------------------------------------

#: `(kind, regex)` of identifier-like values, tried in order on whole argument values. Override
#: with `transport_audit(..., patterns=...)`.
ID_PATTERNS: tuple[tuple[str, str], ...] = (
    ("date", r"\d{4}-\d{2}-\d{2}"),
    ("uuid", r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
    ("payment_id", r"(?:credit_card|debit_card|gift_card|certificate|paypal|bank_account)_\d+"),
    ("user_id", r"[a-z]+(?:_[a-z]+)+_\d{2,}"),
    ("flight_number", r"[A-Z]{2,3}\d{2,4}"),
    ("reservation_id", r"[A-Z0-9]{6}"),
    ("token", r"(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{16,}"),
)
_HANDLE = lazy_pattern(r"art_[0-9a-f]{12}|call_[A-Za-z0-9_]+|TOOL-\d+")


def _classify(value: str, patterns: Sequence[tuple[str, re.Pattern[str]]]) -> str | None:
    for kind, rx in patterns:
        if rx.fullmatch(value):
            return kind
    return None


def _in_text(text: str, patterns: Sequence[tuple[str, re.Pattern[str]]]) -> list[tuple[str, str]]:
    """Id-like tokens inside free text (reservation-style codes must contain a digit)."""
    out = []
    for m in re.finditer(r"(?<![\w-])[\w-]{6,}(?![\w-])", text):
        kind = _classify(m.group(), patterns)
        if kind and not (kind == "reservation_id" and not any(c.isdigit() for c in m.group())):
            out.append((m.group(), kind))
    return out


@frozen_dataclass(kw_only=True)
class _Seen:
    event: Event
    label: str
    origin: str  # system | user | tool | model | human
    text: str


@frozen_dataclass(kw_only=True)
class TransportAudit:
    """The transport audit of one or more finished runs (R-A7): rows plus a one-line verdict.

    Each row is a value the model put into a tool argument: an identifier-like string (typed or
    bound) or an array. `status` is `exact` (typed, found verbatim in an earlier message),
    `altered` (typed, but only a near match exists: case, cut, extended or mixed up),
    `invented` (typed, in no earlier user message, tool result or system prompt), `bound`
    (passed with `$bind`), or for arrays `copied` / `subset` / `composed`. A date (`kind`
    `date`, ISO `YYYY-MM-DD`) may also be `derived`: not found verbatim, but a user message
    names it in words ("May 20th", "5/20") or relatively ("tomorrow", with the audit's
    `today`); `how` quotes the words. Dates are counted apart from ids (`dates_*`).
    """

    runs: tuple[str, ...]
    """The run ids audited."""
    rows: tuple[dict[str, Any], ...]
    """One dict per value (see `COLUMNS`)."""
    violations: tuple[dict[str, Any], ...] = ()
    """R-A5 findings over each run's whole conversation (report mode), with `run_id`."""

    COLUMNS = (
        "run_id",
        "event_id",
        "step",
        "tool",
        "path",
        "kind",
        "value",
        "in_text",
        "transport",
        "status",
        "source",
        "source_event_id",
        "origin",
        "closest",
        "how",
    )

    def frame(self) -> Any:
        """A pandas DataFrame, one row per value, columns `COLUMNS`."""
        import pandas as pd

        return pd.DataFrame.from_records(list(self.rows), columns=list(self.COLUMNS))

    @property
    def counts(self) -> dict[str, int]:
        """Headline counts (whole-value ids only; ids inside free text are `ids_in_text`)."""
        ids = [r for r in self.rows if r["kind"] not in ("array", "date") and not r["in_text"]]
        dates = [r for r in self.rows if r["kind"] == "date" and r["transport"] == "typed"]
        typed = [r for r in ids if r["transport"] == "typed"]
        arrays = [r for r in self.rows if r["kind"] == "array"]
        restating = {
            v["run_id"] for v in self.violations if "restatement" in json.dumps(v["forms"])
        }
        return {
            "runs": len(self.runs),
            "ids_typed": len(typed),
            "ids_bound": sum(r["transport"] == "bound" for r in ids),
            "from_user": sum(r["origin"] == "user" for r in typed),
            "from_tool": sum(r["origin"] == "tool" for r in typed),
            "from_system": sum(r["origin"] == "system" for r in typed),
            "altered": sum(r["status"] == "altered" for r in typed),
            "invented": sum(r["status"] == "invented" for r in typed),
            "ids_in_text": sum(r["in_text"] for r in self.rows),
            "arrays_typed": sum(r["transport"] == "typed" for r in arrays),
            "arrays_copied": sum(r["status"] in ("copied", "subset") for r in arrays),
            "representation_violations": len(self.violations),
            "runs_restating": len(restating),
            "dates_typed": len(dates),
            "dates_exact": sum(r["status"] == "exact" for r in dates),
            "dates_derived": sum(r["status"] == "derived" for r in dates),
            "dates_invented": sum(r["status"] == "invented" for r in dates),
        }

    @property
    def verdict(self) -> str:
        """One line: clean or leaky, and why."""
        c = self.counts
        leaky = (
            c["from_tool"]
            + c["altered"]
            + c["invented"]
            + c["arrays_copied"]
            + c["representation_violations"]
        )
        head = "clean" if leaky == 0 else "leaky"
        runs = f"{c['runs']} runs: " if c["runs"] != 1 else ""
        return (
            f"{head} — {runs}{c['ids_typed']} ids typed by the model ({c['from_user']} from user "
            f"messages, {c['from_tool']} from tool results that could have been bound, "
            f"{c['from_system']} from the system prompt), {c['altered']} altered, "
            f"{c['invented']} invented; {c['ids_bound']} bound; {c['arrays_typed']} arrays typed "
            f"({c['arrays_copied']} copied from results); {c['representation_violations']} "
            f"representation violations ({c['runs_restating']} runs restating results)"
        )

    @classmethod
    def merge(cls, audits: Iterable[TransportAudit]) -> TransportAudit:
        """One audit over many runs (rows and findings concatenated)."""
        audits = list(audits)
        return cls(
            runs=tuple(r for a in audits for r in a.runs),
            rows=tuple(r for a in audits for r in a.rows),
            violations=tuple(v for a in audits for v in a.violations),
        )

    def __repr__(self) -> str:
        return f"<TransportAudit {self.verdict}>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


def _conversation(events: Sequence[Event]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in events:
        if isinstance(e, TaskContractEvent) and e.system_prompt:
            out.append({"role": "system", "content": e.system_prompt})
        elif isinstance(e, UserMessageEvent):
            out.append({"role": "user", "content": "" if e.content is None else e.content})
        elif isinstance(e, ModelResponseEvent):
            out.append(e.message or {})
        elif isinstance(e, ToolResultEvent):
            content = "" if e.content is None else e.content
            out.append({"role": "tool", "content": content, "tool_call_id": e.tool_call_id})
    return out


def _compiled_patterns(patterns: Any) -> list[tuple[str, re.Pattern[str]]]:
    """`transport_audit`'s `patterns` compiled; `UsageError` naming a bad entry."""
    try:
        pairs = list(patterns.items()) if isinstance(patterns, Mapping) else list(patterns)
    except TypeError:
        pairs = None
    out = []
    for pair in pairs if pairs is not None else [patterns]:
        if not (
            isinstance(pair, tuple | list)
            and len(pair) == 2
            and all(isinstance(p, str) for p in pair)
        ):
            raise UsageError(
                f"transport_audit(patterns=...) takes (kind, regex) pairs of strings or a "
                f"{{kind: regex}} dict, got {pair!r:.80}"
            )
        try:
            out.append((pair[0], re.compile(pair[1])))
        except re.error as exc:
            raise UsageError(
                f"transport_audit(patterns=...): {pair[1]!r:.80} for {pair[0]!r} is not a valid "
                f"regex ({exc})"
            ) from None
    return out


def transport_audit(
    source: Any,
    *,
    store: ArtifactStore | None = None,
    branch_id: str = "main",
    patterns: Sequence[tuple[str, str]] | Mapping[str, str] = ID_PATTERNS,
    restate_chars: int | None = 200,
    today: str | dt.date | None = None,
) -> TransportAudit:
    """Audit how data travelled in a finished run (R-A7).

    For every tool call the model made: each identifier-like argument value (`patterns`; also
    such tokens inside free text, flagged `in_text`; also a value matching no pattern that is a
    near copy of an id seen earlier) and each array — typed or bound, where it first appeared
    (system prompt, which user message, which tool result; nowhere = invented), and whether it
    arrived altered (case changed, cut, extended, mixed up). Also runs the R-A5 check in report
    mode over the whole conversation (restatements of tool results in assistant text).

    Args:
        source: a `Run` or an `EventLog`.
        store: the artifact store (default: the run's); used to read artifacts named in the log.
        branch_id: the branch to audit.
        patterns: `(kind, regex)` pairs (or a `{kind: regex}` mapping, in its order), tried
            in order on whole string values: a domain gives its id shapes most specific first
            (e.g. `airline.VALUE_SHAPES`: a reservation id before a flight number).
        restate_chars: shortest verbatim run counted as a restatement; `None` = skip.
        today: the run's current date (ISO text or a `date`), to derive relative dates
            ("today", "tomorrow", "yesterday", "in 3 days"); `None` derives only dates named
            in words.

    Returns:
        A `TransportAudit` (`.frame()`, `.counts`, `.verdict`).

    Raises:
        UsageError: `source` is neither a run nor an event log, or `patterns` is not
            `(kind, regex)` pairs of strings with valid regexes.
    """
    log = getattr(source, "log", source)
    if not isinstance(log, EventLog):
        raise UsageError(f"transport_audit needs a Run or an EventLog, got {type(source).__name__}")
    if store is None and getattr(source, "transport", None) is not None:
        store = source.transport.store
    events = [e for e in log.events if e.branch_id == branch_id]
    run_id = log.run_id or next(
        (e.run_id or "" for e in events if isinstance(e, TaskContractEvent)), ""
    )
    if isinstance(today, str):
        today = dt.date.fromisoformat(today[:10])
    auditor = _Auditor(_compiled_patterns(patterns), store, today=today)
    rows: list[dict[str, Any]] = []
    for e in events:
        if (
            isinstance(e, ToolCallEvent)
            and e.source == "model"
            and isinstance(e.arguments, dict)
            and e.tool not in INSPECTION_TOOLS  # reads of an artifact move no data on
        ):
            base = {
                "run_id": run_id,
                "event_id": e.event_id,
                "step": e.step,
                "tool": e.tool,
            }
            for path, value in _leaves(e.arguments):
                rows.extend({**base, **row} for row in auditor.value(path, value))
        auditor.see(e)
    violations: list[dict[str, Any]] = []
    if restate_chars is not None:

        def load(ref: str) -> str | None:
            return store.read(ref, include_archived=True) if store is not None else None

        checker = RepresentationChecker(load, restate_chars=restate_chars)
        for v in checker.check(_conversation(events)):
            violations.append({"run_id": run_id, **v.to_dict()})
    return TransportAudit(runs=(run_id,), rows=tuple(rows), violations=tuple(violations))


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")  # fmt: skip
_RELATIVE = {"day before yesterday": -2, "yesterday": -1, "today": 0, "tonight": 0,
             "day after tomorrow": 2, "tomorrow": 1}  # fmt: skip


_RELATIVE_WORDS = frozenset(_RELATIVE)


def _date_words(text: str, day: dt.date, today: dt.date | None) -> str | None:
    """The words in `text` that name `day` ("May 20th", "20 May", "5/20", "tomorrow"), or None."""
    month = _MONTHS[day.month - 1]
    names = rf"(?:{month}|{month[:3]}\.?)"
    dnum = rf"0?{day.day}(?:st|nd|rd|th)?"
    for rx in (
        rf"\b{names}\s+{dnum}\b",
        rf"\b{dnum}\s+(?:of\s+)?{names}\b",
        rf"(?<![\d/]){day.month:d}/{day.day:d}(?:/(?:{day.year}|{day.year % 100:02d}))?(?![\d/])",
        rf"(?<![\d/])0{day.month:d}/{day.day:02d}(?![\d/])",
    ):
        m = re.search(rx, text, re.IGNORECASE)
        if m:
            return m.group()
    if today is not None:
        low = text.lower()
        for phrase, delta in sorted(_RELATIVE.items(), key=lambda kv: -len(kv[0])):
            if re.search(rf"\b{phrase}\b", low) and today + dt.timedelta(days=delta) == day:
                return phrase
        m = re.search(r"\bin (\d{1,2}) days\b", low)
        if m and today + dt.timedelta(days=int(m.group(1))) == day:
            return f"{m.group()} (today {today})"
    return None


def _leaves(value: Any, path: str = "") -> Iterable[tuple[str, Any]]:
    """`(pointer, value)` for string leaves, arrays and binding objects (arrays also descended)."""
    if isinstance(value, dict):
        if "$bind" in value:
            yield path, value
            return
        for k, v in value.items():
            yield from _leaves(v, f"{path}/{k}")
    elif isinstance(value, list):
        if value:
            yield path, value
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}/{i}")
    elif isinstance(value, str):
        yield path, value


_TOKEN = lazy_pattern(r"(?<![\w-])[\w-]{4,}(?![\w-])")
_EMPTY = {
    "in_text": False,
    "source": None,
    "source_event_id": None,
    "origin": None,
    "closest": None,
    "how": None,
}


class _Auditor:
    """Walks a run's events in order, remembering what the model had been shown."""

    def __init__(
        self,
        patterns: Sequence[tuple[str, re.Pattern[str]]],
        store: ArtifactStore | None,
        *,
        today: dt.date | None = None,
    ) -> None:
        self.today = today
        self.patterns = patterns
        self.store = store
        self.seen: list[_Seen] = []
        self._tokens: dict[int, list[tuple[str, str]]] = {}
        self._decoded: dict[int, Any] = {}
        self._pending: _Seen | None = None

    def see(self, e: Event) -> None:
        """Remember what `e` showed; a model turn counts only after its own calls are audited."""
        if self._pending is not None and not isinstance(e, ToolCallEvent):
            self.seen.append(self._pending)
            self._pending = None
        text, origin = "", ""
        if isinstance(e, TaskContractEvent):
            text, origin = e.system_prompt or "", "system"
        elif isinstance(e, UserMessageEvent):
            text, origin = "" if e.content is None else e.content, "user"
        elif isinstance(e, HumanDecisionEvent):
            text, origin = json.dumps(e.payload, ensure_ascii=False), "human"
        elif isinstance(e, ToolResultEvent):
            text, origin = "" if e.content is None else e.content, "tool"
        elif isinstance(e, ModelResponseEvent):
            m = e.message or {}
            args = " ".join(c["function"].get("arguments") or "" for c in m.get("tool_calls") or [])
            text, origin = f"{m.get('content') or ''} {args}".strip(), "model"
        if text:
            label = e.label if not isinstance(e, TaskContractEvent) else "system prompt"
            seen = _Seen(event=e, label=label, origin=origin, text=text)
            if origin == "model":
                self._pending = seen
            else:
                self.seen.append(seen)

    def value(self, path: str, value: Any) -> list[dict[str, Any]]:
        if isinstance(value, dict):
            return [
                {
                    **_EMPTY,
                    "path": path,
                    "kind": "binding",
                    "value": str(value["$bind"]),
                    "transport": "bound",
                    "status": "bound",
                }
            ]
        if isinstance(value, list):
            row = {
                **_EMPTY,
                "path": path,
                "kind": "array",
                "transport": "typed",
                "value": json.dumps(value, ensure_ascii=False)[:160],
            }
            return [{**row, **self._array_origin(value)}]
        if _HANDLE.fullmatch(value):
            return []
        kind = _classify(value, self.patterns)
        if kind is not None:
            found = [(value, kind)]
        elif " " in value:
            found = _in_text(value, self.patterns)
        elif 4 <= len(value) <= 64:  # no pattern: still an id if it is a near copy of one
            near = self._near(value, None)
            if near is None:
                return []
            return [
                {
                    **_EMPTY,
                    "path": path,
                    "kind": near["kind"],
                    "value": value,
                    "transport": "typed",
                    **near,
                }
            ]
        else:
            return []
        out = []
        for token, k in found:
            row = {
                **_EMPTY,
                "path": path,
                "kind": k,
                "value": token,
                "transport": "typed",
                "in_text": token != value,
            }
            out.append({**row, **self._origin(token, k)})  # an altered id takes its source's kind
        return out

    def _origin(self, token: str, kind: str) -> dict[str, Any]:
        for s in self.seen:
            if token_occurs(token, s.text):
                if s.origin == "model":
                    derived = self._derived_date(token) if kind == "date" else None
                    if derived is not None:  # the model first typed a date the user named
                        return derived
                    return {
                        "status": "invented",
                        "source": _label(s),
                        "origin": "model",
                        "source_event_id": s.event.event_id,
                        "how": "first typed by the model itself",
                    }
                return {
                    "status": "exact",
                    "source": _label(s),
                    "origin": s.origin,
                    "source_event_id": s.event.event_id,
                }
        if kind == "date":
            derived = self._derived_date(token)
            if derived is not None:
                return derived
        near = self._near(token, kind)
        if near is not None:
            return near
        if self.store is not None:
            for ref in self.store.refs():
                try:
                    text = self.store.read(ref.id, include_archived=True)
                except Exception:  # unreadable artifacts cannot be searched
                    continue
                if token in text:
                    return {
                        "status": "invented",
                        "source": f"artifact {ref.id} (never shown)",
                        "origin": "artifact",
                        "how": "in an artifact the model did not read",
                    }
        return {"status": "invented", "source": "nowhere", "how": "in no earlier message"}

    def _derived_date(self, token: str) -> dict[str, Any] | None:
        """A user message that names the ISO date `token` in words or relatively, if any."""
        try:
            day = dt.date.fromisoformat(token)
        except ValueError:
            return None
        for s in self.seen:
            if s.origin != "user":
                continue
            words = _date_words(s.text, day, self.today)
            if words is not None:
                return {
                    "status": "derived",
                    "source": _label(s),
                    "origin": "user",
                    "source_event_id": s.event.event_id,
                    "how": f"derived from {words!r}"
                    + (f" (today {self.today})" if words.lower() in _RELATIVE_WORDS else ""),
                }
        return None

    def _near(self, token: str, kind: str | None) -> dict[str, Any] | None:
        """The closest earlier id (same kind preferred): case changed, cut, extended, mixed up."""
        best: tuple[int, str, str, str, _Seen] | None = None
        for s in self.seen:
            if s.origin == "model":
                continue
            if s.event.event_id not in self._tokens:
                toks = [
                    (m.group(), _classify(m.group(), self.patterns))
                    for m in _TOKEN.finditer(s.text)
                ]
                self._tokens[s.event.event_id] = [(t, k) for t, k in toks if k]
            for cand, k in self._tokens[s.event.event_id]:
                if cand == token:
                    continue
                found = altered_copy(token, cand)
                if found is None:
                    continue
                rank = found[0] * 2 + (k != kind)  # patterns overlap: prefer, don't require, a kind
                if best is None or rank < best[0]:
                    best = (rank, found[1], cand, k, s)
        if best is None:
            return None
        _, how, cand, k, s = best
        return {
            "status": "altered",
            "source": _label(s),
            "source_event_id": s.event.event_id,
            "origin": s.origin,
            "closest": cand,
            "how": how,
            "kind": k,
        }

    def _array_origin(self, value: list[Any]) -> dict[str, Any]:
        want = _canon(value)
        items = [_canon(x) for x in value]
        partial = None
        for s in self.seen:
            if s.origin not in ("tool", "user"):
                continue
            if s.event.event_id not in self._decoded:
                self._decoded[s.event.event_id] = _decode(s.text)[0]
            doc = self._decoded[s.event.event_id]
            if doc is None:
                continue
            for ptr, arr in _arrays_in(doc):
                where = {
                    "source": f"{_label(s)} at {ptr or '/'}",
                    "origin": s.origin,
                    "source_event_id": s.event.event_id,
                }
                if _canon(arr) == want:
                    return {"status": "copied", **where}
                if partial is None and len(arr) > len(value) >= 1:
                    have = {_canon(x) for x in arr}
                    if all(i in have for i in items):
                        how = f"{len(value)} of {len(arr)} items"
                        partial = {"status": "subset", "how": how, **where}
        return partial or {"status": "composed", "how": "no earlier array equals it"}


def _label(s: _Seen) -> str:
    if s.origin == "tool":
        return f"tool result {s.label} ({s.event.payload.get('tool')})"
    if s.origin == "user":
        return f"user message {s.label}"
    if s.origin == "model":
        return f"model text {s.label}"
    return s.label


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _arrays_in(value: Any) -> Iterable[tuple[str, list[Any]]]:
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        v, path = stack.pop()
        if isinstance(v, list):
            yield path, v
            stack.extend((x, f"{path}/{i}") for i, x in enumerate(v))
        elif isinstance(v, dict):
            stack.extend((x, f"{path}/{k}") for k, x in v.items())
