"""An unknown branch name is refused everywhere a branch is taken, by one check
(`EventLog.check_branch`), with a did-you-mean and the known branches; it matched nothing."""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.context.builder import ContextBuilder
from harnesskit.log import EventLog, Trajectory, visible_events
from harnesskit.log.resume import check_resume, rebuild_state
from harnesskit.log.trajectory import branch_filter, branch_limits
from harnesskit.testing import reply


@pytest.fixture
def forked(tmp_path):
    h = hk.Harness([], hk.ScriptedModel([reply.text("hi")]), log_dir=tmp_path)
    run = h.start("hello", run_id="r")
    run.run()
    run.fork(3, "alt-one")
    run.log.close()
    return h, tmp_path / "r.jsonl", EventLog.read(tmp_path / "r.jsonl")


def _calls(log, h, path):
    tr = Trajectory(log)
    builder = ContextBuilder(hk.ContextPolicy.resolve("default"))
    return {
        "visible": lambda b: tr.visible(b),
        "start_of": lambda b: tr.start_of(b),
        "visible_events": lambda b: visible_events(log, b),
        "branch_filter": lambda b: branch_filter(log, b),
        "branch_limits": lambda b: branch_limits(log, b),
        "search": lambda b: tr.search(branch=b),
        "search_list": lambda b: tr.search(branch=["main", b]),
        "merge": lambda b: tr.merge(b, evidence=None, conclusion="x"),
        "merge_into": lambda b: tr.merge("alt-one", evidence=None, conclusion="x", into=b),
        "build": lambda b: builder.build(log, branch_id=b),
        "of_type": lambda b: log.of_type("tool.result", branch_id=b),
        "last": lambda b: log.last("run.finished", branch_id=b),
        "rebuild_state": lambda b: rebuild_state(log, b),
        "resume": lambda b: h.resume(path, branch_id=b),
        "check_resume": lambda b: check_resume(h, path, branch_id=b),
    }


CALLS = [
    "visible", "start_of", "visible_events", "branch_filter", "branch_limits", "search",
    "search_list", "merge", "merge_into", "build", "of_type", "last", "rebuild_state",
    "resume", "check_resume",
]  # fmt: skip


@pytest.mark.parametrize("call", CALLS)
def test_an_unknown_branch_is_refused_with_a_did_you_mean(forked, call):
    h, path, log = forked
    before = path.read_bytes()
    fn = _calls(log, h, path)[call]
    with pytest.raises(hk.UsageError, match=r"no branch 'mian'.*did you mean 'main'\?") as info:
        fn("mian")
    assert "['alt-one', 'main']" in str(info.value)
    with pytest.raises(hk.UsageError, match=r"did you mean 'alt-one'\?"):
        fn("alt-on")
    assert path.read_bytes() == before  # nothing written


@pytest.mark.parametrize("call", ["visible", "search", "build", "of_type", "resume"])
def test_a_branch_that_is_not_a_string_is_refused(forked, call):
    h, path, log = forked
    with pytest.raises(hk.UsageError, match="branch"):
        _calls(log, h, path)[call](5)


def test_known_branches_still_answer_as_before(forked):
    _, _, log = forked
    assert log.branch_ids == ["alt-one", "main"]
    assert log.of_type("tool.result", branch_id="alt-one") == []  # known, nothing on it
    assert log.last("run.finished", branch_id="alt-one") is None
    assert [e.event_id for e in visible_events(log, "alt-one")] == [1, 2, 3, 7]
    empty = EventLog()
    assert empty.of_type(branch_id="main") == [] and visible_events(empty, "main") == []
    with pytest.raises(hk.UsageError, match="no branch 'alt'"):
        visible_events(empty, "alt")
