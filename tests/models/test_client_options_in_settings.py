"""Options of the model client given in `settings` are refused, naming where they belong.

`settings={"timeout_seconds": 5}` was sent to the provider as a body field: the timeout never
applied, and a provider that rejects unknown fields failed every request. Each client option
(`timeout_seconds`, `api_key`, `headers`, ...) is now a `UsageError` at construction saying to
pass it to the model's constructor; nothing is sent.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.errors import UsageError
from harnesskit.messages import Message, ModelRequest
from tests.support.edge_client import lookup_order, make
from tests.support.loopback import Reply, completion


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("timeout_seconds", 5),
        ("api_key", "sk-x"),
        ("base_url", "http://127.0.0.1:9/v1"),
        ("headers", {"x-a": "b"}),
        ("extra_body", {"top_k": 20}),
        ("retry", None),
        ("stream_usage", False),
        ("max_response_bytes", 1000),
        ("context_window", 8192),
        ("max_output_tokens", 512),
    ],
)
def test_a_client_option_in_settings_is_refused_naming_the_constructor(
    server, tmp_path, key, value
):
    said = rf"settings\['{key}'\] is an option of the model client.*constructor.*{key}=\.\.\."
    with pytest.raises(UsageError, match=said):
        hk.Harness([lookup_order], make(server), log_dir=tmp_path, settings={key: value})
    with pytest.raises(UsageError, match=said):
        ModelRequest(messages=(Message(role="user", content="hi"),), settings={key: value})
    assert server.requests == []


def test_sampling_settings_and_the_client_switches_are_still_sent(server):
    server.script(Reply(json=completion("hi")))
    settings = {"temperature": 0, "seed": 7, "top_k": 20, "max_wait_seconds": 30}
    make(server).request(
        ModelRequest(messages=(Message(role="user", content="q"),), settings=settings)
    )

    sent = server.requests[0].body
    assert sent["temperature"] == 0 and sent["seed"] == 7 and sent["top_k"] == 20
    assert "max_wait_seconds" not in sent
