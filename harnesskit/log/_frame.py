"""The rows of `EventLog.frame()`: its columns gathered from the events, and the DataFrame built.

Two builders give the same frame. The general one gathers each column into a list and lets
pandas infer every column's type from the list (`_general_frame`), whatever the values are.
The fast one (`_fast_frame`) is for logs as harnesskit writes them: it gathers a chunk of
events at a time straight into object arrays, and maps the envelope's few-valued text columns
to one shared string per value, so that pandas' passes over those columns (type inference,
string conversion, freeing) read a few hot objects instead of 100k scattered ones. Where a
value could make pandas infer a type the fast builder does not follow, it gives up and the
general builder runs (`build_frame`).
"""

from __future__ import annotations

import itertools
import operator
import sys
from collections.abc import Callable, Iterator
from typing import Any

from harnesskit.log._types import _PAYLOAD_SLOT, Event, payloads_of

__all__ = ["FRAME_COLUMNS", "build_frame"]

#: The columns of `EventLog.frame()`, in order.
FRAME_COLUMNS = [
    "event_id", "parent_id", "branch_id", "type", "source", "created_at", "step", "status",
    "summary", "data_class", "tool", "tool_call_id", "ok", "error_type", "prompt_tokens",
    "completion_tokens", "payload",
]  # fmt: skip
#: The columns of pandas' nullable `Int64` type (missing values <NA>; built exact, never as
#: float64, so ids and token counts above 2**53 are kept to the unit).
INT_COLUMNS = ["parent_id", "step", "prompt_tokens", "completion_tokens"]


def build_frame(pd: Any, events: list[Event]) -> Any:
    """The frame of `events` built from scratch (`EventLog.frame` keeps and extends it).

    Args:
        pd: the pandas module.
        events: the events, one row each.

    Returns:
        A DataFrame with `FRAME_COLUMNS`, `len(events)` rows and a RangeIndex.
    """
    df = _fast_frame(pd, events) if events else None
    if df is None:
        df = _general_frame(pd, events)
    return df


def _general_frame(pd: Any, events: list[Event]) -> Any:
    """The frame with every column's type inferred by pandas from a list, but `INT_COLUMNS`.

    Those are exact `Int64` arrays (`_int_array`), never inferred (a list of whole numbers
    and None is inferred as float64, which rounds numbers above 2**53).

    Raises:
        UsageError: a value of an `INT_COLUMNS` column is not a whole number in int64 range,
            or a payload's `usage` is not a mapping.
    """
    if not events:  # no rows: object columns, then the `Int64` ones
        empty = pd.DataFrame.from_records([], columns=FRAME_COLUMNS)
        return empty.astype(dict.fromkeys(INT_COLUMNS, "Int64"))
    try:
        columns: dict[str, Any] = _frame_columns(events)
    except AttributeError:  # a `usage` without `.get`: named (else re-raised as it is)
        _check_usages(events)
        raise
    for name in INT_COLUMNS:
        columns[name] = _int_array(pd, columns[name], events, name)
    return pd.DataFrame(columns, columns=FRAME_COLUMNS)


