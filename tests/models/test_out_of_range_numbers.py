"""Tool-call arguments holding numbers no float holds (`1e999`, `-1e400`), over loopback (R-M2).

Python reads such a number as `inf`. In argument text the strict reader cleaned it to `null`
without a word, so the tool ran with `n=None`; arguments sent as a JSON object became `null`
the same way, and recovered from message text (a fence, a tag, bare JSON) they reached the
tool as `inf`. Each is now an `invalid_argument` result telling the model to send a finite
number, and the tool does not run.
"""

from __future__ import annotations

import json
import math

import pytest

import harnesskit as hk
from harnesskit.messages import Message, ModelResponse, ToolCall
from harnesskit.models.offline import FunctionModel, ScriptedModel
from tests.support.edge_client import make
from tests.support.loopback import Reply, completion, sse_events, tool_call

RAN: list[object] = []


@hk.tool
def scale(n: float | None = None) -> dict:
    """Scale a number.

    Args:
        n: the number.

    Returns:
        The number seen.
    """
    RAN.append(n)
    return {"n": n}


def _raw_body(body: dict, literal: str) -> Reply:
    """`body` as JSON text with the string "BIG" replaced by the number `literal`."""
    return Reply(
        body=json.dumps(body).replace('"BIG"', literal).encode(),
        headers={"content-type": "application/json"},
    )


def _raw_sse(chunks: list[dict], literal: str) -> Reply:
    return Reply(sse=[e.replace('"BIG"', literal) for e in sse_events(chunks)])


def _object_call(args: dict) -> dict:
    return {"id": "call_1", "type": "function", "function": {"name": "scale", "arguments": args}}


def _stream_call(args: object) -> list[dict]:
    delta = {"role": "assistant", "tool_calls": [{"index": 0, **_object_call(args)}]}
    return [{"choices": [{"index": 0, "delta": delta, "finish_reason": "tool_calls"}]}]


FENCE = 'Calling it.\n```json\n{"name": "scale", "arguments": {"n": BIG}}\n```'


def _replies(literal: str) -> dict[str, tuple[Reply, bool]]:
    text = json.dumps({"n": "BIG"}).replace('"BIG"', literal)
    return {
        "string": (Reply(json=completion(tool_calls=[tool_call("scale", text)])), False),
        "string-nested": (
            Reply(json=completion(tool_calls=[tool_call("scale", f'{{"n": [1, {literal}]}}')])),
            False,
        ),
        "object": (_raw_body(completion(tool_calls=[_object_call({"n": "BIG"})]), literal), False),
        "object-nested": (
            _raw_body(completion(tool_calls=[_object_call({"n": {"m": ["BIG"]}})]), literal),
            False,
        ),
        "stream-string": (Reply(sse=sse_events(_stream_call(text))), True),
        "stream-object": (_raw_sse(_stream_call({"n": "BIG"}), literal), True),
        "fence": (Reply(json=completion(FENCE.replace("BIG", literal))), False),
        "tag": (
            Reply(
                json=completion(
                    f'<tool_call>{{"name": "scale", "arguments": {{"n": {literal}}}}}</tool_call>'
                )
            ),
            False,
        ),
        "bare-json": (
            Reply(json=completion(f'I call {{"name": "scale", "arguments": {{"n": {literal}}}}}')),
            False,
        ),
        "recovered-string": (
            Reply(
                json=completion(
                    "```json\n" + json.dumps({"name": "scale", "arguments": text}) + "\n```"
                )
            ),
            False,
        ),
    }


WHERE = list(_replies("1e999"))


@pytest.mark.parametrize("literal", ["1e999", "-1e400", "1E+309"])
@pytest.mark.parametrize("where", WHERE)
def test_the_model_is_told_to_send_a_finite_number(server, tmp_path, where, literal):
    reply, stream = _replies(literal)[where]
    server.script(reply, Reply(json=completion("done")))
    RAN.clear()
    harness = hk.Harness([scale], make(server, stream=stream), log_dir=tmp_path)
    run = harness.run("Scale it.")
    assert run.finish_reason == "stop", run.error
    assert RAN == []  # the tool never ran: not with inf, not with None
    (result,) = run.log.of_type("tool.result")
    answer = json.loads(result.content)
    assert answer["error_type"] == "invalid_argument"
    assert "out of float range" in answer["message"]
    assert "finite" in answer["hint"]


def test_finite_numbers_still_reach_the_tool(server, tmp_path):
    server.script(
        _raw_body(completion(tool_calls=[_object_call({"n": "BIG"})]), "1.5e308"),
        Reply(json=completion("done")),
    )
    RAN.clear()
    hk.Harness([scale], make(server), log_dir=tmp_path).run("Scale it.")
    assert RAN == [1.5e308]


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, [1.0, {"m": math.inf}]])
@pytest.mark.parametrize("kind", ["scripted", "function"])
def test_any_models_call_holding_inf_is_answered_not_run(tmp_path, kind, value):
    call = ToolCall(id="c1", name="scale", arguments={"n": value})
    turn = ModelResponse(message=Message(role="assistant", tool_calls=(call,)))
    turns = iter([turn, ModelResponse(message=Message(role="assistant", content="done"))])
    model = (
        ScriptedModel([turn, "done"])
        if kind == "scripted"
        else FunctionModel(lambda messages, info: next(turns))
    )
    RAN.clear()
    run = hk.Harness([scale], model, log_dir=tmp_path).run("Scale it.")
    assert run.finish_reason == "stop" and RAN == []
    (result,) = run.log.of_type("tool.result")
    assert json.loads(result.content)["error_type"] == "invalid_argument"
