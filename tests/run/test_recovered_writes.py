"""A write written as JSON in the model's text is not run without confirmation (R-E4).

JSON in an answer may be a quotation, an example or a question ("shall I run {...}?"), so a
call recovered from text (`ToolCall.recovered`) to a write or destructive tool needs
confirmation whatever the policy; reads recovered from text still run.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from tests.support.loopback import Reply, completion

DONE: list[str] = []

CALL = '{"name": "cancel_order", "arguments": {"order_id": "A1"}}'


@hk.tool(risk="write")
def cancel_order(order_id: str) -> dict:
    """Cancel an order.

    Use this after the user confirmed. Do not use it to look up an order.

    Args:
        order_id: the order's id.

    Returns:
        The cancellation.
    """
    DONE.append(order_id)
    return {"cancelled": order_id}


@hk.tool
def get_order(order_id: str) -> dict:
    """Look up an order.

    Use this to read an order. Do not use it to change one.

    Args:
        order_id: the order's id.

    Returns:
        The order.
    """
    return {"order_id": order_id, "status": "shipped"}


def _run(server, text, **harness):
    DONE.clear()
    server.script(Reply(json=completion(text)), Reply(json=completion("ok")))
    model = hk.get_model("openai-compat:m", base_url=server.url, timeout_seconds=5.0)
    return hk.Harness([cancel_order, get_order], model, **harness).run("cancel A1?")


@pytest.mark.parametrize(
    "text",
    [
        f"To cancel, I would call {CALL}. Shall I proceed?",
        f"I will NOT run {CALL} until you confirm.",
        f"Here is what the call would look like:\n```json\n{CALL}\n```\nReply yes to confirm.",
        CALL,
    ],
    ids=["question", "negated", "fenced-example", "only-the-call"],
)
def test_a_write_recovered_from_text_is_refused_by_the_default_gate(server, text):
    run = _run(server, text)
    assert DONE == []
    (result,) = run.log.of_type("tool.result")
    body = json.loads(result.content)
    assert body["ok"] is False and body["error_type"] == "permission_denied"
    assert "real tool call" in body["message"] and "message text" in body["message"]
    assert "real tool call" in body["hint"]
    assert run.finish_reason == "stop"


def test_a_recovered_write_runs_when_the_confirmer_approves_and_it_is_told_so(server):
    asked: list[hk.tools.ApprovalRequest] = []

    def confirm(request):
        asked.append(request)
        return True

    run = _run(server, CALL, gate=hk.Gate(confirm=confirm))
    assert DONE == ["A1"]
    assert [(r.tool, r.recovered) for r in asked] == [("cancel_order", True)]
    assert run.log.of_type("tool.result")[0].ok is True


def test_a_read_recovered_from_text_still_runs_and_a_structured_write_is_not_asked(server):
    run = _run(server, 'Let me look: {"name": "get_order", "arguments": {"order_id": "A1"}}')
    assert run.log.of_type("tool.result")[0].ok is True

    call = {"id": "c1", "type": "function",
            "function": {"name": "cancel_order", "arguments": '{"order_id": "A1"}'}}  # fmt: skip
    DONE.clear()
    server.script(Reply(json=completion(tool_calls=[call])), Reply(json=completion("done")))
    model = hk.get_model("openai-compat:m", base_url=server.url, timeout_seconds=5.0)
    hk.Harness([cancel_order], model).run("cancel A1")
    assert DONE == ["A1"]  # the default gate allows writes made as real tool calls


def test_a_denied_tool_stays_denied_when_recovered():
    gate = hk.Gate(policy={"write": "deny"}, confirm=hk.allow_all)
    decision = gate.check(cancel_order, {"order_id": "A1"}, recovered=True)
    assert (decision.allowed, decision.decision) == (False, "deny")
    assert gate.decision_for(get_order, recovered=True) == "allow"
    assert hk.Gate().decision_for(cancel_order) == "allow"
    assert hk.Gate().decision_for(cancel_order, recovered=True) == "confirm"


def test_the_terminal_prompt_says_a_call_was_read_from_text(monkeypatch, capsys):
    monkeypatch.setattr("builtins.input", lambda prompt="": "n")
    request = hk.tools.ApprovalRequest(
        tool="cancel_order", risk="write", arguments={"order_id": "A1"}, tool_call_id="c1",
        recovered=True,
    )  # fmt: skip
    assert hk.tools.terminal_prompt(request) is False
    assert "message text, not a tool call" in capsys.readouterr().out
