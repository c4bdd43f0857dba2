"""Causal integrity (R-V4): list targets, looping parents and missing parents are reported, and a
log whose causal order cannot be established is never resumed or appended to."""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.errors import CorruptLogError
from harnesskit.testing import reply
from tests.support.hand_edit import with_parents


@hk.tool
def lookup(key: str) -> dict:
    """Look a key up.

    Args:
        key: the key.
    """
    return {"key": key}


def _harness(tmp_path, turns=None):
    turns = turns or [reply.tool_call("lookup", key="a"), "done"]
    return hk.Harness([lookup], hk.ScriptedModel(turns), log_dir=tmp_path)


def _logged(tmp_path):
    run = _harness(tmp_path).run("x", run_id="r")
    run.log.close()
    return run.log.path


def _set_parent(path, event_id, parent_id):
    lines = path.read_text(encoding="utf-8").splitlines()
    event = json.loads(lines[event_id - 1])
    event["parent_id"] = parent_id
    lines[event_id - 1] = json.dumps(event)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# -- status targets as lists ---------------------------------------------------------------------


def test_a_status_event_targeting_a_list_of_ids_keeps_the_trajectory_readable():
    run = hk.Harness([], hk.ScriptedModel(["first", "second"])).start("hi")
    run.run()
    run.log.append("status.supersede", {"target": [2, 3], "reason": "both replaced"})
    tr = hk.Trajectory(run.log)
    assert tr.statuses()[2] == tr.statuses()[3] == "superseded"
    assert tr.gaps == [] and tr.complete
    assert len(tr.causal_order()) == len(run.log)


def test_each_missing_id_of_a_list_target_is_a_gap():
    run = hk.Harness([], hk.ScriptedModel(["first"])).start("hi")
    run.run()
    event = run.log.append("status.reject", {"target": [2, 99, "x"], "reason": "?"})
    tr = hk.Trajectory(run.log)
    assert [(g.event_id, g.missing, g.kind) for g in tr.gaps] == [
        (event.event_id, 99, "target"),
        (event.event_id, None, "target"),
    ]
    assert not tr.complete
    assert len(tr.causal_order()) == len(run.log)  # a bad target breaks no ancestry


# -- looping parents ---------------------------------------------------------------------------


def test_a_self_parent_and_a_parent_loop_are_gaps_in_memory(tmp_path):
    log = hk.EventLog(None)
    log.append("user.message", {"content": "root"})
    log.append("user.message", {"content": "self"})
    log.append("user.message", {"content": "a"})
    log.append("user.message", {"content": "b"}, parent_id=3)
    log.append("user.message", {"content": "child of the loop"}, parent_id=3)
    log = with_parents(tmp_path, log, {2: 2, 3: 4})  # appending refuses these: a copy has them
    tr = hk.Trajectory(log)
    assert not tr.complete
    assert [(g.event_id, g.missing) for g in tr.gaps] == [(2, 2), (3, 4), (4, 3)]
    assert "EV-3 -> EV-4 -> EV-3" in tr.gaps[1].reason
    assert [e.event_id for e in tr.causal_order()] == [1]  # left out, never guessed into place


@pytest.mark.parametrize(
    ("event_id", "parent_id", "looping"),
    [(3, 3, [3]), (2, 4, [2, 3, 4])],
    ids=["self", "cycle"],
)
def test_a_log_with_a_parent_loop_reads_incomplete_and_is_not_resumed(
    tmp_path, event_id, parent_id, looping
):
    path = _logged(tmp_path)
    _set_parent(path, event_id, parent_id)
    log = hk.EventLog.read(path)
    tr = hk.Trajectory(log)
    assert not tr.complete and [g.event_id for g in tr.gaps] == looping
    assert "loops" in tr.gaps[0].reason
    before = path.read_bytes()
    with pytest.raises(CorruptLogError, match=rf"{path}: the causal order .* EV-{looping[0]}"):
        _harness(tmp_path).resume(path)
    with pytest.raises(CorruptLogError, match="causal order"):
        _harness(tmp_path).restart(path, reason="again")
    with pytest.raises(CorruptLogError, match="causal order"):
        hk.check_resume(_harness(tmp_path), path)
    assert path.read_bytes() == before  # nothing appended


def test_a_log_with_a_missing_parent_is_not_resumed(tmp_path):
    path = _logged(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    _set_parent(path, len(lines) - 1, 999)  # the last event stays: resume would go on after it
    before = path.read_bytes()
    with pytest.raises(CorruptLogError, match=r"parent 999 is not in the log"):
        _harness(tmp_path).resume(path)
    assert path.read_bytes() == before
    # the log can be resumed again once it is whole (the writer's lock was let go)
    _set_parent(path, len(lines) - 1, len(lines) - 2)
    run = _harness(tmp_path, ["more"]).resume(path)
    run.log.close()


def test_a_parent_written_later_without_a_loop_is_still_complete(tmp_path):
    log = hk.EventLog(None)
    log.append("user.message", {"content": "root"})
    log.append("tool.result", {"content": "second"})
    log.append("tool.call", {"tool": "echo"}, parent_id=1)
    log = with_parents(tmp_path, log, {2: 3})  # appending refuses a later parent: a copy has it
    tr = hk.Trajectory(log)
    assert tr.complete and [e.event_id for e in tr.causal_order()] == [1, 3, 2]
