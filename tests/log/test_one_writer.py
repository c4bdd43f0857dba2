"""One writer per log file: a second `Run` appending to the same log is refused (R-V1, R-V6).

Two writers would both number their next event `len(events) + 1`; the file would then be
unreadable for good (`CorruptLogError`). The open file holds an exclusive lock; a closed log
that reopens its file to append checks nobody wrote in between. Real files, real processes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import harnesskit as hk


def harness(tmp_path, *turns, **kwargs):
    return hk.Harness(
        [], hk.ScriptedModel(list(turns) or ["a", "b", "c"]), log_dir=tmp_path, **kwargs
    )


def lines(path):
    return path.read_bytes().count(b"\n")


def test_a_stale_run_is_refused_after_a_resumed_one_wrote_and_the_log_stays_readable(tmp_path):
    h = harness(tmp_path)
    run = h.run("hello")
    path = run.log.path
    resumed = h.resume(path)
    resumed.send("q2")
    resumed.run()
    before = path.read_bytes()
    with pytest.raises(hk.UsageError, match=r"another Run.*h\.resume\(path\)") as err:
        run.send("q3")
    assert str(path) in str(err.value)
    assert path.read_bytes() == before  # not a byte written
    log = hk.EventLog.read(path)  # readable: no colliding id
    assert [e.event_id for e in log.events] == list(range(1, len(log.events) + 1))
    fresh = harness(tmp_path, "d").resume(path)  # what the message says to do works
    fresh.send("q3").run()
    assert fresh.final_text == "d"
    hk.EventLog.read(path)


def test_resuming_a_log_twice_refuses_the_second_while_the_first_is_open(tmp_path):
    h = harness(tmp_path)
    path = h.run("hello").log.path
    first = harness(tmp_path, "b").resume(path)
    n = lines(path)
    with pytest.raises(hk.UsageError, match="already open for writing by another Run"):
        harness(tmp_path, "c").resume(path)
    with pytest.raises(hk.UsageError, match="already open for writing"):
        harness(tmp_path, "c").restart(path, reason="again")
    assert lines(path) == n
    first.send("more").run()  # the first writer goes on, and its end releases the file
    second = harness(tmp_path, "c").resume(path)
    second.send("more2").run()
    assert second.final_text == "c"
    hk.EventLog.read(path)


def test_two_new_logs_on_one_path_are_refused(tmp_path):
    path = tmp_path / "one.jsonl"
    first = hk.EventLog(path)
    with pytest.raises(hk.UsageError, match="already open for writing"):
        hk.EventLog(path)
    first.append("user.message", {"content": "hi"})
    first.close()
    assert len(hk.EventLog.read(path).events) == 1


def test_a_failed_resume_releases_the_file(tmp_path):
    path = harness(tmp_path).run("hello").log.path
    with pytest.raises(hk.ResumeError):
        harness(tmp_path, "b", system_prompt="another prompt").resume(path)
    resumed = harness(tmp_path, "b").resume(path)  # not refused as "already open"
    resumed.send("more").run()
    assert resumed.final_text == "b"


def test_a_writer_in_another_process_is_refused(tmp_path):
    path = harness(tmp_path).run("hello").log.path
    holder = textwrap.dedent(
        f"""
        import sys
        import harnesskit as hk
        log = hk.EventLog.open_existing({str(path)!r})
        print("open", flush=True)
        sys.stdin.read()  # hold the file until the test closes our stdin
        log.append("user.message", {{"content": "from the other process"}})
        log.close()
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", holder],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": ":".join(p for p in sys.path if p)},
    ) as proc:
        try:
            assert proc.stdout.readline().strip() == "open"
            with pytest.raises(hk.UsageError, match="already open for writing"):
                harness(tmp_path, "b").resume(path)
        finally:
            proc.stdin.close()
            assert proc.wait(timeout=30) == 0
    log = hk.EventLog.read(path)
    assert log.events[-1].payload["content"] == "from the other process"


# the collected Run's file is closed by its finalizer, which warns that it was left open
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_run_no_one_can_reach_does_not_hold_the_file(tmp_path):
    h = harness(tmp_path, "a", "b", "c", "d")
    path = h.run("hello").log.path
    kept = h.restart(path, reason="first try")  # not run: it holds the file
    with pytest.raises(hk.UsageError, match="already open for writing"):
        h.restart(path, reason="again")
    restarted_events = len(kept.log.events)
    del kept  # a Run sits in reference cycles: only the collector closes its file
    again = h.restart(path, reason="again")
    assert len(again.log.events) > restarted_events  # it read the first restart's events
    again.run()
    assert len(hk.EventLog.read(path).of_type("run.restart")) == 2


def test_resuming_an_ended_run_again_and_again_works_like_rerunning_a_notebook_cell(tmp_path):
    h = hk.Harness([], hk.ScriptedModel(["a", "b"]), log_dir=tmp_path)
    h.run("hi", run_id="a")
    path = tmp_path / "a.jsonl"
    r = h.resume(path).run()  # already ended: nothing to do, and its lock is let go
    r = h.resume(path).run()  # the cell run again, with `r` still bound to the first Run
    assert r.finish_reason == "stop"
    r.send("more").run()  # an ended run that gets a new turn reopens its log
    assert r.finish_reason == "stop"
    assert [e.type for e in hk.EventLog.read(path).events].count("user.message") == 2
