"""The inspection calls of an artifact store (R-A4), as a mixin of `ArtifactStore` (private).

Every answer is bounded and says which part of the whole it is ("items 10–19 of 30",
"chars 0–999 of 45210"); text windows are exact substrings with their offsets, array items are
decoded from their exact spans.
"""

from __future__ import annotations

import collections
import json
import re
import threading
from typing import TYPE_CHECKING, Any

from harnesskit.data import _jsontext as jt
from harnesskit.errors import ToolArgumentsError

if TYPE_CHECKING:
    from harnesskit.data.artifacts import ArtifactRef


def _call(name: str, **args: Any) -> str:
    return f"{name}(" + ", ".join(f"{k}={json.dumps(v)}" for k, v in args.items()) + ")"


def _cost(ch: str) -> int:
    """Characters `ch` takes inside a JSON string."""
    if ch in '"\\\n\r\t\b\f':
        return 2
    return 6 if ch < " " else 1


def fit(text: str, a: int, b: int, budget: int, *, keep_end: bool = False) -> tuple[int, int]:
    """Shrink `text[a:b]` until its JSON string form fits in `budget` characters.

    The end is cut, or the start with `keep_end`. Returns the new `(a, b)`.
    """
    used = 2
    if keep_end:
        i = b
        while i > a and used + _cost(text[i - 1]) <= budget:
            i -= 1
            used += _cost(text[i])
        return i, b
    i = a
    while i < b and used + _cost(text[i]) <= budget:
        used += _cost(text[i])
        i += 1
    return a, i


#: Room kept in every answer for its fields other than the text (characters).
OVERHEAD = 400


