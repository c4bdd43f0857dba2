"""Artifacts: a content-addressed store for large tool results, exact previews (R-A1–R-A4, R-A8).

A tool result whose JSON text is longer than `max_inline_chars` (8000) or that holds an array of
more than `max_inline_items` (10) anywhere never reaches the model: it is written here, and the
prompt gets a bounded summary of the `ArtifactRef` instead (shape, a byte-exact preview with its
offsets, `complete: false`, and which inspection calls read more). The runtime side (deciding,
binding, the inspection tools) lives in `bindings.py`; this module is storage and pure reading.

Layout of a store folder (the default store is `<log_dir>/artifacts/`):

```
objects/<sha[:2]>/<sha256>.txt    the exact text, UTF-8 (content-addressed: one copy per content)
refs/<artifact id>.json          metadata (ArtifactRef.to_dict() plus lifecycle status)
archive/<sha256>.txt.gz          bytes of archived artifacts
```

An artifact's id is `art_` + the first 12 hex digits of its sha256, so equal results share one
artifact. Every offset is a character offset into the stored text (`text[start:end]`).

The single-representation check (R-A5) lives in `representation.py` (re-exported here):
`check_representation(messages, store=...)` finds each source in one assembled prompt and the
forms it appears in, and reports a source present in two forms.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import os
import pathlib
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import field
from typing import Any

from harnesskit import _repr
from harnesskit._lazy import frozen_dataclass
from harnesskit.data import _jsontext as jt
from harnesskit.data._inspection import InspectionMixin, _call
from harnesskit.data.representation import (
    Piece,
    RepresentationChecker,
    RepresentationViolation,
    check_representation,
)
from harnesskit.errors import (
    ArtifactError,
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    UsageError,
    checked_path,
)

__all__ = [
    "INSPECTION_TOOLS",
    "ArtifactRef",
    "ArtifactStore",
    "Piece",
    "Preview",
    "RepresentationChecker",
    "RepresentationViolation",
    "check_representation",
    "oversize_reason",
    "summarize",
    "verify_preview",
]

#: Names of the inspection tools (R-A4) as the model sees them.
INSPECTION_TOOLS = (
    "artifact_outline",
    "artifact_search",
    "artifact_context",
    "artifact_head",
    "artifact_tail",
    "artifact_slice",
)
STATUSES = ("active", "expired", "archived", "deleted")
_ID = re.compile(r"art_[0-9a-f]{12}")


def _iso(t: float | None) -> str | None:
    return None if t is None else dt.datetime.fromtimestamp(t, dt.UTC).isoformat(timespec="seconds")


@frozen_dataclass(kw_only=True)
class Preview:
    """A byte-exact excerpt of an artifact's stored text: `text == stored[start:end]` (R-A3)."""

    ref: str
    """The artifact id."""
    start: int
    """Offset of the first character (0-based, in characters of the stored text)."""
    end: int
    """Offset one past the last character."""
    text: str
    """The excerpt itself, never rewritten."""
    of_chars: int
    """Length of the whole stored text (characters)."""
    pointer: str | None = None
    """JSON pointer of the value the preview starts (e.g. `/flights/0`), when JSON."""
    cut: bool = False
    """True when the value at `pointer` is longer than the preview."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (as written into summaries and events)."""
        out = {
            "pointer": self.pointer,
            "start": self.start,
            "end": self.end,
            "of_chars": self.of_chars,
            "cut": self.cut,
            "text": self.text,
        }
        return {k: v for k, v in out.items() if v is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, ref: str | None = None) -> Preview:
        """Inverse of `to_dict()`; `ref` fills in an id the dict lacks.

        Raises:
            UsageError: a required field is missing.
        """
        try:
            return cls(
                ref=str(ref or data["ref"]),
                start=int(data["start"]),
                end=int(data["end"]),
                text=str(data["text"]),
                of_chars=int(data.get("of_chars", -1)),
                pointer=data.get("pointer"),
                cut=bool(data.get("cut", False)),
            )
        except KeyError as exc:
            raise UsageError(f"a preview needs {exc.args[0]!r} (got keys {sorted(data)})") from exc


