"""Credential names written as JSON `\\uXXXX` escapes are redacted (R-S1).

A writer with `ensure_ascii` (Python's `json` default) turns `密码` into `\\u5bc6\\u7801` and a
zero-width space into `\\u200b`: tool-call arguments from such a server, or a `ScriptedModel`,
reach the log that way, and every name the redactor knows in another script was missed there.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.log.redact import Redactor
from harnesskit.testing import reply

SECRET = "hunter35hunter35"

VALUES = [
    {"密码": SECRET},
    {"пароль": SECRET},
    {"パスワード": SECRET},
    {"note": f"密码：{SECRET}"},
    {"note": f"şifre: {SECRET}"},
    {"note": f"pass\u200bword={SECRET}"},
    {"note": f"mot de passe\u00a0: {SECRET}"},
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: next(iter(v.values()))[:12])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_an_escaped_name_is_redacted_at_any_depth(value, depth):
    text = json.dumps(value)  # ensure_ascii: every character past ASCII escaped
    for _ in range(depth - 1):
        text = json.dumps({"arguments": text})
    assert text.isascii()
    r = Redactor()
    assert r.needs(text)
    out, counts = r.redact(text)
    assert SECRET not in out and counts.get("password")
    for _ in range(depth - 1):  # the structure holds at every depth
        out = json.loads(out)["arguments"]
    assert isinstance(json.loads(out), dict)


@pytest.mark.parametrize(
    "value",
    [{"name": "Zoë Brontë", "city": "Kraków"}, {"emoji": "\U0001f600 fine"}, {"path": "C:\\u0041"}],
    ids=["accents", "surrogate-pair", "ascii-escape"],
)
def test_escaped_text_with_no_credential_is_left_as_it_is(value):
    text = json.dumps(value)
    r = Redactor()
    out, counts = r.redact(text)
    assert (out, counts) == (text, {})


def test_escaped_names_in_tool_arguments_never_reach_the_file(tmp_path):
    @hk.tool
    def configure(settings: dict) -> str:
        """Configure the service.

        Use to change settings. Do not use to read them.

        Args:
            settings: the settings to apply.

        Returns:
            "ok".
        """
        return "ok"

    args = {"密码": SECRET + "a", "note": f"密码：{SECRET}b", "z": f"pass\u200bword={SECRET}c"}
    model = hk.ScriptedModel([reply.tool_call("configure", settings=args), reply.text("done")])
    run = hk.Harness([configure], model, log_dir=tmp_path).run("configure it")
    assert run.finish_reason == "stop"
    (path,) = tmp_path.glob("*.jsonl")
    text = path.read_text(encoding="utf-8")
    assert SECRET not in text
    hk.EventLog.read(path)  # still a readable log
