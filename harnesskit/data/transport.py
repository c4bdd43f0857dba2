"""The data transport of a run: the glue the loop wires into the executor and the prompt.

`Transport` (one per run) holds the run's side of R-A1–R-A6: its `postprocess` hook externalizes
large results into the `ArtifactStore` (the prompt gets a bounded summary), its `bind` hook
resolves `$bind` arguments before validation, `tool_specs()` adds the `artifact_*` inspection
tools once the run holds artifacts, and `check()` refuses a prompt holding one source in two
forms (R-A5) before the model is called. `TransportPolicy` holds every threshold.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from harnesskit._lazy import frozen_dataclass
from harnesskit.data._values import tool_values
from harnesskit.data.artifacts import (
    INSPECTION_TOOLS,
    ArtifactRef,
    ArtifactStore,
    RepresentationChecker,
    RepresentationViolation,
    _decode,
    _max_class,
    oversize_reason,
    summarize,
)
from harnesskit.data.bindings import BINDINGS_NOTE, Binder
from harnesskit.errors import (
    ArtifactError,
    ArtifactNotFoundError,
    RepresentationError,
    ToolNotFoundError,
    UsageError,
)
from harnesskit.log._types import ArtifactCreatedEvent, ModelResponseEvent, ToolResultEvent
from harnesskit.log.events import EventLog
from harnesskit.messages import Message, ToolCall, ToolResult, check_data_class
from harnesskit.tools.executor import Executed
from harnesskit.tools.spec import Tool, ToolRegistry

__all__ = ["Transport", "TransportPolicy"]


@frozen_dataclass(kw_only=True)
class TransportPolicy:
    """Thresholds and switches of the data transport (every one a parameter, R-A1).

    Raises:
        UsageError: a limit below its floor, an unknown `on_violation`, or a `data_class`
            that is not one of `public`, `internal`, `restricted`, `secret`.
    """

    max_inline_chars: int = 8000
    """Results whose JSON text is longer than this (characters) are externalized."""
    max_inline_items: int = 10
    """Results holding an array longer than this, anywhere, are externalized."""
    max_summary_chars: int = 2000
    """Bound on the summary that replaces an externalized result (characters)."""
    id_index: bool = False
    """Add an id index to the summary: every id, date, code and amount the result holds. Off
    by default: R-A1 sends only a ref and a bounded summary, and R-A6 binds values instead
    of copying them (the context's facts index keeps the values of inline results)."""
    max_summary_share: float | None = 1.0
    """A result externalized only for its array length (not its size) must pay: its summary
    (ref, id index, preview) must fit in this share of the result's text, else it stays
    inline. A result over `max_inline_chars` is always externalized (R-A1). `None` always
    externalizes a result over the item limit (the behaviour before issue 16)."""
    max_turn_inline_chars: int | None = 32000
    """Bound on the tool results of one turn together (characters): over it, the largest are
    stored as artifacts with compact summaries until the turn fits (`Transport.fit_turn`); the
    run also bounds a turn by the prompt room it has left. `None` = only that room."""
    max_answer_chars: int = 4000
    """Bound on each inspection answer (characters)."""
    restate_chars: int | None = 200
    """An assistant text holding this many consecutive characters of a source restates it
    (R-A5); `None` = do not check restatements."""
    min_source_chars: int = 200
    """Inline tool results shorter than this (characters) are not tracked as sources."""
    on_violation: Literal["refuse", "report"] | None = None
    """What a prompt with a source in two forms does: `refuse` (raise `RepresentationError`,
    the model is not called) or `report` (log the alert, go on). `None` = refuse, except under
    a `ReplayModel` (a recorded run is reported, never refused)."""
    describe_bindings: bool = True
    """Append `BINDINGS_NOTE` to the system prompt of runs that have tools."""
    data_class: str = "internal"
    """Data class given to new artifacts; the `tool.result` event holding an artifact's
    summary (and every inspection answer read from it) gets at least its class (R-S2)."""

    def system_prompt(self, base: str, *, has_tools: bool = True) -> str:
        """`base` plus `BINDINGS_NOTE` when bindings are described and there are tools.

        Idempotent: a prompt that already holds the note (a replayed or resumed contract) is
        returned as it is.
        """
        if not (self.describe_bindings and has_tools) or BINDINGS_NOTE in base:
            return base
        return f"{base}\n\n{BINDINGS_NOTE}" if base else BINDINGS_NOTE

    def __post_init__(self) -> None:
        for name, least, optional in _COUNTS:
            value = getattr(self, name)
            if value is None and optional:
                continue
            if value.__class__ is not int or value < least:
                wanted = f">= {least} (an integer" + (", or None)" if optional else ")")
                raise UsageError(f"TransportPolicy.{name} must be {wanted}, got {value!r:.60}")
        share = self.max_summary_share
        if share is not None and (
            isinstance(share, bool)
            or not isinstance(share, int | float)
            or not math.isfinite(share)
            or share < 0
        ):
            raise UsageError(
                "TransportPolicy.max_summary_share must be a finite number >= 0 (a share of the "
                f"result's text) or None, got {share!r:.60}"
            )
        for name in ("max_inline_chars", "max_inline_items", "max_summary_chars"):
            if getattr(self, name) < 1:
                raise UsageError(f"TransportPolicy.{name} must be >= 1, got {getattr(self, name)}")
        if self.max_answer_chars < 1000:
            raise UsageError("TransportPolicy.max_answer_chars must be >= 1000")
        check_data_class(self.data_class, "TransportPolicy(data_class=...)", optional=False)
        if self.on_violation not in (None, "refuse", "report"):
            raise UsageError(
                f"on_violation must be 'refuse', 'report' or None, got {self.on_violation!r}"
            )


#: The integer fields of `TransportPolicy`: (name, least value, None allowed).
_COUNTS = (
    ("max_inline_chars", 1, False),
    ("max_inline_items", 1, False),
    ("max_summary_chars", 1, False),
    ("max_answer_chars", 1000, False),
    ("restate_chars", 1, True),
    ("min_source_chars", 0, False),
    ("max_turn_inline_chars", 1000, True),
)

#: The smallest summary share `Transport.fit_turn` gives a stored result (characters): the
#: least compact summary (ref, size, `complete: false`) fits in it.
MIN_SUMMARY_CHARS = 120


class Transport:
    """The data transport of one run: hooks for the executor and the prompt check.

    Args:
        store: where large results go.
        policy: thresholds and switches; default `TransportPolicy()`.
        log: the run's event log (call ids are resolved from its `tool.result` events and the
            R-A5 alerts are appended to it).
        refuse: refuse prompts with a source in two forms (else report them); default from
            `policy.on_violation` (refuse when it is `None`).
    """

    def __init__(
        self,
        store: ArtifactStore,
        policy: TransportPolicy | None = None,
        *,
        log: EventLog | None = None,
        refuse: bool | None = None,
    ) -> None:
        self.store = store
        self.policy = policy or TransportPolicy()
        self.log = log
        self.refuse = (self.policy.on_violation != "report") if refuse is None else refuse
        self.created: dict[str, ArtifactRef] = {}
        self.checker = RepresentationChecker(
            self._load,
            restate_chars=self.policy.restate_chars,
            min_source_chars=self.policy.min_source_chars,
        )
        self._tools = self._inspection_tools()
        self._specs = tuple(t.to_openai() for t in self._tools)
        self.binder = Binder(store, log)
        self._reported: set[tuple[Any, ...]] = set()
        # inline results of the current turn (call id -> text) not yet tracked by the R-A5
        # checker: `fit_turn` may still externalize them
        self._inline: dict[str, str] = {}
        if log is not None:
            self._adopt(log)

    def _adopt(self, log: EventLog) -> None:
        """Know what a reopened log already holds (a resumed run): its artifacts and results."""
        for e in log.of_type(ArtifactCreatedEvent, ToolResultEvent):
            ref_id = e.artifact_id if isinstance(e, ArtifactCreatedEvent) else e.artifact
            if ref_id:
                try:
                    self.created[ref_id] = self.store.ref(ref_id)
                    self.checker.add_source(ref_id, self.store.read(ref_id))
                except ArtifactNotFoundError:  # expired or gone: nothing to compare against
                    continue
            elif isinstance(e, ToolResultEvent) and e.ok:
                content = e.content or ""
                if len(content) >= self.policy.min_source_chars:
                    self.checker.add_source(f"call:{e.tool_call_id}", content)

    def _load(self, ref: str) -> str | None:
        return self.store.read(ref, include_archived=True)

    # -- what the model is told --------------------------------------------------------------
    def system_prompt(self, base: str, *, has_tools: bool = True) -> str:
        """`base` plus `BINDINGS_NOTE` (see `TransportPolicy.system_prompt`)."""
        return self.policy.system_prompt(base, has_tools=has_tools)

    @property
    def holds_artifacts(self) -> bool:
        """True once this run has externalized a result (the inspection tools are then offered)."""
        return bool(self.created)

    def registry(self, tools: ToolRegistry) -> ToolRegistry:
        """A registry with `tools` plus the inspection tools, for dispatch.

        Raises:
            UsageError: a tool of `tools` is named like an inspection tool.
        """
        return ToolRegistry([*tools, *self._tools])

    def tool_specs(
        self, exclude: Iterable[str] = (), *, always: bool = False
    ) -> tuple[dict[str, Any], ...]:
        """The inspection tools' specs when the run holds artifacts (or `always`), else `()`.

        Args:
            exclude: tool names to leave out.
            always: list them before any artifact exists (a stable tool list, for a provider's
                prompt cache).
        """
        if not (always or self.holds_artifacts):
            return ()
        skip = set(exclude)
        return tuple(s for s in self._specs if s["function"]["name"] not in skip)

    # -- R-A1: externalization (the executor's postprocess hook) ------------------------------
    def postprocess(self, executed: Executed) -> ToolResult:
        """Externalize a large successful result; return what the model will see.

        Results over a threshold go to the store; the returned result's content is the bounded
        summary (with an id index: every id, date, code and amount of the result), its meta
        names the artifact, and an `artifact.created` event is queued. A result over the item
        limit only is externalized when that pays (`TransportPolicy.max_summary_share`); else
        it stays inline and `meta["inline"]` says why.
        Inspection answers are bounded already and pass through. When the store cannot write
        the artifact (disk full, a file where its folder should be) the result is still given:
        a bounded preview inline with a note, `meta["artifact_error"]` naming the failure.
        """
        r = executed.result
        if r.name in INSPECTION_TOOLS:
            return self._classed_answer(executed)
        p = self.policy
        shown = self._redact(r.content)  # as the log (and so the prompt) holds it
        text, exact = shown, r.content
        if r.meta.get("truncated"):  # the executor cut the content: store the whole value
            v = r.value
            exact = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
            text = self._redact(exact)  # R-S1: secrets never reach artifacts in clear
        # an array of n items needs n - 1 commas: with fewer than max_inline_items commas in
        # all, no array is over the limit, and a short text needs no decoding to be kept
        small = len(text) <= p.max_inline_chars and text.count(",") < p.max_inline_items
        value = None if small else _decode(text)[0]
        reason = None if small else oversize_reason(
            text, value, max_chars=p.max_inline_chars, max_items=p.max_inline_items
        )  # fmt: skip
        if reason is None:
            if len(r.content) >= p.min_source_chars:  # R-A5 knows the whole, to spot cuts of it
                self._inline[r.tool_call_id] = shown  # tracked once the turn is fitted
            return r
        ids = [v for _, v in tool_values(text)] if value is not None and p.id_index else None
        pays = p.max_summary_share
        if pays is not None and len(text) <= p.max_inline_chars:  # only the array length
            bound = min(p.max_summary_chars, int(pays * len(text)))  # externalize if it pays
            sha = hashlib.sha256(text.encode()).hexdigest()
            probe = self.store._describe(text, sha, f"art_{sha[:12]}")
            trial = summarize(probe, reason=reason, max_chars=bound, ids=ids)
            if len(json.dumps(trial, ensure_ascii=False)) > bound:
                if len(r.content) >= p.min_source_chars:
                    self._inline[r.tool_call_id] = shown
                why = f"{reason}, but a summary would not fit in {pays:.0%}"
                meta = {**r.meta, "inline": f"not externalized: {why} of its {len(text)} chars"}
                return dataclasses.replace(r, meta=meta)
        return self._store(
            executed, text, reason, max_chars=p.max_summary_chars, ids=ids, exact=exact
        )

    # -- R-A1 for a whole turn: the turn's results together stay within a budget -------------
    def fit_turn(self, executed: Sequence[Executed], *, room_chars: int | None = None) -> None:
        """Keep one turn's results together within the turn's inline budget (R-A1, case 26).

        Each result passed `postprocess` alone; many mid-size results of one turn can still
        overflow the prompt together. When the turn's tool messages hold more than
        `TransportPolicy.max_turn_inline_chars` (or `room_chars`, the prompt room the run has
        left, whichever is smaller), the largest successful results are stored as artifacts
        like any large result, each replaced by a compact summary sharing what is left of
        the budget (ref, size and, as room allows, sha256 and a byte-exact preview; the id
        index too under `id_index`), until the turn fits. When even
        the smallest summaries do not fit, every result is stored with the smallest summary and
        the prompt's own budget check decides (nothing more could be moved).
        Called before the results are logged, so every context policy sees the same results.
        A turn no larger than one inline result (`max_inline_chars`) is never changed.

        Args:
            executed: the turn's executed calls; their `result` (and `emitted`) are replaced
                in place.
            room_chars: the characters of prompt the run may still give this turn's results
                (from the model's input budget and the context policy's limit); `None` = only
                `max_turn_inline_chars` applies.
        """
        p = self.policy
        total = 0
        for ex in executed:
            total += len(ex.result.content)
        if total > p.max_inline_chars:  # a turn no larger than one inline result is kept
            limit = p.max_turn_inline_chars
            if room_chars is not None:
                limit = room_chars if limit is None else min(limit, room_chars)
            if limit is not None and total > limit:
                self._fit(executed, limit, total)
        self._track_inline()

    def _fit(self, executed: Sequence[Executed], limit: int, total: int) -> None:
        """Store the largest results of a turn over `limit` chars (see `fit_turn`)."""
        p = self.policy
        movable = sorted(
            (ex for ex in executed if ex.result.ok and ex.result.name not in INSPECTION_TOOLS),
            key=lambda ex: -len(ex.result.content),
        )
        sizes = [len(ex.result.content) for ex in movable]
        fixed = total - sum(sizes)
        rest = sum(sizes)
        k, bound = len(movable), MIN_SUMMARY_CHARS
        for i, size in enumerate(sizes, start=1):  # store the i largest, summaries share the room
            rest -= size
            share = (limit - fixed - rest) // i
            if share >= MIN_SUMMARY_CHARS:
                k, bound = i, min(p.max_summary_chars, share)
                break
        reason = f"its turn's {len(executed)} results hold {total} chars (turn limit {limit})"
        for ex in movable[:k]:
            r = ex.result
            if len(r.content) <= bound:
                continue
            ref_id = r.meta.get("artifact")
            if isinstance(ref_id, str) and ref_id in self.created:  # stored already: shrink
                ref = self.created[ref_id]
                why = next(
                    (e[1].get("reason", reason) for e in ex.emitted if e[0] == "artifact.created"),
                    reason,
                )
                summary = summarize(ref, reason=str(why), max_chars=bound, compact=True)
                ex.result = dataclasses.replace(r, content=json.dumps(summary, ensure_ascii=False))
                continue
            if "artifact_error" in r.meta:
                continue
            self._inline.pop(r.tool_call_id, None)
            exact = r.content
            if r.meta.get("truncated"):
                v = r.value
                exact = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
            text = self._redact(exact)
            ids = [v for _, v in tool_values(text)] if p.id_index else None  # as opted in
            ex.result = self._store(
                ex, text, reason, max_chars=bound, ids=ids, compact=True, exact=exact
            )

    def _track_inline(self) -> None:
        """Track the inline results of the last turn as R-A5 sources (by their call ids)."""
        if self._inline:
            for call_id, text in self._inline.items():
                self.checker.add_source(f"call:{call_id}", text)
            self._inline.clear()

    def _store(
        self,
        executed: Executed,
        text: str,
        reason: str,
        *,
        max_chars: int,
        ids: list[str] | None = None,
        compact: bool = False,
        exact: str | None = None,
    ) -> ToolResult:
        """Store `text` (the whole result of `executed`) as an artifact; return its summary.

        `text` is redacted as the log is (R-S1: what is written holds no secret in clear);
        `exact`, the text before redaction when it differs, stays in memory only, for this
        run's `$bind` (`Binder.exact`), as `EventLog.exact` keeps a logged event's.
        """
        r, p = executed.result, self.policy
        step, branch = self._where()
        source = {
            "run_id": self.log.run_id if self.log else "",
            "branch_id": branch,
            "step": step,
            "tool": r.name,
            "tool_call_id": r.tool_call_id,
        }
        try:
            ref = self.store.put(
                text,
                source=source,
                # R-S2: a result made from bound restricted values is stored as restricted
                data_class=_max_class(
                    p.data_class, self.binder.classes.get(r.tool_call_id, "public")
                ),
                incomplete=bool(r.meta.get("incomplete")),
                summary=bool(r.meta.get("summary")),
            )
        except ArtifactError as exc:  # the tool ran (a write acted): its result is still given
            return self._unstored(r, text, reason, exc)
        self.created[ref.id] = ref
        if exact is not None and exact != text:
            self.binder.exact[ref.id] = exact
        self.checker.add_source(ref.id, text)
        where = str(self.store.root) if self.store.root is not None else "memory"
        executed.emitted.append(
            (
                "artifact.created",
                {**ref.to_dict(), "reason": reason, "store": where, "call_source": source},
            )
        )
        summary = summarize(ref, reason=reason, max_chars=max_chars, ids=ids, compact=compact)
        meta = {k: v for k, v in r.meta.items() if k not in ("truncated", "full_chars")}
        meta.update(artifact=ref.id, sha256=ref.sha256, size_chars=ref.size_chars)
        # R-S2: the summary carries a preview of the artifact, so its event carries its class
        meta["data_class"] = _max_class(ref.data_class, p.data_class)
        return dataclasses.replace(r, content=json.dumps(summary, ensure_ascii=False), meta=meta)

    def _classed_answer(self, executed: Executed) -> ToolResult:
        """An inspection answer, marked with the class of the artifact it was read from (R-S2)."""
        r = executed.result
        ref_id = (executed.arguments or {}).get("ref")
        if not r.ok or not isinstance(ref_id, str):
            return r
        try:
            data_class = self.store.ref(ref_id).data_class
        except ArtifactError:  # gone since the answer was read: the policy's class, at least
            data_class = self.policy.data_class
        if data_class == "internal":
            return r
        return dataclasses.replace(r, meta={**r.meta, "data_class": data_class})

    def _unstored(self, r: ToolResult, text: str, reason: str, exc: ArtifactError) -> ToolResult:
        """The result of a call whose artifact could not be written: a bounded preview inline.

        The tool has run, so its result must not be lost (R-E1): the model gets the first
        `max_summary_chars` of it with a note, the log and the ledger record that, and the
        run goes on. `meta["artifact_error"]` holds why the store failed.
        """
        preview = text[: self.policy.max_summary_chars]
        note = (
            f"the call succeeded and returned {len(text)} chars ({reason}), but the artifact "
            f"store could not keep them ({exc}); only the first {len(preview)} chars are shown "
            "here and the artifact_* tools cannot read the rest. Work with this preview; do not "
            "repeat the call to see more if it changes anything (it has acted already)"
        )
        body = {
            "stored": False,
            "note": note,
            "preview": preview,
            "preview_chars": len(preview),
            "total_chars": len(text),
        }
        meta = {k: v for k, v in r.meta.items() if k not in ("truncated", "full_chars")}
        meta.update(truncated=True, full_chars=len(text), artifact_error=str(exc))
        meta["data_class"] = self.policy.data_class  # the preview of what was to be stored
        return dataclasses.replace(r, content=json.dumps(body, ensure_ascii=False), meta=meta)

    def _redact(self, text: str) -> str:
        """The text as the log (and so the prompt) holds it: with the log's redactor applied."""
        redactor = getattr(self.log, "redactor", None)
        # `needs_quoted`: the log then scans the line holding this text around it (only once)
        if redactor is None or not redactor.needs_quoted(text):
            return text
        clean: str = redactor.redact(text)[0]
        return clean

    def _where(self) -> tuple[int, str]:
        last = self.log.last(ModelResponseEvent) if self.log is not None else None
        if last is None:
            return (0, "main")
        return (last.step or 0, last.branch_id)

    # -- R-A6: bindings (the executor's bind hook) ---------------------------------------------
    def bind(self, arguments: dict[str, Any], call: ToolCall) -> dict[str, Any]:
        """Resolve `$bind` arguments (see `Binder.bind`).

        Raises:
            ToolArgumentsError: a bad binding (`invalid_argument`).
            ToolNotFoundError: the bound artifact expired or was deleted (`not_found`).
        """
        return self.binder.bind(arguments, call)

    # -- R-A5: the single-representation check at prompt assembly ----------------------------
    def check(
        self, messages: Sequence[Message], *, step: int = 0, branch_id: str = "main"
    ) -> list[RepresentationViolation]:
        """Check an assembled prompt; log `alert.representation`; refuse unless reporting.

        Args:
            messages: the prompt about to be sent.
            step: the loop step (for the alert event).
            branch_id: the branch (for the alert event).

        Returns:
            The violations (only when reporting; a refusing transport raises instead).

        Raises:
            RepresentationError: a source is in two forms and the transport refuses; the
                alert is in the log and the model has not been called.
        """
        self._track_inline()
        violations = self.checker.check(messages)
        for v in violations:
            key = (v.ref, v.first.key, v.second.key)
            if not self.refuse and key in self._reported:
                continue
            self._reported.add(key)
            if self.log is not None:
                self.log.append(
                    "alert.representation",
                    {"step": step, **v.to_dict(), "refused": self.refuse},
                    branch_id=branch_id,
                    summary=f"{v.ref}: {v.first.form} + {v.second.form}",
                )
        if violations and self.refuse:
            v = violations[0]
            raise RepresentationError(
                v.message,
                ref=v.ref,
                forms=(v.first.describe(), v.second.describe()),
                violations=[x.to_dict() for x in violations],
            )
        return violations

    # -- R-A4: inspection tools ----------------------------------------------------------------
    def _inspection_tools(self) -> list[Tool]:
        store, bound = self.store, self.policy.max_answer_chars

        def guard(fn: Any, *args: Any, **kw: Any) -> Any:
            try:
                return fn(*args, **kw, max_chars=bound)
            except ArtifactNotFoundError as exc:
                raise ToolNotFoundError(
                    str(exc), hint="re-run the tool that produced it for fresh data"
                ) from None

        ref_p = {"type": "string", "description": "the artifact id (art_…) from a tool result"}
        ptr_p = {"type": "string", "description": "a JSON pointer such as /flights/3; '' = all"}
        common = (
            " Use this when a tool result was stored as an artifact (its summary says"
            " complete: false) and you need more of it. Do not use it for results shown in full,"
            " and do not copy what it returns into other tools: bind with $bind instead."
        )

        def spec(props: dict[str, Any], required: Sequence[str]) -> dict[str, Any]:
            return {
                "type": "object",
                "properties": props,
                "required": list(required),
                "additionalProperties": False,
            }

        def outline(ref: str, pointer: str = "") -> dict[str, Any]:
            out: dict[str, Any] = guard(store.outline, ref, pointer)
            return out

        def search(ref: str, query: str, skip: int = 0) -> dict[str, Any]:
            out: dict[str, Any] = guard(store.search, ref, query, skip=skip)
            return out

        def context(
            ref: str, offset: int | None = None, pointer: str | None = None, chars: int = 800
        ) -> dict[str, Any]:
            out: dict[str, Any] = guard(
                store.context, ref, offset=offset, pointer=pointer, chars=chars
            )
            return out

        def head(ref: str, chars: int = 1000) -> dict[str, Any]:
            out: dict[str, Any] = guard(store.head, ref, chars)
            return out

        def tail(ref: str, chars: int = 1000) -> dict[str, Any]:
            out: dict[str, Any] = guard(store.tail, ref, chars)
            return out

        def slice_(
            ref: str,
            pointer: str = "",
            start: int = 0,
            stop: int | None = None,
            fields: list[str] | None = None,
        ) -> Any:
            out: dict[str, Any] = guard(store.slice, ref, pointer, start, stop, fields=fields)
            return out

        n = {"type": "integer", "minimum": 0}
        defs: list[tuple[Callable[..., Any], str, str, dict[str, Any]]] = [
            (
                outline,
                "artifact_outline",
                "Show the shape of a stored artifact: types, keys, item counts and the JSON "
                "pointers of its arrays." + common + " Returns: the shape of the value at pointer.",
                spec({"ref": ref_p, "pointer": ptr_p}, ["ref"]),
            ),
            (
                search,
                "artifact_search",
                "Find a text (an id, a name, a value) in a stored artifact." + common + " Returns: "
                "up to 10 hits, each an exact snippet with offsets and the JSON pointer holding it,"
                " and which hits of the total they are.",
                spec(
                    {
                        "ref": ref_p,
                        "query": {"type": "string", "description": "text to find"},
                        "skip": {**n, "description": "hits to skip (paging)"},
                    },
                    ["ref", "query"],
                ),
            ),
            (
                context,
                "artifact_context",
                "Read an exact window of a stored artifact's text, around a character offset or "
                "at a JSON pointer." + common + " Returns: the window with its offsets.",
                spec(
                    {
                        "ref": ref_p,
                        "offset": {**n, "description": "char offset (from search)"},
                        "pointer": ptr_p,
                        "chars": {**n, "description": "window length in chars"},
                    },
                    ["ref"],
                ),
            ),
            (
                head,
                "artifact_head",
                "Read the first characters of a stored artifact." + common + " Returns: the exact "
                "text with offsets (chars 0–N of the whole).",
                spec({"ref": ref_p, "chars": {**n, "description": "how many chars"}}, ["ref"]),
            ),
            (
                tail,
                "artifact_tail",
                "Read the last characters of a stored artifact." + common + " Returns: the exact "
                "text with offsets.",
                spec({"ref": ref_p, "chars": {**n, "description": "how many chars"}}, ["ref"]),
            ),
            (
                slice_,
                "artifact_slice",
                "Read items start..stop-1 of an array inside a stored artifact (at most 10 per "
                "call); give fields to read only some values of each item." + common + " Returns:"
                " the items exactly (or {field: value} per item), their offsets, and which part"
                " of the whole they are (e.g. items 10–19 of 30), with the call that reads on.",
                spec(
                    {
                        "ref": ref_p,
                        "pointer": ptr_p,
                        "start": {**n, "description": "first index (0-based)"},
                        "stop": {**n, "description": "one past the last index"},
                        "fields": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "JSON pointers inside each item, e.g. "
                            "/prices/economy; only these values are returned",
                        },
                    },
                    ["ref"],
                ),
            ),
        ]
        return [
            Tool(
                name=name,
                description=desc,
                parameters=params,
                fn=fn,
                timeout_seconds=None,
                version="1",
            )
            for fn, name, desc, params in defs
        ]
