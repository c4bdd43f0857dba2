"""The event log's fast paths produce exactly what the straightforward stdlib code produces."""

import contextlib
import datetime as dt
import enum
import json
import math
import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

import harnesskit as hk
from harnesskit._json import non_finite
from harnesskit.log import ToolResultEvent, make_event
from harnesskit.log._codec import _utc_iso
from harnesskit.log._codec import encode as _event_line


def Event(*, type, payload=None, **envelope):
    return make_event(type, payload, **envelope)


def _reference_iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).isoformat(timespec="milliseconds")


# 1900..2200: the range where both sides can format the time.
TIMES = st.floats(min_value=-2.2e9, max_value=7.2e9, allow_nan=False)


@given(TIMES)
def test_utc_iso_matches_datetime_isoformat(t):
    assert _utc_iso(t) == _reference_iso(t)


def test_utc_iso_rounds_like_fromtimestamp_at_second_and_millisecond_edges():
    base = 1_764_433_683
    edges = [
        base + 0.9999995,  # rounds up to the next second
        base + 0.9999994,
        base + 0.0005,
        base + 0.0009995,
        -0.5,
        -1.0000005,
        0,
        float(base),
    ]
    edges += [math.nextafter(e, math.inf) for e in edges] + [
        math.nextafter(e, -math.inf) for e in edges
    ]
    for t in edges:
        assert _utc_iso(t) == _reference_iso(t), t
    # the cached second is refreshed when time moves on (or back)
    assert [_utc_iso(t) for t in (base + 1.25, base + 0.5, base + 61.0)] == [
        _reference_iso(t) for t in (base + 1.25, base + 0.5, base + 61.0)
    ]


def _reference_line(event: Event) -> str:
    return json.dumps(event.to_dict(), ensure_ascii=False, separators=(",", ":"), default=str)


JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()  # NaN and infinities: encode writes NaN / Infinity, append refuses them
    | st.text()  # any unicode, control characters, quotes, backslashes
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(
            st.text(max_size=5) | st.integers() | st.booleans() | st.none(), inner, max_size=4
        )
    ),
    max_leaves=20,
)
TEXT_OR_NONE = st.none() | st.text(max_size=20)


@given(
    payload=st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=6),
    event_id=st.integers(min_value=1, max_value=10**6),
    parent_id=st.none() | st.integers(min_value=1, max_value=10**6),
    text=st.text(max_size=30),
    revision=TEXT_OR_NONE,
    input_hash=TEXT_OR_NONE,
    supersedes=st.none() | st.integers(min_value=1),
)
def test_event_line_matches_json_dumps(
    payload, event_id, parent_id, text, revision, input_hash, supersedes
):
    event = Event(
        event_id=event_id,
        type="tool.result",
        payload=payload,
        parent_id=parent_id,
        branch_id=text,
        source=text,
        created_at=text,
        workspace_revision=revision,
        input_hash=input_hash,
        summary=text,
        supersedes=supersedes,
    )
    assert _event_line(event) == _reference_line(event)


def test_event_line_unusual_field_types_take_the_json_dumps_path():
    odd = [
        Event(event_id=True, type="brake"),  # bool is an int subclass: json writes true
        Event(event_id=1, type="brake", parent_id=2.0),
        Event(event_id=1, type="brake", workspace_revision=pathlib.Path("/w")),  # default=str
        Event(event_id=1, type="brake", summary=None),
        Event(event_id=1, type="brake", payload={"when": dt.date(2024, 5, 1), "x": {1, 2}}),
        Event(event_id=1, type="brake", payload={"a": [1.5, float("inf"), -0.0, 1e16]}),
    ]
    for event in odd:
        assert _event_line(event) == _reference_line(event)