#: Where each `INT_COLUMNS` column is read from in an event, for the error naming it.
_INT_SOURCES = {
    "parent_id": "parent_id",
    "step": "payload step",
    "prompt_tokens": "payload usage.prompt_tokens",
    "completion_tokens": "payload usage.completion_tokens",
}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _int_array(pd: Any, values: list[Any], events: list[Event], name: str) -> Any:
    """`values` as an exact `Int64` array: whole numbers kept as they are, None as <NA>.

    An integral float (`3.0`) is its integer and a NaN (or `pd.NA`) is missing, as pandas'
    `Int64` conversion takes them; nothing goes through float64.

    Raises:
        UsageError: a value that is not a whole number from -2**63 to 2**63 - 1 (a str, a
            fraction, a number beyond 64 bits), naming the event, the column and the value.
    """
    import numpy as np

    n = len(values)
    numbers, missing = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    try:
        if _put_ints(np, (numbers, missing), slice(0, n), values):
            return pd.arrays.IntegerArray(numbers, missing)
    except OverflowError:
        pass  # named below
    for i, value in enumerate(values):
        if value is None or value is pd.NA or (isinstance(value, float) and value != value):
            missing[i] = True
        elif isinstance(value, int | np.integer) and _INT64_MIN <= value <= _INT64_MAX:
            numbers[i] = value
        elif (
            isinstance(value, float | np.floating)
            and float(value).is_integer()
            and _INT64_MIN <= value <= _INT64_MAX
        ):
            numbers[i] = int(value)
        else:
            from harnesskit.errors import UsageError

            raise UsageError(
                f"EventLog.frame(): event {events[i].event_id}'s {_INT_SOURCES[name]} is "
                f"{type(value).__name__} {value!r:.60}, not a whole number from -2**63 to "
                f"2**63 - 1 or null; the {name!r} column holds exact integers (Int64). Append "
                "that field as an int (or leave it out)"
            )
    return pd.arrays.IntegerArray(numbers, missing)


def _frame_columns(events: list[Event]) -> dict[str, list[Any]]:
    """The columns of `EventLog.frame()` for `events`, each a list (faster for pandas than rows).

    Payload keys (`step` too) are read from the payload dicts, so no typed field is decoded,
    and nothing is allocated per event (no per-row tuple or empty dict: allocating 100k
    tracked objects sets off garbage collections that walk the whole log). The columns are
    gathered a chunk of events at a time, each column by a C-level `map`: the chunk's events,
    payloads and values stay in the CPU cache across the 16 columns (column by column over the
    whole log, every read of a long run's scattered events was a cache miss).
    """
    columns: dict[str, list[Any]] = {name: [] for name in FRAME_COLUMNS}
    payload_column = columns["payload"]
    for start in range(0, len(events), _FRAME_CHUNK):
        chunk = events[start : start + _FRAME_CHUNK]
        payloads = payloads_of(chunk)
        usages = [u if (u := p.get("usage")) else _NO_USAGE for p in payloads]
        for name, read in _ENVELOPE_READS:
            columns[name] += map(read, chunk)
        for name in _PAYLOAD_KEYS:
            columns[name] += _gets(payloads, name)
        columns["prompt_tokens"] += _gets(usages, "prompt_tokens")
        columns["completion_tokens"] += _gets(usages, "completion_tokens")
        payload_column += payloads
    return columns


def _check_usages(events: list[Event]) -> None:
    """Refuse a payload `usage` that is not a mapping (its token counts cannot be read).

    Raises:
        UsageError: naming the event and the value.
    """
    from collections.abc import Mapping

    for event in events:
        payload = event.payload
        usage = payload.get("usage") if isinstance(payload, Mapping) else None
        if usage and not isinstance(usage, Mapping):
            from harnesskit.errors import UsageError

            raise UsageError(
                f"EventLog.frame(): event {event.event_id}'s payload usage is "
                f"{type(usage).__name__} {usage!r:.60}, not an object of token counts "
                "({'prompt_tokens': int, 'completion_tokens': int}); append it as one (or "
                "leave it out)"
            )


def _gets(dicts: list[Any], key: str) -> Iterator[Any]:
    """`d.get(key)` of each of `dicts`, by `dict.get` when all are plain dicts (C speed)."""
    if set(map(type, dicts)) <= {dict}:
        return map(dict.get, dicts, itertools.repeat(key))
    return map(operator.methodcaller("get", key), dicts)  # a subclass's own get, or its error