class InspectionMixin:
    """`outline`, `search`, `context`, `head`, `tail` and `slice` over stored artifacts."""

    _lock: threading.RLock
    _spans: collections.OrderedDict[tuple[str, str], list[tuple[int, int]]]

    def read(self, ref: str | ArtifactRef, *, include_archived: bool = False) -> str:
        """The exact stored text (implemented by `ArtifactStore`)."""
        raise NotImplementedError

    def ref(self, ref_id: str) -> ArtifactRef:
        """The metadata (implemented by `ArtifactStore`)."""
        raise NotImplementedError

    def _span(self, ref: str | ArtifactRef, text: str, pointer: str) -> tuple[int, int]:
        ref_id = ref if isinstance(ref, str) else ref.id
        try:
            return jt.span_of(text, pointer)
        except jt.PointerError as exc:
            raise ToolArgumentsError(
                f"{ref_id}: {exc}", hint="use artifact_outline to see which pointers exist"
            ) from None
        except ValueError:
            raise ToolArgumentsError(
                f"{ref_id} is plain text, not JSON: pointers do not apply",
                hint="read it with artifact_head, artifact_tail, artifact_search or "
                "artifact_context",
            ) from None

    def _items(self, ref_id: str, text: str, pointer: str) -> list[tuple[int, int]]:
        key = (ref_id, pointer)
        with self._lock:
            if key in self._spans:
                return self._spans[key]
        start, end = self._span(ref_id, text, pointer)
        if text[start] != "[":
            found = jt.describe(json.loads(text[start:end]))
            raise ToolArgumentsError(
                f"{ref_id}: at {pointer or '(root)'} there is {found}; slice needs an array",
                hint="use artifact_outline to find the arrays (their pointers are listed)",
            )
        spans = jt.array_spans(text, start)
        with self._lock:
            self._spans[key] = spans
            while len(self._spans) > 64:
                self._spans.popitem(last=False)
        return spans

    # -- inspection (R-A4): every answer is bounded and says which part of the whole it is --------
    def _answer(self, ref_id: str, op: str, part: str, **body: Any) -> dict[str, Any]:
        return {"artifact_ref": ref_id, "form": "excerpt", "op": op, "part": part, **body}

    def outline(self, ref: str, pointer: str = "", *, max_chars: int = 4000) -> dict[str, Any]:
        """The shape of the value at `pointer`: types, keys, counts and the pointers of its arrays.

        Args:
            ref: the artifact id.
            pointer: JSON pointer of the value to outline; `""` = the whole.
            max_chars: bound on the answer's JSON text (characters).

        Raises:
            ArtifactNotFoundError: unknown, expired, archived or deleted artifact.
            ToolArgumentsError: a bad pointer (the message says what exists there).
        """
        meta = self.ref(ref)
        text = self.read(ref)
        if meta.kind == "text":
            return self._answer(
                ref,
                "outline",
                f"outline of all {len(text)} chars",
                shape=meta.shape,
                size_chars=len(text),
            )
        start, end = self._span(ref, text, pointer)
        value = json.loads(text[start:end])
        arrays = {pointer + p: n for p, n in jt.largest_arrays(value, limit=10)}
        for depth in (4, 3, 2, 1, 0):
            out = self._answer(
                ref,
                "outline",
                f"outline of {pointer or '(root)'}: chars {start}–{end - 1} of {len(text)}",
                pointer=pointer,
                start=start,
                end=end,
                of_chars=len(text),
                shape=jt.shape(value, max_depth=depth, max_keys=25),
                arrays=arrays,
            )
            if len(json.dumps(out, ensure_ascii=False)) <= max_chars:
                break
        return out

    def search(
        self,
        ref: str,
        query: str,
        *,
        skip: int = 0,
        max_hits: int = 10,
        context_chars: int = 60,
        case_sensitive: bool = False,
        max_chars: int = 4000,
    ) -> dict[str, Any]:
        """Occurrences of `query` in the stored text, with exact snippets, offsets and pointers.

        Args:
            ref: the artifact id.
            query: the text to find (a plain string, not a pattern).
            skip: hits to skip (for paging: the answer says where to go on).
            max_hits: hits per answer.
            context_chars: characters of context on each side of a hit.
            case_sensitive: match case exactly.
            max_chars: bound on the answer's JSON text (characters).

        Raises:
            ArtifactNotFoundError: unknown, expired, archived or deleted artifact.
            ToolArgumentsError: an empty query.
        """
        if not query:
            raise ToolArgumentsError("query is empty", hint="search for a word, id or value")
        meta = self.ref(ref)
        text = self.read(ref)
        flags = 0 if case_sensitive else re.IGNORECASE
        starts = [m.start() for m in re.finditer(re.escape(query), text, flags)]
        hits: list[dict[str, Any]] = []
        used = 0
        for s in starts[skip : skip + max(1, min(max_hits, 50))]:
            a, b = max(0, s - context_chars), min(len(text), s + len(query) + context_chars)
            hit = {"offset": s, "start": a, "end": b, "text": text[a:b]}
            if meta.kind == "json":
                hit["pointer"] = jt.pointer_at(text, s)
            used += len(json.dumps(hit, ensure_ascii=False))
            if hits and used > max_chars - OVERHEAD:
                break
            hits.append(hit)
        total = len(starts)
        if not hits:
            part = f"no hits for {query!r}" if total == 0 else f"hits from {skip}: none of {total}"
        else:
            part = f"hits {skip}–{skip + len(hits) - 1} of {total}"
        out = self._answer(ref, "search", part, query=query, total=total, hits=hits)
        if skip + len(hits) < total:
            out["next"] = _call("artifact_search", ref=ref, query=query, skip=skip + len(hits))
        return out

    def context(
        self,
        ref: str,
        *,
        offset: int | None = None,
        pointer: str | None = None,
        chars: int = 800,
        max_chars: int = 4000,
    ) -> dict[str, Any]:
        """An exact window of the stored text: around `offset`, or at the value at `pointer`.

        Args:
            ref: the artifact id.
            offset: a character offset (e.g. from `search`); the window is centred on it.
            pointer: a JSON pointer; the window starts at that value's first character.
            chars: window length (characters), at most `max_chars - 400`.
            max_chars: bound on the answer (characters).

        Raises:
            ArtifactNotFoundError: unknown, expired, archived or deleted artifact.
            ToolArgumentsError: neither or both of offset/pointer, an offset outside the text,
                or a bad pointer.
        """
        if (offset is None) == (pointer is None):
            raise ToolArgumentsError(
                "give exactly one of offset or pointer",
                hint="offset=<char offset from search>, or pointer='/items/3'",
            )
        text = self.read(ref)
        chars = max(1, chars)
        if pointer is not None:
            s, e = self._span(ref, text, pointer)
            a, b = s, min(e, s + chars)
            whole = f"the value at {pointer or '(root)'} is chars {s}–{e - 1}"
        else:
            assert offset is not None
            if not 0 <= offset < max(1, len(text)):
                raise ToolArgumentsError(
                    f"offset {offset} is outside the text (0–{len(text) - 1})",
                    hint="use an offset reported by artifact_search",
                )
            a = max(0, min(offset - chars // 2, len(text) - chars))
            b = min(len(text), a + chars)
            whole = f"around offset {offset}"
        a, b = fit(text, a, b, max_chars - OVERHEAD)
        return self._answer(
            ref,
            "context",
            f"chars {a}–{b - 1} of {len(text)} ({whole})",
            start=a,
            end=b,
            of_chars=len(text),
            text=text[a:b],
        )

    def head(self, ref: str, chars: int = 1000, *, max_chars: int = 4000) -> dict[str, Any]:
        """The first `chars` characters of the stored text (exact, with offsets).

        Raises:
            ArtifactNotFoundError: unknown, expired, archived or deleted artifact.
        """
        text = self.read(ref)
        _, b = fit(text, 0, min(len(text), max(1, chars)), max_chars - OVERHEAD)
        return self._answer(
            ref,
            "head",
            f"chars 0–{b - 1} of {len(text)}",
            start=0,
            end=b,
            of_chars=len(text),
            text=text[:b],
        )

    def tail(self, ref: str, chars: int = 1000, *, max_chars: int = 4000) -> dict[str, Any]:
        """The last `chars` characters of the stored text (exact, with offsets).

        Raises:
            ArtifactNotFoundError: unknown, expired, archived or deleted artifact.
        """
        text = self.read(ref)
        a, _ = fit(
            text, max(0, len(text) - max(1, chars)), len(text), max_chars - OVERHEAD, keep_end=True
        )
        return self._answer(
            ref,
            "tail",
            f"chars {a}–{len(text) - 1} of {len(text)}",
            start=a,
            end=len(text),
            of_chars=len(text),
            text=text[a:],
        )

    def slice(
        self,
        ref: str,
        pointer: str = "",
        start: int = 0,
        stop: int | None = None,
        *,
        fields: list[str] | None = None,
        max_items: int = 10,
        max_chars: int = 4000,
    ) -> dict[str, Any]:
        """Items `start..stop-1` of the array at `pointer`, exact, at most `max_items` per answer.

        With `fields`, each item is projected to `{field: value}` for those JSON pointers
        (relative to the item, e.g. `/prices/economy`): read only what a decision needs.

        Args:
            ref: the artifact id.
            pointer: JSON pointer of the array (`""` = the root).
            start: first index (0-based).
            stop: one past the last index; `None` = as many as fit.
            fields: JSON pointers read from each item (a projection); `None` = whole items.
            max_items: items per answer.
            max_chars: bound on the answer's JSON text (characters); fewer items are returned
                when they would not fit, and `next` says where to go on.

        Returns:
            `{"part": "items 10–19 of 30", "items": [...], "offsets": [[start, end], ...],
            "total": 30, "next": ...}`; each item is decoded from its exact span.

        Raises:
            ArtifactNotFoundError: unknown, expired, archived or deleted artifact.
            ToolArgumentsError: not an array there, a range outside it, or a field that an
                item does not have (the message names the item and what it holds there).
        """
        text = self.read(ref)
        spans = self._items(ref, text, pointer)
        n = len(spans)
        stop = n if stop is None else stop
        if start < 0 or start > n or stop < start:
            raise ToolArgumentsError(
                f"{ref}: range {start}–{stop} is outside the array at {pointer or '(root)'} "
                f"({n} items, indexes 0–{n - 1})",
                hint="use 0 <= start <= stop <= the array length",
            )
        stop = min(stop, n, start + max_items)
        items: list[Any] = []
        offsets: list[list[int]] = []
        used = OVERHEAD
        for index, (s, e) in enumerate(spans[start:stop], start):
            item = json.loads(text[s:e])
            if fields:
                item = {f: self._field(ref, item, f, f"{pointer}/{index}") for f in fields}
            size = len(json.dumps(item, ensure_ascii=False)) + 20  # the item and its offsets
            if items and used + size > max_chars:
                break
            if not items and size > max_chars - OVERHEAD:
                i = start
                return self._answer(
                    ref,
                    "slice",
                    f"item {i} of {n} is {e - s} chars, too long for one answer",
                    pointer=pointer,
                    start=i,
                    stop=i,
                    total=n,
                    items=[],
                    offsets=[],
                    too_long={"index": i, "start": s, "end": e},
                    hint=f"slice or outline a deeper pointer such as {pointer}/{i}/..., or "
                    f"read its text with artifact_context(pointer='{pointer}/{i}')",
                )
            items.append(item)
            offsets.append([s, e])
            used += size
        last = start + len(items)
        part = f"items {start}–{last - 1} of {n}" if items else f"no items ({start} of {n})"
        out = self._answer(
            ref,
            "slice",
            part,
            pointer=pointer,
            start=start,
            stop=last,
            total=n,
            items=items,
            offsets=offsets,
        )
        if fields:
            out["fields"] = list(fields)
        if last < n:
            more = {"fields": list(fields)} if fields else {}
            out["next"] = _call("artifact_slice", ref=ref, pointer=pointer, start=last, **more)
        return out

    def _field(self, ref: str, item: Any, field: str, at: str) -> Any:
        try:
            return jt.resolve(item, field)
        except jt.PointerError as exc:
            raise ToolArgumentsError(
                f"{ref}: item {at} has no field {field!r}: {exc}",
                hint="give fields as JSON pointers inside one item, e.g. /prices/economy",
            ) from None
