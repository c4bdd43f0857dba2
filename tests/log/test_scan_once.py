"""A tool's result is scanned for secrets once: the transport's scan, then the log's line around it.

The transport checks a long result as the JSON string the log will write (`needs_quoted`) and
the redactor remembers it when clean; the log then scans the line holding it around that
string (`needs_except`). These tests hold the shortcut to the plain scan of the whole line, and
show a planted secret still redacted on disk and in the prompt.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harnesskit as hk
from harnesskit.log import redact
from harnesskit.testing import reply

PIECES = [
    "token", "TOKEN", "tokens", "pass", "word", "passw", "secret", ":", "=", '"', "'", "\\",
    " ", "\n", "\t", "\x01", "sk-", "proj", "ghp_", "eyJ", "://", "@", "x", "é", "İ", ",",
    "}", "{", "abcd1234", "hunter22", "prompt_tokens", "private key", "bearer ",
]  # fmt: skip
TEXT = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
LONG_CLEAN = "flight HAT136 on 2024-05-20, reservation 4WQ150; " * 12  # > 512 chars


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_needs_quoted_wakes_wherever_needs_does(text):
    for body in (text, text + LONG_CLEAN, LONG_CLEAN + text, text + LONG_CLEAN + text):
        r = redact.Redactor()
        if r.needs(body):
            assert r.needs_quoted(body)
        if len(body) >= redact._REMEMBER_CHARS:  # shorter ones are checked as they are
            assert r.needs_quoted(body) == r.needs(json.encoder.encode_basestring(body))


@settings(max_examples=400, deadline=None)
@given(before=TEXT, after=TEXT, inner=TEXT, twice=st.booleans())
def test_the_scan_around_a_remembered_string_equals_the_whole_scan(before, after, inner, twice):
    r = redact.Redactor()
    known = LONG_CLEAN + inner.replace("token", "tok")
    if r.needs_quoted(known):  # not clean: nothing is remembered
        assert r._quoted_clean is None or r._quoted_clean[0] is not known
        return
    assert r._quoted_clean is not None and r._quoted_clean[0] is known
    quoted = json.encoder.encode_basestring(known)
    line = before + quoted + after + (quoted if twice else "")
    assert r.needs_except(line, known) == r.needs(line)
    assert r.needs_except(before + after, known) == r.needs(before + after)  # not in it
    assert r.needs_except(line, "another") == r.needs(line)  # not the remembered object


def test_short_texts_are_not_remembered_and_extra_patterns_never_are():
    r = redact.Redactor()
    assert not r.needs_quoted("a short clean result") and r._quoted_clean is None
    assert r.needs_quoted('{"token": "abc"}' + LONG_CLEAN) and r._quoted_clean is None
    r2 = redact.Redactor(extra={"customer": r"CUST-\d+"})
    assert r2.needs_quoted(LONG_CLEAN) and r2._quoted_clean is None


def test_a_secret_beside_a_remembered_result_is_still_redacted(tmp_path):
    r = redact.Redactor()
    log = hk.EventLog(tmp_path / "r.jsonl", redactor=r)
    content = json.dumps({"rows": [LONG_CLEAN] * 2})
    assert not r.needs_quoted(content) and r._quoted_clean[0] is content
    log.append(
        "tool.result",
        {"tool": "t", "tool_call_id": "c1", "ok": True, "content": content,
         "note": 'password: "hunter22"'},
        summary="api_key=sk-proj-abcdefghijklmnopqrstuv",
    )  # fmt: skip
    log.append("tool.result", {"tool": "t", "tool_call_id": "c2", "ok": True, "content": content})
    log.close()
    text = (tmp_path / "r.jsonl").read_text()
    assert "hunter22" not in text and "sk-proj-abcdefghijklmnopqrstuv" not in text
    assert text.count(json.encoder.encode_basestring(content)) == 2  # the result itself: as is
    assert log.events[0].payload["content"] == content


def _run(tmp_path, name, rows, *, plain_scan=False, monkeypatch=None):
    @hk.tool
    def read_rows() -> dict:
        """Read the rows."""
        return {"rows": rows}

    if plain_scan:  # the whole line scanned every time, as before the shortcut
        monkeypatch.setattr(redact.Redactor, "needs_quoted", redact.Redactor.needs)
    model = hk.ScriptedModel([reply.tool_call("read_rows"), reply.text("done")])
    harness = hk.Harness([read_rows], model, log_dir=tmp_path / name)
    run = harness.start("read the rows", run_id="s").run()
    if plain_scan:
        monkeypatch.undo()
    return run, model, (tmp_path / name / "s.jsonl").read_text()


def test_a_planted_secret_in_a_long_result_is_redacted_on_disk_and_in_the_prompt(tmp_path):
    secret = "sk-proj-PlantedLongResultKey0123456789"
    rows = [LONG_CLEAN, f"the deploy key is {secret}", LONG_CLEAN]
    run, model, text = _run(tmp_path, "secret", rows)
    assert run.finish_reason == "stop"
    assert secret not in text and "[REDACTED:api_key]" in text
    sent = json.dumps([m.to_openai() for m in model.requests[1].messages])
    assert secret not in sent and "[REDACTED:api_key]" in sent


KEPT = ("content", "personal_data", "ok", "summary", "tool")


@pytest.mark.parametrize(
    ("owner", "remembered"),
    [("owner 4WQ150", True), ("owner ann@example.com", False)],  # personal data wakes the scan
)
def test_a_long_clean_result_is_logged_as_the_plain_scan_logs_it(
    tmp_path, monkeypatch, owner, remembered
):
    rows = [LONG_CLEAN, owner, LONG_CLEAN]
    lines = []
    for name, plain in (("once", False), ("plain", True)):
        run, _, text = _run(tmp_path, name, rows, plain_scan=plain, monkeypatch=monkeypatch)
        assert run.finish_reason == "stop"
        results = [json.loads(x) for x in text.splitlines()]
        results = [r["payload"] | {"summary": r["summary"]} for r in results]
        lines.append([{k: v for k, v in p.items() if k in KEPT} for p in results if "ok" in p])
        if not plain:  # the shortcut was taken only for a result with nothing to scan for
            kept = run.log.redactor._quoted_clean
            result = run.log.of_type("tool.result")[0]
            assert (kept is not None and kept[0] is result.content) == remembered
            assert ("personal_data" in result.payload) == (not remembered)
    assert lines[0] == lines[1]
    assert LONG_CLEAN in lines[0][0]["content"]
