"""Three recorded real exchanges (pydantic-ai's VCR cassettes in ../shared), served on loopback.

Each recorded chat-completions response is served in order by a real HTTP server; the client
under test builds its own requests, which are compared with what the recording's client sent.
Interactions in another API (Gemini's native `generateContent`) are not served.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from harnesskit.messages import Message, ModelRequest, ToolResult
from harnesskit.models import base, get_model
from harnesskit.models._retry import RetryPolicy
from tests.support.loopback import LoopbackServer, Reply

CASSETTES = (
    Path(__file__).resolve().parents[2].parent
    / "shared/datasets/pydantic__pydantic-ai/tests/models/cassettes"
)
FAST = RetryPolicy(max_retries=2, initial_backoff_seconds=0.01, max_backoff_seconds=0.02)


def load(name: str) -> list[dict[str, Any]]:
    path = CASSETTES / name
    if not path.exists():
        pytest.skip(f"recorded exchange {path} is absent (the shared datasets are not checked out)")
    interactions = yaml.safe_load(path.read_text())["interactions"]
    return [i for i in interactions if i["request"]["uri"].endswith("/chat/completions")]


@pytest.fixture
def served(monkeypatch):
    """Start a loopback server answering with the recorded responses, in order."""
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)
    servers: list[LoopbackServer] = []

    def start(interactions: list[dict[str, Any]]) -> LoopbackServer:
        replies = [
            Reply(status=i["response"]["status"]["code"], json=i["response"]["parsed_body"])
            for i in interactions
        ]
        servers.append(LoopbackServer(replies).__enter__())
        return servers[-1]

    yield start
    for srv in servers:
        srv.__exit__(None, None, None)


def request_from(recorded: dict[str, Any], messages: list[Message] | None = None) -> ModelRequest:
    body = recorded["request"]["parsed_body"]
    msgs = messages or [Message.from_openai(m) for m in body["messages"]]
    settings = {k: body[k] for k in ("tool_choice",) if k in body}
    return ModelRequest(messages=tuple(msgs), tools=tuple(body["tools"]), settings=settings)


def plain(messages: list[dict[str, Any]], ids: dict[str, str] | None = None) -> list[dict]:
    """Messages without null contents, with call ids renamed by `ids`."""
    ids = ids or {}
    out = []
    for m in messages:
        m = {k: v for k, v in m.items() if v is not None}
        if "tool_call_id" in m:
            m["tool_call_id"] = ids.get(m["tool_call_id"], m["tool_call_id"])
        if "tool_calls" in m:
            m["tool_calls"] = [{**c, "id": ids.get(c["id"], c["id"])} for c in m["tool_calls"]]
        out.append(m)
    return out


def test_empty_tool_call_id_is_replaced_and_matched_on_the_next_turn(served):
    """Gemini's OpenAI-compatible endpoint answered with `id: ''` for its tool call."""
    first, second = load("test_openai/test_compatible_api_with_tool_calls_without_id.yaml")
    srv = served([first, second])
    model = get_model("openai-compat:gemini-2.5-pro-preview-05-06", base_url=srv.url, retry=FAST)

    response = model.request(request_from(first))
    (call,) = response.message.tool_calls
    assert (call.name, call.arguments, call.original_id) == ("get_current_time", {}, "")
    assert call.id.startswith("call_hk_")
    # the thinking tokens Gemini leaves out of completion_tokens are billed: total stays 109
    assert (response.usage.prompt_tokens, response.usage.total_tokens) == (35, 109)

    result = ToolResult(tool_call_id=call.id, name=call.name, ok=True, content="Noon")
    history = [*request_from(first).messages, response.message, result.to_message()]
    final = model.request(request_from(second, history))
    assert final.message.content == "The current time is Noon."

    sent = srv.requests[1].body["messages"]
    assert sent[1]["tool_calls"][0]["id"] == sent[2]["tool_call_id"] == call.id
    recorded_id = second["request"]["parsed_body"]["messages"][1]["tool_calls"][0]["id"]
    assert plain(sent) == plain(
        second["request"]["parsed_body"]["messages"], {recorded_id: call.id}
    )
    assert srv.requests[0].body["tools"] == first["request"]["parsed_body"]["tools"]


def test_calls_are_matched_across_turns_by_id(served):
    """gpt-4o-mini, a conversation with a tool call in an earlier turn and one in this turn."""
    first, second = load("test_openai/test_multiple_agent_tool_calls.yaml")
    srv = served([first, second])
    model = get_model("openai:gpt-4o-mini", base_url=srv.url, api_key="sk-test", retry=FAST)

    request = request_from(first)
    assert srv.requests == []
    response = model.request(request)
    (call,) = response.message.tool_calls
    assert (call.id, call.name, call.arguments, call.original_id) == (
        "call_SkEQ3ZGSJC8m6AvaIGNuuKdm",
        "get_capital",
        {"country": "England"},
        None,
    )
    assert plain(srv.requests[0].body["messages"]) == plain(
        first["request"]["parsed_body"]["messages"]
    )

    result = ToolResult(tool_call_id=call.id, name=call.name, ok=True, content="London")
    final = model.request(
        request_from(second, [*request.messages, response.message, result.to_message()])
    )
    assert final.message.content == "The capital of England is London."
    # exactly the messages the recorded client sent: both turns' ids pair call and result
    assert plain(srv.requests[1].body["messages"]) == plain(
        second["request"]["parsed_body"]["messages"]
    )
    assert (
        final.usage.prompt_tokens,
        final.usage.completion_tokens,
        final.usage.cached_tokens,
    ) == (
        129,
        9,
        0,
    )


def test_groq_tool_use_failed_gets_one_corrective_request_with_the_failed_generation(served):
    """Groq answered 400 `tool_use_failed` carrying `failed_generation: maybe`."""
    failed, fixed = load("test_groq/test_tool_use_failed_error_with_text.yaml")
    srv = served([failed, fixed])
    attempts = []
    model = get_model(
        "openai-compat:openai/gpt-oss-120b",
        base_url=srv.url,
        retry=FAST,
        on_attempt=attempts.append,
    )

    response = model.request(request_from(failed))

    assert len(srv.requests) == 2
    assert srv.remaining == 0
    first, second = (r.body["messages"] for r in srv.requests)
    assert second[: len(first)] == first
    assistant, correction = second[len(first) :]
    assert assistant == {"role": "assistant", "content": "maybe"}
    assert correction["role"] == "user"
    assert "Tool choice is required, but model did not call a tool" in correction["content"]
    assert "maybe" in correction["content"]
    assert "final_result" in correction["content"]
    assert "plain text" not in correction["content"]  # tool_choice=required: a call is needed
    assert srv.requests[1].body["tool_choice"] == "required"
    assert [(a.kind, a.status_code) for a in attempts] == [("corrective", 400)]
    (call,) = response.message.tool_calls
    assert (call.name, call.arguments) == ("final_result", {"response": "yes"})
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (254, 174)
