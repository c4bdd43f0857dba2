"""`frame()`'s integer columns are exact `Int64`, above 2**53 and with missing values too (never
through float64); a value that is no whole number is a `UsageError` naming it, not a raw error."""

from __future__ import annotations

import pandas as pd
import pytest

import harnesskit as hk

BIG = 2**53 + 1  # the first integer float64 cannot hold
HUGE = 2**63 - 1


def _log(path=None, *, general=False):
    log = hk.EventLog(path)
    log.append("user.message", {"content": "hi"})  # no step, no usage: missing values
    extra = {"tool": 5} if general else {}  # a tool that is no str: the general builder runs
    log.append("model.response", {"step": BIG, "usage": {"prompt_tokens": HUGE}, **extra})
    log.append("model.response", {"step": HUGE, "usage": {"completion_tokens": BIG + 2}})
    log.append("user.message", {"content": "again", "step": 3})
    return log


@pytest.mark.parametrize("general", [False, True], ids=["fast", "general"])
def test_integer_columns_are_exact_with_missing_values(general):
    df = _log(general=general).frame()
    for name in ("parent_id", "step", "prompt_tokens", "completion_tokens"):
        assert isinstance(df[name].dtype, pd.Int64Dtype), name
    assert df["event_id"].dtype == "int64"
    assert df["step"].tolist() == [pd.NA, BIG, HUGE, 3]
    assert df["prompt_tokens"].tolist() == [pd.NA, HUGE, pd.NA, pd.NA]
    assert df["completion_tokens"].tolist() == [pd.NA, pd.NA, BIG + 2, pd.NA]
    assert df["parent_id"].tolist() == [pd.NA, 1, 2, 3]


def test_a_grown_frame_and_a_read_log_stay_exact(tmp_path):
    log = _log(tmp_path / "r.jsonl")
    first = log.frame()
    log.append("model.response", {"step": BIG + 4, "usage": {"prompt_tokens": BIG + 6}})
    grown = log.frame()
    assert len(grown) == len(first) + 1
    assert grown["step"].iloc[-1] == BIG + 4 and grown["prompt_tokens"].iloc[-1] == BIG + 6
    log.close()
    read = hk.EventLog.read(tmp_path / "r.jsonl").frame()
    pd.testing.assert_frame_equal(
        read.drop(columns=["created_at", "payload"]), grown.drop(columns=["created_at", "payload"])
    )


def test_integral_floats_read_as_before():
    log = hk.EventLog()
    log.append("user.message", {"content": "x", "step": 3.0})
    log.append("user.message", {"content": "x"})
    assert log.frame()["step"].tolist() == [3, pd.NA]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"step": "3"}, "payload step is str '3'"),
        ({"step": 1.5}, "payload step is float 1.5"),
        ({"step": 2**64}, "payload step is int 18446744073709551616"),
        ({"step": [1]}, "payload step is list"),
        ({"usage": {"prompt_tokens": 1.5}}, "payload usage.prompt_tokens is float 1.5"),
        ({"usage": {"completion_tokens": -(2**63) - 1}}, "payload usage.completion_tokens is int"),
        ({"usage": [1]}, "payload usage is list"),
        ({"usage": "x"}, "payload usage is str"),
    ],
)
def test_a_value_that_is_no_whole_number_is_named(payload, field):
    log = hk.EventLog()
    log.append("user.message", {"content": "fine", "step": 1})
    log.append("user.message", {"content": "x", **payload})
    with pytest.raises(hk.UsageError, match=rf"event 2's {field}"):
        log.frame()
