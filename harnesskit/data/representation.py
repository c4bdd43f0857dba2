"""Single representation (R-A5): one source, one form, within one assembled prompt.

A source is an artifact (its stored text) or an inline tool result (`call:<tool_call_id>`).
Within one prompt it may appear as `full`, `summary`, `preview`, `truncation` or `restatement`
- but only one of them. A second form (full plus summary, summary plus preview, two different
truncations, an assistant message restating it) makes the prompt fail the check: the model
would spend tokens cross-checking two versions, or hallucinate from their differences. The
check runs at assembly, before the call (the loop calls `Transport.check`, which uses
`RepresentationChecker`); replays report instead of refusing.

`excerpt` pieces (answers of the `artifact_*` inspection tools, each labelled with the part of
the whole it is) are recognised but never count as a second form.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from harnesskit._lazy import frozen_dataclass, lazy_pattern
from harnesskit.messages import Message, known_prefix

if TYPE_CHECKING:
    from harnesskit.data.artifacts import ArtifactStore

__all__ = [
    "FORMS",
    "Piece",
    "RepresentationChecker",
    "RepresentationViolation",
    "check_representation",
]

#: Forms a source can take in a prompt. `excerpt` never counts as a second form.
FORMS = ("full", "summary", "preview", "truncation", "restatement", "excerpt")


@frozen_dataclass(kw_only=True)
class Piece:
    """One appearance of a source in an assembled prompt: which source, in which form, where."""

    ref: str
    """The source: an artifact id, or `call:<tool_call_id>` for an inline tool result."""
    form: str
    """One of `FORMS`: full, summary, preview, truncation, restatement, excerpt."""
    message_index: int
    """Index of the message in the prompt (0-based)."""
    role: str
    """That message's role."""
    span: tuple[int, int] | None = None
    """For truncations and restatements: the part of the source's text, `(start, end)`."""

    @property
    def key(self) -> tuple[str, tuple[int, int] | None]:
        """What makes two pieces different forms: the form, and the span of a truncation."""
        return (self.form, self.span if self.form == "truncation" else None)

    def describe(self) -> str:
        """E.g. `truncation chars 0–1999 (message 5, tool)`."""
        part = f" chars {self.span[0]}–{self.span[1] - 1}" if self.span else ""
        return f"{self.form}{part} (message {self.message_index}, {self.role})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "ref": self.ref,
            "form": self.form,
            "message_index": self.message_index,
            "role": self.role,
            "span": list(self.span) if self.span else None,
        }


