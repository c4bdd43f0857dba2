"""A hand-edited contract time is a named error in replay, never a raw one.

`hk.replay` runs the replayed harness on a clock stopped at the contract's `created_at`; a
`created_at` of `"other"` raised a raw `ValueError` there and `10**24` a raw `TypeError`.
"""

from __future__ import annotations

import json
import re

import pytest

import harnesskit as hk
from harnesskit.errors import CorruptLogError


def _harness(tmp_path=None):
    return hk.Harness([], hk.ScriptedModel(["unused"]), log_dir=tmp_path)


def _logged(tmp_path, created_at):
    run = hk.Harness([], hk.ScriptedModel(["hello"]), log_dir=tmp_path).run("hi", run_id="r")
    run.log.close()
    path = run.log.path
    lines = path.read_text(encoding="utf-8").splitlines()
    contract = json.loads(lines[0])
    assert contract["type"] == "task.contract"
    contract["created_at"] = created_at
    lines[0] = json.dumps(contract)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("created_at", ["other", "2026-13-40T99:00:00", 10**24, ["2026"]])
def test_a_contract_time_that_is_not_a_time_is_a_named_error(tmp_path, created_at):
    path = _logged(tmp_path, created_at)
    before = path.read_bytes()
    with pytest.raises(CorruptLogError, match=rf"{re.escape(str(path))}.*'created_at'"):
        hk.replay(path, _harness())
    assert path.read_bytes() == before


def test_a_read_log_with_a_bad_contract_time_names_the_log_and_event(tmp_path):
    log = hk.EventLog.read(_logged(tmp_path, "other"))
    with pytest.raises(CorruptLogError, match=r"event 1 \(task.contract\): field 'created_at'"):
        hk.replay(log, _harness())


def test_the_replay_clock_is_the_contract_time(tmp_path):
    path = _logged(tmp_path, "2026-01-31T12:00:00.000+00:00")
    result = hk.replay(path, _harness())
    assert result.run.log[1].created_at == "2026-01-31T12:00:00.000+00:00"