#: Events per chunk in `_frame_columns` (small enough that a chunk stays in the CPU cache).
_FRAME_CHUNK = 256
_PAYLOAD_KEYS = ("step", "tool", "tool_call_id", "ok", "error_type")
#: `(column, reader)` for the envelope columns.
_ENVELOPE_READS = tuple(
    (name, operator.attrgetter(name)) for name in FRAME_COLUMNS[:-3] if name not in _PAYLOAD_KEYS
)
#: Columns the fast builder types itself: whole numbers (`int64`, or `float64` when some are
#: missing, as pandas infers them from a list), text (pandas' text type when every value is a
#: `str` or None), and envelope text with a few distinct values in any log (`sys.intern`ed: an
#: exact `str` gives an equal exact `str`, anything else a TypeError).
_INTS = frozenset({"event_id", "parent_id", "step", "prompt_tokens", "completion_tokens"})
_TEXTS = frozenset({"type", "created_at", "summary", "tool", "tool_call_id", "error_type"})
_SHARED_TEXT = frozenset({"branch_id", "source", "status", "data_class"})
_NO_USAGE: dict[str, Any] = {}


_NULLABLE_INTS = frozenset(INT_COLUMNS)


def _fast_frame(pd: Any, events: list[Event]) -> Any | None:
    """The frame `_general_frame` builds, or None to use that (the `Int64` columns exact).

    Each column is gathered a chunk of events at a time (the chunk's events, payloads and
    values stay in the CPU cache) straight into an array of its final type, the values' types
    checked on the way; the other columns are typed by pandas' own inference on an object
    array (`infer_objects`, the inference a list gets). None when a payload or `usage` is not
    a plain dict, a value of a number or text column is of another type (or a number does not
    fit 64 bits), or an inferred column is of a type the general builder may infer otherwise.
    """
    import numpy as np

    n = len(events)
    objects = {name: np.empty(n, dtype=object) for name in FRAME_COLUMNS if name not in _INTS}
    ints = {name: (np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)) for name in _INTS}
    ints["prompt_tokens"][1].fill(True)  # missing unless a `usage` says otherwise
    ints["completion_tokens"][1].fill(True)
    texted: set[str] = set(_SHARED_TEXT)  # the text columns holding at least one str
    absent = {name: np.zeros(n, dtype=bool) for name in _TEXTS}  # None in a text column
    reads: list[tuple[str, Callable[[Any], Any] | None]] = [
        *_ENVELOPE_READS,
        *((name, None) for name in _PAYLOAD_KEYS),
    ]
    fromiter, repeat, get, intern = np.fromiter, itertools.repeat, dict.get, sys.intern
    payload_column = objects["payload"]
    try:
        for start in range(0, n, _FRAME_CHUNK):
            chunk = events[start : start + _FRAME_CHUNK]
            stop = start + len(chunk)
            where = slice(start, stop)
            payloads = list(map(_PAYLOAD_SLOT, chunk))  # the stored dicts (None: not built yet)
            kinds = set(map(type, payloads))
            if _NONE in kinds:
                payloads = payloads_of(chunk)
                kinds = set(map(type, payloads))
            if not kinds <= {dict}:
                return None
            for name, read in reads:
                values: Iterator[Any] = (
                    map(read, chunk) if read else map(get, payloads, repeat(name))
                )
                if name in _SHARED_TEXT:
                    objects[name][where] = fromiter(map(intern, values), object, len(chunk))
                elif name in _INTS:
                    if not _put_ints(np, ints[name], where, list(values)):
                        return None
                elif name in _TEXTS:
                    got = list(values)
                    types = set(map(type, got))
                    if not types <= _TEXT_TYPES:
                        return None
                    if str in types:
                        texted.add(name)
                    array = objects[name]
                    array[where] = fromiter(got, object, len(got))
                    if _NONE in types:
                        absent[name][where] = array[where] == None  # noqa: E711  (elementwise)
                else:
                    objects[name][where] = fromiter(values, object, len(chunk))
            payload_column[where] = fromiter(payloads, object, len(chunk))
            usages = list(map(get, payloads, repeat("usage")))
            used = list(filter(None, usages))
            if used:  # the few events with token counts (model responses)
                if not set(map(type, used)) <= {dict}:
                    return None
                rows = list(itertools.compress(range(start, stop), usages))
                for name in ("prompt_tokens", "completion_tokens"):
                    if not _put_ints(np, ints[name], rows, list(map(get, used, repeat(name)))):
                        return None
    except (OverflowError, TypeError):  # a number beyond 64 bits, a shared text not a str
        return None
    text_dtype = pd.Series(["x"]).dtype  # pandas' type for text inferred from a list
    columns = {}
    for name in FRAME_COLUMNS:
        if name in _NULLABLE_INTS:  # exact, missing values masked (never float64)
            column = pd.Series(pd.arrays.IntegerArray(*ints[name]), copy=False)
        elif name in _INTS:
            column = pd.Series(_int_column(np, *ints[name]), copy=False)
        elif name in texted:
            column = _text_column(pd, objects[name], absent.get(name), text_dtype)
        else:
            column = pd.Series(objects[name], dtype=object, copy=False)
            if name not in _TEXTS and name != "payload":  # all None in a text column: objects
                column = column.infer_objects()
                if not _same_as_from_a_list(pd, column, objects[name]):
                    return None
        columns[name] = column
    return pd.DataFrame(columns, copy=False)


