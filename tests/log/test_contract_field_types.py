"""A hand-edited task contract or frozen start (the fields resume, restart and replay compare and
read back) is refused at read, naming file, line and field, never a raw error in resume.

`policy: [1]` raised a raw `TypeError` in resume's diff of the recorded and current policy;
`tools`, `gate` or `idempotency` given as a string a raw `AttributeError`.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.errors import CorruptLogError
from harnesskit.testing import reply


@hk.tool
def lookup(key: str) -> dict:
    """Look a key up.

    Args:
        key: the key.
    """
    return {"key": key}


def _harness(tmp_path, turns=("done",)):
    return hk.Harness([lookup], hk.ScriptedModel(list(turns)), log_dir=tmp_path)


def _killed_run(tmp_path):
    """A run's log cut after its first tool result (as a killed run leaves it)."""
    run = _harness(tmp_path, [reply.tool_call("lookup", key="a"), "done"]).run("x", run_id="r")
    run.log.close()
    path = run.log.path
    lines = path.read_text(encoding="utf-8").splitlines()
    end = next(i for i, x in enumerate(lines) if json.loads(x)["type"] == "tool.result")
    path.write_text("\n".join(lines[: end + 1]) + "\n", encoding="utf-8")
    return path


def _edit(path, kind, change):
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        data = json.loads(line)
        if data["type"] == kind:
            change(data["payload"])
            lines[i] = json.dumps(data)
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return i + 1
    raise AssertionError(kind)


def _set(key, value):
    return lambda payload: payload.__setitem__(key, value)


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("policy", [1], "'policy' is a list, not a dict"),
        ("tools", "main", "'tools' is a str, not a dict"),
        ("gate", "x", "'gate' is a str, not a dict"),
        ("idempotency", "x", "'idempotency' is a str, not a dict"),
        ("limits", [5], "'limits' is a list, not a dict"),
        ("task", "T-1", "'task' is a str, not a dict"),
        ("run_id", ["r"], "'run_id' is a list, not a str"),
        ("system_prompt", 5, "'system_prompt' is a int, not a str"),
    ],
)
def test_a_contract_field_of_another_type_is_refused_naming_it(tmp_path, key, value, said):
    path = _killed_run(tmp_path)
    line = _edit(path, "task.contract", _set(key, value))
    before = path.read_bytes()
    pattern = rf"{path}:{line}: .*\(task.contract\): payload field {said}"
    with pytest.raises(CorruptLogError, match=pattern):
        hk.EventLog.read(path)
    with pytest.raises(CorruptLogError, match=pattern):
        _harness(tmp_path).resume(path)
    with pytest.raises(CorruptLogError, match=pattern):
        _harness(tmp_path).restart(path, reason="again")
    with pytest.raises(CorruptLogError, match=pattern):
        hk.replay(path, _harness(tmp_path))
    assert path.read_bytes() == before  # nothing appended, nothing lost


@pytest.mark.parametrize(
    ("frozen", "said"),
    [
        ("x", "'frozen' is a str, not a dict"),
        ({"policy": [1]}, r"'frozen.policy' is a list \[1\], not a dict"),
        ({"tools": "main"}, "'frozen.tools' is a str 'main', not a dict"),
        ({"permissions": 3}, "'frozen.permissions' is a int 3, not a dict"),
    ],
)
def test_a_fork_whose_frozen_start_is_of_another_type_is_refused(tmp_path, frozen, said):
    run = _harness(tmp_path, ["first", "second"]).run("x", run_id="r")
    run.fork(2, "alt").log.close()
    path = run.log.path
    line = _edit(path, "branch.fork", _set("frozen", frozen))
    with pytest.raises(CorruptLogError, match=rf"{path}:{line}: .*payload field {said}"):
        _harness(tmp_path).resume(path, branch_id="alt")


def test_a_contract_of_the_right_types_still_resumes(tmp_path):
    path = _killed_run(tmp_path)
    _edit(path, "task.contract", _set("task", {"task_id": "T-1"}))
    run = _harness(tmp_path).resume(path)
    run.run()
    assert run.finish_reason == "stop"