def test_event_line_circular_payload_raises_like_json_and_the_encoder_recovers():
    loop: dict = {}
    loop["self"] = loop
    bad = Event(event_id=1, type="brake", payload={"a": [loop]})
    with pytest.raises(ValueError, match="Circular reference"):
        _reference_line(bad)
    with pytest.raises(ValueError, match="Circular reference"):
        _event_line(bad)
    loop["self"] = "healed"  # no longer circular: no stale marker may make it look so
    healed = Event(event_id=2, type="brake", payload={"a": [loop], "b": [loop]})
    assert _event_line(healed) == _reference_line(healed)


def test_log_file_lines_are_the_json_of_each_event(tmp_path):
    log = hk.EventLog(tmp_path / "r.jsonl", run_id="r", clock=lambda: 1_764_433_683.25)
    log.append("user.message", {"content": 'say "hi"\n\u00e9\u4e2d\x00'}, source="user")
    log.append("brake", {"limit": None, "value": 1.5}, summary="x" * 90, supersedes=1)
    log.close()
    lines = (tmp_path / "r.jsonl").read_text(encoding="utf-8").split("\n")[:-1]
    assert lines == [_reference_line(e) for e in log.events]
    assert hk.EventLog.read(tmp_path / "r.jsonl").events == log.events


def test_make_event_builds_the_same_event_as_the_dataclass_constructor():
    envelope = {
        "event_id": 7,
        "parent_id": 6,
        "branch_id": "b",
        "source": "tool",
        "created_at": "2026-01-01T00:00:00.000+00:00",
        "workspace_revision": "r1",
        "input_hash": "abc",
        "status": "audit-only",
        "summary": "s",
        "supersedes": 3,
        "data_class": "public",
    }
    made = make_event("tool.result", {"ok": True, "step": 2, "note": "x"}, **envelope)
    built = ToolResultEvent(ok=True, step=2, extra={"note": "x"}, **envelope)
    assert made == built
    assert repr(made) == repr(built) and made.v == built.v
    assert made.payload == built.payload == {"ok": True, "step": 2, "note": "x"}


def _reference_frame(log):
    import pandas as pd

    columns = [
        "event_id", "parent_id", "branch_id", "type", "source", "created_at", "step",
        "status", "summary", "data_class", "tool", "tool_call_id", "ok", "error_type",
        "prompt_tokens", "completion_tokens", "payload",
    ]  # fmt: skip
    rows = []
    for e in log.events:
        p = e.payload
        usage = p.get("usage") or {}
        rows.append(
            (
                e.event_id, e.parent_id, e.branch_id, e.type, e.source, e.created_at,
                p.get("step"), e.status, e.summary, e.data_class, p.get("tool"),
                p.get("tool_call_id"), p.get("ok"), p.get("error_type"),
                usage.get("prompt_tokens"), usage.get("completion_tokens"), p,
            )
        )  # fmt: skip
    df = pd.DataFrame.from_records(rows, columns=columns)
    ints = ["parent_id", "step", "prompt_tokens", "completion_tokens"]
    return df.astype(dict.fromkeys(ints, "Int64"))


def test_frame_equals_the_row_by_row_frame(tmp_path):
    from harnesskit.testing import reply

    @hk.tool
    def fail(x: int) -> int:
        """Fail for odd x.

        Args:
            x: a number.
        """
        if x % 2:
            raise ValueError("odd")
        return x

    turns = [reply.tool_call("fail", x=i) for i in range(3)] + [reply.text("done")]
    run = hk.Harness([fail], hk.ScriptedModel(turns), log_dir=tmp_path).run("go")
    for log in (run.log, hk.EventLog.read(run.log.path), hk.EventLog(None)):
        got, want = log.frame(), _reference_frame(log)
        assert got.equals(want) and got.dtypes.to_dict() == want.dtypes.to_dict()
        assert list(got.columns) == list(want.columns)


