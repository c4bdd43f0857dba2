"""Message text that is not text in a hand-edited log is refused when the log is read (as a
`user.message` or `tool.result` content is), never a raw error in the transport audit.

A `model.response` whose message `content` was `true` or `-1` was read; `hk.audit` then raised
a raw `TypeError` measuring it against the tool results in a later request's prompt.
"""

from __future__ import annotations

import json
import re

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
    return {"key": key, "note": "a tool result long enough to be restated " * 8}


def _logged(tmp_path):
    turns = [reply.tool_call("lookup", key="a"), "looked", reply.tool_call("lookup", key="b"), "ok"]
    h = hk.Harness([lookup], hk.ScriptedModel(turns), log_dir=tmp_path)
    run = h.run("first", run_id="r")
    run.send("again").run()
    run.log.close()
    return run.log.path


def _edit(path, pick, change):
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        data = json.loads(line)
        if pick(data):
            change(data["payload"])
            lines[i] = json.dumps(data)
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return i + 1
    raise AssertionError("no such event")


def _answer(data):
    return data["type"] == "model.response" and data["payload"]["message"].get("content")


@pytest.mark.parametrize("content", [True, -1, ["looked"], {"text": "looked"}])
def test_a_response_whose_text_is_not_text_is_refused_on_read(tmp_path, content):
    path = _logged(tmp_path)
    hk.audit(hk.EventLog.read(path))  # the log as written audits
    line = _edit(path, _answer, lambda p: p["message"].__setitem__("content", content))
    said = rf"{re.escape(str(path))}:{line}: .*payload field 'message.content' is a"
    with pytest.raises(CorruptLogError, match=said):
        hk.EventLog.read(path)


def test_a_stored_request_message_whose_text_is_not_text_is_named(tmp_path):
    path = _logged(tmp_path)

    def full_request(data):
        return data["type"] == "model.request" and data["payload"].get("messages")

    _edit(path, full_request, lambda p: p["messages"][-1].__setitem__("content", 7))
    log = hk.EventLog.read(path)
    with pytest.raises(
        CorruptLogError, match=r"model.request EV-\d+: messages\[\d+\] holds content 7"
    ):
        hk.audit(log)
