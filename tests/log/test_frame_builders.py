"""`EventLog.frame()`'s two builders give the same frame, and the frame keeps its contract.

The fast builder (`_frame._fast_frame`: typed arrays gathered a chunk of events at a time) must
give exactly the frame of the general one (`_general_frame`: pandas infers every column from a
list), cell for cell and type for type, on real logs, and must give up (the general builder
runs) on values it does not type itself. The frame of a log is the same whether it is built
cold, grown row by row with the log or copied from the kept one; its columns and types are
pinned here, as the notebooks and analyses read them.
"""

from __future__ import annotations

import enum
import math
from pathlib import Path
from typing import Any

import pytest

import harnesskit as hk
from harnesskit.log import ToolResultEvent, _frame, make_event
from harnesskit.testing import reply

pd = pytest.importorskip("pandas")

FIXTURES = Path(__file__).parents[1] / "fixtures"
INTS = ["parent_id", "step", "prompt_tokens", "completion_tokens"]
TEXTS = [
    "branch_id", "type", "source", "created_at", "status", "summary", "data_class", "tool",
    "tool_call_id",
]  # fmt: skip


def _general(events: list[Any]) -> Any:
    return _frame._general_frame(pd, events).astype(dict.fromkeys(INTS, "Int64"))


def _outcome(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as exc:  # compared, not handled
        return type(exc), str(exc)


def _assert_same(got: Any, want: Any) -> None:
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.dtypes.to_dict() == want.dtypes.to_dict()
    assert list(got.columns) == _frame.FRAME_COLUMNS and type(got.index) is type(want.index)
    for name in _frame.FRAME_COLUMNS:  # the cells' own Python types, not only equal values
        a, b = got[name].tolist(), want[name].tolist()
        assert [type(x) for x in a] == [type(x) for x in b], name


def _fast_equals_general(events: list[Any]) -> None:
    fast = _frame._fast_frame(pd, events)
    assert fast is not None, "the fast builder gave up on a log as harnesskit writes it"
    _assert_same(fast.astype(dict.fromkeys(INTS, "Int64")), _general(events))


def _run_log(tmp_path: Path) -> hk.EventLog:
    @hk.tool
    def fail(x: int) -> int:
        """Fail for odd x.

        Args:
            x: a number.
        """
        if x % 2:
            raise ValueError("odd")
        return x

    turns = [reply.tool_call("fail", x=i) for i in range(5)] + [reply.text("done")]
    return hk.Harness([fail], hk.ScriptedModel(turns), log_dir=tmp_path).run("go").log


def test_the_frame_keeps_its_columns_and_types(tmp_path: Path) -> None:
    log = _run_log(tmp_path)
    df = log.frame()
    text = pd.Series(["x"]).dtype  # pandas' own type for text (str in pandas 3, object before)
    assert list(df.columns) == _frame.FRAME_COLUMNS == [
        "event_id", "parent_id", "branch_id", "type", "source", "created_at", "step", "status",
        "summary", "data_class", "tool", "tool_call_id", "ok", "error_type", "prompt_tokens",
        "completion_tokens", "payload",
    ]  # fmt: skip
    assert df["event_id"].dtype == "int64"
    assert all(str(df[name].dtype) == "Int64" for name in INTS)
    assert all(df[name].dtype == text for name in TEXTS), df.dtypes
    assert df["ok"].dtype == object and df["payload"].dtype == object
    assert df["error_type"].dtype == text  # failed calls name their error type
    assert list(df["event_id"]) == list(range(1, len(log) + 1))
    assert df["payload"].tolist() == [e.payload for e in log.events]
    assert all(a is e.payload for a, e in zip(df["payload"], log.events, strict=True))
    assert df.loc[df["type"] == "tool.result", "ok"].tolist() == [True, False] * 2 + [True]
    assert df["prompt_tokens"].isna().sum() == len(log) - len(log.of_type("model.response"))


def test_cold_grown_and_copied_frames_are_the_same(tmp_path: Path) -> None:
    run = _run_log(tmp_path)
    log = hk.EventLog(None)
    grown = []
    for e in run.events:
        log.append(e.type, dict(e.payload), source=e.source, summary=e.summary)
        grown.append(log.frame())  # rows built for the new event, appended to the kept frame
    copied = log.frame()  # no new event: the kept frame, copied
    log._frame_cache = None
    cold = log.frame()  # every row built
    for df in (grown[-1], copied):
        _assert_same(df, cold)
    _assert_same(cold, _general(log.events))
    read = hk.EventLog.read(run.path)
    _assert_same(read.frame(), _general(read.events))
    for i in (1, 2, 7):  # an early frame is the cold frame of the log as it was then
        _assert_same(grown[i - 1], _general(log.events[:i]))


def test_the_fast_builder_takes_real_logs(tmp_path: Path) -> None:
    log = _run_log(tmp_path)
    for events in (log.events, hk.EventLog.read(log.path).events, log.events[3:4]):
        _fast_equals_general(events)
    for name in ("log_v1.jsonl", "log_v2.jsonl"):
        _fast_equals_general(hk.EventLog.read(FIXTURES / name).events)
    built = [  # built from fields: no payload dict until one is asked for
        ToolResultEvent(event_id=1, tool="t", ok=False, step=2, error_type="E"),
        ToolResultEvent(event_id=2, parent_id=1, tool="u", ok=True, step=3),
    ]
    _fast_equals_general(built)


def test_the_fast_builder_takes_many_chunks_of_a_long_log() -> None:
    log = hk.EventLog(None)
    for i in range(3 * _frame._FRAME_CHUNK + 5):  # chunk edges; missing values in some chunks
        payload: dict[str, Any] = {"step": i} if i % 300 else {}
        if i % 7 == 0:
            payload["usage"] = {"prompt_tokens": 2**40 + i, "completion_tokens": i}
        if i % 5 == 0:
            payload |= {"tool": f"t{i % 3}", "tool_call_id": f"c{i}", "ok": i % 2 == 0}
        log.append("tool.result" if i % 5 == 0 else "model.response", payload)
    _fast_equals_general(log.events)
    _fast_equals_general(log.events[_frame._FRAME_CHUNK : _frame._FRAME_CHUNK + 1])


class _Branch(enum.StrEnum):
    MAIN = "main"


@pytest.mark.parametrize(
    "odd",
    [
        {"step": True},
        {"step": 1.0},
        {"step": "3"},
        {"step": 2**64},
        {"step": -(2**63) - 1},
        {"step": 2**53 + 1},  # exact as int64, rounded where another row lacks a step
        {"step": math.nan},
        {"step": pd.NaT},
        {"tool": 5},
        {"tool": ["list"]},
        {"tool_call_id": b"bytes"},
        {"usage": {"prompt_tokens": 1.5}},
        {"usage": {"prompt_tokens": None, "completion_tokens": True}},
        {"usage": [1]},
        {"usage": "text"},
        {"usage": {}},
        {"ok": "yes"},
        {"error_type": pd.NaT},
    ],
    ids=repr,
)
@pytest.mark.parametrize("where", [0, 300])
def test_odd_payload_values_give_the_general_frame(odd: Any, where: int) -> None:
    events = [
        make_event("tool.result", {"tool": "t", "step": i, "ok": True}, event_id=i + 1)
        for i in range(301)
    ]
    events[where] = make_event("tool.result", odd, event_id=where + 1)
    got = _outcome(_frame.build_frame, pd, events)
    want = _outcome(_general, events)
    if isinstance(want, tuple):
        assert got == want
    else:
        _assert_same(got, want)


@pytest.mark.parametrize(
    "envelope",
    [
        {"branch_id": _Branch.MAIN},  # a str subclass stays itself, not the interned str
        {"branch_id": None},
        {"source": 3},
        {"summary": _Branch.MAIN},
        {"summary": None},
        {"created_at": 1.5},
        {"parent_id": True},
        {"parent_id": 2**70},
        {"event_id": 2**63},
    ],
    ids=repr,
)
def test_odd_envelope_values_give_the_general_frame(envelope: dict[str, Any]) -> None:
    events = [make_event("user.message", {"content": "hi"}, event_id=i + 1) for i in range(5)]
    fields = {"event_id": 3, "parent_id": 2} | envelope
    events[2] = make_event("user.message", {"content": "odd"}, **fields)
    got = _outcome(_frame.build_frame, pd, events)
    want = _outcome(_general, events)
    if isinstance(want, tuple):
        assert got == want
    else:
        _assert_same(got, want)


def test_columns_with_every_value_missing_are_objects_as_before() -> None:
    events = [make_event("status.reject", {"target": 1}, event_id=i + 1) for i in range(4)]
    got = _frame.build_frame(pd, events)
    _assert_same(got, _general(events))
    assert got["tool"].dtype == object and got["ok"].dtype == object
    assert got["prompt_tokens"].isna().all()
