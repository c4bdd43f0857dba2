"""The airline database: loading a private copy per run, and a state hash for scoring.

The shipped files in `datasets/airline/` (a copy of the τ-bench airline data, MIT, Sierra) are
only ever read. Each `load_database()` call gives a database whose entries are copied on first
access from one shared snapshot, so a run can mutate what it reads and no run sees another's
changes.

`AirlineDB.state_hash()` is compatible with τ-bench's data hash: the sha256 of the text form of
the database where every mapping is turned into a tuple of `(key, value)` pairs sorted by key and
every list into a tuple. Ints and floats keep their own text (`250` and `250.0` differ), which is
why the tools keep the numeric types of their inputs exactly.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import pickle
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import harnesskit as hk

__all__ = [
    "DATA_FILES",
    "AirlineDB",
    "default_data_dir",
    "load_database",
    "shipped_files_digest",
    "state_hash",
]

#: The three files of the database, in the order their sections appear in `AirlineDB.data`.
DATA_FILES = ("flights", "reservations", "users")

AddressKey = Literal["state", "province"]

_ENV_VAR = "HARNESSKIT_AIRLINE_DATA"


def default_data_dir() -> Path:
    """Return where the shipped database lives.

    The environment variable `HARNESSKIT_AIRLINE_DATA` wins; otherwise `datasets/airline/` at
    the root of the source tree this package was imported from.

    Returns:
        The directory path (it may not exist; `load_database` checks).
    """
    override = os.environ.get(_ENV_VAR)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[3] / "datasets" / "airline"


@dataclass(frozen=True, slots=True)
class _Cached:
    signature: tuple[tuple[str, int, int], ...]
    texts: dict[str, bytes]


_cache: dict[Path, _Cached] = {}


def _read_texts(data_dir: Path) -> _Cached:
    """Read the three files once per (path, size, mtime); later loads parse the cached bytes."""
    paths = {name: data_dir / f"{name}.json" for name in DATA_FILES}
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        raise hk.UsageError(
            f"airline database files not found: {', '.join(missing)}; pass data_dir= pointing at "
            f"a folder with flights.json, reservations.json and users.json, or set {_ENV_VAR}"
        )
    signature = tuple((name, (st := p.stat()).st_size, st.st_mtime_ns) for name, p in paths.items())
    key = data_dir.resolve()
    cached = _cache.get(key)
    if cached is None or cached.signature != signature:
        cached = _Cached(signature=signature, texts={n: p.read_bytes() for n, p in paths.items()})
        _cache[key] = cached
    return cached


def load_database(
    data_dir: str | Path | None = None, *, address_key: AddressKey = "state"
) -> AirlineDB:
    """Load a private, mutable copy of the airline database.

    Args:
        data_dir: folder holding `flights.json`, `reservations.json` and `users.json`; `None`
            means `default_data_dir()`.
        address_key: the name of the user address field for the state. The shipped data says
            `"state"`; `"province"` reproduces the data as it was when τ-bench's historical
            trajectories were recorded (the field was renamed in January 2025), which makes
            recorded tool outputs and recorded ground-truth hashes comparable byte for byte.

    Returns:
        A new `AirlineDB`; changing it never changes the shipped files or another copy.

    Raises:
        UsageError: a file is missing or `address_key` is not one of the two names.
    """
    if address_key not in ("state", "province"):
        raise hk.UsageError(f"address_key must be 'state' or 'province', got {address_key!r}")
    folder = Path(data_dir) if data_dir is not None else default_data_dir()
    cached = _read_texts(folder)
    key = (folder.resolve(), cached.signature, address_key)
    snapshot = _snapshots.get(key)
    if snapshot is None:
        data = {name: json.loads(cached.texts[name]) for name in DATA_FILES}
        if address_key == "province":
            for user in data["users"].values():
                user["address"] = _rename_key(user.get("address", {}), "state", "province")
        dump = pickle.dumps
        snapshot = _snapshots[key] = _Snapshot(
            blobs={
                name: {k: dump(v, protocol=pickle.HIGHEST_PROTOCOL) for k, v in section.items()}
                for name, section in data.items()
            },
            shared=data,
            pristine=_PristineTexts(
                texts={
                    name: {k: _entry_text(k, v) for k, v in section.items()}
                    for name, section in data.items()
                }
            ),
        )
    # Copy-on-access: the sections share the snapshot's per-entry pickles and copy an entry
    # only when it is first handed out, so a run pays for the few entries it touches.
    sections: dict[str, Any] = {
        name: _CowSection(snapshot.blobs[name], snapshot.shared[name]) for name in DATA_FILES
    }
    return AirlineDB(sections, pristine=snapshot.pristine)


def _rename_key(mapping: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """Return `mapping` with key `old` renamed to `new`, keeping its position (JSON order)."""
    return {(new if k == old else k): v for k, v in mapping.items()}


def read_only_values(section: Mapping[str, Any]) -> Iterator[Any]:
    """Iterate a section's entries for reading only, without copy-on-access copies.

    Args:
        section: `db.flights`, `db.reservations` or `db.users`.

    Returns:
        The entries in section order; never mutate them.
    """
    if isinstance(section, _CowSection):
        return section.shared_values()
    return iter(section.values())


def shipped_files_digest(data_dir: str | Path | None = None) -> dict[str, str]:
    """Return the sha256 of each shipped database file, read from disk now.

    Args:
        data_dir: as for `load_database`.

    Returns:
        `{"flights": hex, "reservations": hex, "users": hex}`.
    """
    folder = Path(data_dir) if data_dir is not None else default_data_dir()
    return {
        name: hashlib.sha256((folder / f"{name}.json").read_bytes()).hexdigest()
        for name in DATA_FILES
    }


class AirlineDB:
    """One run's mutable airline database: `flights`, `reservations` and `users` mappings.

    Keys are flight numbers, reservation ids and user ids; values are the JSON objects of the
    shipped files. The domain's tools mutate these mappings in place and call `mark_changed`
    for every entry they touch, which lets `state_hash()` reuse the canonical text of untouched
    entries (hashing the 5 MB database from scratch takes about half a second). Code that
    mutates entries directly must call `mark_changed` too, or use `state_hash(full=True)`.
    """

    def __init__(
        self,
        data: dict[str, dict[str, Any]],
        *,
        pristine: _PristineTexts | None = None,
    ) -> None:
        """Wrap already-parsed data (use `load_database()` to read the shipped files).

        Args:
            data: a mapping with the keys `flights`, `reservations` and `users`.
            pristine: canonical texts of the entries as loaded (internal; `None` disables the
                incremental hash).

        Raises:
            UsageError: a section is missing.
        """
        missing = [name for name in DATA_FILES if name not in data]
        if missing:
            raise hk.UsageError(f"airline data lacks section(s) {missing}; expected {DATA_FILES}")
        self.data = data
        self._pristine = pristine
        self._changed: set[tuple[str, str]] = set()

    @property
    def flights(self) -> dict[str, Any]:
        """Flights by flight number (e.g. `HAT001`), each with per-date status and prices."""
        return self.data["flights"]

    @property
    def reservations(self) -> dict[str, Any]:
        """Reservations by 6-character id."""
        return self.data["reservations"]

    @property
    def users(self) -> dict[str, Any]:
        """Users by user id (e.g. `mia_li_3668`)."""
        return self.data["users"]

    @property
    def changed(self) -> frozenset[tuple[str, str]]:
        """The `(section, key)` entries marked as changed since loading."""
        return frozenset(self._changed)

    def mark_changed(self, section: str, key: str) -> None:
        """Record that the entry `key` of `section` was added, changed or deleted.

        Args:
            section: `"flights"`, `"reservations"` or `"users"`.
            key: the entry's id.

        Raises:
            UsageError: `section` is not one of the three.
        """
        if section not in DATA_FILES:
            raise hk.UsageError(f"unknown section {section!r}; expected one of {DATA_FILES}")
        self._changed.add((section, key))

    def copy(self) -> AirlineDB:
        """Return an independent deep copy (for branching a run or trying an action)."""
        twin = AirlineDB(copy.deepcopy(self.data), pristine=self._pristine)
        twin._changed = set(self._changed)
        return twin

    def state_hash(self, *, full: bool = False) -> str:
        """Return the τ-bench-compatible sha256 hex digest of the whole database state.

        Args:
            full: recompute every entry's text instead of reusing those of unchanged entries.

        Returns:
            64 hex characters; equal states give equal digests.
        """
        if full or self._pristine is None:
            return state_hash(self.data)
        digest = self._pristine.index().digest(self.data, self._changed)
        return digest if digest is not None else state_hash(self.data)

    def __repr__(self) -> str:
        return (
            f"AirlineDB(flights={len(self.flights)}, reservations={len(self.reservations)}, "
            f"users={len(self.users)}, changed={len(self._changed)})"
        )


def _same_keys(section: Mapping[str, Any], loaded: dict[str, int]) -> bool:
    """True when `section` has exactly the keys `loaded` has (as loaded)."""
    if isinstance(section, _CowSection):  # keys change only by deletions and additions
        return (
            not section._deleted
            and len(section._blobs) == len(loaded)
            and all(k in section._blobs for k in section._own)
        )
    return len(section) == len(loaded) and section.keys() == loaded.keys()


class _CowSection(MutableMapping[str, Any]):
    """One section of a database that shares the loaded entries until they are touched.

    Reading an entry (`section[key]`, `get`, iterating `values()` or `items()`) hands out a
    private copy, made on first access from the entry's pickle in the shared snapshot, because
    the caller may mutate what it gets back. Entries never accessed are never copied, so a
    fresh database costs almost nothing. Keys, `in` and `len` never copy.
    """

    __slots__ = ("_blobs", "_deleted", "_own", "_shared")

    def __init__(self, base: dict[str, bytes], shared: dict[str, Any]) -> None:
        self._blobs = base
        self._shared = shared
        self._own: dict[str, Any] = {}
        self._deleted: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        own = self._own
        if key in own:
            return own[key]
        if key in self._deleted:
            raise KeyError(key)
        blob = self._blobs[key]  # KeyError for an unknown key, as a dict raises
        value = own[key] = pickle.loads(blob)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        self._own[key] = value
        self._deleted.discard(key)

    def __delitem__(self, key: str) -> None:
        if key in self._own:
            del self._own[key]
            if key in self._blobs:
                self._deleted.add(key)
        elif key in self._blobs and key not in self._deleted:
            self._deleted.add(key)
        else:
            raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        if key in self._own:
            return True
        return key in self._blobs and key not in self._deleted

    def __iter__(self) -> Iterator[str]:
        deleted, own = self._deleted, self._own
        for key in list(self._blobs):
            if key not in deleted:
                yield key
        for key in list(own):
            if key not in self._blobs:
                yield key

    def __len__(self) -> int:
        extra = sum(1 for key in self._own if key not in self._blobs)
        return len(self._blobs) - len(self._deleted) + extra

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        return f"<copy-on-access section: {len(self)} entries, {len(self._own)} copied>"

    def __deepcopy__(self, memo: dict[int, Any]) -> _CowSection:
        twin = _CowSection(self._blobs, self._shared)
        twin._own = copy.deepcopy(self._own, memo)
        twin._deleted = set(self._deleted)
        return twin

    def shared_values(self) -> Iterator[Any]:
        """Yield every entry without copying: the run's copy if it has one, else the shared one.

        For read-only scans (flight searches); the caller must not mutate what it gets.
        """
        deleted, own, shared = self._deleted, self._own, self._shared
        for key in self:
            if key in own:
                yield own[key]
            elif key not in deleted:
                yield shared[key]

    def copied(self, key: str) -> bool:
        """True when `key`'s entry was handed out (or added) and so may differ from the load."""
        return key in self._own


