"""A write failure ends the run cleanly (R-V6): `error` in memory, a clear error, no temp files.

The disk-full case is real: the log's file handle is pointed at `/dev/full`, whose every write
fails with ENOSPC when flushed.
"""

from __future__ import annotations

import errno
import json
import os
import pathlib

import pytest

import harnesskit as hk
from harnesskit.errors import EventLogError
from harnesskit.testing import reply
from harnesskit.tools import IdempotencyLedger

needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")


@needs_dev_full
def test_a_full_disk_during_a_step_ends_the_run_with_error_in_memory(tmp_path):
    h = hk.Harness([], hk.ScriptedModel([reply.text("an answer " * 10_000)]), log_dir=tmp_path)
    run = h.start("hello", run_id="full")
    run.log._file.close()
    run.log._file = open("/dev/full", "a", encoding="utf-8")  # noqa: SIM115 - the disk is full

    with pytest.raises(EventLogError, match="No space left on device"):
        run.step()

    assert run.finish_reason == "error"
    assert isinstance(run.error, EventLogError)
    finished = run.log.last("run.finished")
    assert finished is not None and finished.payload["finish_reason"] == "error"
    assert "could not write the event log" in finished.payload["error"]
    assert run.run() is run  # a finished run: nothing more to do, nothing raised
    assert not [p for p in tmp_path.rglob("*") if p.suffix == ".tmp"]
    # what reached the disk before the failure still reads (and resumes) as a log
    assert hk.EventLog.read(tmp_path / "full.jsonl").events[0].type == "task.contract"


def test_a_full_disk_for_an_artifact_keeps_the_result_and_no_temp_file(tmp_path, monkeypatch):
    @hk.tool
    def dump() -> str:
        """A big result (stored as an artifact)."""
        return "x" * 1_000_000

    real = os.replace

    def full_disk(src, dst, *args, **kwargs):
        if "objects" in pathlib.Path(dst).parts:  # the artifact's bytes: ENOSPC at the rename
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", full_disk)
    model = hk.ScriptedModel([reply.tool_call("dump"), "dumped"])
    h = hk.Harness([dump], model, log_dir=tmp_path)

    run = h.start("dump it", run_id="big").run()  # the result is kept (inline preview), R-E1

    assert not [p for p in tmp_path.rglob("*") if p.suffix == ".tmp"]
    log = hk.EventLog.read(tmp_path / "big.jsonl")
    assert run.finish_reason == "stop"
    assert log.last("run.finished").payload["finish_reason"] == "stop"
    result = log.last("tool.result")
    assert result.ok and "No space left on device" in result.payload["artifact_error"]
    assert len(result.content) < 3_000  # a bounded preview, not the 1 MB


def _ledger_lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@needs_dev_full
def test_a_full_disk_for_the_write_ledger_runs_no_write_and_ends_with_error(tmp_path):
    sent = []

    @hk.tool(risk="write")
    def send_mail(to: str) -> str:
        """Send a mail."""
        sent.append(to)
        return "sent"

    model = hk.ScriptedModel([reply.tool_call("send_mail", to="a@example.org"), reply.text("ok")])
    ledger = tmp_path / "mail.jsonl.idem"
    ledger.symlink_to("/dev/full")  # the ledger's disk is full: every write fails with ENOSPC
    run = hk.Harness([send_mail], model, log_dir=tmp_path).start("mail a", run_id="mail")

    with pytest.raises(EventLogError, match="No space left on device") as err:
        run.run()

    assert sent == []  # its `started` line failed: the write never ran
    message = str(err.value)
    assert f"idempotency ledger {ledger}" in message and "resume" in message
    assert run.finish_reason == "error" and run.error is err.value
    log = hk.EventLog.read(tmp_path / "mail.jsonl")  # flushed, ending with run.finished
    assert log.events[-1].type == "run.finished"
    assert log.events[-1].payload["finish_reason"] == "error"
    assert "could not write the idempotency ledger" in log.events[-1].payload["error"]
    assert not log.of_type("tool.result")  # the call stays pending for resume
    assert not [p for p in tmp_path.rglob("*") if p.suffix == ".tmp"]


@needs_dev_full
def test_a_full_disk_after_a_write_acted_keeps_its_result_and_leaves_it_unsettled(tmp_path):
    ledger = tmp_path / "pay.jsonl.idem"
    kept = tmp_path / "kept.idem"

    @hk.tool(risk="write")
    def pay(ref: str) -> dict:
        """Pay; the disk fills up while it runs."""
        ledger.rename(kept)  # the `started` line is in `kept`; from now on the disk is full
        ledger.symlink_to("/dev/full")
        return {"paid": ref}

    model = hk.ScriptedModel([reply.tool_call("pay", ref="P-7"), reply.text("ok")])
    run = hk.Harness([pay], model, log_dir=tmp_path).start("pay P-7", run_id="pay")

    with pytest.raises(EventLogError, match=f"idempotency ledger {ledger}"):
        run.run()

    assert run.finish_reason == "error"
    log = hk.EventLog.read(tmp_path / "pay.jsonl")
    (result,) = log.of_type("tool.result")  # the tool acted: its result is in the log
    assert result.ok and "P-7" in result.content
    assert log.events[-1].type == "run.finished"
    assert log.events[-1].payload["finish_reason"] == "error"
    # on disk the write is only `started`: resume reads it as unknown, never as "no effect"
    assert [line["state"] for line in _ledger_lines(kept)] == ["started"]
    kept.replace(ledger)
    (unsettled,) = IdempotencyLedger.open(ledger).unsettled()
    assert unsettled.tool == "pay" and unsettled.arguments == {"ref": "P-7"}
    assert not [p for p in tmp_path.rglob("*") if p.suffix == ".tmp"]
