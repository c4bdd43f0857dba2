"""A damaged request delta (`prefix_of`, `tools_from`, `prefix_len`) is a CorruptLogError, never a
loop or a wrong message list."""

import json

import pytest

import harnesskit as hk
from harnesskit.testing import reply


@hk.tool
def lookup(key: str) -> dict:
    """Look a key up."""
    return {"key": key}


@pytest.fixture
def logged(tmp_path):
    turns = [reply.tool_call("lookup", key=k) for k in "abc"] + [reply.text("done")]
    run = hk.Harness([lookup], hk.ScriptedModel(turns), log_dir=tmp_path).run("x", run_id="r")
    return run.log.path


def edit(path, event_id, **fields):
    lines = path.read_text().splitlines()
    event = json.loads(lines[event_id - 1])
    event["payload"].update(fields)
    lines[event_id - 1] = json.dumps(event)
    path.write_text("\n".join(lines) + "\n")
    return hk.EventLog.read(path)


def requests(path):
    return [e.event_id for e in hk.EventLog.read(path).of_type("model.request")]


@pytest.mark.parametrize("field", ["prefix_of", "tools_from"])
@pytest.mark.parametrize("where", ["itself", "later", "missing", "not-a-request", "text"])
def test_a_bad_link_is_a_corrupt_log_error(logged, field, where):
    first, second, *_, last = requests(logged)
    target = {
        "itself": second,
        "later": last,
        "missing": 9999,
        "not-a-request": 1,
        "text": "EV-1",
    }[where]
    log = edit(logged, second, **{field: target, "tools": None})
    read = log.request_messages if field == "prefix_of" else log.request_tools
    with pytest.raises(hk.errors.CorruptLogError, match=f"{field}="):
        read(second)


@pytest.mark.parametrize("n", [999, -3, True, "2"])
def test_a_prefix_length_out_of_range_is_a_corrupt_log_error(logged, n):
    _, second, *_ = requests(logged)
    log = edit(logged, second, prefix_len=n)
    with pytest.raises(hk.errors.CorruptLogError, match="prefix_len"):
        log.request_messages(second)


def test_an_intact_log_reads_back(logged):
    log = hk.EventLog.read(logged)
    for rid in requests(logged):
        assert log.request_messages(rid) and log.request_tools(rid)


@pytest.mark.parametrize(
    "line",
    ['{"a":' * 100_000 + "1" + "}" * 100_000, '{"event_id": ' + "9" * 5000 + "}"],
    ids=["nested-100k-deep", "int-of-5000-digits"],
)
def test_a_line_json_cannot_decode_is_a_corrupt_log_error(tmp_path, line):
    # raised a raw RecursionError / ValueError from EventLog.read
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(hk.errors.CorruptLogError, match="bad.jsonl:1"):
        hk.EventLog.read(path)
