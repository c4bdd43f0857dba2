"""A run id names its log file `<log_dir>/<run_id>.jsonl`: only safe file names are taken.

1-200 characters from `A-Z a-z 0-9 . _ -`, starting with a letter or digit; anything else is a
`UsageError` naming the rule, before a byte is written. An existing file at the path that is
not a harnesskit log is refused, never appended to. Real files in a temporary folder.
"""

from __future__ import annotations

import pytest

import harnesskit as hk


def harness(folder):
    return hk.Harness([], hk.ScriptedModel(["a", "b"]), log_dir=folder)


@pytest.mark.parametrize(
    "run_id",
    [
        "../victim",
        "a/b",
        "/tmp/abs",
        "..",
        ".hidden",
        "-flag",
        "",
        "x" * 201,
        "a\x00b",
        "tab\there",
        "spa ce",
        "caf\u00e9",
        "a\\b",
        5,
        {"a": 1},
        b"bytes",
    ],
)
def test_an_unsafe_run_id_is_refused_before_anything_is_written(tmp_path, run_id):
    logs = tmp_path / "logs"
    logs.mkdir()
    (tmp_path / "victim.jsonl").write_text("precious\n")
    with pytest.raises(hk.UsageError, match=r"run_id must be .*A-Z a-z 0-9 \. _ -"):
        harness(logs).start("hi", run_id=run_id)
    with pytest.raises(hk.UsageError, match="run_id must be"):
        harness(logs).run("hi", run_id=run_id)
    assert list(logs.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs", "victim.jsonl"]
    assert (tmp_path / "victim.jsonl").read_text() == "precious\n"


@pytest.mark.parametrize(
    "run_id", ["run-1", "t0007-case_1-default-scripted-r0", "A.b_c-9", "x" * 200]
)
def test_a_safe_run_id_names_the_log(tmp_path, run_id):
    run = harness(tmp_path).run("hi", run_id=run_id)
    assert run.log.path == tmp_path / f"{run_id}.jsonl"
    assert run.state.run_id == run_id
    assert hk.EventLog.read(run.log.path).run_id == run_id


def test_without_a_log_dir_the_same_rule_holds(tmp_path):
    with pytest.raises(hk.UsageError, match="run_id must be"):
        hk.Harness([], hk.ScriptedModel(["a"])).start("hi", run_id="../x")
    assert hk.Harness([], hk.ScriptedModel(["a"])).run("hi", run_id="ok-1").final_text == "a"


@pytest.mark.parametrize(
    "content",
    [b"notes\n", b"notes", b"precious data, no newline", b"a\nb\n", b'{"a": 1}\n', b"\xff\xfe"],
)
def test_an_existing_file_that_is_not_a_log_is_refused_not_appended_to(tmp_path, content):
    path = tmp_path / "mine.jsonl"
    path.write_bytes(content)
    with pytest.raises(hk.UsageError, match="not a harnesskit event log") as err:
        harness(tmp_path).start("hi", run_id="mine")
    assert str(path) in str(err.value)
    assert path.read_bytes() == content


def test_an_existing_log_is_still_refused_as_append_only(tmp_path):
    harness(tmp_path).run("hi", run_id="r1")
    with pytest.raises(hk.UsageError, match="already exists; logs are append-only"):
        harness(tmp_path).start("hi", run_id="r1")
    assert len(hk.EventLog.read(tmp_path / "r1.jsonl").events) > 0
