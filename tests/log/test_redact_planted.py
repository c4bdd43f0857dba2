"""Planted-secret families the redactor missed (R-S1), each with several members.

Every case plants a secret in the text a tool or model could return and checks, through a
real log file where it matters, that the secret is gone and the text around it is kept.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.log import redact

R = redact.Redactor()


def _logged(tmp_path, content: str) -> str:
    """The line a real event log writes for a tool result holding `content`."""
    log = hk.EventLog(tmp_path / "r.jsonl")
    log.append("tool.result", {"tool": "t", "content": content})
    log.close()
    return (tmp_path / "r.jsonl").read_text(encoding="utf-8")


# --- 1. a credential at the start of a line of JSON-escaped text ---------------------------

#: `(line, secret)`: a credential written alone on its line; its letters start right after the
#: `n`, `r` or `t` of an escaped break, which a word boundary took for part of the word.
LINE_STARTS = [
    ("pass=PlantedLine01", "PlantedLine01"),
    ("token=PlantedLine02", "PlantedLine02"),
    ("token: PlantedLine03", "PlantedLine03"),
    ("password is PlantedLine04", "PlantedLine04"),
    ("login bob password PlantedLine05", "PlantedLine05"),
    ("--password PlantedLine06", "PlantedLine06"),
    ("-u admin:PlantedLine07", "PlantedLine07"),
    ("mysql -pPlantedLine08", "PlantedLine08"),
    ("sshpass -p PlantedLine09", "PlantedLine09"),
    ("Bearer PlantedLine10abcdef", "PlantedLine10"),
    ("Cookie: sid=PlantedLine11", "PlantedLine11"),
    ("sk-PlantedLine12abcdefghij", "PlantedLine12"),
    ("ghp_PlantedLine13abcdefghijklmnopqrstuvw", "PlantedLine13"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.PlantedLine14", "PlantedLine14"),
    ("AKIAPLANTEDLINE15XYZ", "PLANTEDLINE15"),
]


@pytest.mark.parametrize("sep", ["\n", "\r\n", "\r", "\t"])
@pytest.mark.parametrize(("line", "secret"), LINE_STARTS)
def test_a_credential_after_an_escaped_line_break_is_redacted_and_the_next_line_kept(
    line, secret, sep
):
    inner = json.dumps({"log": f"boot ok{sep}{line}{sep}ready"})
    for text in (inner, json.dumps({"outer": inner})):  # `\n` once and `\\n` twice escaped
        out, counts = R.redact(text)
        assert secret not in out, out
        assert counts, text
        assert "boot ok" in out and "ready" in out, out
        json.loads(out)


def test_a_credential_line_in_a_logged_tool_result_is_redacted(tmp_path):
    content = "boot ok\npassword=PlantedLog1\ntoken: PlantedLog2\npass=PlantedLog3\nready"
    data = _logged(tmp_path, content)
    assert "PlantedLog" not in data
    assert json.loads(data)["payload"]["content"].endswith("\nready")
