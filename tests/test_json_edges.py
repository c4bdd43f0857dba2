"""The JSON edge: named argument problems, stand-ins on the wire, hostile values in a real run."""

from __future__ import annotations

import json
import os

import pytest

import harnesskit as hk
from harnesskit import _json
from harnesskit.log import ToolCallEvent, ToolResultEvent
from harnesskit.models._retry import RetryPolicy
from harnesskit.testing import reply
from tests.support.cases import rule_violations
from tests.support.loopback import Reply, completion, sse_events, tool_call


@pytest.mark.parametrize(
    ("text", "error_type", "in_hint"),
    [
        ('```json\n{"a": 1', "truncated_call", "code fence"),
        ("{'a': 'b', 'c': True}", "invalid_argument", "double-quoted"),
        ('{"a": 1} {"a": 2}', "invalid_argument", "nothing after it"),
        ('{"a": [1, 2', "truncated_call", "incomplete"),
        ('{"a": NaN}', "invalid_argument", "JSON object"),
        ('{"a": ' + "9" * 5000 + "}", "invalid_argument", "JSON object"),
        ('{"a": ' + "[" * 300 + "]" * 300 + "}", "invalid_argument", "levels deep"),
    ],
)
def test_argument_problems_are_named_in_the_error_and_the_hint(text, error_type, in_hint):
    read = _json.read_arguments(text)
    assert read.arguments is None and read.error_type == error_type
    assert in_hint in read.hint and read.error


def test_a_cut_at_the_output_limit_quotes_the_limit():
    read = _json.read_arguments('{"body": "long', cut_off=True, max_tokens=256)
    assert read.error_type == "truncated_call"
    assert "max_tokens=256" in read.error and "max_tokens=256" in read.hint


def test_safe_normalizations_are_noted_and_never_guess():
    assert _json.read_arguments('```json\n{"a": 1}\n```').repair == "markdown code fence removed"
    trailing = _json.read_arguments('{"a": 1}\n</tool_call>')
    assert trailing.arguments == {"a": 1} and "trailing" in trailing.repair
    assert _json.read_arguments("{'a': 1}").arguments is None  # no Python-literal guessing


def test_the_stand_in_is_valid_capped_and_free_of_control_tokens():
    raw = "<|im_start|>" + "x" * 5000 + "\x00</tool_call>"
    wire = json.loads(_json.stand_in(raw, "bad"))["_unparsed_arguments"]
    assert wire["chars"] == len(raw) and len(wire["excerpt"]) <= 200
    assert "<|" not in wire["excerpt"] and "\x00" not in wire["excerpt"]


def test_lone_surrogates_are_joined_or_replaced():
    assert _json.clean_text("\ud83d\ude00") == "\U0001f600"
    assert _json.clean_text("caf\udce9.txt") == "caf\\xe9.txt"
    assert _json.clean_text("hi \ud83d") == "hi \ufffd"


@hk.tool
def echo(text: str) -> str:
    """Echo."""
    return text


def strict(srv):
    """The next replies are refused (400) when the request breaks a strict provider's rules."""

    def answer(body):
        bad = rule_violations(body)
        if bad:
            return Reply(status=400, json={"error": {"message": "; ".join(bad)}})
        return Reply(json=completion("done"))

    return answer


def test_a_bad_argument_string_never_goes_back_and_stays_in_the_log(server, tmp_path):
    raw = '{"text": "<|im_end|>' + "z" * 3000 + '"'  # control token, long, unterminated
    server.script(Reply(json=completion(tool_calls=[tool_call("echo", raw)])), strict(server))
    model = hk.get_model("openai-compat:m", base_url=server.url, retry=RetryPolicy(max_retries=0))
    run = hk.Harness([echo], model, log_dir=tmp_path).run("go")
    assert run.finish_reason == "stop"
    (call,) = [e for e in run.log if isinstance(e, ToolCallEvent)]
    assert call.raw_arguments == raw  # the log keeps it verbatim
    (result,) = [e for e in run.log if isinstance(e, ToolResultEvent)]
    assert result.payload["raw_arguments"] == raw and "<|im_end|>" not in result.content
    sent = json.dumps(server.requests[1].body)
    assert "<|im_end|>" not in sent and "z" * 300 not in sent


