"""What the first real model exposed (issue 14, item 5), checked on the loop's records."""

from __future__ import annotations

import harnesskit as hk
from tests.support.loopback import Reply, completion


@hk.tool
def get_user(user_id: str) -> dict:
    """Look up a user.

    Use this when you need a user's profile. Do not use it for anything else.

    Args:
        user_id: the user's id, e.g. `u1`.

    Returns:
        The user's profile.
    """
    return {"user_id": user_id, "name": "Ada"}


def test_a_call_recovered_from_text_is_flagged_and_the_text_kept(server):
    text = 'Let me look.\n```json\n{"name": "get_user", "arguments": {"user_id": "u1"}}\n```'
    server.script(Reply(json=completion(text)), Reply(json=completion("Ada.")))
    model = hk.get_model("openai-compat:m", base_url=server.url, timeout_seconds=5.0)
    run = hk.Harness(model=model, tools=[get_user]).run("who is u1?")

    first, second = run.log.of_type("model.response")
    (call_id,) = first.recovered_calls
    assert first.original_content == text
    assert first.message["tool_calls"][0]["id"] == call_id
    assert first.message["content"] == "Let me look."
    assert second.recovered_calls is None and "original_content" not in second.payload


def test_structured_calls_are_not_flagged(server):
    call = {"id": "c1", "type": "function",
            "function": {"name": "get_user", "arguments": '{"user_id": "u1"}'}}  # fmt: skip
    server.script(Reply(json=completion(tool_calls=[call])), Reply(json=completion("Ada.")))
    model = hk.get_model("openai-compat:m", base_url=server.url, timeout_seconds=5.0)
    run = hk.Harness(model=model, tools=[get_user]).run("who is u1?")

    first = run.log.of_type("model.response")[0]
    assert "recovered_calls" not in first.payload and first.original_content is None


class Described(hk.ScriptedModel):
    """A scripted model that describes itself as a local server does."""

    info = {"server_version": "b1-test", "sha256": "ab" * 32, "port": 1}


def test_a_model_that_describes_itself_is_recorded_once_in_the_log():
    model = Described([hk.ToolCall(id="c1", name="get_user", arguments={"user_id": "u"}), "ok"])
    run = hk.Harness(model=model, tools=[get_user]).run("who is u?")
    first, second = run.log.of_type("model.response")
    assert first.model_info == Described.info
    assert second.model_info is None and "model_info" not in second.payload
