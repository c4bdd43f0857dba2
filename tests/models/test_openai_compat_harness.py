"""Harness runs end to end against the loopback server: events for retries and switches, CLI."""

from __future__ import annotations

import json
import time

import harnesskit as hk
from harnesskit import cli
from harnesskit.models._retry import RetryPolicy
from tests.support import demo as _demo
from tests.support.loopback import LoopbackServer, Reply, completion, tool_call

FAST = RetryPolicy(max_retries=2, initial_backoff_seconds=0.01, max_backoff_seconds=0.02)
DOWN = Reply(status=503, json={"error": {"message": "warming up"}})


def plum_turns() -> list[Reply]:
    """A model that calls check_stock with an empty call id, then answers from the result."""

    def answer(body):
        result = json.loads(body["messages"][-1]["content"])
        return Reply(json=completion(f"There are {result['units']} plums in stock."))

    call = tool_call("check_stock", {"item": "plum"}, id="")
    return [
        Reply(
            json=completion(tool_calls=[call], usage={"prompt_tokens": 90, "completion_tokens": 9})
        ),
        answer,
    ]


def types(run: hk.Run) -> list[str]:
    return [e.type for e in run.log]


def test_a_harness_run_against_the_loopback_server_logs_retries_as_events(server, tmp_path):
    server.script(DOWN, *plum_turns())
    model = hk.get_model("openai-compat:loop", base_url=server.url, retry=FAST)
    h = hk.Harness(_demo._tools(), model, log_dir=tmp_path, limits=hk.Limits(max_seconds=30))

    run = h.run("Do you have plums?")

    assert run.finish_reason == "stop"
    assert run.final_text == "There are 12 plums in stock."
    (retry,) = run.log.of_type("model.retry")
    assert retry.payload | {"wait_seconds": 0} == {
        "step": 1,
        "context_event_id": run.log.of_type("context.injected")[0].event_id,
        "model": "openai-compat:loop",
        "attempt": 1,
        "status_code": 503,
        "error": "HTTP 503: warming up",
        "wait_seconds": 0,
        "will_retry": True,
        "kind": "retry",
    }
    assert types(run).index("model.retry") < types(run).index("model.response")
    # the empty provider id was replaced; the result went back under the same id
    (call,) = run.log.of_type("tool.call")
    sent = server.requests[-1].body["messages"]
    assert (
        sent[-2]["tool_calls"][0]["id"] == sent[-1]["tool_call_id"] == call.payload["tool_call_id"]
    )
    response = run.log.of_type("model.response")[0].payload
    assert response["id_replacements"] == {call.payload["tool_call_id"]: ""}
    assert response["usage"]["estimated"] is False
    # callbacks and deadlines steer the client but are never logged or sent
    assert "on_attempt" not in json.dumps([e.to_dict() for e in run.log], default=str)
    assert set(server.requests[-1].body) == {"model", "messages", "tools"}
    assert hk.EventLog.read(tmp_path / f"{run.state.run_id}.jsonl")  # the log on disk reads back


def test_a_fallback_chain_switch_is_an_event_and_the_run_finishes_on_the_second(
    server, monkeypatch
):
    with LoopbackServer() as backup:
        server.script(*[DOWN] * 10)
        backup.script(*plum_turns())
        chain = hk.models.FallbackModel(
            [
                hk.get_model("openai-compat:primary", base_url=server.url, retry=FAST),
                hk.get_model("vllm:backup", base_url=backup.url, retry=FAST),
            ]
        )
        run = hk.Harness(_demo._tools(), chain).run("Do you have plums?")

    assert run.finish_reason == "stop"
    assert run.final_text == "There are 12 plums in stock."
    (switch,) = run.log.of_type("model.switch")
    assert switch.payload["old"] == "openai-compat:primary"
    assert switch.payload["new"] == "vllm:backup"
    assert switch.payload["reason"].startswith("unavailable: openai-compat:primary: HTTP 503")
    assert switch.payload["context_event_id"] == run.log.of_type("context.injected")[0].event_id
    assert [e.payload["will_retry"] for e in run.log.of_type("model.retry")] == [True, True, False]
    assert len(server.requests) == FAST.max_retries + 1  # sticky: step 2 went straight to backup
    assert len(backup.requests) == 2


def test_retries_stop_at_the_runs_wall_clock_brake(server):
    server.script(
        *[Reply(status=429, headers={"Retry-After": "3"}, json={"error": {"message": "rl"}})] * 3
    )
    model = hk.get_model("openai-compat:loop", base_url=server.url)
    t0 = time.monotonic()
    run = hk.Harness(_demo._tools(), model, limits=hk.Limits(max_seconds=1.0)).run("plums?")
    assert time.monotonic() - t0 < 1.5  # did not sleep the 3 s the server asked for
    assert run.finish_reason == "error"
    assert isinstance(run.error, hk.ModelError)
    (retry,) = run.log.of_type("model.retry")
    assert (retry.payload["status_code"], retry.payload["will_retry"]) == (429, False)


def test_cli_demo_runs_against_the_loopback_server_with_model(server, tmp_path, capsys):
    # the demo is the airline main job: five tasks, here each answered by one plain reply
    server.script(*[Reply(json=completion("I cannot help with that.")) for _ in range(5)])
    code = cli.main(
        ["demo", "--model", "openai-compat:loop", "--base-url", server.url, "--out", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "book-cheapest-one-stop" in out and "stop" in out
    assert server.requests[0].body["model"] == "loop"
    assert "cancel_reservation" in {t["function"]["name"] for t in server.requests[0].body["tools"]}


def test_cli_reports_an_unreachable_model_without_a_traceback(server, tmp_path, capsys):
    server.script(Reply(status=401, json={"error": {"message": "bad key"}}))
    code = cli.main(["demo", "--model", "vllm:x", "--base-url", server.url, "--out", str(tmp_path)])
    assert code == 1
    assert "error: ModelError: vllm:x: HTTP 401: bad key" in capsys.readouterr().out
    assert cli.main(["demo", "--model", "nosuch:x", "--out", str(tmp_path)]) == 2
    assert "unknown model provider 'nosuch'" in capsys.readouterr().err
