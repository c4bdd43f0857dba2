"""Counts and ids a log line holds must fit what the run and `frame()` read them into.

A provider's `usage.prompt_tokens` of 10**40 was logged as sent; `frame()` then raised a raw
`OverflowError`, and a hand-edited `step` or `parent_id` of `"1"` a raw `TypeError` in
resume and `frame()`. A provider's count that large is read as not reported; a line holding
one (or a step or parent id of the wrong type) is a `CorruptLogError` naming file and line.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.errors import CorruptLogError
from harnesskit.models._parse import parse_usage
from harnesskit.testing import reply


def _log(tmp_path):
    run = hk.Harness([], hk.ScriptedModel([reply.text("done")]), log_dir=tmp_path).run("hi")
    run.log.close()
    return run.log.path


def _edit(path, kind, change):
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        data = json.loads(line)
        if data["type"] == kind:
            change(data)
            lines[i] = json.dumps(data)
            path.write_text("\n".join(lines) + "\n")
            return i + 1
    raise AssertionError(kind)


@pytest.mark.parametrize(
    ("kind", "change", "said"),
    [
        (
            "model.response",
            lambda d: d["payload"].update(usage={"prompt_tokens": 10**40}),
            "'usage.prompt_tokens' is 1000000000",
        ),
        ("model.response", lambda d: d["payload"].update(step="1"), "'step' is str '1'"),
        ("model.response", lambda d: d["payload"].update(step=-1), "'step' is int -1"),
        ("model.response", lambda d: d.update(parent_id="3"), "'parent_id' is \"3\""),
        # an id past 2**63 - 1 was read, and frame() raised a raw OverflowError
        ("model.response", lambda d: d.update(parent_id=10**30), "'parent_id' is 10000000000"),
        ("model.response", lambda d: d.update(parent_id=-(10**24)), "'parent_id' is -1000000"),
        ("model.response", lambda d: d.update(parent_id=0), "'parent_id' is 0, not an event id"),
    ],
    ids=[
        "huge-usage",
        "step-text",
        "step-negative",
        "parent-text",
        "parent-huge",
        "parent-negative-huge",
        "parent-zero",
    ],
)
def test_a_count_or_id_that_does_not_fit_is_a_named_error(tmp_path, kind, change, said):
    path = _log(tmp_path)
    line = _edit(path, kind, change)
    with pytest.raises(CorruptLogError, match=rf"{path}:{line}: .*{said}") as info:
        hk.EventLog.read(path)
    assert "the log is corrupt" in str(info.value) or "payload field" in str(info.value)


def test_a_parent_id_in_range_reads_into_the_frame(tmp_path):
    path = _log(tmp_path)
    line = _edit(path, "model.response", lambda d: d.update(parent_id=2**40))  # a gap, not corrupt
    assert hk.EventLog.read(path).frame()["parent_id"].iloc[line - 1] == 2**40


def test_a_provider_count_too_large_is_read_as_not_reported():
    assert parse_usage({"prompt_tokens": 10**40, "completion_tokens": 5}) == parse_usage(
        {"completion_tokens": 5}
    )
    assert parse_usage({"prompt_tokens": 10**40}) is None
    assert parse_usage({"prompt_tokens": 12, "completion_tokens": 3}).prompt_tokens == 12