@frozen_dataclass(kw_only=True)
class ArtifactRef:
    """What the runtime knows about one stored artifact (R-A2). The bytes stay in the store."""

    id: str
    """`art_` + first 12 hex of `sha256`."""
    sha256: str
    """sha256 (64 hex) of the UTF-8 stored text."""
    size_chars: int
    """Length of the stored text (characters)."""
    size_bytes: int
    """Length of the stored text (UTF-8 bytes)."""
    kind: str
    """`json` when the text parses as JSON, else `text`."""
    items: int | None = None
    """Root array length, root object key count, or line count for text."""
    arrays: dict[str, int] = field(default_factory=dict)
    """`{pointer: length}` of the longest arrays inside (at most 10), longest first."""
    shape: dict[str, Any] = field(default_factory=dict)
    """Inferred schema: types, keys and item counts (see `_jsontext.shape`)."""
    source: dict[str, Any] = field(default_factory=dict)
    """Where it came from: run_id, branch_id, step, tool, tool_call_id (first writer)."""
    data_class: str = "internal"
    """`public`, `internal`, `restricted` or `secret` (R-S2)."""
    created_at: float = 0.0
    """Creation time (seconds since the epoch)."""
    expires_at: float | None = None
    """Expiry time (seconds since the epoch); `None` = never."""
    truncated: bool = False
    """True when the stored text is itself a cut of a larger result."""
    summary: bool = False
    """True when the stored text is a summary, not the original result."""
    incomplete: bool = False
    """True when the producer said the result is partial (e.g. one page of many)."""
    preview: Preview | None = None
    """The default preview shown in summaries."""
    status: str = "active"
    """`active`, `expired`, `archived` or `deleted` (R-A8), as of when this ref was read."""
    status_reason: str | None = None
    """Why the status changed, for anything but `active`."""

    @property
    def complete(self) -> bool:
        """False when any of `truncated`, `summary`, `incomplete` is set."""
        return not (self.truncated or self.summary or self.incomplete)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready metadata (times as seconds and as ISO 8601 UTC)."""
        return {
            "id": self.id,
            "sha256": self.sha256,
            "size_chars": self.size_chars,
            "size_bytes": self.size_bytes,
            "kind": self.kind,
            "items": self.items,
            "arrays": dict(self.arrays),
            "shape": self.shape,
            "source": dict(self.source),
            "data_class": self.data_class,
            "created_at": self.created_at,
            "created": _iso(self.created_at),
            "expires_at": self.expires_at,
            "expires": _iso(self.expires_at),
            "truncated": self.truncated,
            "summary": self.summary,
            "incomplete": self.incomplete,
            "preview": self.preview.to_dict() if self.preview else None,
            "status": self.status,
            "status_reason": self.status_reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArtifactRef:
        """Inverse of `to_dict()`."""
        preview = data.get("preview")
        return cls(
            id=data["id"],
            sha256=data["sha256"],
            size_chars=data["size_chars"],
            size_bytes=data.get("size_bytes", data["size_chars"]),
            kind=data.get("kind", "json"),
            items=data.get("items"),
            arrays=dict(data.get("arrays") or {}),
            shape=dict(data.get("shape") or {}),
            source=dict(data.get("source") or {}),
            data_class=data.get("data_class", "internal"),
            created_at=data.get("created_at", 0.0),
            expires_at=data.get("expires_at"),
            truncated=data.get("truncated", False),
            summary=data.get("summary", False),
            incomplete=data.get("incomplete", False),
            preview=Preview.from_dict(preview, ref=data["id"]) if preview else None,
            status=data.get("status", "active"),
            status_reason=data.get("status_reason"),
        )

    def __repr__(self) -> str:
        what = f"{self.items} items" if self.items is not None else self.kind
        flag = "" if self.status == "active" else f" {self.status}"
        return f"<ArtifactRef {self.id} {self.kind} {self.size_chars} chars, {what}{flag}>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


def oversize_reason(text: str, value: Any, *, max_chars: int, max_items: int) -> str | None:
    """Why a result must be externalized (R-A1), or `None` when it may go inline.

    Args:
        text: the result's JSON text (or plain text) as it would be sent.
        value: the decoded JSON value (`None` for plain text).
        max_chars: inline limit on `len(text)` (characters).
        max_items: inline limit on the length of any array anywhere in `value`.

    Returns:
        A sentence naming every limit crossed, e.g. "it holds an array of 30 items at
        /flights (inline limit 10)".
    """
    reasons = []
    if len(text) > max_chars:
        reasons.append(f"its text is {len(text)} chars (inline limit {max_chars})")
    if value is not None and not isinstance(value, str) and _longest_array(value) > max_items:
        arrays = jt.largest_arrays(value, limit=1)  # where it is, once it is known to matter
        if arrays and arrays[0][1] > max_items:
            ptr, n = arrays[0]
            where = ptr or "the top level"
            reasons.append(f"it holds an array of {n} items at {where} (inline limit {max_items})")
    return " and ".join(reasons) or None


def _longest_array(value: Any) -> int:
    """The length of the longest array anywhere in `value` (0 when it holds none)."""
    longest, stack = 0, [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            longest = max(longest, len(v))
            stack.extend(x for x in v if isinstance(x, list | dict))
        elif isinstance(v, dict):
            stack.extend(x for x in v.values() if isinstance(x, list | dict))
    return longest


def summarize(
    ref: ArtifactRef,
    *,
    reason: str,
    max_chars: int = 2000,
    ids: Sequence[str] | None = None,
    compact: bool = False,
) -> dict[str, Any]:
    """The bounded summary that replaces an externalized result in the prompt.

    Holds the ref, `complete: false`, why it was externalized, size, sha256, the shape (made
    shallower until the whole summary fits), the byte-exact preview with offsets, the
    inspection calls that read more, and how to pass a value on with `$bind`.

    Args:
        ref: the stored artifact.
        reason: the sentence from `oversize_reason`.
        max_chars: bound on the summary's JSON text (characters); the shape and then the
            preview shrink to meet it, the id index never does.
        ids: the id index: every id, date, code and amount the result holds, in order
            (`None`: no index).
        compact: when the summary is over `max_chars`, first drop what the inspection tools
            give on request (shape, arrays, the example calls, the bind hint) and shorten the
            reason, keeping ref, size, sha256 and as much preview as fits; at the very least
            ref, `form`, `complete` and size remain (for the many results of one turn,
            `Transport.fit_turn`).

    Returns:
        A JSON-ready dict (`{"artifact_ref": id, "form": "summary", ...}`).
    """
    arr = next(iter(ref.arrays.items()), None)
    more = [_call("artifact_outline", ref=ref.id)]
    if arr is not None and ref.kind == "json":
        more.append(_call("artifact_slice", ref=ref.id, pointer=arr[0], start=0, stop=10))
    more += [
        _call("artifact_search", ref=ref.id, query="..."),
        _call("artifact_head", ref=ref.id, chars=1000),
        _call("artifact_tail", ref=ref.id, chars=1000),
        _call("artifact_context", ref=ref.id, offset=0, chars=800),
    ]
    example = f"{ref.id}#{arr[0]}/0" if arr is not None and ref.kind == "json" else ref.id
    out: dict[str, Any] = {
        "artifact_ref": ref.id,
        "form": "summary",
        "complete": False,
        "why": f"stored as an artifact because {reason}; only this summary is shown",
        "kind": ref.kind,
        "size_chars": ref.size_chars,
        "sha256": ref.sha256,
        "items": ref.items,
        "arrays": dict(list(ref.arrays.items())[:5]),
        "shape": ref.shape,
        "preview": ref.preview.to_dict() if ref.preview else None,
        "read_more": more,
        "bind": f'pass a value to a tool as {{"$bind": "{example}"}} instead of copying it',
    }
    if not ref.complete:
        out["flags"] = {k: getattr(ref, k) for k in ("truncated", "summary", "incomplete")}
    if ids is not None:
        out["ids"] = list(ids)

    def size() -> int:
        return len(json.dumps(out, ensure_ascii=False))

    if compact and size() > max_chars:
        for key in ("read_more", "bind", "arrays", "shape"):
            out.pop(key, None)
        out["why"] = f"stored as an artifact because {reason}"
        if size() > max_chars:  # then a short why, and the preview shrinks below
            for key in ("kind", "items"):
                out.pop(key, None)
            out["why"] = "stored as an artifact; read it with the artifact_* tools"
    depth = 3
    while size() > max_chars and depth >= 0 and "shape" in out:
        out["shape"] = _shallow(ref.shape, depth)
        depth -= 1
    p = ref.preview
    if size() > max_chars and p is not None:
        keep = max(0, len(p.text) - (size() - max_chars))
        cut = dataclasses.replace(p, end=p.start + keep, text=p.text[:keep], cut=True)
        out["preview"] = cut.to_dict()
    for key in ("preview", "why", "sha256"):  # compact, at the least: the ref's id, size and
        if compact and size() > max_chars:  # that it is not whole (the artifact keeps sha256)
            out.pop(key, None)
    return out


def _shallow(s: dict[str, Any], depth: int) -> dict[str, Any]:
    if depth <= 0:
        return {"type": s["type"], **({"items": s["items"]} if "items" in s else {})}
    out = dict(s)
    if "keys" in s:
        out["keys"] = {k: _shallow(v, depth - 1) for k, v in s["keys"].items()}
    if "item" in s:
        out["item"] = _shallow(s["item"], depth - 1)
    return out


class ArtifactStore(InspectionMixin):
    """A content-addressed artifact store on disk (or in memory), with lifecycle (R-A1–R-A4, R-A8).

    Args:
        root: the folder; `None` keeps everything in memory (lost with the object).
        ttl_seconds: default lifetime of new artifacts in seconds; `None` = never expire.
        clock: wall clock (seconds since the epoch), injectable for deterministic tests.
        preview_chars: length bound of the default preview (characters).

    The folder is created on the first `put`. Thread-safe: tools running concurrently may share it.

    Raises:
        UsageError: `root` is not a folder path (str or `os.PathLike`) or `None`, is not a
            usable one (a NUL byte, a name too long: `errors.checked_path`), or is an
            existing file (the folder itself is created on the first `put`), `ttl_seconds`
            is not a positive number or `None`, `preview_chars` is not an int >= 1, or `clock`
            is not callable.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        ttl_seconds: float | None = None,
        clock: Callable[[], float] = time.time,
        preview_chars: int = 400,
    ) -> None:
        if root is not None and not isinstance(root, str | os.PathLike):
            raise UsageError(
                f"ArtifactStore(root) takes a folder path (str or pathlib.Path) or None for "
                f"memory, got {type(root).__name__} {root!r:.60}"
            )
        t = ttl_seconds
        if t is not None and (isinstance(t, bool) or not isinstance(t, int | float) or not t > 0):
            raise UsageError(f"ttl_seconds must be positive seconds or None, got {t!r}")
        if (
            isinstance(preview_chars, bool)
            or not isinstance(preview_chars, int)
            or preview_chars < 1
        ):
            raise UsageError(f"preview_chars must be an int >= 1, got {preview_chars!r}")
        if not callable(clock):
            raise UsageError(f"clock must be a function returning seconds, got {clock!r:.60}")
        self.root = (  # a file there is found now, not at the first result stored
            checked_path(
                root,
                "ArtifactStore(root)",
                kind="folder",
                fix="move it, or pass another folder (Harness(artifacts=...), or another log_dir)",
            )
            if root is not None
            else None
        )
        self.ttl_seconds = ttl_seconds
        self.clock = clock
        self.preview_chars = preview_chars
        self._lock = threading.RLock()
        self._meta: dict[str, dict[str, Any]] = {}
        self._blobs: dict[str, str] = {}  # memory mode: sha -> text
        self._archived: dict[str, bytes] = {}  # memory mode: sha -> gzip bytes
        self._cache: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._spans: collections.OrderedDict[tuple[str, str], list[tuple[int, int]]] = (
            collections.OrderedDict()
        )

    @classmethod
    def resolve(
        cls, spec: ArtifactStore | str | os.PathLike[str] | None, *, log_dir: pathlib.Path | None
    ) -> ArtifactStore:
        """The store a `Harness` uses: the one given, one at a path, or the default.

        The default (`spec=None`) lives in `<log_dir>/artifacts/` when the harness writes logs,
        else in memory.
        """
        if isinstance(spec, ArtifactStore):
            return spec
        if spec is not None:
            return cls(spec)
        return cls(log_dir / "artifacts" if log_dir is not None else None)

    # -- writing ---------------------------------------------------------------------------
    def put(
        self,
        data: str | Any,
        *,
        source: Mapping[str, Any] | None = None,
        data_class: str = "internal",
        ttl_seconds: float | None = None,
        truncated: bool = False,
        summary: bool = False,
        incomplete: bool = False,
    ) -> ArtifactRef:
        """Store a result and return its ref (the same ref for the same text).

        Args:
            data: the exact text to store, or a JSON-ready value (stored as
                `json.dumps(value, ensure_ascii=False)`).
            source: run_id, branch_id, step, tool, tool_call_id of the producing call.
            data_class: `public`, `internal`, `restricted` or `secret`.
            ttl_seconds: lifetime in seconds; default the store's `ttl_seconds`.
            truncated: the text is itself a cut of a larger result.
            summary: the text is a summary, not the original.
            incomplete: the producer reported a partial result.

        Returns:
            The `ArtifactRef`. Storing a text that is already active extends its expiry and
            keeps the first writer's `source`.
        """
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
        sha = hashlib.sha256(text.encode()).hexdigest()
        ref_id = f"art_{sha[:12]}"
        now = self.clock()
        ttl = ttl_seconds if ttl_seconds is not None else self.ttl_seconds
        expires = now + ttl if ttl is not None else None
        with self._lock:
            old = self._load_meta(ref_id)
            if old is not None and old["status"] == "active" and not self._past_expiry(old):
                if old["expires_at"] is not None:
                    old["expires_at"] = None if expires is None else max(expires, old["expires_at"])
                old["data_class"] = _max_class(old["data_class"], data_class)
                self._save_meta(old)
                return ArtifactRef.from_dict(old)
            self._write_blob(sha, text)
            ref = self._describe(text, sha, ref_id)
            ref = dataclasses.replace(
                ref,
                source=dict(source or {}),
                data_class=data_class,
                created_at=now,
                expires_at=expires,
                truncated=truncated,
                summary=summary,
                incomplete=incomplete,
            )
            self._save_meta(ref.to_dict())
            self._remember(sha, text)
            return ref

    def _describe(self, text: str, sha: str, ref_id: str) -> ArtifactRef:
        value, kind = _decode(text)
        common: dict[str, Any] = {
            "id": ref_id,
            "sha256": sha,
            "size_chars": len(text),
            "size_bytes": len(text.encode()),
        }
        if kind == "text":
            preview = Preview(
                ref=ref_id,
                start=0,
                end=min(len(text), self.preview_chars),
                text=text[: self.preview_chars],
                of_chars=len(text),
                cut=len(text) > self.preview_chars,
            )
            lines = text.count("\n") + 1
            return ArtifactRef(
                kind="text",
                items=lines,
                preview=preview,
                shape={"type": "text", "chars": len(text), "lines": lines},
                **common,
            )
        arrays = dict(jt.largest_arrays(value, limit=10))
        items = len(value) if isinstance(value, list | dict) else None
        pointer = next((f"{p}/0" for p, n in arrays.items() if n > 0), "")
        start, end = jt.span_of(text, pointer)
        stop = min(end, start + self.preview_chars)
        preview = Preview(
            ref=ref_id,
            start=start,
            end=stop,
            text=text[start:stop],
            of_chars=len(text),
            pointer=pointer,
            cut=stop < end,
        )
        return ArtifactRef(
            kind="json",
            items=items,
            arrays=arrays,
            shape=jt.shape(value),
            preview=preview,
            **common,
        )

    # -- reading ---------------------------------------------------------------------------
    def ref(self, ref_id: str) -> ArtifactRef:
        """The metadata of `ref_id` with its current status (expired ones included).

        Raises:
            ArtifactNotFoundError: no artifact with that id was ever stored here.
        """
        with self._lock:
            meta = self._require_meta(ref_id)
            if meta["status"] == "active" and self._past_expiry(meta):
                self._set_status(meta, "expired", self._expiry_reason(meta))
            return ArtifactRef.from_dict(meta)

    def read(self, ref: str | ArtifactRef, *, include_archived: bool = False) -> str:
        """The exact stored text of an active artifact (sha256 checked on load).

        Args:
            ref: the id or the ref.
            include_archived: also read archived artifacts (for audits).

        Raises:
            ArtifactNotFoundError: unknown id, or expired / archived / deleted (the message says
                why and when).
            ArtifactIntegrityError: the stored bytes no longer match their sha256.
        """
        meta = self.ref(ref if isinstance(ref, str) else ref.id).to_dict()
        status = meta["status"]
        if status != "active" and not (status == "archived" and include_archived):
            raise ArtifactNotFoundError(
                f"artifact {meta['id']} is {status}: {meta['status_reason']}; "
                "its contents can no longer be read"
                + ("; ArtifactStore.restore() brings it back" if status == "archived" else "")
            )
        sha = meta["sha256"]
        with self._lock:
            if sha in self._cache:
                self._cache.move_to_end(sha)
                return self._cache[sha]
            text = self._read_blob(sha, archived=status == "archived")
            if hashlib.sha256(text.encode()).hexdigest() != sha:
                raise ArtifactIntegrityError(
                    f"artifact {meta['id']}: stored bytes do not match sha256 {sha[:16]}…; "
                    "the store was modified outside harnesskit"
                )
            self._remember(sha, text)
            return text

    def value(self, ref: str | ArtifactRef, pointer: str = "") -> Any:
        """The exact JSON value at `pointer` (decoded from its span of the stored text).

        Raises:
            ArtifactNotFoundError: as `read`.
            ToolArgumentsError: the artifact is not JSON or the pointer does not resolve (the
                message names the pointer and what exists at its deepest valid part).
        """
        text = self.read(ref)
        start, end = self._span(ref, text, pointer)
        return json.loads(text[start:end])

    def verify_preview(self, ref: str | ArtifactRef, preview: Preview | Mapping[str, Any]) -> bool:
        """True when `preview` is exactly `stored[start:end]` of the artifact (R-A3).

        Args:
            ref: the artifact (id or ref); archived artifacts are read too.
            preview: a `Preview`, or a dict with `text`, `start` and `end` (as in a summary).

        Raises:
            ArtifactNotFoundError: the artifact is unknown, expired or deleted.
        """
        ref_id = ref if isinstance(ref, str) else ref.id
        p = preview if isinstance(preview, Preview) else Preview.from_dict(preview, ref=ref_id)
        text = self.read(ref_id, include_archived=True)
        if not 0 <= p.start <= p.end <= len(text):
            return False
        if p.of_chars not in (-1, len(text)):
            return False
        return text[p.start : p.end] == p.text

    # -- lifecycle (R-A8) ------------------------------------------------------------------
    def status(self, ref_id: str) -> str:
        """`active`, `expired`, `archived` or `deleted`.

        Raises:
            ArtifactNotFoundError: unknown id.
        """
        return self.ref(ref_id).status

    def expire(self, ref_id: str, *, reason: str = "expired by request") -> ArtifactRef:
        """Expire an artifact now: its bytes are removed; reads answer `not_found` with `reason`.

        Raises:
            ArtifactNotFoundError: unknown id.
        """
        return self._retire(ref_id, "expired", reason)

    def _retire(self, ref_id: str, status: str, reason: str) -> ArtifactRef:
        with self._lock:
            meta = self._require_meta(ref_id)
            self._set_status(meta, status, f"{reason} at {_iso(self.clock())}")
            return ArtifactRef.from_dict(meta)

    def sweep(self) -> list[str]:
        """Expire every active artifact whose `expires_at` has passed.

        Returns:
            The ids expired by this call, sorted.
        """
        out = []
        with self._lock:
            for ref_id in self._all_ids():
                meta = self._require_meta(ref_id)
                if meta["status"] == "active" and self._past_expiry(meta):
                    self._set_status(meta, "expired", self._expiry_reason(meta))
                    out.append(ref_id)
        return sorted(out)

    def archive(self, ref_id: str, *, reason: str = "archived") -> ArtifactRef:
        """Move an artifact's bytes to the (gzip) archive; reads answer `not_found` until `restore`.

        Raises:
            ArtifactNotFoundError: unknown id, or not active.
        """
        with self._lock:
            meta = self._require_meta(ref_id)
            text = self.read(ref_id)
            import gzip  # archives are rare: `import harnesskit` does not pay for gzip

            blob = gzip.compress(text.encode(), mtime=0)
            if self.root is None:
                self._archived[meta["sha256"]] = blob
            else:
                atomic_write(self.root / "archive" / f"{meta['sha256']}.txt.gz", blob)
            self._set_status(meta, "archived", f"{reason} at {_iso(self.clock())}")
            return ArtifactRef.from_dict(meta)

    def restore(self, ref_id: str) -> ArtifactRef:
        """Bring an archived artifact back to `active`.

        Raises:
            ArtifactNotFoundError: unknown id, or not archived.
        """
        with self._lock:
            meta = self._require_meta(ref_id)
            if meta["status"] != "archived":
                raise ArtifactNotFoundError(f"artifact {ref_id} is {meta['status']}, not archived")
            text = self._read_blob(meta["sha256"], archived=True)
            self._write_blob(meta["sha256"], text)
            meta["status"], meta["status_reason"] = "active", None
            self._save_meta(meta)
            return ArtifactRef.from_dict(meta)

    def delete(self, ref_id: str, *, reason: str = "deleted") -> ArtifactRef:
        """Remove an artifact's bytes for good (R-S3); its metadata stays with status `deleted`.

        Raises:
            ArtifactNotFoundError: unknown id.
        """
        return self._retire(ref_id, "deleted", reason)

    def refs(self, *, run_id: str | None = None, status: str | None = None) -> list[ArtifactRef]:
        """All refs (optionally of one run, or one status), oldest first."""
        out = [self.ref(i) for i in self._all_ids()]
        out = [r for r in out if run_id is None or r.source.get("run_id") == run_id]
        out = [r for r in out if status is None or r.status == status]
        return sorted(out, key=lambda r: (r.created_at, r.id))

    def close(self) -> None:
        """Drop the in-process caches (files are written at once; nothing is pending)."""
        with self._lock:
            self._cache.clear()
            self._spans.clear()

    def __enter__(self) -> ArtifactStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __contains__(self, ref_id: object) -> bool:
        return isinstance(ref_id, str) and self._load_meta(ref_id) is not None

    def __len__(self) -> int:
        return len(self._all_ids())

    def __iter__(self) -> Iterator[ArtifactRef]:
        return iter(self.refs())

    def __repr__(self) -> str:
        where = str(self.root) if self.root is not None else "memory"
        return f"<ArtifactStore {len(self)} artifacts at {where}>"

    # -- internals -------------------------------------------------------------------------
    def _past_expiry(self, meta: Mapping[str, Any]) -> bool:
        return meta["expires_at"] is not None and self.clock() >= meta["expires_at"]

    def _expiry_reason(self, meta: Mapping[str, Any]) -> str:
        life = meta["expires_at"] - meta["created_at"]
        return f"expired at {_iso(meta['expires_at'])} (lifetime {life:g} s)"

    def _set_status(self, meta: dict[str, Any], status: str, reason: str) -> None:
        sha = meta["sha256"]
        meta["status"], meta["status_reason"] = status, reason
        self._save_meta(meta)
        self._cache.pop(sha, None)
        self._spans = collections.OrderedDict(
            (k, v) for k, v in self._spans.items() if k[0] != meta["id"]
        )
        if self.root is None:
            self._blobs.pop(sha, None)
            if status == "deleted":
                self._archived.pop(sha, None)
        else:
            (self.root / "objects" / sha[:2] / f"{sha}.txt").unlink(missing_ok=True)
            if status == "deleted":
                (self.root / "archive" / f"{sha}.txt.gz").unlink(missing_ok=True)

    def _remember(self, sha: str, text: str) -> None:
        self._cache[sha] = text
        while len(self._cache) > 32:
            self._cache.popitem(last=False)

    def _write_blob(self, sha: str, text: str) -> None:
        if self.root is None:
            self._blobs[sha] = text
            return
        path = self.root / "objects" / sha[:2] / f"{sha}.txt"
        if not path.exists():  # same name, same bytes: a second writer's rename is harmless
            atomic_write(path, text.encode())

    def _read_blob(self, sha: str, *, archived: bool = False) -> str:
        try:
            if archived:
                import gzip  # archives are rare: `import harnesskit` does not pay for gzip

                blob = (
                    self._archived[sha]
                    if self.root is None
                    else (self.root / "archive" / f"{sha}.txt.gz").read_bytes()
                )
                return gzip.decompress(blob).decode()
            if self.root is None:
                return self._blobs[sha]
            return (self.root / "objects" / sha[:2] / f"{sha}.txt").read_text(encoding="utf-8")
        except (KeyError, FileNotFoundError):
            raise ArtifactIntegrityError(
                f"the bytes of sha256 {sha[:16]}… are missing from the store although its "
                "metadata says active; the store was modified outside harnesskit"
            ) from None

    def _load_meta(self, ref_id: str) -> dict[str, Any] | None:
        if ref_id in self._meta:
            return self._meta[ref_id]
        if self.root is None or not _ID.fullmatch(ref_id):
            return None
        path = self.root / "refs" / f"{ref_id}.json"
        if not path.exists():
            return None
        meta: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        self._meta[ref_id] = meta
        return meta

    def _require_meta(self, ref_id: str) -> dict[str, Any]:
        meta = self._load_meta(ref_id)
        if meta is None:
            where = str(self.root) if self.root is not None else "this in-memory store"
            raise ArtifactNotFoundError(
                f"no artifact {ref_id!r} in {where}; artifact ids look like art_0123456789ab "
                "and come from tool result summaries"
            )
        return meta

    def _save_meta(self, meta: dict[str, Any]) -> None:
        self._meta[meta["id"]] = meta
        if self.root is not None:
            path = self.root / "refs" / f"{meta['id']}.json"
            atomic_write(path, json.dumps(meta, ensure_ascii=False).encode())

    def _all_ids(self) -> list[str]:
        ids = set(self._meta)
        if self.root is not None and (self.root / "refs").is_dir():
            ids.update(p.stem for p in (self.root / "refs").glob("art_*.json"))
        return sorted(ids)


