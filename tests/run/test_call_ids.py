"""A provider's tool-call id that is overlong or unsafe (whitespace, control characters) is never
echoed back: the runtime sends a short id of its own and keeps the provider's in the log (R-M2)."""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.models import get_model
from tests.support.loopback import Reply, completion, tool_call


@hk.tool
def lookup(key: str) -> dict:
    """Look a key up.

    Args:
        key: the key.
    """
    return {"key": key}


def _sent_ids(body):
    ids = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or ()]
    answers = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    return ids, answers


@pytest.mark.parametrize(
    "provider_id",
    ["x" * 1_000_000, "y" * 65, " ", "a\nb", "a\x00b", "café-1"],
    ids=["1MB", "65", "space", "newline", "nul", "non-ascii"],
)
def test_an_unsafe_provider_call_id_is_replaced_in_every_later_request(server, provider_id):
    server.script(
        Reply(json=completion(tool_calls=[tool_call("lookup", {"key": "a"}, id=provider_id)])),
        Reply(json=completion(tool_calls=[tool_call("lookup", {"key": "b"}, id="call_ok")])),
        Reply(json=completion("done")),
    )
    model = get_model("openai-compat:test-model", base_url=server.url)
    run = hk.Harness([lookup], model).run("x")
    assert run.finish_reason == "stop"
    for seen in server.requests[1:]:
        ids, answers = _sent_ids(seen.body)
        assert provider_id not in ids and provider_id not in answers
        assert all(0 < len(i) <= 64 for i in ids) and sorted(answers) == sorted(ids)
    ids, _ = _sent_ids(server.requests[2].body)
    assert "call_ok" in ids  # a safe id is echoed as the provider sent it
    first = run.log.of_type("model.response")[0]
    (own,) = [c["id"] for c in first.message["tool_calls"]]
    assert first.payload["id_replacements"] == {own: provider_id}  # the provider's id, kept
    run.log.close()


def test_a_64_character_id_is_echoed_unchanged(server):
    long_ok = "call_" + "a" * 59
    server.script(
        Reply(json=completion(tool_calls=[tool_call("lookup", {"key": "a"}, id=long_ok)])),
        Reply(json=completion("done")),
    )
    run = hk.Harness([lookup], get_model("openai-compat:test-model", base_url=server.url)).run("x")
    assert _sent_ids(server.requests[1].body) == ([long_ok], [long_ok])
    run.log.close()
