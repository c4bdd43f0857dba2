"""Context policies that hold on real runs (issue 16): cases 28 and 31 of ../shared/cases,
pairing-safe assembly, degradation under pressure, the facts index."""

import json
import re
from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.context import ContextBuilder, ContextPolicy, injection_records
from harnesskit.context.builder import pair_safe
from harnesskit.messages import Message, ToolCall
from harnesskit.testing import reply

CASES = Path(__file__).parents[2] / "../shared/cases"


def load_case(name):
    path = CASES / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"case file {path} absent (../shared exists only in the dev setup)")
    return json.loads(path.read_text(encoding="utf-8"))


def valid_sequence(messages):
    """Chat-completions pairing: each tool message answers a call of the assistant message
    just before its block; every call is answered before the next non-tool message."""
    open_ids = []
    for m in messages:
        if m.role == "tool":
            assert m.tool_call_id in open_ids, f"orphan tool message {m.tool_call_id}"
            open_ids.remove(m.tool_call_id)
            continue
        assert not open_ids, f"calls without an answer: {open_ids}"
        if m.role == "assistant" and m.tool_calls:
            open_ids = [c.id for c in m.tool_calls]
    assert not open_ids, f"calls without an answer: {open_ids}"


def case28_log():
    case = load_case("28-summary-cut-orphans-tools")
    log = hk.EventLog()
    for m in case["input"]["messages"]:
        if m["role"] == "user":
            log.append("user.message", {"content": m["content"]}, source="user")
        elif m["role"] == "assistant":
            body = {k: m[k] for k in ("role", "content", "tool_calls") if k in m}
            log.append("model.response", {"message": body}, source="model")
        else:
            log.append(
                "tool.result",
                {
                    "tool": "read_file",
                    "tool_call_id": m["tool_call_id"],
                    "ok": True,
                    "content": m["content"],
                },
                source="tool",
            )
    return log


def keep_last(n):
    """Case 28's policy (compress, keep the last messages) as a harnesskit policy."""
    doc = ContextPolicy.resolve("summary").to_dict()
    doc.update(name="keep-last", limits={**doc["limits"], "max_events": n, "recent_turns": 1})
    return doc


def test_case28_ten_parallel_calls_stay_with_their_assistant_message():
    log = case28_log()
    prompt = ContextBuilder(keep_last(6)).build(log)
    msgs = list(prompt.messages)
    valid_sequence(msgs)
    tools = [m for m in msgs if m.role == "tool"]
    assistant = next(m for m in msgs if m.role == "assistant")
    # m1 and all ten results are kept together, immediately after the assistant message
    assert len(tools) == 10 and len(assistant.tool_calls) == 10
    start = msgs.index(assistant)
    assert msgs[start + 1 : start + 11] == tools
    text = "\n".join(m.content or "" for m in msgs)
    for i in range(1, 11):
        assert text.count(f"Title {i:02d}") == 1
    blocks = re.findall(r"^### (.+)$", prompt.summary, re.M)
    assert blocks == [
        "Confirmed",
        "Failed",
        "Conflicts",
        "Pending",
        "Forbidden actions",
        "Next step",
    ]
    # the limit could not be met without cutting the pair: the builder says so
    assert any(d.startswith("limit.max_events") for d in prompt.degraded)


def case31_log(n_reads=34):
    case = load_case("31-summary-loses-completion")
    events = case["input"]["events"]
    log = hk.EventLog()
    log.append("user.message", {"content": events[0]["content"], "step": 3}, source="user")
    call, result = events[1], events[2]
    msg = {"role": "assistant", "content": None, "tool_calls": [
        {"id": call["call_id"], "type": "function", "function": {
            "name": "deploy", "arguments": json.dumps(call["arguments"])}}]}  # fmt: skip
    log.append("model.response", {"message": msg, "step": 5}, source="model")
    c = log.append(
        "tool.call",
        {"tool": "deploy", "tool_call_id": call["call_id"], "arguments": call["arguments"]},
        source="model",
    )
    log.append(
        "tool.result",
        {
            "tool": "deploy",
            "tool_call_id": call["call_id"],
            "ok": True,
            "step": 5,
            "content": json.dumps(result["result"]),
        },  # fmt: skip
        source="tool",
        parent_id=c.event_id,
    )
    for i in range(n_reads):  # the 34 unrelated read-only steps
        cid = f"call_r{i}"
        msg = {"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {
                "name": "read_logs", "arguments": json.dumps({"deployment_id": f"x-{i}"})}}]}  # fmt: skip
        log.append("model.response", {"message": msg, "step": 6 + i}, source="model")
        c = log.append(
            "tool.call",
            {"tool": "read_logs", "tool_call_id": cid, "arguments": {"deployment_id": f"x-{i}"}},
            source="model",
        )
        log.append(
            "tool.result",
            {
                "tool": "read_logs",
                "tool_call_id": cid,
                "ok": True,
                "step": 6 + i,
                "content": json.dumps({"lines": ["read only"] * 40}),
            },  # fmt: skip
            source="tool",
            parent_id=c.event_id,
        )
    log.append("user.message", {"content": events[-1]["content"], "step": 41}, source="user")
    return log