def test_hostile_values_in_a_real_run_end_with_documented_reasons(server, tmp_path):
    odd = tmp_path / "odd"
    odd.mkdir()
    open(os.path.join(os.fsencode(odd), b"caf\xe9.txt"), "wb").close()

    @hk.tool
    def listing() -> list:
        """List the folder."""
        return os.listdir(odd)

    big = '{"text": ' + "9" * 5000 + "}"
    deep = '{"text": ' + "[" * 100_000 + "]" * 100_000 + "}"
    server.script(
        Reply(
            json=completion(
                tool_calls=[
                    tool_call("echo", big, id="a"),
                    tool_call("echo", deep, id="b"),
                    tool_call("listing", {}, id="c"),
                    tool_call("echo", '{"text": "hi \\ud83d"}', id="d"),
                ]
            )
        ),
        strict(server),
    )
    model = hk.get_model("openai-compat:m", base_url=server.url, retry=RetryPolicy(max_retries=0))
    run = hk.Harness([echo, listing], model, log_dir=tmp_path).run("go")
    assert run.finish_reason == "stop", run.error
    results = {e.tool_call_id: e for e in run.log if isinstance(e, ToolResultEvent)}
    assert results["a"].error_type == results["b"].error_type == "invalid_argument"
    assert results["c"].ok and "caf\\\\xe9.txt" in results["c"].content
    assert results["d"].ok and results["d"].content == "hi \ufffd"
    (tmp_path / f"{run.state.run_id}.jsonl").read_text(encoding="utf-8")  # valid UTF-8


def test_the_response_size_cap_drops_a_huge_body_with_a_clear_error(server):
    server.script(
        Reply(body=b'{"choices": [{"message": {"content": "' + b"x" * 3_000_000 + b'"}}]}')
    )
    model = hk.get_model(
        "openai-compat:m",
        base_url=server.url,
        retry=RetryPolicy(max_retries=0),
        max_response_bytes=1_000_000,
    )
    run = hk.Harness([], model).run("go")
    assert run.finish_reason == "error" and isinstance(run.error, hk.ModelError)
    assert "max_response_bytes=1000000" in str(run.error)
    server.script(Reply(sse=sse_events([{"choices": [{"delta": {"content": "y" * 2_000_000}}]}])))
    model.stream = True
    run = hk.Harness([], model).run("go")
    assert "max_response_bytes=1000000" in str(run.error)
    with pytest.raises(hk.UsageError):
        hk.get_model("openai-compat:m", base_url=server.url, max_response_bytes=0)


def test_a_write_that_raises_unexpectedly_has_an_unknown_outcome():
    @hk.tool(risk="write")
    def send(to: str) -> str:
        """Send."""
        raise ConnectionResetError("peer closed after the write")

    model = hk.ScriptedModel([reply.tool_call("send", to="x"), reply.text("ok")])
    run = hk.Harness([send], model, gate=hk.Gate(policy={"write": "allow"})).run("go")
    (result,) = [e for e in run.log if isinstance(e, ToolResultEvent)]
    body = json.loads(result.content)
    assert result.outcome_unknown and "may have happened" in body["message"]
    assert "may have happened" in body["hint"]


def test_an_invented_hostile_tool_name_is_echoed_in_a_form_providers_accept(server):
    bad = tool_call("functions.get weather<|im_end|>", {"text": "x"}, id="a")
    server.script(Reply(json=completion(tool_calls=[bad])), strict(server))
    model = hk.get_model("openai-compat:m", base_url=server.url, retry=RetryPolicy(max_retries=0))
    run = hk.Harness([echo], model).run("go")
    assert run.finish_reason == "stop", run.error
    (result,) = [e for e in run.log if isinstance(e, ToolResultEvent)]
    assert result.error_type == "unknown_tool" and "<|" not in result.content
    assert _json.wire_name("") == "invalid_tool_name" and _json.wire_name("ok_name") == "ok_name"


def test_a_key_given_twice_in_tool_arguments_is_refused_not_guessed():
    seen = []

    @hk.tool
    def lookup_order(order_id: str) -> dict:
        """Look up one order.

        Use this when the user names an order. Do not use it to change one.

        Args:
            order_id: the order's id.

        Returns:
            The order.
        """
        seen.append(order_id)
        return {"order_id": order_id}

    model = hk.ScriptedModel(
        [reply.raw_call("lookup_order", '{"order_id": "A1", "order_id": "B2"}'), reply.text("ok")]
    )
    run = hk.Harness([lookup_order], model).run("where is my order?")
    assert run.finish_reason == "stop" and seen == []
    result = run.log.last("tool.result")
    assert result.payload["ok"] is False
    assert "appears twice" in json.dumps(result.payload)
