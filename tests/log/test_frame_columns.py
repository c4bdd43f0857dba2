"""`EventLog.frame()`'s chunked column gathering gives what the plain per-event code gives.

The fast path (`_frame_columns`: chunks of events, C-level `map` per column, `dict.get` when
every payload is a plain dict) is compared with the straightforward loop on real logs (the
recorded tau-bench runs replayed, the schema fixtures) and on hostile payloads, including the
error a malformed payload raises.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import harnesskit as hk
from harnesskit.log import _frame as ev
from harnesskit.log import make_event

FIXTURES = Path(__file__).parents[1] / "fixtures"
RECORDED = (
    Path(__file__).parents[2]
    / "../shared/datasets/sierra-research__tau-bench/historical_trajectories/gpt-4o-airline.json"
)


def _reference_columns(events: list[Any]) -> dict[str, list[Any]]:
    """The columns as one plain loop over the events builds them."""
    out: dict[str, list[Any]] = {name: [] for name in ev.FRAME_COLUMNS}
    for e in events:
        p = e.payload
        u = p.get("usage") or {}
        row = (
            e.event_id, e.parent_id, e.branch_id, e.type, e.source, e.created_at, p.get("step"),
            e.status, e.summary, e.data_class, p.get("tool"), p.get("tool_call_id"), p.get("ok"),
            p.get("error_type"), u.get("prompt_tokens"), u.get("completion_tokens"), p,
        )  # fmt: skip
        for name, value in zip(ev.FRAME_COLUMNS, row, strict=True):
            out[name].append(value)
    return out


def _outcome(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as exc:  # compared, not handled
        return type(exc), str(exc)


def _same_columns(events: list[Any]) -> None:
    got, want = _outcome(ev._frame_columns, events), _outcome(_reference_columns, events)
    assert list(got) == list(want) if isinstance(got, dict) else got == want
    if isinstance(got, dict):
        for name in ev.FRAME_COLUMNS:
            assert len(got[name]) == len(want[name]) == len(events)
            pairs = zip(got[name], want[name], strict=True)
            assert all(a is b or (type(a) is str and a == b) for a, b in pairs), name


def _same_frame(log: hk.EventLog) -> None:
    import pandas as pd

    got = log.frame()
    want = ev.build_frame(pd, log.events)
    rows = pd.DataFrame.from_records(
        [tuple(c[i] for c in _reference_columns(log.events).values()) for i in range(len(log))],
        columns=ev.FRAME_COLUMNS,
    ).astype(dict.fromkeys(["parent_id", "step", "prompt_tokens", "completion_tokens"], "Int64"))
    for other in (want, rows):
        pd.testing.assert_frame_equal(got, other, check_exact=True)
        assert list(got.columns) == ev.FRAME_COLUMNS and type(got.index) is type(other.index)


def _events(payloads: list[Any]) -> list[Any]:
    return [
        make_event("tool.result", p, event_id=i + 1, summary=f"s{i}")
        for i, p in enumerate(payloads)
    ]


class _Odd(dict):  # a dict subclass with its own get
    def get(self, key: str, default: Any = None) -> Any:
        return f"odd-{key}"


@pytest.mark.parametrize("n", [0, 1, 255, 256, 257, 600])
def test_columns_at_chunk_edges(n: int) -> None:
    payloads = [
        {"step": i, "tool": f"t{i % 3}", "ok": i % 2 == 0, "usage": {"prompt_tokens": i}}
        if i % 4
        else {"note": "x"}
        for i in range(n)
    ]
    _same_columns(_events(payloads))


@pytest.mark.parametrize(
    "odd",
    [
        _Odd(step=1),
        {"usage": _Odd(prompt_tokens=3)},
        {"usage": [1, 2]},  # a truthy usage without .get: AttributeError, as before
        {"usage": "text"},
        {"usage": 5},
        {"usage": 0},
        {"usage": ""},
        {"usage": None},
        {"usage": {}},
        {"step": math.nan, "ok": math.inf, "tool": None, "error_type": 2**80},
        {"step": True, "tool": ["list"], "tool_call_id": {"a": 1}, "ok": "yes"},
    ],
    ids=repr,
)
@pytest.mark.parametrize("where", [0, 255, 256, 300])
def test_hostile_payloads_give_the_same_columns_or_error(odd: Any, where: int) -> None:
    payloads: list[Any] = [{"tool": "t", "step": i} for i in range(301)]
    payloads[where] = odd
    _same_columns(_events(payloads))


def test_a_payload_that_is_not_a_dict_raises_as_before() -> None:
    events = _events([{"tool": "t"}] * 3)
    events.append(make_event("tool.result", [1], event_id=4))  # type: ignore[arg-type]
    got, want = _outcome(ev._frame_columns, events), _outcome(_reference_columns, events)
    assert got == want and got[0] is AttributeError


@pytest.mark.parametrize("name", ["log_v1.jsonl", "log_v2.jsonl"])
def test_frames_of_the_schema_fixtures(name: str) -> None:
    log = hk.EventLog.read(FIXTURES / name)
    _same_columns(log.events)
    _same_frame(log)


@pytest.mark.skipif(not RECORDED.is_file(), reason=f"recorded tau-bench runs not at {RECORDED}")
def test_frames_of_replayed_recorded_runs(tmp_path: Path) -> None:
    from harnesskit.domains import airline

    runs = airline.load_recorded_runs(RECORDED, limit=12)
    logs = []
    for run in runs[::3]:
        result = airline.replay_run(run, log_dir=tmp_path)
        logs.append(result.log)
    for live in logs:
        read = hk.EventLog.read(live.path)
        assert len(read) > 10
        for log in (live, read):
            _same_columns(log.events)
            _same_frame(log)
    big = hk.EventLog(None)  # many runs in one log: thousands of rows across chunks
    for log in logs:
        for e in log.events:
            big.append(e.type, dict(e.payload), source=e.source, summary=e.summary)
    _same_columns(big.events)
    _same_frame(big)
