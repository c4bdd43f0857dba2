import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import harnesskit as hk
from harnesskit.context.builder import InjectionRecord
from harnesskit.testing import reply


@hk.tool
def echo(text: str) -> str:
    """Echo."""
    return text


def test_log_reads_back_equal_and_records_exact_requests(tmp_path):
    turns = [reply.tool_call("echo", text=f"t{i}") for i in range(4)] + [reply.text("done")]
    model = hk.ScriptedModel(turns)
    h = hk.Harness([echo], model, log_dir=tmp_path, system_prompt="be brief")
    run = h.start("go", run_id="r1").run()
    back = hk.EventLog.read(tmp_path / "r1.jsonl")
    assert back.events == run.log.events
    requests = back.of_type("model.request")
    assert len(requests) == len(model.requests) == 5
    for ev, sent in zip(requests, model.requests, strict=True):
        assert back.request_messages(ev.event_id) == [m.to_openai() for m in sent.messages]
        assert back.request_tools(ev.event_id) == list(sent.tools)
    # later requests are stored as a delta: size per request stays flat
    assert "prefix_of" in requests[-1].payload and "tools_from" in requests[-1].payload
    # the reply and the result it adds are already logged: referenced by id, not repeated
    refs = requests[-1].payload["new_messages"]
    assert [back[i].type for i in refs] == ["model.response", "tool.result"]
    types = [e.type for e in back]
    assert types[:5] == [
        "task.contract",
        "user.message",
        "context.injected",
        "model.request",
        "model.response",
    ]
    assert types[-1] == "run.finished"


def test_every_request_has_one_injection_record_matching_what_was_sent():
    model = hk.ScriptedModel([reply.tool_call("echo", text="a"), reply.text("b")])
    run = hk.Harness([echo], model).start("go").run()
    log = run.log
    for req in log.of_type("model.request"):
        inj = log[req.event_id - 1]
        assert inj.type == "context.injected"
        sent = log.request_messages(req.event_id)
        contents = [log[i] for i in InjectionRecord.from_log(log, inj.event_id).selected]
        assert len(contents) == len(sent)


def test_frame_one_row_per_event():
    run = (
        hk.Harness([echo], hk.ScriptedModel([reply.tool_call("echo", text="a"), reply.text("b")]))
        .start("go")
        .run()
    )
    df = run.log.frame()
    assert len(df) == len(run.log)
    assert list(df["type"]) == [e.type for e in run.log]
    assert df.loc[df.type == "tool.result", "tool"].tolist() == ["echo"]


def test_unknown_event_type_and_reused_path_are_refused(tmp_path):
    log = hk.EventLog(tmp_path / "a.jsonl")
    with pytest.raises(hk.UsageError, match="unknown event type"):
        log.append("made.up")
    log.append("user.message", {"content": "x"})
    log.close()
    with pytest.raises(hk.UsageError, match="append-only"):
        hk.EventLog(tmp_path / "a.jsonl")


def test_truncated_last_line_is_set_aside_but_corrupt_middle_fails(tmp_path):
    p = tmp_path / "l.jsonl"
    with hk.EventLog(p) as log:
        for i in range(3):
            log.append("user.message", {"content": str(i)})
    data = p.read_text()
    p.write_text(data + '{"v":2,"event_id":4,"ty')
    back = hk.EventLog.read(p)
    assert len(back) == 3 and back.incomplete_tail.startswith('{"v":2')
    lines = data.splitlines()
    p.write_text("\n".join([lines[0], "garbage", lines[2]]) + "\n")
    with pytest.raises(hk.errors.CorruptLogError, match=":2:"):
        hk.EventLog.read(p)


def test_newer_schema_version_is_refused(tmp_path):
    p = tmp_path / "n.jsonl"
    p.write_text(json.dumps({"v": 99, "event_id": 1, "type": "user.message"}) + "\n")
    with pytest.raises(hk.errors.SchemaVersionError, match="newer"):
        hk.EventLog.read(p)