def sections(summary):
    out, key = {}, None
    for line in summary.splitlines():
        if line.startswith("### "):
            key = line[4:]
            out[key] = []
        elif key:
            out[key].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def test_case31_the_completed_deploy_survives_compaction_as_confirmed():
    prompt = ContextBuilder("summary").build(case31_log())
    blocks = sections(prompt.summary)
    confirmed = blocks["Confirmed"]
    item = re.search(r"\[TOOL-\d+ \(untrusted\)\] deploy[^;]*", confirmed).group()
    for needle in ("release=1.4", "env=staging", "step 5", "deployment_id=dep-0007"):
        assert needle in item, (needle, item)
    assert "deploy release 1.4" not in blocks["Pending"].lower()
    # every completion is kept: the newest in full, the earlier ones counted with their ids
    assert re.search(r"\(\+\d+ earlier completions: deploy ×1, read_logs ×\d+\)", confirmed)
    labels = set(re.findall(r"TOOL-\d+", confirmed))
    results = list(case31_log().of_type("tool.result"))
    assert labels == {e.label for e in results}


def test_case31_a_reissued_deploy_returns_the_recorded_result_and_runs_once():
    calls = []

    @hk.tool(risk="write", idempotency_fields=("release", "env"))
    def deploy(release: str, env: str) -> dict:
        """Start a deployment."""
        calls.append((release, env))
        return {"deployment_id": "dep-0007", "status": "succeeded"}

    model = hk.ScriptedModel(
        [
            reply.tool_call("deploy", release="1.4", env="staging"),
            reply.tool_call("deploy", env="staging", release="1.4"),
            reply.text("done"),
        ]
    )
    run = hk.Harness([deploy], model, policy="summary").start("Deploy release 1.4.").run()
    assert calls == [("1.4", "staging")]
    results = run.log.of_type("tool.result")
    assert results[-1].payload.get("duplicate") is True
    assert "dep-0007" in sections(ContextBuilder("summary").build(run.log).summary)["Confirmed"]


def test_a_plan_is_kept_as_confirmed_versus_pending():
    log = hk.EventLog()
    log.append("user.message", {"content": "ship it"}, source="user")
    todos = [
        {"content": "write the migration", "status": "completed"},
        {"content": "run the tests", "status": "in_progress"},
        {"content": "deploy", "status": "pending"},
    ]
    c = log.append(
        "tool.call", {"tool": "todo_write", "tool_call_id": "t1", "arguments": {"todos": todos}}
    )
    log.append(
        "tool.result",
        {"tool": "todo_write", "tool_call_id": "t1", "ok": True, "content": '"saved"'},
        source="tool",
        parent_id=c.event_id,
    )
    blocks = sections(ContextBuilder("summary").build(log).summary)
    assert "plan: write the migration (completed)" in blocks["Confirmed"]
    assert "plan: run the tests (in_progress)" in blocks["Pending"]
    assert "plan: deploy (pending)" in blocks["Pending"]
    assert "run the tests" not in blocks["Confirmed"]