def atomic_write(path: pathlib.Path, data: bytes) -> None:
    """Write `data` to `path` so that readers see the old file or the new one, never a part.

    The bytes go to a temporary file with a unique name in the same folder, then are renamed
    over `path` (`os.replace`, atomic on one filesystem). Any number of threads and processes
    may write the same path at once: each rename succeeds and the last one wins.

    Args:
        path: the destination; its folder is created when missing.
        data: the exact bytes.

    Raises:
        ArtifactError: the write failed (disk full, ...); no temporary file is left behind.
    """
    import tempfile  # 4 ms that `import harnesskit` need not pay

    tmp = ""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp:
            with contextlib.suppress(OSError):
                pathlib.Path(tmp).unlink(missing_ok=True)
        raise ArtifactError(
            f"could not write {path.name} to the artifact store {path.parent.parent}: "
            f"{exc.strerror or exc} (errno {exc.errno}); nothing partial was left behind"
        ) from exc
    except BaseException:
        if tmp:
            pathlib.Path(tmp).unlink(missing_ok=True)
        raise


def verify_preview(
    store: ArtifactStore, ref: str | ArtifactRef, preview: Preview | Mapping[str, Any]
) -> bool:
    """True when `preview` is a byte-exact substring of the artifact at its offsets (R-A3).

    Same as `store.verify_preview(ref, preview)`.

    Raises:
        ArtifactNotFoundError: the artifact is unknown, expired or deleted.
    """
    return store.verify_preview(ref, preview)


_CLASS_RANK = {"public": 0, "internal": 1, "restricted": 2, "secret": 3}


def _max_class(a: str, b: str) -> str:
    return a if _CLASS_RANK.get(a, 1) >= _CLASS_RANK.get(b, 1) else b


def _decode(text: str) -> tuple[Any, str]:
    stripped = text.lstrip()
    if not stripped or stripped[0] not in '[{"-0123456789tfn':
        return None, "text"
    try:
        return json.loads(text), "json"
    except ValueError:
        return None, "text"