@frozen_dataclass(kw_only=True)
class RepresentationViolation:
    """A source present in two forms within one prompt (R-A5)."""

    ref: str
    """The source (artifact id or `call:<id>`)."""
    first: Piece
    """The first piece, in prompt order."""
    second: Piece
    """The first later piece in a different form."""

    @property
    def message(self) -> str:
        """A sentence naming the ref and both forms, and what to do."""
        return (
            f"{self.ref} appears in two forms in one prompt: {self.first.describe()} and "
            f"{self.second.describe()}; a source may appear in one form only (R-A5): keep one "
            "(e.g. the summary, reading parts with the artifact_* tools) and drop the other"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (the payload of an `alert.representation` event)."""
        return {
            "ref": self.ref,
            "forms": [self.first.to_dict(), self.second.to_dict()],
            "message": self.message,
        }

    def __str__(self) -> str:
        return self.message


_MARKERS_END = lazy_pattern(r"\s*(?:…|\.\.\.|\[(?:truncated|…|\.\.\.)[^\]]*\])\s*$")
_MARKERS_START = lazy_pattern(r"^\s*(?:…|\.\.\.|\[(?:truncated|…|\.\.\.)[^\]]*\])\s*")


def _strip_end_marker(text: str) -> str:
    """`_MARKERS_END.sub("", text)`; text that cannot end with a cut marker skips the regex.

    A marker at the end (before whitespace) is `…`, `...` or a bracket ending in `]` that
    opens with `[truncated`, `[…` or `[...`; without one of those the pattern cannot match.
    """
    end = text.rstrip()
    if end.endswith(("…", "...")) or (
        end.endswith("]") and ("[truncated" in end or "[…" in end or "[..." in end)
    ):
        return _MARKERS_END.sub("", text)
    return text


def _strip_start_marker(text: str) -> str:
    """`_MARKERS_START.sub("", text)`; text that cannot start with a cut marker skips the regex."""
    if text.lstrip().startswith(_START_MARKS):
        return _MARKERS_START.sub("", text)
    return text


_START_MARKS = ("…", "...", "[truncated", "[…", "[...")


def _as_parts(message: Any) -> tuple[str, str, str | None]:
    if message.__class__ is Message:  # the loop's case, without the ABC check below
        return message.role, message.content or "", message.tool_call_id
    if isinstance(message, Mapping):
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
        return message.get("role", ""), str(content), message.get("tool_call_id")
    return message.role, message.content or "", message.tool_call_id


def _piece_json(role: str, content: str) -> dict[str, Any] | None:
    if role == "assistant" or '"artifact_ref"' not in content[:200]:
        return None
    try:
        data = json.loads(content)
    except ValueError:
        return None
    if (
        isinstance(data, dict)
        and isinstance(data.get("artifact_ref"), str)
        and data.get("form") in FORMS
    ):
        return data
    return None


_Hit = tuple[str, str, tuple[int, int] | None]  # (source ref, form, span)


class _Source:
    __slots__ = ("birth", "grams", "order", "ref", "text")

    def __init__(self, ref: str, text: str, birth: int = 0, order: int = 0) -> None:
        self.ref, self.text = ref, text
        self.grams: dict[str, list[int]] | None = None
        # For inline results (`call:` refs): how many message texts had been seen when the
        # result was produced. A message seen before that cannot hold it, so it is not
        # rescanned for it; this keeps each step's check from growing with the history.
        self.birth = birth
        self.order = order  # its index in the checker's source order


#: From this many sources to try on one message on, candidates come from the ends index.
INDEX_FROM = 16
#: Length of the source ends the index is keyed by (chars; at most `min_source_chars`).
_END_CHARS = 32


class RepresentationChecker:
    """Finds every source's forms in assembled prompts; reports a source in two forms (R-A5).

    Sources are artifacts (their stored text) and inline tool results of at least
    `min_source_chars` (`call:<tool_call_id>`, the tool message itself being the `full` form).
    Forms found in a prompt:

    - `summary` / `preview` / `excerpt` / `truncation` / `full`: a non-assistant message whose
      content is a JSON object with `artifact_ref` and `form` (what this package writes);
    - `full`: a non-assistant message containing a source's whole text;
    - `truncation`: a non-assistant message that is a proper prefix or suffix of a source's text
      (at least `min_source_chars` long, a trailing or leading "…" / "[truncated …]" marker
      allowed); two truncations with different spans are two forms;
    - `restatement`: an assistant message whose text holds `restate_chars` or more consecutive
      characters of a source's text (tool-call arguments are audited by `transport_audit`).

    `excerpt` pieces (inspection answers) never count as a second form.
    The checker keeps results per message text, so checking each step's prompt costs only the
    new messages and sources.

    Args:
        load: returns an artifact's text by id, or `None` when it cannot be read (e.g.
            `store.read`); artifacts named by pieces are loaded through it.
        restate_chars: shortest verbatim run counted as a restatement; `None` = do not check.
        min_source_chars: inline tool results shorter than this are not tracked.
    """

    def __init__(
        self,
        load: Callable[[str], str | None] | None = None,
        *,
        restate_chars: int | None = 200,
        min_source_chars: int = 200,
    ) -> None:
        self.load = load
        self.restate_chars = restate_chars
        self.min_source_chars = min_source_chars
        self._sources: dict[str, _Source] = {}
        self._order: list[_Source] = []
        self._cache: dict[tuple[str, str], tuple[int, list[_Hit], Any]] = {}
        self._seen: dict[tuple[str, str], int] = {}  # message text -> order first seen
        self._missing: set[str] = set()
        self._calls: set[str] = set()
        self._declared: dict[tuple[str, str], dict[str, Any] | None] = {}
        # the ends index (tool / user / system messages): a source's first and last
        # `_END_CHARS` chars -> the sources with them, and the sources too short to be keyed
        self._heads: dict[str, list[_Source]] = {}
        self._tails: dict[str, list[_Source]] = {}
        self._short: list[_Source] = []
        self._end_chars = max(1, min(_END_CHARS, min_source_chars))
        self._grams: dict[str, list[_Source]] = {}  # sampled k-gram -> sources (restatements)
        self._grams_upto = 0  # sources of `_order` in `_grams` so far
        # the last checked prompt, to check only its new messages next time (see `check`)
        self._last: tuple[Any, ...] = ()
        self._last_sources = 0  # len(self._order) after it
        self._last_seen = 0  # len(self._seen) after it
        self._last_refs: dict[str, tuple[int, Piece, Piece | None]] = {}
        self._last_bad: list[str] = []  # refs of `_last_refs` found in two forms

    def add_source(self, ref: str, text: str) -> None:
        """Track a source (e.g. an artifact created in this run) by its exact text."""
        if ref not in self._sources and text:
            self._add_source(ref, text, len(self._seen) if ref.startswith("call:") else 0)

    def _add_source(self, ref: str, text: str, birth: int) -> None:
        if ref not in self._sources and text:
            src = _Source(ref, text, birth=birth, order=len(self._order))
            self._sources[ref] = src
            self._order.append(src)
            k = self._end_chars
            if len(text) < k:
                self._short.append(src)
            else:
                self._heads.setdefault(text[:k], []).append(src)
                self._tails.setdefault(text[-k:], []).append(src)

    def _ensure_artifact(self, ref: str) -> None:
        if ref in self._sources or ref in self._missing or self.load is None:
            return
        try:
            text = self.load(ref)
        except Exception:  # an unreadable artifact simply cannot be matched by text
            text = None
        if text is None:
            self._missing.add(ref)
        else:
            self.add_source(ref, text)

    def pieces(self, messages: Sequence[Any]) -> list[Piece]:
        """Every piece of every tracked source in `messages` (Message objects or chat dicts)."""
        return [p for ps in self._pieces_of([_as_parts(m) for m in messages]) for p in ps]

    def _pieces_of(
        self, parts: Sequence[tuple[str, str, str | None]], start: int = 0
    ) -> list[list[Piece]]:
        """The pieces of each message of `parts`, message `i` numbered `start + i`."""
        declared: dict[int, dict[str, Any]] = {}
        # inline results found here are born before any text of `parts` is seen (as if none
        # were scanned yet: the scan that decides `known` below may see one first)
        birth = len(self._seen)
        for i, (role, content, call_id) in enumerate(parts):
            key = (role, content)
            if key not in self._declared:
                self._declared[key] = _piece_json(role, content)
            data = self._declared[key]
            if data is not None:
                declared[i] = data
                self._ensure_artifact(data["artifact_ref"])
            elif role == "tool" and call_id and call_id not in self._calls:
                self._calls.add(call_id)
                ref = f"call:{call_id}"
                # an inline result is a source of its own unless it is a form of a known one
                # (already tracked under its own ref, adding it again would change nothing)
                if (
                    len(content) >= self.min_source_chars
                    and ref not in self._sources
                    and not self._known(role, content)
                ):
                    self._add_source(ref, content, birth)
        out: list[list[Piece]] = []
        for i, (role, content, _) in enumerate(parts):
            at = start + i
            if i in declared:
                d = declared[i]
                span = (
                    (int(d["start"]), int(d["end"]))
                    if d["form"] == "truncation" and "start" in d
                    else None
                )
                out.append(
                    [
                        Piece(
                            ref=d["artifact_ref"],
                            form=d["form"],
                            message_index=at,
                            role=role,
                            span=span,
                        )
                    ]
                )
                continue
            found = self._scan(role, content)
            out.append(
                [
                    Piece(ref=ref, form=form, message_index=at, role=role, span=span)
                    for ref, form, span in found
                ]
                if found
                else []
            )
        return out

    def _known(self, role: str, content: str) -> bool:
        """Whether a tracked source is in `content` (full or cut), so it is no source of its own.

        A text not scanned yet is scanned now, as `_pieces_of` would scan it next: every source
        is tried on it (a source born after a text was seen skips it, and none was), and the
        scan goes on from there for the sources added later, its own included. So the
        containment tests run once per text, through the ends index.
        """
        if content and (role, content) not in self._cache:
            return bool(self._scan(role, content))
        ends = self._ends_of(content)
        return any(self._contained(content, ends, src) for src in self._order)

    def check(self, messages: Sequence[Any]) -> list[RepresentationViolation]:
        """The violations in one assembled prompt: one per source found in two forms.

        Incremental: when `messages` extends the last checked prompt (the same messages, or
        equal ones, first) and no source that could be in those earlier messages was added
        since, only the new messages are scanned and the verdict is carried on from the last
        one; otherwise the whole prompt is checked (per-message results still cached).

        Returns:
            Violations in order of the source's first appearance; `[]` when the prompt is clean.
        """
        msgs = messages if isinstance(messages, tuple) else tuple(messages)  # kept as given
        n = len(self._last)
        refs: dict[str, tuple[int, Piece, Piece | None]] = {}
        bad: list[str] = []
        new: list[list[Piece]] | None = None
        last = self._last  # the builder's growing prompts prove an extension in O(1)
        if n and (known_prefix(last, msgs) or (len(msgs) >= n and msgs[:n] == last)):
            new = self._pieces_of([_as_parts(m) for m in msgs[n:]], n)
            # a source the earlier messages may hold (an artifact, born 0) arrived since: those
            # messages are scanned again for it, below (their results for the others are kept)
            if all(s.birth >= self._last_seen for s in self._order[self._last_sources :]):
                # carried on in place: a later check either extends this prompt too or
                # starts over, so the last verdict is never needed again (no copy per step)
                refs, bad = self._last_refs, self._last_bad
            else:
                new = None
        if new is None:
            new = self._pieces_of([_as_parts(m) for m in msgs])
        for ps in new:
            for p in ps:
                if p.form == "excerpt":
                    continue
                had = refs.get(p.ref)
                if had is None:
                    refs[p.ref] = (len(refs), p, None)
                elif had[2] is None and p.key != had[1].key:
                    refs[p.ref] = (had[0], had[1], p)
                    bad.append(p.ref)
        self._last, self._last_refs, self._last_bad = msgs, refs, bad
        self._last_sources, self._last_seen = len(self._order), len(self._seen)
        bad_refs = sorted((refs[r] for r in bad), key=lambda v: v[0])
        return [
            RepresentationViolation(ref=first.ref, first=first, second=second)
            for _, first, second in bad_refs
            if second is not None
        ]

    def _scan(self, role: str, content: str) -> list[_Hit]:
        key = (role, content)
        done, found, view = self._cache.get(key, (0, [], None))
        total = len(self._order)
        if done == total:
            return found
        seen = self._seen.setdefault(key, len(self._seen))
        if not content:  # an empty message holds no source
            self._cache[key] = (total, found, view)
            return found
        found = list(found)
        if view is None:  # per message, once: its k-grams, or its cut-marker-free ends
            view = self._grams_of(content) if role == "assistant" else self._ends_of(content)
        for src in self._candidates(role, content, view, done):
            if src.birth > seen:  # born after this text was seen: cannot be in it
                continue
            hit = (
                self._restated(content, view, src)
                if role == "assistant"
                else self._contained(content, view, src)
            )
            if hit is not None:
                found.append((src.ref, *hit))
        self._cache[key] = (total, found, view)
        return found

    def _candidates(self, role: str, content: str, view: Any, done: int) -> list[_Source]:
        """The sources from `done` on that may be in `content`, in source order.

        Few sources: all of them. Else an index narrows them down without changing the
        result: a source in full holds its first `_END_CHARS` chars at some offset of
        `content`, a prefix truncation starts like it, a suffix truncation ends like it; a
        restatement shares one of the source's sampled k-grams with `content`.
        """
        rest = self._order[done:]
        if len(rest) < INDEX_FROM or self.min_source_chars < 1:  # (an empty cut matches all)
            return rest
        if role == "assistant":
            if self.restate_chars is None or len(content) < self.restate_chars:
                return []
            if view is None:  # a very long message: sampled searches, no gram set
                return rest
            self._index_grams()
            grams, hit = self._grams, set()
            for g in view:
                srcs = grams.get(g)
                if srcs is not None:
                    hit.update(srcs)
        else:
            k = self._end_chars
            heads, hit = self._heads, set(self._short)
            for j in range(len(content) - k + 1):
                srcs = heads.get(content[j : j + k])
                if srcs is not None:
                    hit.update(srcs)
            # a prefix truncation starts like `content` (offset 0 above), a suffix one ends like it
            hit.update(self._tails.get(content[-k:], ()))
        return sorted((s for s in hit if s.order >= done), key=lambda s: s.order)

    def _index_grams(self) -> None:
        k, step = self._k()
        for src in self._order[self._grams_upto :]:
            self._sample(src, k, step)
            for gram in src.grams or ():
                self._grams.setdefault(gram, []).append(src)
        self._grams_upto = len(self._order)

    @staticmethod
    def _sample(src: _Source, k: int, step: int) -> None:
        if src.grams is None:
            sampled: dict[str, list[int]] = {}
            for p in range(0, len(src.text) - k + 1, step):
                sampled.setdefault(src.text[p : p + k], []).append(p)
            src.grams = sampled

    def _ends_of(self, content: str) -> tuple[str, str]:
        return _strip_end_marker(content[-200:]), _strip_start_marker(content[:200])

    def _contained(
        self, content: str, ends: Any, src: _Source
    ) -> tuple[str, tuple[int, int] | None] | None:
        text = src.text
        if len(content) >= len(text):
            return ("full", None) if text in content else None
        if ends is None:
            ends = self._ends_of(content)
        end_cut, start_cut = ends  # the last / first 200 chars without a cut marker
        head = content[: max(0, len(content) - 200)] + end_cut
        if len(head) >= self.min_source_chars and text.startswith(head):
            return "truncation", (0, len(head))
        tail = start_cut + content[200:]
        if len(tail) >= self.min_source_chars and text.endswith(tail):
            return "truncation", (len(text) - len(tail), len(text))
        return None

    def _k(self) -> tuple[int, int]:
        n = self.restate_chars or 1
        k = min(32, n)
        return k, max(1, n - k + 1)

    def _grams_of(self, content: str) -> frozenset[str] | None:
        """Every k-gram of `content`, or `None` for a very long message (scanned with find)."""
        if len(content) > LONG_MESSAGE_CHARS:
            return None
        k, _ = self._k()
        return frozenset(content[j : j + k] for j in range(len(content) - k + 1))

    def _restated(
        self, content: str, grams_of_content: Any, src: _Source
    ) -> tuple[str, tuple[int, int] | None] | None:
        """A run of >= restate_chars chars shared by `content` and the source, if any.

        The source is sampled every `n - k + 1` chars (k = 32), so any shared run of `n` chars
        holds one sampled k-gram whole; a set lookup per sample finds candidates, which are
        then extended both ways to the full run. A message over `LONG_MESSAGE_CHARS` is searched
        with `str.find` for at most `LONG_MESSAGE_SAMPLES` samples spread over the source.
        """
        n = self.restate_chars
        if n is None or len(content) < n:
            return None
        k, step = self._k()
        self._sample(src, k, step)
        assert src.grams is not None
        mine = grams_of_content
        items: Any = src.grams.items()
        if mine is None and len(content) > LONG_MESSAGE_CHARS:
            every = list(items)
            items = every[:: max(1, len(every) // LONG_MESSAGE_SAMPLES)]
        elif mine is None:
            mine = self._grams_of(content)
        text = src.text
        for gram, positions in items:
            if mine is not None and gram not in mine:
                continue
            j, tries = content.find(gram), 0
            while j >= 0 and tries < 8:  # bounded: periodic text repeats a gram many times
                for p in positions[:8]:
                    back = _common(content, j, text, p, -1)
                    ahead = _common(content, j, text, p, 1)
                    if back + ahead >= n:
                        return "restatement", (p - back, p + ahead)
                j, tries = content.find(gram, j + 1), tries + 1
        return None


#: Assistant messages longer than this (chars) are not indexed whole for restatement checks.
LONG_MESSAGE_CHARS = 100_000
#: How many source samples are searched in such a message (spread over the source).
LONG_MESSAGE_SAMPLES = 256


def _common(x: str, i: int, y: str, j: int, direction: int) -> int:
    """Length of the equal run of `x` at `i` and `y` at `j`, forwards (1) or backwards (-1).

    Compares growing, then shrinking, slices (galloping), so a long run costs few comparisons.
    """
    n, step = 0, 64
    while step >= 1:
        if direction > 0:
            m = min(step, len(x) - i - n, len(y) - j - n)
            same = m > 0 and x[i + n : i + n + m] == y[j + n : j + n + m]
        else:
            m = min(step, i - n, j - n)
            same = m > 0 and x[i - n - m : i - n] == y[j - n - m : j - n]
        if same:
            n += m
            if m < step:  # one of the texts ended
                return n
            step *= 2
        else:
            step //= 2
    return n


def check_representation(
    messages: Sequence[Any],
    *,
    store: ArtifactStore | None = None,
    sources: Mapping[str, str] | None = None,
    restate_chars: int | None = 200,
    min_source_chars: int = 200,
) -> list[RepresentationViolation]:
    """Check one assembled prompt for a source present in two forms (R-A5).

    Args:
        messages: the prompt (`Message`s or chat-completions dicts), in order.
        store: where artifacts named in the prompt are read from.
        sources: more sources by id (e.g. every artifact of the run: `{ref.id: text}`), so a
            full copy of an artifact is found even when no summary names it.
        restate_chars: shortest verbatim run in an assistant message counted as a restatement;
            `None` = do not look for restatements.
        min_source_chars: inline tool results shorter than this are not tracked.

    Returns:
        One `RepresentationViolation` per source in two forms; `[]` when clean.
    """
    load = None
    if store is not None:

        def load(ref: str) -> str | None:
            return store.read(ref, include_archived=True)

    checker = RepresentationChecker(
        load, restate_chars=restate_chars, min_source_chars=min_source_chars
    )
    for ref, text in (sources or {}).items():
        checker.add_source(ref, text)
    return checker.check(messages)
