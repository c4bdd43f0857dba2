"""A log line that is no event of ours is refused saying which line, what it is, what to do.

An editor's byte-order mark before the first line was reported as "not valid JSON (Unexpected
UTF-8 BOM (decode using utf-8-sig))" (and a one-line log holding it was read as empty, its
line taken for a torn tail); a JSON object that is not an event (`{"foo": 1}`) as
"not an event line (KeyError: 'id')", and `null` as "a JSON NoneType". Each is now a
`CorruptLogError` naming the file and line, saying what the line is and what to do.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.errors import CorruptLogError

BOM = b"\xef\xbb\xbf"


@pytest.fixture
def log_lines(tmp_path):
    run = hk.Harness([], hk.ScriptedModel(["hi"]), log_dir=tmp_path / "runs").run("x")
    path = tmp_path / "runs" / f"{run.state.run_id}.jsonl"
    return path.read_bytes().splitlines()


def _write(tmp_path, lines: list[bytes]):
    path = tmp_path / "edited.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize("keep", [None, 1], ids=["whole-log", "one-line-log"])
def test_a_byte_order_mark_is_refused_naming_the_line(tmp_path, log_lines, keep):
    lines = log_lines[:keep] if keep else log_lines
    path = _write(tmp_path, [BOM + lines[0], *lines[1:]])
    with pytest.raises(CorruptLogError) as info:
        hk.EventLog.read(path)
    text = str(info.value)
    assert f"{path}:1:" in text and "byte-order mark" in text and "without a BOM" in text


def test_a_byte_order_mark_on_a_later_line_is_named_too(tmp_path, log_lines):
    path = _write(tmp_path, [*log_lines[:2], BOM + log_lines[2], *log_lines[3:]])
    with pytest.raises(CorruptLogError, match=r":3: the line starts with a UTF-8 byte-order"):
        hk.EventLog.read(path)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (b'{"foo": 1}', "a JSON object with no 'type' field (its keys: 'foo')"),
        (b'{"v": 3, "foo": 1}', "no 'type' field"),
        (b'{"v": 3, "type": "user.message"}', "lacks required field 'event_id'"),
        (b"[1, 2]", "a JSON list, not an event"),
        (b'"x"', "a JSON string, not an event"),
        (b"5", "a JSON number, not an event"),
        (b"null", "a JSON null, not an event"),
        (b"true", "a JSON boolean, not an event"),
    ],
)
@pytest.mark.parametrize("where", [0, 2, -1], ids=["first", "middle", "last"])
def test_a_json_line_that_is_no_event_is_refused_saying_what_to_do(
    tmp_path, log_lines, line, said, where
):
    lines = list(log_lines)
    at = len(lines) if where == -1 else where
    lines.insert(at, line)
    path = _write(tmp_path, lines)
    for read in (hk.EventLog.read, hk.EventLog.open_existing):
        with pytest.raises(CorruptLogError) as info:
            read(path)
        text = str(info.value)
        assert f"{path}:{at + 1}: " in text and said in text
        assert "restore the log from a copy" in text  # what to do
        assert "KeyError" not in text and "NoneType" not in text


def test_resume_refuses_it_the_same_way(tmp_path, log_lines):
    path = _write(tmp_path, [*log_lines[:2], json.dumps({"foo": 1}).encode(), *log_lines[2:]])
    h = hk.Harness([], hk.ScriptedModel(["hi"]), log_dir=tmp_path)
    with pytest.raises(CorruptLogError, match=r":3: not an event line"):
        h.resume(path)