def test_payloads_of_builds_the_payload_of_events_made_from_fields():
    from harnesskit.log._types import ToolResultEvent, make_event, payloads_of

    built = ToolResultEvent(event_id=1, tool="t", ok=False, step=2)
    read = make_event("tool.result", {"tool": "u", "step": 3}, event_id=2)
    assert payloads_of([built, read]) == [
        {"step": 2, "tool": "t", "ok": False},
        {"tool": "u", "step": 3},
    ]
    assert payloads_of([]) == []


def test_frame_after_more_events_equals_a_fresh_frame():
    log = hk.EventLog(None)
    log.append("user.message", {"content": "hi"}, source="user")

    def same() -> None:
        got, want = log.frame(), _reference_frame(log)
        assert got.equals(want) and got.dtypes.to_dict() == want.dtypes.to_dict()
        assert type(got.index) is type(want.index)

    same()
    for step in range(3):  # rows appended to the kept frame: the column types agree
        log.append("tool.result", {"tool": "t", "ok": True, "step": step}, source="tool")
        same()
    log.append("tool.result", {"tool": "t", "ok": False, "error_type": "boom", "step": 4})
    same()  # error_type was all None: the new string makes the frame build again
    log.append("model.response", {"usage": {"prompt_tokens": 5, "completion_tokens": 2}, "step": 5})
    same()
    changed = log.frame()
    changed.loc[0, "type"] = "changed"
    changed["extra"] = 1
    same()  # the frame returned is a copy: changing it leaves the log's frame alone
    log.append("tombstone", {"target": 2, "reason": "revoked"})
    same()
    assert "[tombstoned" in str(log.frame().loc[1, "payload"])


def test_a_shallow_copy_only_under_copy_on_write():
    from types import SimpleNamespace

    from harnesskit.log.events import _copy_on_write

    def fake(version, option):
        return SimpleNamespace(__version__=version, get_option=lambda name: option)

    assert _copy_on_write(fake("3.0.0", False))  # always on from pandas 3
    assert _copy_on_write(fake("2.2.3", True))
    assert not _copy_on_write(fake("2.2.3", False))
    assert not _copy_on_write(fake("2.2.3", "warn"))  # the warning mode does not copy on write


def test_changing_a_returned_frame_in_place_leaves_the_next_frame_alone():
    log = hk.EventLog(None)
    for step in range(3):
        log.append("tool.result", {"tool": "t", "ok": True, "step": step}, source="tool")
    first = log.frame()
    first.loc[1, "ok"] = False
    first.iloc[0, 0] = 99
    first["step"] = first["step"] * 10
    first.iloc[:, 1] = 7  # every row of a column
    again = log.frame()
    assert again.equals(_reference_frame(log))
    assert list(again["ok"]) == [True, True, True] and list(again["event_id"]) == [1, 2, 3]


def _reference_hash(value) -> str:
    import hashlib

    blob = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:16]


HASHABLE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(),  # lone surrogates too (hashed through surrogatepass)
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(HASHABLE)
def test_hash_json_matches_the_json_dumps_digest(value):
    from harnesskit.log.events import hash_json

    assert hash_json(value) == _reference_hash(value)


def test_hash_json_unusual_values_and_errors_match_json_dumps():
    from harnesskit.log.events import hash_json

    odd = [
        {"b": 1, "a": [float("nan"), float("inf"), -0.0, 10**400]},
        {"when": dt.date(2024, 5, 1), "path": pathlib.Path("/x")},  # default=str
        ["get_user", {"user_id": "mia_li_3668", "é": "\u4e2d"}],
        "plain text",
    ]
    for value in odd:
        assert hash_json(value) == _reference_hash(value)
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        hash_json(loop)
    with pytest.raises(TypeError):  # keys json cannot sort
        hash_json({1: "a", "b": 2})
    assert hash_json({"a": [1]}) == _reference_hash({"a": [1]})  # the encoder recovered


