"""A hand-edited envelope field (`payload: null`, `v: true`) is refused at read, naming the file,
the line and the field, never surfacing later as an unrelated error in resume or replay."""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.errors import CorruptLogError, SchemaVersionError
from harnesskit.testing import reply


@hk.tool
def lookup(key: str) -> dict:
    """Look a key up.

    Args:
        key: the key.
    """
    return {"key": key}


def _harness(tmp_path):
    turns = [reply.tool_call("lookup", key="a"), "done"]
    return hk.Harness([lookup], hk.ScriptedModel(turns), log_dir=tmp_path)


def _edited(tmp_path, type_, **fields):
    """A killed run's log (cut after its first tool result) with one line's fields replaced."""
    run = _harness(tmp_path).run("x", run_id="r")
    run.log.close()
    path = run.log.path
    lines = path.read_text(encoding="utf-8").splitlines()
    end = next(i for i, x in enumerate(lines) if json.loads(x)["type"] == "tool.result")
    lines = lines[: end + 1]
    number = next(i for i, x in enumerate(lines) if json.loads(x)["type"] == type_) + 1
    event = json.loads(lines[number - 1])
    event.update(fields)
    lines[number - 1] = json.dumps(event)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, number


@pytest.mark.parametrize("type_", ["tool.result", "tool.call", "user.message"])
def test_a_null_payload_is_corruption_naming_the_line(tmp_path, type_):
    path, number = _edited(tmp_path, type_, payload=None)
    pattern = rf"{path}:{number}: .*payload is null, not an object"
    with pytest.raises(CorruptLogError, match=pattern):
        hk.EventLog.read(path)
    with pytest.raises(CorruptLogError, match=pattern):
        _harness(tmp_path).resume(path)


@pytest.mark.parametrize(
    ("v", "says"),
    [
        (True, r"field 'v' \(the schema version\) is bool true"),
        ("3", "field 'v' .* is str '3'"),
        ([3], r"field 'v' .* is list \[3\]"),  # was a raw TypeError (unhashable) in read
        ({"a": 1}, "field 'v' .* is dict"),
        (3.0, "field 'v' .* is float 3.0"),  # equal to 3, but not what a writer writes
    ],
)
def test_a_schema_version_that_is_not_an_integer_names_the_field_and_line(tmp_path, v, says):
    path, number = _edited(tmp_path, "user.message", v=v)
    with pytest.raises(SchemaVersionError, match=rf"{path}:{number}: {says}"):
        hk.EventLog.read(path)
    with pytest.raises(SchemaVersionError, match=rf"{path}:{number}: "):
        _harness(tmp_path).resume(path)


def test_a_newer_schema_version_names_the_line(tmp_path):
    path, number = _edited(tmp_path, "user.message", v=99)
    with pytest.raises(SchemaVersionError, match=rf"{path}:{number}: .*schema version 99"):
        hk.EventLog.read(path)
