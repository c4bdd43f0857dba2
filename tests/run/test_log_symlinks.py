"""A symbolic link planted where a run's log or write ledger will be created is never followed:
the run is refused before anything is written, and the link's target is never created."""

from __future__ import annotations

import os

import pytest

import harnesskit as hk
from harnesskit.errors import EventLogError
from harnesskit.log.events import EventLog
from harnesskit.tools import IdempotencyLedger, WriteRecord


def _harness(log_dir):
    return hk.Harness([], hk.ScriptedModel(["done"]), log_dir=log_dir)


@pytest.mark.parametrize("name", ["r.jsonl", "r.jsonl.idem"])
@pytest.mark.parametrize("dangling", [True, False])
def test_a_planted_link_at_the_log_or_ledger_path_is_refused(tmp_path, name, dangling):
    logs = tmp_path / "logs"
    logs.mkdir()
    target = tmp_path / "elsewhere.jsonl"
    if not dangling:
        target.write_text("IMPORTANT\n")
    os.symlink(target, logs / name)
    says = "already exists" if name.endswith(".idem") and not dangling else "symbolic link"
    with pytest.raises(hk.UsageError, match=says):
        _harness(logs).run("x", run_id="r")
    assert (target.read_text() == "IMPORTANT\n") if not dangling else not target.exists()
    assert sorted(p.name for p in logs.iterdir()) == [name]  # nothing else was created


def test_a_link_that_appears_after_the_check_is_still_not_followed(tmp_path):
    log = EventLog(tmp_path / "r.jsonl")
    log.append("user.message", {"content": "a"})
    log.close()
    (tmp_path / "r.jsonl").unlink()
    target = tmp_path / "elsewhere.jsonl"
    os.symlink(target, tmp_path / "r.jsonl")  # swapped in while the log was closed
    with pytest.raises(hk.UsageError, match="symbolic link"):
        log.append("user.message", {"content": "b"})
    assert not target.exists()


def test_a_ledger_never_writes_through_a_link_that_appears_later(tmp_path):
    ledger = IdempotencyLedger(tmp_path / "r.jsonl.idem")
    target = tmp_path / "elsewhere"
    os.symlink(target, tmp_path / "r.jsonl.idem")
    with pytest.raises(EventLogError, match="never created through a link"):
        ledger.restore(WriteRecord(key="k", state="started", tool="pay"))
    assert not target.exists()