@given(
    payload=st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=6),
    summary=st.text(max_size=30),
    branch=st.text(max_size=10),
    source=st.sampled_from(["system", "model", "tool", "user", 'h\u00e9"\\']),
    input_hash=TEXT_OR_NONE,
    revision=TEXT_OR_NONE,
    supersedes=st.none() | st.just(1),  # an earlier event: the log holds one
    data_class=st.sampled_from(["public", "internal", "restricted", "secret"]),
    status=st.sampled_from(["active", "audit-only"]),
)
def test_append_writes_the_json_dumps_line_of_the_event_it_keeps(
    payload, summary, branch, source, input_hash, revision, supersedes, data_class, status
):
    # `append` builds the line from its arguments (`line_parts`), not from the event: the line
    # on disk must be the json.dumps line of the event kept in memory, and parse back to it
    from harnesskit.log._codec import line_parts

    log = hk.EventLog(redactor=None, clock=lambda: 1_764_433_683.25)
    log.append("user.message", {"content": "hi"})
    written: list[tuple] = []
    real = line_parts

    def spy(*args, **kwargs):
        parts = real(*args, **kwargs)
        written.append(parts)
        return parts

    import harnesskit.log.events as events_module

    events_module.line_parts = spy
    try:
        with contextlib.ExitStack() as refused:
            if non_finite(payload) is not None:  # NaN / Infinity are not JSON: refused
                refused.enter_context(pytest.raises(hk.UsageError, match="cannot be written"))
            log.append(
                "tool.result", payload, summary=summary, branch_id=branch, source=source,
                input_hash=input_hash, workspace_revision=revision, supersedes=supersedes,
                data_class=data_class, status=status,
            )  # fmt: skip
    finally:
        events_module.line_parts = real
    if non_finite(payload) is not None:
        assert len(log.events) == 1  # nothing kept
        return
    event = log.events[-1]
    head, tail = written[0]
    assert head + tail == _reference_line(event) == _event_line(event)
    assert tail.startswith('"summary":') and head.endswith(",")


def test_line_parts_gives_way_to_json_dumps_for_unusual_types():
    from harnesskit.log._codec import line_parts

    base = ({}, 1, None, "main", "brake", "system", "t", None, None, "active", "", None, "internal")
    assert line_parts(*base) is not None
    for i, odd in [(1, True), (2, 2.0), (11, 3.0), (4, None), (10, 5), (7, pathlib.Path("/w"))]:
        args = list(base)
        args[i] = odd
        assert line_parts(*args) is None, (i, odd)
    log = hk.EventLog(redactor=None)
    log.append("brake", {"x": 1})
    # a str and an int subclass are taken (None or a Path for text are refused: `read` would)
    log.append("brake", {"x": 1}, summary=_Text("s"), supersedes=_One.ONE)
    assert _event_line(log.events[1]) == _reference_line(log.events[1])


class _Text(str):
    pass


class _One(enum.IntEnum):
    ONE = 1


def test_the_unchecked_encoder_gives_way_to_json_dumps_for_cycles_and_depth():
    # the payload encoder first runs without the circular-reference check; a value that holds
    # itself or nests past the recursion limit must still raise what json.dumps raises
    from harnesskit.log._codec import _encode_json

    def dumps(value):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)

    shared = {"k": [1, 2]}
    fine = [{"a": shared, "b": shared}, [shared] * 3, {"d": dt.date(2024, 5, 1)}, {}]
    for value in fine:  # the same object twice is not a cycle
        assert _encode_json(value) == dumps(value)
    loop: dict = {"x": []}
    loop["x"].append({"back": loop})
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    for bad, error in [(loop, ValueError), (deep, RecursionError)]:
        with pytest.raises(error) as want:
            dumps(bad)
        with pytest.raises(error) as got:
            _encode_json(bad)
        assert str(got.value) == str(want.value)
    assert _encode_json(fine[0]) == dumps(fine[0])  # nothing stale after the errors
    log = hk.EventLog(redactor=None)
    with pytest.raises(hk.UsageError, match="cannot be written as JSON"):
        log.append("brake", {"loop": loop})
    assert log.events == []
