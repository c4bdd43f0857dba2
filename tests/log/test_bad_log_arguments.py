"""`EventLog.read` and `Trajectory` refuse what they cannot use, saying what they accept."""

import pytest

import harnesskit as hk


@pytest.mark.parametrize("path", [None, 5, ["run.jsonl"], b"run.jsonl"])
def test_read_needs_a_path(path):
    with pytest.raises(hk.UsageError, match=r"EventLog\.read\(path\) takes the path"):
        hk.EventLog.read(path)


def test_read_still_takes_str_and_path(tmp_path):
    log = hk.EventLog(tmp_path / "r.jsonl")
    log.append("user.message", {"content": "hi"})
    log.close()
    assert len(hk.EventLog.read(tmp_path / "r.jsonl").events) == 1
    assert len(hk.EventLog.read(str(tmp_path / "r.jsonl")).events) == 1


@pytest.mark.parametrize("log", [5, None, "run.jsonl", []])
def test_trajectory_needs_an_event_log(log):
    with pytest.raises(hk.UsageError, match=r"Trajectory\(log\) takes an hk\.EventLog"):
        hk.Trajectory(log)