@dataclass(frozen=True, slots=True)
class _PristineTexts:
    """Canonical text of every entry of one freshly loaded database, by section and key."""

    texts: dict[str, dict[str, str]]
    built: list[_HashIndex] = field(default_factory=list)
    """The `_HashIndex` of these texts, built on first use (at most one element)."""

    def index(self) -> _HashIndex:
        """The hash index of the loaded state (built once per snapshot, then shared)."""
        if not self.built:
            self.built.append(_HashIndex(self.texts))
        return self.built[0]


#: A saved sha256 state every this many entries of a section (`_HashIndex`).
_CHECKPOINT_EVERY = 32


class _HashIndex:
    """Hash a database that differs from its load in a few entries without re-reading the rest.

    The canonical text is `(S1, S2, S3)` with each section `('name', (E1, E2, ...))`, entries
    in key order. sha256 is fed front to back, so everything before the first changed entry is
    the loaded text: the index keeps the hash state at every `_CHECKPOINT_EVERY`-th entry and
    starts from the one before the first change. After it, unchanged entries are fed as slices
    of the loaded section's bytes (no joining, no re-encoding) and changed ones as fresh text.
    Sections of exactly one entry print as `(E,)`; `digest` returns None for those (and for
    section names other than the loaded ones) and the caller hashes the full text.
    """

    def __init__(self, texts: dict[str, dict[str, str]]) -> None:
        self.names = sorted(texts)
        self.keys: dict[str, list[str]] = {}
        self.pos: dict[str, dict[str, int]] = {}
        self.whole: dict[str, bytes] = {}
        self.offsets: dict[str, list[int]] = {}
        self.checkpoints: dict[str, list[Any]] = {}
        h = hashlib.sha256(b"(")
        for n, name in enumerate(self.names):
            keys = sorted(texts[name])
            self.keys[name] = keys
            self.pos[name] = {k: i for i, k in enumerate(keys)}
            head = f"({name!r}, (".encode()
            pieces = [head]
            offsets = []
            at = len(head)
            for i, key in enumerate(keys):  # piece i: `, E_i` (just `E_0` for the first)
                piece = (", " + texts[name][key] if i else texts[name][key]).encode()
                offsets.append(at)
                pieces.append(piece)
                at += len(piece)
            offsets.append(at)
            pieces.append(b"))")
            whole = b"".join(pieces)
            self.whole[name] = whole
            self.offsets[name] = offsets
            if n:
                h.update(b", ")
            view = memoryview(whole)
            h.update(view[: offsets[0]])
            marks = []
            for i in range(0, len(keys), _CHECKPOINT_EVERY):
                marks.append(h.copy())  # the state before piece i
                h.update(view[offsets[i] : offsets[min(i + _CHECKPOINT_EVERY, len(keys))]])
            h.update(view[offsets[len(keys)] :])
            self.checkpoints[name] = marks
        h.update(b")")
        self.loaded = h.hexdigest()
        self.usable = len(self.names) > 1 and all(len(k) != 1 for k in self.keys.values())

    def digest(self, data: Mapping[str, Any], changed: set[tuple[str, str]]) -> str | None:
        """The state hash of `data`, whose entries differ from the load only in `changed`.

        Returns:
            64 hex characters, or None when this index cannot say (the caller hashes it all).
        """
        if not self.usable or sorted(data) != self.names:
            return None
        touched: dict[str, set[str]] = {}
        for name, key in changed:
            touched.setdefault(name, set()).add(key)
        h: Any = None
        for name in self.names:
            section = data[name]
            marked = touched.get(name, set())
            loaded = self.keys[name]
            same_keys = _same_keys(section, self.pos[name])
            if same_keys and not marked:
                if h is not None:
                    h.update(b", ")
                    h.update(self.whole[name])
                continue
            keys = loaded if same_keys else sorted(section)
            if len(keys) == 1:
                return None
            start = 0
            if h is None:  # the first section that differs: resume from a saved state
                if not loaded:
                    return None
                if same_keys:
                    pos = self.pos[name]
                    start = min((pos[k] for k in marked if k in pos), default=len(loaded))
                else:
                    limit = min(len(keys), len(loaded))
                    while start < limit and keys[start] == loaded[start]:
                        if keys[start] in marked:
                            break
                        start += 1
                start = min(start, len(loaded) - 1)
                start -= start % _CHECKPOINT_EVERY
                h = self.checkpoints[name][start // _CHECKPOINT_EVERY].copy()
            else:
                h.update(b", ")
                h.update(self.whole[name][: self.offsets[name][0]])
            self._feed(h, name, section, keys, start, marked)
            h.update(b"))")
        if h is None:
            return self.loaded
        h.update(b")")
        return str(h.hexdigest())

    def _feed(
        self,
        h: Any,
        name: str,
        section: Mapping[str, Any],
        keys: list[str],
        start: int,
        marked: set[str],
    ) -> None:
        """Feed entries `keys[start:]` (with their separators) to `h`."""
        view = memoryview(self.whole[name])
        offsets = self.offsets[name]
        pos = self.pos[name]
        run_from = run_to = -1  # a run of loaded pieces [run_from, run_to) still to feed
        for i in range(start, len(keys)):
            key = keys[i]
            p = pos.get(key, -1) if key not in marked else -1
            if p >= 0 and (p > 0) == (i > 0):  # the loaded piece, separator included
                if p == run_to:
                    run_to += 1
                    continue
                if run_from >= 0:
                    h.update(view[offsets[run_from] : offsets[run_to]])
                run_from, run_to = p, p + 1
                continue
            if run_from >= 0:
                h.update(view[offsets[run_from] : offsets[run_to]])
                run_from = run_to = -1
            text = _entry_text(key, section[key])
            h.update((", " + text if i else text).encode())
        if run_from >= 0:
            h.update(view[offsets[run_from] : offsets[run_to]])


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """A freshly loaded database, one pickle per entry, plus the canonical text of each entry."""

    blobs: dict[str, dict[str, bytes]]
    shared: dict[str, dict[str, Any]]
    """The parsed entries, shared read-only by every database of this snapshot."""
    pristine: _PristineTexts


_snapshots: dict[tuple[Path, tuple[tuple[str, int, int], ...], str], _Snapshot] = {}


def state_hash(value: Any) -> str:
    """Hash a JSON-like value the way τ-bench hashes its database.

    Args:
        value: nested dicts, lists, strings and numbers.

    Returns:
        The sha256 hex digest of `canonical_text(value)` (64 characters).
    """
    return hashlib.sha256(canonical_text(value).encode("utf-8")).hexdigest()


def canonical_text(value: Any) -> str:
    """Return the canonical text that `state_hash` digests (useful to debug a hash mismatch).

    Mappings print as `((key, value), ...)` sorted by key and lists as `(...)`, exactly as nested
    Python tuples print.
    """
    return repr(_as_tuples(value))


def _as_tuples(value: Any) -> Any:
    if isinstance(value, dict | _CowSection):
        return tuple((key, _as_tuples(item)) for key, item in sorted(value.items()))
    if isinstance(value, list | tuple):
        return tuple(_as_tuples(item) for item in value)
    return value


def _join_tuple_text(parts: list[str]) -> str:
    """The text of a tuple whose elements print as `parts`."""
    if len(parts) == 1:
        return f"({parts[0]},)"
    return "(" + ", ".join(parts) + ")"


def _entry_text(key: str, value: Any) -> str:
    return f"({key!r}, {canonical_text(value)})"
