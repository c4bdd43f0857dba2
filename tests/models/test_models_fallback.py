"""FallbackModel (R-M5) over two real loopback servers."""

from __future__ import annotations

import pytest

from harnesskit.errors import ModelError, ModelOutputError, UsageError
from harnesskit.messages import Message, ModelRequest
from harnesskit.models import FunctionModel, base, get_model
from harnesskit.models._retry import RetryPolicy
from harnesskit.models.fallback import FallbackModel, FallbackNode, Switch
from tests.support.loopback import LoopbackServer, Reply, completion

FAST = RetryPolicy(max_retries=2, initial_backoff_seconds=0.01, max_backoff_seconds=0.02)
DOWN = Reply(status=503, json={"error": {"message": "no capacity"}})


@pytest.fixture
def servers(monkeypatch):
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)
    with LoopbackServer() as a, LoopbackServer() as b:
        yield a, b


def ask(*, data_class=None, on_attempt=None, **settings) -> ModelRequest:
    return ModelRequest(
        messages=(Message(role="user", content="hi"),),
        settings=settings,
        data_class=data_class,
        on_attempt=on_attempt,
    )


def test_first_node_keeps_answering_503_and_the_request_ends_on_the_second(servers):
    primary_srv, backup_srv = servers
    primary_srv.script(*[DOWN] * 20)
    backup_srv.script(Reply(json=completion("from backup")), Reply(json=completion("again")))
    primary = get_model("openai-compat:primary", base_url=primary_srv.url, retry=FAST)
    backup = get_model("vllm:backup", base_url=backup_srv.url, retry=FAST)
    switches: list[Switch] = []
    attempts = []
    chain = FallbackModel([primary, backup], on_switch=switches.append)

    response = chain.request(ask(on_attempt=attempts.append))

    assert response.message.content == "from backup"
    assert len(primary_srv.requests) == FAST.max_retries + 1
    assert [(a.model, a.status_code, a.will_retry) for a in attempts] == [
        ("openai-compat:primary", 503, True),
        ("openai-compat:primary", 503, True),
        ("openai-compat:primary", 503, False),
    ]
    (switch,) = switches
    assert (switch.old, switch.new) == ("openai-compat:primary", "vllm:backup")
    assert switch.reason.startswith("unavailable: openai-compat:primary: HTTP 503: no capacity")
    assert switch.to_dict()["skipped"] == []
    # sticky: the next request goes straight to the node that answered
    assert chain.request(ask()).message.content == "again"
    assert len(primary_srv.requests) == FAST.max_retries + 1
    assert chain.current is backup


def test_with_no_node_left_the_chain_raises_model_error(servers):
    a_srv, b_srv = servers
    a_srv.script(*[DOWN] * 3)
    b_srv.script(*[DOWN] * 3)
    chain = FallbackModel(
        [get_model(f"ollama:m{i}", base_url=s.url, retry=FAST) for i, s in enumerate(servers)]
    )
    with pytest.raises(ModelError, match="no model left") as info:
        chain.request(ask())
    assert info.value.status_code == 503
    assert chain.current.name == "ollama:m0"  # the next request (after a pause) starts over


def test_never_sends_to_a_node_not_approved_for_the_data_class(servers):
    local_srv, hosted_srv = servers
    hosted = get_model("openai-compat:hosted", base_url=hosted_srv.url, max_data_class="internal")
    local = FallbackNode(
        model=get_model("ollama:local", base_url=local_srv.url), max_data_class="secret"
    )
    hosted_srv.script(Reply(json=completion("hosted")))
    local_srv.script(Reply(json=completion("local")))
    switches: list[Switch] = []
    chain = FallbackModel([hosted, local], on_switch=switches.append)

    assert chain.request(ask(data_class="restricted")).message.content == "local"
    assert hosted_srv.requests == []
    assert switches == [
        Switch(
            reason="data_class 'restricted' above 'internal'",
            old="openai-compat:hosted",
            new="ollama:local",
            skipped=("openai-compat:hosted",),
        )
    ]
    # a data-class skip is per request: public data still goes to the first node
    assert chain.request(ask(data_class="public")).message.content == "hosted"


def test_no_approved_node_sends_nothing(servers):
    srv, _ = servers
    chain = FallbackModel(
        [FallbackNode(model=get_model("ollama:m", base_url=srv.url), max_data_class="public")]
    )
    with pytest.raises(ModelError, match="no node is approved"):
        chain.request(ask(data_class="secret"))
    assert srv.requests == []
    with pytest.raises(UsageError, match="data_class must be one of"):
        chain.request(ask(data_class="top-secret"))


def test_bad_model_output_is_not_a_reason_to_switch():
    def garbled(messages, info):
        raise ModelOutputError("unusable", model="f")

    backup = FunctionModel(lambda m, i: "fine", name="backup")
    switches: list[Switch] = []
    chain = FallbackModel([FunctionModel(garbled, name="first"), backup], on_switch=switches.append)
    with pytest.raises(ModelOutputError):
        chain.request(ask())
    assert switches == []
    assert backup.requests == []


def test_empty_chain_is_a_usage_error():
    with pytest.raises(UsageError):
        FallbackModel([])
