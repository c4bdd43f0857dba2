"""Every bug-report case of `../shared/cases/` as a test, through the public API.

HTTP inputs are served by a real loopback server that enforces the case's provider rule plus
the rules strict providers apply to every request (tests/support/cases.py). Each case's
`must` / `must_not` statements are asserted in its check function below, named after the case.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

import harnesskit as hk
from harnesskit.context import injection_records
from harnesskit.log import (
    ArtifactCreatedEvent,
    ContextInjectedEvent,
    ModelResponseEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from harnesskit.models import base
from harnesskit.models._retry import RetryPolicy
from harnesskit.testing import reply
from tests.support import cases as C

IDS = C.case_ids()
pytestmark = pytest.mark.skipif(
    not IDS, reason=f"the bug-report cases are not present at {C.CASES_DIR}"
)


@pytest.fixture(autouse=True)
def _allow_loopback(monkeypatch):
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)


def model_for(srv: C.StrictProvider, **kw: Any) -> Any:
    kw.setdefault("retry", RetryPolicy(max_retries=0))
    return hk.get_model("openai-compat:placeholder-model", base_url=srv.url, **kw)


def harness(case, calls, srv, behaviours=None, *, model_kw=None, **kw) -> hk.Harness:
    tools = C.tools_of(case, calls, behaviours)
    kw.setdefault("limits", hk.Limits(max_steps=case["input"].get("config", {}).get("max_steps")))
    return hk.Harness(tools, model_for(srv, **(model_kw or {})), **kw)


def one_response_turns(case) -> list[dict[str, Any]]:
    """A single-response case, followed by a closing text answer."""
    closing = {
        "status": 200,
        "body": {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2},
        },
    }
    return [case["input"]["response"], closing]


def results(run) -> dict[str, ToolResultEvent]:
    return {e.tool_call_id: e for e in C.events(run, ToolResultEvent)}


def body_of(result: ToolResultEvent) -> dict[str, Any]:
    return json.loads(result.content)


def assert_clean(srv: C.StrictProvider) -> None:
    assert srv.violations == [], srv.violations


# -- malformed_tool_call ---------------------------------------------------------------------


def check_01_fenced_json_arguments(case, tmp_path):
    calls = C.Calls()
    tickets = tmp_path / "tickets.jsonl"

    def create_ticket(**args):
        with tickets.open("a") as f:
            f.write(json.dumps(args) + "\n")
        return {"ticket_id": "T-1"}

    with C.StrictProvider(one_response_turns(case)) as srv:
        run = harness(
            case,
            calls,
            srv,
            {"create_ticket": create_ticket},
            gate=hk.Gate(policy={"write": "allow"}),
        ).run("file the tickets")
    assert run.finish_reason == "stop"
    assert calls.of("create_ticket") == [
        {"title": "Printer on floor 2 offline", "priority": "high"}
    ]
    assert len(tickets.read_text().splitlines()) == 1
    (call_a,) = [e for e in C.events(run, ToolCallEvent) if e.tool_call_id == "call_h01a"]
    assert "fence" in call_a.payload["repair"]
    assert (
        call_a.raw_arguments
        == case["input"]["response"]["body"]["choices"][0]["message"]["tool_calls"][0]["function"][
            "arguments"
        ]
    )
    b = body_of(results(run)["call_h01b"])
    assert b["ok"] is False and b["error_type"] in ("invalid_argument", "truncated_call")
    assert b["message"] and "incomplete" in b["hint"]
    second = srv.requests[1]["messages"]
    i = next(i for i, m in enumerate(second) if m.get("tool_calls"))
    assert [m.get("tool_call_id") for m in second[i + 1 : i + 3]] == ["call_h01a", "call_h01b"]
    assert_clean(srv)


def check_03_python_dict_single_quotes(case, tmp_path):
    calls = C.Calls()
    host = {"get_host_config": lambda host, verbose=False: {"host": host, "cores": 4}}
    for v in case["input"]["variants"]:
        turn = {
            "status": 200,
            "body": {
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {
                                    "id": v["tool_call_id"],
                                    "type": "function",
                                    "function": {"name": v["name"], "arguments": v["arguments"]},
                                }
                            ],
                        },
                        "finish_reason": "tool_calls",
                    }
                ]
            },
        }
        closing = {"status": 200, "body": {"choices": [{"message": {"content": "ok"}}]}}
        with C.StrictProvider([turn, closing]) as srv:
            run = harness(case, calls, srv, host, log_dir=tmp_path).run("config?")
        assert run.finish_reason == "stop"
        assert_clean(srv)
        (call,) = C.events(run, ToolCallEvent)
        r = results(run)[v["tool_call_id"]]
        if v["tool_call_id"] == "call_h03b":
            assert call.arguments == {"host": "owner's-laptop"} and r.ok
        else:
            b = body_of(r)
            repaired = r.ok and call.arguments == {"host": "srv-01", "verbose": True}
            if not repaired:
                assert b["error_type"] == "invalid_argument"
                assert "not valid JSON" in b["message"]
                assert "double-quoted" in b["hint"]
            assert call.raw_arguments == v["arguments"]
            on_disk = (tmp_path / f"{run.state.run_id}.jsonl").read_text()
            assert json.dumps(v["arguments"])[1:-1] in on_disk
    assert calls.of("get_host_config") == [{"host": "owner's-laptop"}]


def check_05_trailing_data_after_json(case, tmp_path):
    calls = C.Calls()
    with C.StrictProvider(case["input"]["model_turns"]) as srv:
        run = harness(case, calls, srv, {"enable_tools": lambda names: {"enabled": names}}).run(
            "enable search"
        )
    assert run.finish_reason == "stop"
    assert calls.of("enable_tools") == [{"names": ["search_docs"]}]
    (call,) = C.events(run, ToolCallEvent)
    assert "trailing" in call.payload["repair"] and call.raw_arguments.endswith("</tool_call>")
    (echo,) = [m for m in srv.requests[1]["messages"] if m.get("tool_calls")]
    assert json.loads(echo["tool_calls"][0]["function"]["arguments"]) == {"names": ["search_docs"]}
    assert srv.statuses == [200, 200]
    assert_clean(srv)


# -- invented_tool ---------------------------------------------------------------------------


def check_07_unknown_tool_similar_name(case, tmp_path):
    calls = C.Calls()
    sites = {"inventory_get_sites": lambda: {"sites": ["north", "south"]}}
    with C.StrictProvider(case["input"]["model_turns"]) as srv:
        run = harness(case, calls, srv, sites).run("which sites?")
    b = body_of(results(run)["call_h07a"])
    assert b["ok"] is False and b["error_type"] == "unknown_tool"
    assert "inventory_list_sites" in b["message"]
    names = b["hint"].split(":", 1)[1]
    assert names.strip().startswith("inventory_get_sites")
    assert calls.of("inventory_get_sites") == [{}]
    assert run.finish_reason == "stop" and len(srv.requests) == 3
    assert_clean(srv)


def check_09_unknown_and_valid_same_turn(case, tmp_path):
    calls = C.Calls()
    weather = {"get_weather": lambda city: {"city": city, "temp_c": 18}}
    with C.StrictProvider(case["input"]["model_turns"]) as srv:
        run = harness(case, calls, srv, weather, limits=hk.Limits(max_steps=8)).run("weather?")
    assert calls.of("get_weather") == [{"city": "Springfield"}, {"city": "Shelbyville"}]
    r = results(run)
    assert r["c_a1"].ok and r["c_a2"].ok
    assert r["c_b1"].error_type == r["c_b2"].error_type == "unknown_tool"
    for n, (a, b) in ((1, ("c_a1", "c_b1")), (2, ("c_a2", "c_b2"))):
        sent = srv.requests[n]["messages"]
        ids = [m.get("tool_call_id") for m in sent if m.get("role") == "tool"]
        assert ids.index(a) + 1 == ids.index(b)
        assert C.tool_message(srv.requests[n], a)["city"]  # the result reached the model
    assert run.finish_reason == "stop" and len(srv.requests) == 3
    assert_clean(srv)


def check_10_invented_tool_circuit_breaker(case, tmp_path):
    calls = C.Calls()
    with C.StrictProvider(case["input"]["model_turns"]) as srv:
        run = harness(case, calls, srv, limits=hk.Limits(max_steps=10)).run("find TODOs")
    r = results(run)
    assert [r[g].error_type for g in ("g1", "g2", "g3")] == ["unknown_tool"] * 3
    b = body_of(r["g4"])
    assert b["error_type"] == "circuit_open"
    assert "grep_files" in b["message"] and "disabled" in b["message"]
    for req in srv.requests[3:]:  # every request after g3's failure
        prompt = json.dumps(req["messages"])
        assert "grep_files failed 3 times in a row" in prompt
        assert "disabled for the rest of this run" in prompt  # i.e. unavailable
    assert run.finish_reason == "stop" and len(srv.requests) == 5
    # the circuit-open record: the result that opened it, naming the tool and the error type
    opened = [e for e in C.events(run, ToolResultEvent) if e.circuit_opened]
    assert [(e.tool, e.error_type) for e in opened] == [("grep_files", "unknown_tool")]
    assert_clean(srv)


# -- id_pairing ------------------------------------------------------------------------------


def check_12_parallel_extra_user_content(case, tmp_path):
    calls = C.Calls()

    def render_chart(series, ctx: hk.ToolContext):
        ctx.emit("user.message", {"content": "attachment image_ref chart-0001.png"})
        return {"ok": True}

    tools = C.tools_of(case, calls, {"get_total": lambda series: {"total": 1200}})
    chart = hk.Tool(
        name="render_chart",
        description="renders a chart",
        parameters=case["input"]["tools"][0]["parameters"],
        fn=render_chart,
        context_param="ctx",
    )
    with C.StrictProvider(case["input"]["model_turns"]) as srv:
        run = hk.Harness([chart, tools[1]], model_for(srv)).run("chart and total")
    assert run.finish_reason == "stop"
    sent = srv.requests[1]["messages"]
    i = next(i for i, m in enumerate(sent) if m.get("tool_calls"))
    assert [m.get("tool_call_id") for m in sent[i + 1 : i + 3]] == ["c1", "c2"]
    later = [m for m in sent[i + 3 :] if "chart-0001.png" in str(m.get("content"))]
    assert len(later) == 1 and later[0]["role"] == "user" and "c1" in later[0]["content"]
    assert_clean(srv)


def check_14_trim_splits_tool_pair(case, tmp_path):
    msgs = {m["mid"]: m for m in case["input"]["messages"]}
    limit = case["input"]["policy"]["max_prompt_tokens"]

    pad = {mid: text_of(m["est_tokens"] * 4, mid) for mid, m in msgs.items()}

    @hk.tool
    def read_log(name: str) -> str:
        """Read a log."""
        return pad["m3"]

    @hk.tool
    def grep(pattern: str) -> str:
        """Grep."""
        return msgs["m5"]["content"] + pad["m5"][: 1600 - len(msgs["m5"]["content"])]

    model = hk.ScriptedModel(
        [
            reply.tool_call("read_log", id="t1", name="nightly.log"),
            reply.tool_call("grep", id="t2", pattern="ERROR"),
            reply.text(msgs["m6"]["content"] + " " + pad["m6"][:360]),
            reply.text("Raise the quota."),
        ]
    )
    policy = hk.ContextPolicy.from_dict(
        {
            "name": "trim",
            "version": "1",
            "include": ["*"],
            "exclude": [],
            "limits": {"max_prompt_tokens": limit, "recent_turns": 2},
            "require": [],
            "summary": False,
        }
    )
    system = msgs["m0"]["content"] + " " + pad["m0"][:760]
    h = hk.Harness([read_log, grep], model, policy=policy, system_prompt=system)
    run = h.run(msgs["m1"]["content"] + " " + pad["m1"][:360])
    run.send(msgs["m7"]["content"] + " " + pad["m7"][:170])
    run.run()
    sent = [m.to_openai() for m in model.requests[-1].messages]
    assert C.rule_violations({"messages": sent}) == []
    ctx = C.events(run, ContextInjectedEvent)[-1]
    assert ctx.payload["request_tokens"] <= limit + ctx.payload["tool_tokens"]
    text = json.dumps(sent)
    assert system in text and msgs["m1"]["content"] in text  # pinned
    ids = [e.tool_call_id for e in C.events(run, ToolResultEvent)]
    kept = {m.get("tool_call_id") for m in sent if m["role"] == "tool"}
    record = injection_records(run.log)[-1]  # the full excluded map, deltas resolved
    assert record.event_id == ctx.event_id
    excluded = record.excluded
    results_by_call = {e.tool_call_id: e for e in C.events(run, ToolResultEvent)}
    calls_by_id = {e.tool_call_id: e for e in C.events(run, ToolCallEvent)}
    assert kept != {"t1", "t2"}, "the prompt is over budget, so something had to go"
    dropped = 0
    for call_id in ids:
        if call_id in kept:
            continue
        result = results_by_call[call_id]
        response = run.log[calls_by_id[call_id].parent_id]
        result_reason, response_reason = (
            excluded.get(result.event_id),
            excluded.get(response.event_id),
        )
        assert response_reason, excluded  # its assistant message is not sent
        if result_reason is None:  # "replaced by a summary that is not a tool-role message":
            # the result is a labelled item of the context block (or named in the summary),
            # and the response's reason says that this result carries its call
            assert result.event_id in (*record.selected, *record.summarized), record
            assert f"its calls are shown with {result.label}" in response_reason, excluded
            continue
        dropped += 1  # dropped: the pair shares one reason, naming both halves
        assert response_reason == result_reason, excluded
        assert response.label in result_reason and result.label in result_reason, excluded
    assert dropped, "the over-budget pair went as a unit"


def check_16_empty_tool_call_id(case, tmp_path):
    calls = C.Calls()
    with C.StrictProvider(case["input"]["model_turns"]) as srv:
        run = harness(case, calls, srv, {"get_current_time": lambda: "12:00"}).run("time?")
    assert calls.of("get_current_time") == [{}]
    (call,) = C.events(run, ToolCallEvent)
    assert call.tool_call_id
    first = C.events(run, ModelResponseEvent)[0]
    assert first.payload["id_replacements"] == {call.tool_call_id: ""}
    sent = srv.requests[1]["messages"]
    (echo,) = [m for m in sent if m.get("tool_calls")]
    assert echo["tool_calls"][0]["id"] == call.tool_call_id
    assert [m["tool_call_id"] for m in sent if m.get("role") == "tool"] == [call.tool_call_id]
    assert run.finish_reason == "stop"
    assert_clean(srv)


# -- truncated_args --------------------------------------------------------------------------


def check_19_malformed_args_become_empty(case, tmp_path):
    calls = C.Calls()
    with C.StrictProvider(one_response_turns(case)) as srv:
        run = harness(case, calls, srv, log_dir=tmp_path).run("weather?")
    assert calls.of("get_weather") == []
    b = body_of(results(run)["call_1"])
    assert b["ok"] is False and b["error_type"] in ("truncated_call", "invalid_argument")
    assert "char" in b["message"]
    if b["error_type"] == "truncated_call":
        assert "max_tokens" in b["hint"] and "shorter" in b["hint"]
    (call,) = C.events(run, ToolCallEvent)
    assert call.raw_arguments == '{"city": "Spr'
    assert_clean(srv)


def check_20_max_tokens_cut_mid_args(case, tmp_path):
    calls = C.Calls()
    notes = tmp_path / "notes"

    def write_note(title, body):
        notes.mkdir(exist_ok=True)
        (notes / f"{title}.md").write_text(body)
        return {"written": title}

    for stream in (False, True):
        calls = C.Calls()
        turns = case["input"]["model_turns"]
        if stream:
            turns = [_as_sse(t) for t in turns]
        with C.StrictProvider(turns) as srv:
            run = harness(
                case,
                calls,
                srv,
                {"write_note": write_note},
                model_kw={"stream": stream},
                settings={"max_tokens": 1024},
                gate=hk.Gate(policy={"write": "allow"}),
            ).run("write the weekly note")
        b = body_of(results(run)["call_w1"])
        assert b["error_type"] == "truncated_call"
        assert "cut off" in b["message"] and "output token limit" in b["message"]
        assert "max_tokens" in b["hint"] and "1024" in b["hint"]
        assert "shorter" in b["hint"] and "raise" in b["hint"]
        assert calls.of("write_note") == [
            {"title": "weekly summary", "body": "Short version: backlog reviewed."}
        ]
        assert (notes / "weekly summary.md").read_text() == "Short version: backlog reviewed."
        assert_clean(srv)


def test_truncation_is_detected_from_completion_tokens_reaching_max_tokens(tmp_path):
    """finish_reason says tool_calls, but the usage shows the output limit was reached."""
    calls = C.Calls()
    case = {"input": {"tools": [C.load("20-max-tokens-cut-mid-args")["input"]["tools"][0]]}}
    turns = C.load("20-max-tokens-cut-mid-args")["input"]["model_turns"]
    cut = json.loads(json.dumps(turns[0]))
    cut["body"]["choices"][0]["finish_reason"] = "tool_calls"
    for stream in (False, True):
        served = [cut, turns[1], turns[2]]
        with C.StrictProvider([_as_sse(t) for t in served] if stream else served) as srv:
            run = harness(
                case, calls, srv, model_kw={"stream": stream}, settings={"max_tokens": 1024}
            ).run("note")
        b = body_of(results(run)["call_w1"])
        assert b["error_type"] == "truncated_call" and "max_tokens=1024" in b["hint"]


# -- retry_storm / other (HTTP retries) -------------------------------------------------------


def retrying_model(srv, clock, *, attempts, cap=30.0, wall=60.0, base=0.5, name="placeholder"):
    retry = RetryPolicy(
        max_retries=attempts - 1,
        initial_backoff_seconds=base,
        max_backoff_seconds=cap,
        max_retry_after_seconds=cap,
    )
    return hk.get_model(
        f"openai-compat:{name}",
        base_url=srv.url,
        retry=retry,
        sleep=clock.sleep,
        clock=clock,
        max_wait_seconds=wall,
        seed=7,
    )


def check_33_nested_retry_layers(case, tmp_path):
    cfg, clock = case["input"]["config"], C.FakeClock()
    with C.StrictProvider(case["input"]["responses"], repeat_last=True) as srv:
        model = retrying_model(
            srv, clock, attempts=cfg["max_attempts"], cap=cfg["backoff_cap_s"], wall=60
        )
        run = hk.Harness([], model).run("hello")
    assert len(srv.requests) == 4  # one logical call; the transport made no retries of its own
    assert len(clock.sleeps) == 3 and all(1 <= s <= 30 for s in clock.sleeps)
    err = run.error
    assert isinstance(err, hk.errors.RateLimitError) and isinstance(err, hk.ModelError)
    assert err.attempts == 4 and err.retry_after_seconds == 1
    assert "4 attempts" in str(err) and "Retry-After was 1s" in str(err)
    assert run.finish_reason == "error"
    retries = [e for e in run.log if e.type == "model.retry"]
    assert [e.payload["will_retry"] for e in retries] == [True, True, True, False]
    assert [e for e in run.log if e.type == "run.finished"][0].payload["error"]


def check_34_backoff_cap_and_budget(case, tmp_path):
    a, b = case["input"]["variants"]
    clock = C.FakeClock()
    with C.StrictProvider(a["responses"], repeat_last=True) as srv:
        model = retrying_model(
            srv,
            clock,
            attempts=10_000,
            cap=a["config"]["backoff_cap_s"],
            wall=a["config"]["wall_clock_s"],
            base=a["config"]["backoff_base_s"],
        )
        run = hk.Harness([], model).run("hello")
    assert clock.sleeps and all(0 < s <= 30 for s in clock.sleeps)
    assert sum(clock.sleeps) <= 120
    err = run.error
    assert isinstance(err, hk.errors.RateLimitError)
    assert f"{len(srv.requests)} attempts" in str(err) and "s" in str(err).split("in ")[-1]
    assert err.attempts == len(srv.requests)
    assert err.elapsed_seconds == pytest.approx(sum(clock.sleeps))

    clock = C.FakeClock()
    with C.StrictProvider(b["responses"], repeat_last=True) as srv:
        model = retrying_model(
            srv,
            clock,
            attempts=b["config"]["max_attempts"],
            cap=b["config"]["backoff_cap_s"],
            wall=b["config"]["wall_clock_s"],
        )
        run = hk.Harness([], model).run("hello")
    assert len(srv.requests) == 1 and clock.sleeps == []
    assert isinstance(run.error, hk.errors.RateLimitError) and "86400" in str(run.error)


def check_36_fallback_restarts_retries(case, tmp_path):
    cfg, clock = case["input"]["config"], C.FakeClock()
    responses = case["input"]["responses"]
    with (
        C.StrictProvider(responses["primary-model"], repeat_last=True) as p,
        C.StrictProvider(responses["fallback-model"], repeat_last=True) as f,
    ):
        chain = hk.models.FallbackModel(
            [
                retrying_model(
                    p, clock, attempts=3, wall=cfg["wall_clock_s"], name="primary-model"
                ),
                retrying_model(
                    f, clock, attempts=3, wall=cfg["wall_clock_s"], name="fallback-model"
                ),
            ]
        )
        run = hk.Harness([], chain).run("hello")
        assert len(p.requests) == 3 and len(f.requests) == 3
    assert [s >= 2 for s in clock.sleeps] == [True] * 4 and sum(clock.sleeps) < 60
    err = run.error
    assert isinstance(err, hk.errors.RateLimitError)
    text = str(err)
    assert "primary-model" in text and "fallback-model" in text
    assert text.count("[3 attempts in") == 2 and "HTTP 429" in text


def check_40_run_retry_recharges(case, tmp_path):
    charges = tmp_path / "charges.jsonl"
    calls = C.Calls()

    def charge_card(operation_id, amount):
        with charges.open("a") as fh:
            fh.write(json.dumps({"operation_id": operation_id, "amount": amount}) + "\n")
        return {"charge_id": "ch_1"}

    clock = C.FakeClock()
    with C.StrictProvider(case["input"]["responses"]) as srv:
        model = retrying_model(srv, clock, attempts=3, wall=60)
        tools = C.tools_of(case, calls, {"charge_card": charge_card})
        run = hk.Harness(
            tools, model, gate=hk.Gate(policy={"write": "allow"}), log_dir=tmp_path
        ).run("charge 100.00 for op-0001")
    assert run.finish_reason == "stop"
    assert len(srv.requests) == 5
    for req in srv.requests[1:4]:
        assert C.tool_message(req, "call_1") == {"charge_id": "ch_1"}
        assert req["messages"] == srv.requests[1]["messages"]
    assert len(charges.read_text().splitlines()) == 1 and len(calls.of("charge_card")) == 1
    r5 = results(run)["call_5"]
    assert r5.ok and json.loads(r5.content) == {"charge_id": "ch_1"}
    assert r5.payload.get("duplicate")


def check_44_in_stream_error_after_200(case, tmp_path):
    clock = C.FakeClock()
    with C.StrictProvider(case["input"]["responses"]) as srv:
        model = retrying_model(srv, clock, attempts=3, wall=60)
        model.stream = True
        run = hk.Harness([], model).run("check")
    assert len(srv.requests) == 2
    (retry,) = [e for e in run.log if e.type == "model.retry"]
    assert "over capacity" in retry.payload["error"] and retry.payload["status_code"] == 503
    assert run.final_text == "All checks passed."
    assert "Check" not in json.dumps([e.payload for e in C.events(run, ModelResponseEvent)])
    assert run.finish_reason == "stop"


# -- duplicate_side_effect (resume) ------------------------------------------------------------


def check_38_interrupt_loop_resume(case, tmp_path):
    audit, items = tmp_path / "audit.log", {}
    published: list[str] = []
    approved: set[str] = set()
    calls = C.Calls()

    def append_audit_line(line):
        with audit.open("a") as fh:
            fh.write(line + "\n")
        return {"appended": line}

    def publish_item(item_id):
        assert item_id in approved, "published before its approval"
        published.append(item_id)
        items[item_id] = "published"
        return {"published": item_id}

    def confirm(request) -> bool:
        item = request.arguments["item_id"]
        if item in approved:
            return True
        raise hk.StopRun("paused", f"publish_item({item}) waits for approval")

    def make(srv):
        return harness(
            case,
            calls,
            srv,
            {"append_audit_line": append_audit_line, "publish_item": publish_item},
            gate=hk.Gate(
                policy={"write": "allow"}, tools={"publish_item": "confirm"}, confirm=confirm
            ),
            log_dir=tmp_path,
        )

    with C.StrictProvider(case["input"]["model_turns"]) as srv:
        run = make(srv).start("review and publish items 1-3", run_id="r38")
        run.run()
        path = tmp_path / "r38.jsonl"
        for item in ("item-1", "item-2", "item-3"):
            assert run.finish_reason == "paused", (item, run.finish_reason, run.error)
            assert item not in published
            approved.add(item)
            run = make(srv).resume(path)  # a new process: a new harness, from the log
            run.run()
        assert run.finish_reason == "stop", run.error
        assert len(srv.requests) == 7
        assert_clean(srv)
    assert audit.read_text().splitlines() == [
        "item-1 reviewed",
        "item-2 reviewed",
        "item-3 reviewed",
    ]
    assert published == ["item-1", "item-2", "item-3"]
    log = hk.EventLog.read(path)
    writes = [
        e
        for e in log
        if isinstance(e, ToolResultEvent)
        and e.tool in ("append_audit_line", "publish_item")
        and e.ok
    ]
    assert all(e.payload.get("idempotency_key") for e in writes)
    assert not any(e.payload.get("duplicate") for e in writes)


# -- context_overflow (input budget) ----------------------------------------------------------


def text_of(chars: int, seed: str = "") -> str:
    words = f"{seed} lorem ipsum dolor sit amet consectetur adipiscing elit sed do "
    return (words * (chars // len(words) + 1))[:chars]


def spec_tool(i: int) -> hk.Tool:
    return hk.Tool(
        name=f"tool_{i:02d}",
        description=text_of(180, f"tool {i}"),
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string", "description": "what to look up"}},
            "required": ["query"],
            "additionalProperties": False,
        },
        fn=lambda query: {"query": query},
    )


def check_24_tool_schemas_uncounted(case, tmp_path):
    window, max_tokens = (
        case["input"]["model"]["context_window"],
        case["input"]["request"]["max_tokens"],
    )
    tools = [spec_tool(i) for i in range(12)]
    assert 350 <= len(json.dumps(tools[0].to_openai())) <= 450
    with C.StrictProvider([], window=window) as srv:
        model = model_for(srv, context_window=window)
        h = hk.Harness(
            tools, model, system_prompt=text_of(2000, "system"), settings={"max_tokens": max_tokens}
        )
        run = h.start([text_of(2000, f"turn {i}") for i in range(30)])
        with pytest.raises(hk.errors.ContextError, match="tool schemas") as stopped:
            run.run()
    (ctx,) = C.events(run, ContextInjectedEvent)
    assert ctx.payload["input_budget"] == 16385 - 512 == 15873
    assert 1000 <= ctx.payload["tool_tokens"] <= 1400
    assert ctx.payload["request_tokens"] > 15873
    assert srv.requests == [] and srv.violations == []  # not sent, so never rejected
    assert run.finish_reason == "error" and run.error is stopped.value
    assert f"{ctx.payload['tool_tokens']} for the tool schemas" in str(run.error)


def check_25_input_limit_vs_window(case, tmp_path):
    model_spec = case["input"]["model"]
    a, b = case["input"]["variants"]
    for variant, sent in ((a, False), (b, True)):
        chars = variant["prompt_tokens_estimate"] * 4
        turns = [{"status": 200, "body": {"choices": [{"message": {"content": "ok"}}]}}]
        with C.StrictProvider(turns, window=272_000) as srv:
            model = model_for(
                srv,
                context_window=model_spec["context_window"],
                max_output_tokens=model_spec["max_output_tokens"],
            )
            run = hk.Harness([], model).start(text_of(chars - 200, variant["label"]))
            if sent:
                run.run()
            else:
                with pytest.raises(hk.errors.ContextError, match="272000"):
                    run.run()
        (ctx,) = C.events(run, ContextInjectedEvent)
        assert ctx.payload["input_budget"] == 272_000 == 400_000 - 128_000
        if sent:
            assert srv.statuses == [200] and run.finish_reason == "stop"
        else:
            assert srv.requests == [] and isinstance(run.error, hk.errors.ContextError)
            assert "272000" in str(run.error)


def check_26_parallel_results_batch_overflow(case, tmp_path):
    texts = {f"src/module_{i:02d}.py": text_of(120_000, f"module {i}") for i in range(1, 11)}
    calls = C.Calls()
    model_spec = case["input"]["model"]
    with C.StrictProvider(case["input"]["model_turns"]) as srv:
        model = model_for(
            srv,
            context_window=model_spec["context_window"],
            max_output_tokens=model_spec["max_output_tokens"],
        )
        tools = C.tools_of(
            case, calls, {"read_file": lambda path: {"path": path, "text": texts[path]}}
        )
        store = hk.ArtifactStore(tmp_path / "artifacts")
        run = hk.Harness(tools, model, artifacts=store).run("read the ten modules")
    assert run.finish_reason == "stop"
    created = C.events(run, ArtifactCreatedEvent)
    ids = [f"f{i:02d}" for i in range(1, 11)]
    assert [e.tool_call_id for e in created] == ids
    second = srv.requests[1]
    tool_msgs = [m for m in second["messages"] if m.get("role") == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ids
    for m, e in zip(tool_msgs, created, strict=True):
        assert len(m["content"]) <= 8000 and e.artifact_id in m["content"]
        assert e.sha256 and e.size_chars > 8000
        assert not any(t in m["content"] for t in texts.values())  # no full result inline
    ctx = C.events(run, ContextInjectedEvent)[1]
    assert ctx.payload["request_tokens"] <= 200_000 - 8_192 == ctx.payload["input_budget"]
    for e in created:
        full = store.read(e.artifact_id)
        assert hashlib.sha256(full.encode()).hexdigest() == e.sha256
        path = json.loads(full)["path"]
        assert json.loads(full) == {"path": path, "text": texts[path]}
    first_tools = {t["function"]["name"] for t in srv.requests[0]["tools"]}
    second_tools = {t["function"]["name"] for t in second["tools"]}
    assert not any(n.startswith("artifact_") for n in first_tools)  # offered once one exists
    assert any(n.startswith("artifact_") for n in second_tools)


# -- id_pairing / summary_data_loss (context assembly: issue 16 owns the fixes) --------------


def sent_messages(model: hk.ScriptedModel, n: int) -> list[dict[str, Any]]:
    return [m.to_openai() for m in model.requests[n].messages]


def test_case_28_summary_cut_keeps_the_tool_block_whole():
    case = C.load("28-summary-cut-orphans-tools")
    msgs = case["input"]["messages"]
    titles = {m["tool_call_id"]: m["content"] for m in msgs if m["role"] == "tool"}

    @hk.tool
    def read_file(path: str) -> str:
        """Read a file."""
        return titles["r" + path[-5:-3]]

    turn = reply.tool_calls(
        *[
            reply.call("read_file", id=c["id"], **json.loads(c["function"]["arguments"]))
            for c in msgs[1]["tool_calls"]
        ]
    )
    model = hk.ScriptedModel([turn, reply.text("done")])
    hk.Harness([read_file], model, policy="summary").run(msgs[0]["content"])
    sent = sent_messages(model, 1)
    assert C.rule_violations({"messages": sent}) == []
    kept = [m for m in sent if m["role"] == "tool"]
    assert len(kept) in (0, 10)
    text = json.dumps(sent)
    for i in range(1, 11):
        assert text.count(f"Title {i:02d}") == 1
    for block in ("confirmed", "failed", "conflicts", "pending", "forbidden", "next step"):
        assert block in text.lower()


def test_case_31_summary_keeps_the_completed_deploy():
    case = C.load("31-summary-loses-completion")
    deploys: list[dict[str, Any]] = []

    @hk.tool(risk="write")
    def deploy(release: str, env: str) -> dict:
        """Start a deployment."""
        deploys.append({"release": release, "env": env})
        return {"deployment_id": "dep-0007", "status": "succeeded"}

    @hk.tool
    def read_logs(deployment_id: str) -> dict:
        """Read logs."""
        return {"lines": ["ok"]}

    turns = [reply.tool_call("read_logs", deployment_id=f"x{i}") for i in range(4)]
    turns.insert(1, reply.tool_call("deploy", release="1.4", env="staging"))
    turns += [reply.tool_call("read_logs", deployment_id=f"y{i}") for i in range(30)]
    turns += [reply.text("Deployed.")]
    after = [
        json.loads(json.dumps(t["body"]["choices"][0]["message"]))
        for t in case["input"]["scripted_model_after_compaction"]
    ]
    turns += [
        hk.ModelResponse(message=hk.Message.from_openai(m), finish_reason="stop") for m in after
    ]
    model = hk.ScriptedModel(turns)
    h = hk.Harness(
        [deploy, read_logs],
        model,
        policy="summary",
        gate=hk.Gate(policy={"write": "allow"}),
        limits=hk.Limits(max_steps=100),
    )
    run = h.run("Deploy release 1.4 to staging.")
    run.send("Thanks. Now check the logs.")
    run.run()
    assert deploys == [{"release": "1.4", "env": "staging"}]
    dup = [
        e
        for e in C.events(run, ToolResultEvent)
        if e.tool == "deploy" and e.payload.get("duplicate")
    ]
    assert len(dup) == 1
    sent = json.dumps(sent_messages(model, len(model.requests) - 3)).lower()  # "### Confirmed"
    assert "confirmed" in sent and "pending" in sent, "the prompt after compaction has no summary"
    confirmed = sent.split("confirmed", 1)[1].split("pending", 1)[0]
    assert "1.4" in confirmed and "staging" in confirmed and "dep-0007" in confirmed
    assert "step 2" in confirmed
    pending = sent.split("pending", 1)[1].split("forbidden", 1)[0]
    assert "deploy" not in pending


def _as_sse(turn: dict[str, Any]) -> dict[str, Any]:
    """A chat.completion turn as an SSE stream of one chunk per field."""
    body = turn["body"]
    choice = body["choices"][0]
    msg = choice["message"]
    chunks: list[dict[str, Any]] = [{"choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    if msg.get("content"):
        chunks.append({"choices": [{"index": 0, "delta": {"content": msg["content"]}}]})
    for i, c in enumerate(msg.get("tool_calls") or []):
        args = c["function"]["arguments"]
        head = {"index": i, "id": c["id"], "function": {"name": c["function"]["name"]}}
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [head]}}]})
        for j in range(0, len(args), 16):
            part = {"index": i, "function": {"arguments": args[j : j + 16]}}
            chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [part]}}]})
    chunks.append(
        {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]}
    )
    if body.get("usage"):
        chunks.append({"choices": [], "usage": body["usage"]})
    lines = []
    for ch in chunks:
        lines += ["data: " + json.dumps(ch), ""]
    lines += ["data: [DONE]", ""]
    return {"status": 200, "sse_lines": lines}


CHECKS = {
    name.removeprefix("check_"): fn
    for name, fn in dict(globals()).items()
    if name.startswith("check_")
}


def _key(case_id: str) -> str:
    return case_id.replace("-", "_")


SEPARATE = {"28_summary_cut_orphans_tools", "31_summary_loses_completion"}  # own tests above


#: Cases whose remaining fix belongs in harnesskit/context (none left).
CONTEXT_OWNED: dict[str, str] = {}


def _params() -> list[Any]:
    out = []
    for i in IDS:
        if _key(i) in SEPARATE:
            continue
        why = CONTEXT_OWNED.get(_key(i))
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        out.append(pytest.param(i, marks=marks, id=i))
    return out or [pytest.param("(none)")]


@pytest.mark.parametrize("case_id", _params())
def test_case(case_id, tmp_path):
    check = CHECKS.get(_key(case_id))
    assert check is not None, f"no check written for case {case_id}"
    check(C.load(case_id), tmp_path)


def test_every_case_file_has_a_check():
    expected = sorted(_key(i) for i in IDS if _key(i) not in SEPARATE)
    assert expected == sorted(k for k in CHECKS if k[:2].isdigit())
