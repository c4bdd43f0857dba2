"""`EventLog.append` refuses a payload that is not a dict of JSON data before writing anything.

`run.log.append("user.message", 5)` was written (the next step failed with a raw
`AttributeError` and the file no longer read), NaN was written as `NaN` (not JSON) and an
`object()` as its repr.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import math
import pathlib
import uuid

import pytest

import harnesskit as hk
from harnesskit.errors import UsageError


class _Color(enum.Enum):
    RED = "red"


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        (5, "payload is a int (5), not a dict"),
        ([1, 2], "payload is a list"),
        ("text", "payload is a str"),
        ({"x": math.nan}, "cannot be written as JSON"),
        ({"x": [1, {"y": math.inf}]}, "cannot be written as JSON"),
        ({"x": -math.inf}, "cannot be written as JSON"),
        ({"x": object()}, "a object (<object object"),
        ({"x": {1, 2}}, "a set ({1, 2}) has no JSON form"),
    ],
)
def test_a_payload_that_is_not_json_is_refused_and_nothing_is_written(tmp_path, payload, said):
    path = tmp_path / "r.jsonl"
    log = hk.EventLog(path, run_id="r")
    log.append("user.message", {"content": "hi"})
    log.flush()
    before = path.read_bytes()
    with pytest.raises(UsageError) as info:
        log.append("user.message", payload)
    assert said in str(info.value) and "nothing written" in str(info.value)
    log.append("user.message", {"content": "again"})
    log.close()
    assert path.read_bytes().startswith(before)
    read = hk.EventLog.read(path)
    assert [e.event_id for e in read.events] == [1, 2]
    assert [e.payload["content"] for e in read.events] == ["hi", "again"]


def test_dates_paths_enums_and_ids_are_still_written_as_text(tmp_path):
    path = tmp_path / "r.jsonl"
    log = hk.EventLog(path, run_id="r")
    ident = uuid.UUID(int=7)
    when = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
    payload = {"when": when, "where": pathlib.Path("a/b"), "color": _Color.RED, "id": ident}
    log.append("checkpoint", payload)
    log.close()
    line = json.loads(path.read_text().splitlines()[0])
    assert line["payload"] == {
        "when": str(when),
        "where": "a/b",
        "color": str(_Color.RED),
        "id": str(ident),
    }