def test_pair_safe_relabels_an_orphan_and_answers_a_split_call():
    call = ToolCall(id="a", name="f", arguments={})
    msgs = [
        Message(role="user", content="go"),
        Message(role="tool", content="orphan text", tool_call_id="zzz"),
        Message(role="assistant", content=None, tool_calls=(call, ToolCall(id="b", name="f"))),
        Message(role="tool", content="A", tool_call_id="a"),
        Message(role="user", content="next"),
    ]
    fixed, repairs = pair_safe(msgs)
    valid_sequence(fixed)
    assert [m.role for m in fixed] == ["user", "user", "assistant", "tool", "tool", "user"]
    assert "orphan text" in fixed[1].content and "untrusted data" in fixed[1].content
    assert fixed[4].tool_call_id == "b" and "no result" in fixed[4].content
    assert len(repairs) == 2
    assert "zzz" in repairs[0] and "re-labelled" in repairs[0]
    assert "b" in repairs[1] and "stub" in repairs[1]
    assert pair_safe(fixed) == (fixed, [])


def test_an_orphan_tool_result_in_a_history_is_repaired_and_recorded():
    log = hk.EventLog()
    log.append("user.message", {"content": "start"}, source="user")
    # a tool result whose assistant message is not in the log (an imported history)
    log.append(
        "tool.result",
        {"tool": "f", "tool_call_id": "lost", "ok": True, "content": "ORPHAN-TEXT"},
        source="tool",
    )
    builder = ContextBuilder({"name": "win", "include": ["*"], "limits": {"recent_turns": 3}})
    prompt = builder.build(log)
    valid_sequence(prompt.messages)
    assert prompt.repairs and "lost" in prompt.repairs[0]
    builder.record(log, prompt)
    record = log.last("context.injected")
    assert record.payload["repairs"] == list(prompt.repairs)


def test_default_never_refuses_many_user_turns_and_loses_no_tool_value():
    log = hk.EventLog()
    log.append("task.contract", {"system_prompt": "S", "task": {"goal": "g"}}, source="system")
    for i in range(30):  # far more user turns than max_events
        log.append(
            "user.message", {"content": f"turn {i}: please look up R{i:04d}X"}, source="user"
        )
        msg = {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "get", "arguments": "{}"}}]}  # fmt: skip
        log.append("model.response", {"message": msg}, source="model")
        body = {"id": f"R{i:04d}X", "pad": "x" * 500, "certificate": f"certificate_{7000000 + i}"}
        log.append(
            "tool.result",
            {"tool": "get", "tool_call_id": f"c{i}", "ok": True, "content": json.dumps(body)},
            source="tool",
        )
    prompt = ContextBuilder("default").build(log)
    text = "\n".join(m.content or "" for m in prompt.messages)
    for i in range(30):
        assert f"certificate_{7000000 + i}" in text  # every value a tool returned
        assert f"turn {i}:" in text  # every user turn
    valid_sequence(prompt.messages)
    assert re.search(r"- \[TOOL-\d+\] get: certificate=certificate_7000000", text)


def test_under_token_pressure_older_user_turns_are_quoted_not_dropped():
    log = hk.EventLog()
    for i in range(6):
        log.append("user.message", {"content": f"U{i} " + "words " * 200}, source="user")
        msg = {"role": "assistant", "content": f"noted {i}"}
        log.append("model.response", {"message": msg}, source="model")
    doc = ContextPolicy.resolve("default").to_dict()
    doc.update(name="tight", limits={**doc["limits"], "max_prompt_tokens": 900})
    prompt = ContextBuilder(doc).build(log)
    assert prompt.token_estimate <= 900
    text = "\n".join(m.content or "" for m in prompt.messages)
    for i in range(6):
        assert f"U{i} " in text  # none dropped silently
    quoted = [d for d in prompt.degraded if d.startswith("budget.user_turn")]
    assert quoted and "quoted in part" in quoted[0]
    assert "earlier user turn, quoted in part under token pressure" in text
    doc["limits"]["max_prompt_tokens"] = 50  # the contract itself cannot fit: refuse
    with pytest.raises(hk.errors.ContextError, match="max_prompt_tokens=50"):
        ContextBuilder(doc).build(log)


def test_a_live_run_records_its_repairs_and_every_request_is_valid():
    turns = [reply.tool_call("echo", word=f"w{i}") for i in range(5)] + [reply.text("done")]
    model = hk.ScriptedModel(turns)

    @hk.tool
    def echo(word: str) -> str:
        """Echo."""
        return word

    run = hk.Harness([echo], model, policy="default").start("go").run()
    for request in model.requests:
        valid_sequence(request.messages)
    assert len(injection_records(run.log)) == len(model.requests)
