"""A hand-edited log whose fields have the wrong type is refused when read, naming file, line and
field (R-V6): `usage` counts, `ok`, `finish_reason`, `event_id`, `data_class` and the envelope's
text and id fields (`created_at`, `status`, `source`, `summary`, `branch_id`, `supersedes`, ...)
are read back by resume, replay, the trajectory and `frame()`, which failed with raw `TypeError`s,
or, for a data class spelt `"Restricted"`, ranked the event `internal` and sent it to an
internal-only model.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.errors import CorruptLogError
from harnesskit.testing import reply


def _look(order_id: str) -> dict:
    """Look up an order.

    Args:
        order_id: the order's id.
    """
    return {"order_id": order_id, "status": "shipped"}


def _harness(tmp_path, turns):
    return hk.Harness([hk.tool(_look)], hk.ScriptedModel(turns), log_dir=tmp_path)


def _edited(tmp_path, kind, edit):
    run = _harness(tmp_path, [reply.tool_call("_look", order_id="A"), "done"]).run("hi")
    run.log.close()
    lines = run.log.path.read_text().splitlines()
    for i, line in enumerate(lines):
        data = json.loads(line)
        if data["type"] == kind:
            edit(data)
            lines[i] = json.dumps(data)
            run.log.path.write_text("\n".join(lines) + "\n")
            return run.log.path, i + 1
    raise AssertionError(f"no {kind} line")


def _set(key, value):
    return lambda d: d["payload"].__setitem__(key, value)


def _top(key, value):
    return lambda d: d.__setitem__(key, value)


@pytest.mark.parametrize(
    ("kind", "edit", "said"),
    [
        ("model.response", _set("usage", "x"), "'usage' is a str, not a dict"),
        ("model.response", _set("usage", {"prompt_tokens": "5"}), "'usage.prompt_tokens' is a str"),
        ("model.response", _set("usage", {"completion_tokens": 1.5}), "'usage.completion_tokens'"),
        ("model.response", _set("usage", {"estimated": "no"}), "'usage.estimated' is a str"),
        ("model.response", _set("finish_reason", 5), "'finish_reason' is a int, not a str"),
        ("tool.result", _set("ok", "false"), "'ok' is a str, not a bool"),
        ("run.finished", _set("finish_reason", 5), "'finish_reason' is a int, not a str"),
        ("user.message", _top("event_id", "2"), "field 'event_id': event id \"2\" is a string"),
        ("user.message", _top("event_id", 2.0), "event id 2.0 is a number, not an integer"),
        ("user.message", _top("data_class", "Restricted"), "'data_class' is \"Restricted\""),
        ("user.message", _top("data_class", "confidential"), "'data_class' is \"confidential\""),
        ("user.message", _top("data_class", ""), "'data_class' is \"\", not one of public"),
        ("user.message", _top("data_class", ["public"]), "'data_class' is [\"public\"]"),
        ("user.message", _top("created_at", 17), "'created_at' is 17, not a string"),
        ("user.message", _top("status", None), "field 'status' is null, not a string"),
        ("model.response", _top("status", ["active"]), "field 'status' is [\"active\"]"),
        ("tool.result", _top("source", 5), "field 'source' is 5, not a string"),
        ("user.message", _top("summary", None), "field 'summary' is null, not a string"),
        ("model.response", _top("summary", {"a": 1}), "field 'summary' is {\"a\": 1}"),
        ("user.message", _top("supersedes", "1"), "field 'supersedes' is \"1\", not an integer"),
        ("tool.result", _top("supersedes", True), "field 'supersedes' is true, not an integer"),
        ("user.message", _top("branch_id", 5), "field 'branch_id' is 5, not a string"),
        ("tool.result", _top("branch_id", ["main"]), "field 'branch_id' is [\"main\"]"),
        ("user.message", _top("parent_id", False), "field 'parent_id' is false, not an integer"),
        ("user.message", _top("workspace_revision", 7), "'workspace_revision' is 7, not a str"),
        ("tool.result", _top("input_hash", ["ab"]), "field 'input_hash' is [\"ab\"], not a"),
        ("user.message", _top("type", ["user.message"]), "not an event line"),
    ],
)
def test_a_field_of_the_wrong_type_is_a_corrupt_log_error_naming_file_line_and_field(
    tmp_path, kind, edit, said
):
    path, line = _edited(tmp_path, kind, edit)
    for attempt in (
        lambda: hk.EventLog.read(path),
        lambda: hk.EventLog.read(path).frame(),
        lambda: _harness(tmp_path, ["again"]).resume(path),
        lambda: hk.replay(path, hk.Harness([hk.tool(_look)])),
    ):
        with pytest.raises(CorruptLogError) as info:
            attempt()
        assert str(info.value).startswith(f"{path}:{line}: ") and said in str(info.value)


def test_the_fields_as_the_loop_writes_them_read_back(tmp_path):
    run = _harness(tmp_path, [reply.tool_call("_look", order_id="A"), "done"]).run("hi")
    run.log.close()
    log = hk.EventLog.read(run.log.path)
    assert [e.type for e in log.events][-1] == "run.finished" and len(log.frame()) == len(log)
