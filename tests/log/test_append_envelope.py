"""`EventLog.append` refuses an envelope argument the log could not be read back with.

A `parent_id` of `"1"`, `-1`, `True` or an id not yet written was accepted: the trajectory then
reported a gap and resume refused the log as corrupt, far from the call that caused it. Text
fields of another type were written and then refused by `EventLog.read`.
"""

from __future__ import annotations

import enum

import pytest

import harnesskit as hk
from harnesskit.errors import UsageError


def _log(tmp_path, n=2):
    log = hk.EventLog(tmp_path / "r.jsonl")
    for i in range(n):
        log.append("user.message", {"content": f"turn {i}"})
    return log


@pytest.mark.parametrize(
    ("kw", "said"),
    [
        ({"parent_id": "1"}, r"parent_id=\.\.\.\) is a str '1', not an event id \(1\.\.2\)"),
        ({"parent_id": True}, r"parent_id=\.\.\.\) is a bool True"),
        ({"parent_id": 1.0}, r"is a float 1\.0"),
        ({"parent_id": -1}, r"is -1, not the id of an event in the log \(1\.\.2\)"),
        ({"parent_id": 0}, r"is 0, not the id of an event in the log"),
        ({"parent_id": 3}, r"is 3, not the id of an event in the log \(1\.\.2\)"),
        ({"parent_id": 10**30}, r"not the id of an event in the log"),
        ({"supersedes": 3}, r"supersedes=\.\.\.\) is 3, not the id of an event"),
        ({"supersedes": "2"}, r"supersedes=\.\.\.\) is a str '2'"),
        ({"branch_id": 5}, r"branch_id=\.\.\.\) takes a string, got a int 5"),
        ({"branch_id": ["main"]}, r"branch_id=\.\.\.\) takes a string, got a list"),
        ({"source": None}, r"source=\.\.\.\) takes a string, got a NoneType"),
        ({"summary": 5}, r"summary=\.\.\.\) takes a string"),
        ({"status": None}, r"status=\.\.\.\) takes a string"),
        ({"input_hash": 5}, r"input_hash=\.\.\.\) takes a string or None"),
        ({"workspace_revision": b"ab"}, r"workspace_revision=\.\.\.\) takes a string or None"),
    ],
)
def test_a_bad_envelope_argument_is_refused_and_nothing_is_written(tmp_path, kw, said):
    log = _log(tmp_path)
    with pytest.raises(UsageError, match=said):
        log.append("user.message", {"content": "x"}, **kw)
    log.append("user.message", {"content": "after"})
    log.close()
    read = hk.EventLog.read(log.path)  # the file reads back: nothing bad reached it
    assert [e.event_id for e in read.events] == [1, 2, 3]
    assert hk.Trajectory(read).gaps == []


def test_an_unhashable_type_or_data_class_is_a_usage_error(tmp_path):
    log = _log(tmp_path)
    with pytest.raises(UsageError, match="unknown event type"):
        log.append(["user.message"], {"content": "x"})  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="unknown data_class"):
        log.append("user.message", {"content": "x"}, data_class=["public"])  # type: ignore[arg-type]
    log.close()


def test_the_first_event_can_have_no_parent_only(tmp_path):
    log = hk.EventLog(tmp_path / "r.jsonl")
    with pytest.raises(UsageError, match=r"\(none yet: pass None\)"):
        log.append("user.message", {"content": "x"}, parent_id=1)
    assert log.append("user.message", {"content": "x"}, parent_id=None).parent_id is None
    log.close()


class _Branch(enum.StrEnum):
    MAIN = "main"


class _Id(enum.IntEnum):
    FIRST = 1


def test_earlier_ids_none_and_str_or_int_subclasses_are_taken(tmp_path):
    log = _log(tmp_path)
    assert log.append("user.message", {"content": "x"}, parent_id=1).parent_id == 1
    assert log.append("user.message", {"content": "x"}, parent_id=None).parent_id is None
    assert log.append("user.message", {"content": "x"}, supersedes=4).supersedes == 4
    assert log.append("user.message", {"content": "x"}, parent_id=_Id.FIRST).parent_id == 1
    assert log.append("user.message", {"content": "x"}, branch_id=_Branch.MAIN).branch_id == "main"
    log.close()
    assert len(hk.EventLog.read(log.path)) == 7