_NONE = type(None)
_TEXT_TYPES = frozenset({str, _NONE})


def _text_column(pd: Any, array: Any, absent: Any, dtype: Any) -> Any:
    """The column of `array` (str or None, at least one str) in pandas' text type `dtype`.

    pandas copies the whole array to convert its first None; so missing values are set after
    the conversion (as `dtype.na_value`, what the conversion makes of None).
    """
    if absent is None or not absent.any() or not isinstance(dtype, pd.StringDtype):
        return pd.Series(array, dtype=dtype, copy=False)
    array[absent] = ""
    text = pd.array(array, dtype=dtype, copy=False)
    text[absent] = dtype.na_value
    return pd.Series(text, copy=False)


def _put_ints(np: Any, column: tuple[Any, Any], where: Any, values: list[Any]) -> bool:
    """Write whole numbers (or None) `values` at `where` of `column` = (numbers, missing).

    Returns:
        False when a value is neither an exact `int` nor None. A number beyond 64 bits raises
        OverflowError.
    """
    numbers, missing = column
    types = set(map(type, values))
    if types <= {int}:
        numbers[where] = values
        missing[where] = False
    elif types <= {int, type(None)}:
        boxed = np.fromiter(values, object, len(values))
        absent = boxed == None  # noqa: E711  (elementwise: ints and None only, checked above)
        boxed[absent] = 0
        numbers[where] = boxed
        missing[where] = absent
    else:
        return False
    return True


def _int_column(np: Any, numbers: Any, missing: Any) -> Any:
    """The array pandas infers from the list of these numbers, None where `missing`.

    `int64` when none is missing, `float64` with NaN when some are, objects (None) when all
    are. Only for `event_id` (never missing); `INT_COLUMNS` are exact `IntegerArray`s.
    """
    if not missing.any():
        return numbers
    if missing.all():
        return np.full(len(numbers), None, dtype=object)
    floats = numbers.astype(np.float64)
    floats[missing] = np.nan
    return floats


def _same_as_from_a_list(pd: Any, column: Any, array: Any) -> bool:
    """Whether `column` (inferred from `array`) has the type pandas infers from the same list.

    Inference from a list differs from `infer_objects` in one case only: values that are all
    missing with at least one `NaT` become datetimes. Numbers, booleans and text agree.
    """
    dtype = column.dtype
    if dtype.kind in "iufb" or isinstance(dtype, pd.StringDtype):
        return True
    if dtype.kind != "O":
        return False
    return not (pd.isna(array).all() and type(pd.NaT) in set(map(type, array)))
