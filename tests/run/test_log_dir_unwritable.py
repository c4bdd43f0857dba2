"""A log folder or log path that cannot be written is refused when the run is created (a
`UsageError` naming it and what to do), not with a raw `OSError` or at the first append."""

from __future__ import annotations

import os
import pathlib
import uuid

import pytest

import harnesskit as hk
from harnesskit.testing import reply


def _model():
    return hk.ScriptedModel([reply.text("an answer")])


def _unwritable_folder(tmp_path: pathlib.Path) -> pathlib.Path:
    """A real folder this process cannot create files in (skips when none is found)."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    for folder in (locked, pathlib.Path("/sys"), pathlib.Path("/proc")):
        probe = folder / f"probe-{uuid.uuid4().hex}.jsonl"
        try:
            probe.open("x").close()
        except OSError:
            return folder
        probe.unlink()
    pytest.skip("no folder here refuses new files to this process")


def test_an_unwritable_log_dir_is_refused_when_the_run_is_created(tmp_path):
    folder = _unwritable_folder(tmp_path)

    def create_the_run():
        h = hk.Harness([], _model(), log_dir=folder)  # refused here when the OS says so
        h.start("hello", run_id="r")  # else here, before any event: never at an append

    with pytest.raises(hk.UsageError, match=rf"{folder}.*writable"):
        create_the_run()
    assert not (folder / "r.jsonl").exists()


def test_an_event_log_in_an_unwritable_folder_is_refused_at_construction(tmp_path):
    folder = _unwritable_folder(tmp_path)
    with pytest.raises(hk.UsageError, match=r"cannot create the event log .*writable folder"):
        hk.EventLog(folder / "r.jsonl")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_a_log_dir_without_write_permission_is_refused_by_the_harness(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    with pytest.raises(hk.UsageError, match="log_dir=.*not writable"):
        hk.Harness([], _model(), log_dir=folder)


def test_a_log_path_under_a_file_or_that_is_a_folder_is_refused(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(hk.UsageError, match=r"EventLog\(path\): .*r\.jsonl goes through a file"):
        hk.EventLog(blocker / "r.jsonl")
    with pytest.raises(hk.UsageError, match="log_dir=.*file is a file, not a folder"):
        hk.Harness([], _model(), log_dir=blocker)
    (tmp_path / "r.jsonl").mkdir()
    with pytest.raises(hk.UsageError, match="is a folder, not a file"):
        hk.EventLog(tmp_path / "r.jsonl")
    h = hk.Harness([], _model(), log_dir=tmp_path)
    with pytest.raises(hk.UsageError, match="is a folder, not a file"):
        h.start("hello", run_id="r")
    assert blocker.read_text() == "x"


def test_an_artifacts_folder_that_is_a_file_is_refused_by_the_harness(tmp_path):
    (tmp_path / "artifacts").write_text("x")
    with pytest.raises(hk.UsageError, match="artifacts is a file"):
        hk.Harness([], _model(), log_dir=tmp_path)
    with pytest.raises(hk.UsageError, match="is a file, not a folder"):
        hk.Harness([], _model(), artifacts=tmp_path / "artifacts")