KILL_SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    import harnesskit as hk
    from harnesskit.testing import reply

    @hk.tool
    def work(i: int) -> dict:
        '''Work.'''
        if i == int(sys.argv[2]):
            print("STEP", i, flush=True)
            time.sleep(60)   # killed here, mid-step
        return {"i": i, "payload": "x" * 200}

    turns = [reply.tool_call("work", i=i) for i in range(50)]
    h = hk.Harness([work], hk.ScriptedModel(turns), log_dir=sys.argv[1], limits=hk.Limits(max_steps=100))
    h.start("go", run_id="killed").run()
""")


@pytest.mark.parametrize("kill_at", [0, 7, 23])
def test_sigkilled_run_leaves_a_log_whose_finished_steps_read_back(tmp_path, kill_at):
    script = tmp_path / "agent.py"
    script.write_text(KILL_SCRIPT)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path), str(kill_at)],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    assert line.strip() == f"STEP {kill_at}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stdout.close()
    log = hk.EventLog.read(tmp_path / "killed.jsonl")
    results = log.of_type("tool.result")
    assert [json.loads(r.payload["content"])["i"] for r in results] == list(range(kill_at))
    # only the step in flight is lost: every step on disk is whole (each call has its result)
    called = [e.payload["tool_call_id"] for e in log.of_type("tool.call")]
    assert called == [r.payload["tool_call_id"] for r in results]
    assert log.incomplete_tail is None
    for req in log.of_type("model.request"):
        assert len(log.request_messages(req.event_id)) == req.payload["n_messages"]


def test_secrets_never_reach_log_disk_or_prompt(tmp_path):
    @hk.tool
    def read_config() -> dict:
        """Read config."""
        return {"api_key": "sk-proj-abcdefghijklmnopqrstuv", "owner": "ann@example.com", "n": 3}

    model = hk.ScriptedModel([reply.tool_call("read_config"), reply.text("done")])
    run = (
        hk.Harness([read_config], model, log_dir=tmp_path)
        .start("password: hunter22", run_id="s")
        .run()
    )
    text = (tmp_path / "s.jsonl").read_text()
    for secret in ("sk-proj-abcdefghijklmnopqrstuv", "hunter22"):
        assert secret not in text
        assert secret not in json.dumps([m.to_openai() for m in model.requests[1].messages])
    assert "[REDACTED:api_key]" in text
    # personal data is kept exact and marked (R-S1), not rewritten; its data class is unchanged
    assert "ann@example.com" in text and "[REDACTED:email]" not in text
    assert run.log.last("tool.result").payload["personal_data"] == ["email"]
    assert run.log.last("tool.result").data_class == "internal"  # still in the default context
    assert hk.EventLog.read(tmp_path / "s.jsonl").events == run.log.events


def test_redaction_can_be_turned_off():
    log = hk.EventLog(redactor=None)
    log.append("user.message", {"content": "ann@example.com"})
    assert log.events[0].payload["content"] == "ann@example.com"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("key sk-ant-REDACTME0123456789abcd", "api_key"),
        ("Authorization: Bearer abcdefghijklmnopqrstuvwx", "bearer"),
        ('{"password": "hunter22"}', "password"),
        ("-----BEGIN RSA PRIVATE KEY-----abc-----END RSA PRIVATE KEY-----", "private_key"),
    ],
)
def test_redactor_kinds(text, kind):
    from harnesskit.log.redact import Redactor

    out, counts = Redactor().redact(json.dumps({"t": text}))
    assert counts == {kind: 1}
    assert f"[REDACTED:{kind}]" in json.loads(out)["t"]


def test_email_is_personal_data_kept_exact_unless_asked_for():
    from harnesskit.log.redact import Redactor

    text = json.dumps({"t": "write to first.last+tag@mail.example.org today"})
    assert Redactor().redact(text) == (text, {})
    assert Redactor().personal(text) == ("email",)
    out, counts = Redactor(kinds=("email",)).redact(text)
    assert counts == {"email": 1} and "[REDACTED:email]" in out


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [  # forms the fresh-user test found in clear on disk
        ("SECRET_KEY='django-insecure-x1y2z3w4'", "django-insecure-x1y2z3w4", "password"),
        ('{"secret_key": "abcdefgh1234"}', "abcdefgh1234", "password"),
        ("X-Api-Key: abcdef1234567890", "abcdef1234567890", "password"),
        ('{"api-key": "abcdef1234567890"}', "abcdef1234567890", "password"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", "bearer"),
        ('{"password": "correct horse battery"}', "horse battery", "password"),
        ('{"password": "ab,cdefgh12"}', "cdefgh12", "password"),
    ],
)
def test_redactor_takes_the_whole_secret(tmp_path, text, secret, kind):
    log = hk.EventLog(tmp_path / "r.jsonl")
    log.append("tool.result", {"tool": "t", "tool_call_id": "c", "ok": True, "content": text})
    log.close()
    on_disk = (tmp_path / "r.jsonl").read_text()
    assert secret not in on_disk and f"[REDACTED:{kind}]" in on_disk


def test_a_url_credential_already_redacted_keeps_its_kind():
    from harnesskit.log.redact import Redactor

    text = "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x/y"
    out, counts = Redactor().redact(text)
    assert out == "git clone https://[REDACTED:api_key]@github.com/x/y"
    assert counts == {"api_key": 1}


def test_email_alone_on_an_event_is_marked_personal_data(tmp_path):
    # an e-mail with no credential beside it is still marked (R-S1/R-S2), on disk and in memory
    log = hk.EventLog(tmp_path / "p.jsonl")
    user = log.append("user.message", {"content": "reach me at a.b@example.com"})
    plain = log.append("user.message", {"content": "no address here"})
    log.close()
    assert log[user.event_id].payload["personal_data"] == ["email"]
    assert "personal_data" not in log[plain.event_id].payload
    again = hk.EventLog.read(tmp_path / "p.jsonl")
    assert again[user.event_id].payload["personal_data"] == ["email"]
    assert again[user.event_id].payload["content"] == "reach me at a.b@example.com"


def test_redactor_leaves_ordinary_text_alone():
    from harnesskit.log.redact import Redactor

    text = json.dumps({"t": "reservation 4WQ150, flight HAT136 on 2024-05-20, gift_card_7219486"})
    assert Redactor().redact(text) == (text, {})


@pytest.mark.parametrize(
    "lists",
    [
        [(1, 2), (1, 2, 5, 7), (1, 2, 5, 7, 10, 12)],  # a growing history
        [(1, 2, 5), (2, 5, 7), (5, 7, 10, 12), (12,), (12, 14)],  # a sliding window
        [(1, 2, 5), (1, 5), (7, 1), (), (3,)],  # anything else is written in full
    ],
)
def test_selected_ids_are_written_as_deltas_and_read_back_exactly(lists):
    from harnesskit.context._record import selected_fields, selected_ids

    log = hk.EventLog(None)
    prev_id, prev = None, ()
    for ids in lists:
        fields = selected_fields(log, prev_id, prev, ids)
        e = log.append("context.injected", {"n_selected": len(ids), **fields})
        assert selected_ids(log, e) == ids
        assert InjectionRecord.from_log(log, e.event_id).selected == ids
        prev_id, prev = e.event_id, ids
    if lists[0] == (1, 2):
        assert all("selected" not in e.payload for e in log.events[1:])


def test_a_long_run_writes_context_records_of_flat_size(tmp_path):
    model = hk.ScriptedModel([reply.tool_call("echo", text=str(i)) for i in range(40)])
    run = hk.Harness([echo], model, log_dir=tmp_path).start("go").run()
    lines = [json.loads(x) for x in run.log.path.read_text(encoding="utf-8").splitlines()]
    records = [x for x in lines if x["type"] == "context.injected"]
    assert len(records) > 30 and all("selected" not in x["payload"] for x in records[1:])
    back = hk.EventLog.read(run.log.path)
    for x in records:
        rec = InjectionRecord.from_log(back, x["event_id"])
        assert len(rec.selected) == x["payload"]["n_selected"]
        assert [back[i].type for i in rec.selected][:2] == ["task.contract", "user.message"]
