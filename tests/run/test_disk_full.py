"""A write failure ends the run cleanly (R-V6): `error` in memory, a clear error, no temp files.

The disk-full case is real: the log's file handle is pointed at `/dev/full`, whose every write
fails with ENOSPC when flushed.
"""

from __future__ import annotations

import errno
import os
import pathlib

import pytest

import harnesskit as hk
from harnesskit.errors import ArtifactError, EventLogError
from harnesskit.testing import reply

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


def test_a_full_disk_while_storing_an_artifact_leaves_no_temp_file(tmp_path, monkeypatch):
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
    h = hk.Harness([dump], hk.ScriptedModel([reply.tool_call("dump")]), log_dir=tmp_path)

    with pytest.raises(ArtifactError, match="No space left on device"):
        h.start("dump it", run_id="big").run()

    assert not [p for p in tmp_path.rglob("*") if p.suffix == ".tmp"]
    log = hk.EventLog.read(tmp_path / "big.jsonl")
    assert log.last("run.finished").payload["finish_reason"] == "error"
