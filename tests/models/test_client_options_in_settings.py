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


@pytest.mark.parametrize(
    ("key", "value", "takes"),
    [
        ("max_tokens", -5, "an int of tokens >= 1"),
        ("max_tokens", 0, "an int of tokens >= 1"),
        ("max_tokens", True, "an int of tokens >= 1"),
        ("max_tokens", "512", "an int of tokens >= 1"),
        ("max_tokens", 512.0, "an int of tokens >= 1"),
        ("max_completion_tokens", -1, "an int of tokens >= 1"),
        ("temperature", float("nan"), "a finite number >= 0"),
        ("temperature", -0.5, "a finite number >= 0"),
        ("temperature", "0.2", "a finite number >= 0"),
        ("temperature", False, "a finite number >= 0"),
        ("top_p", 1.5, "a finite number from 0 to 1"),
        ("top_p", float("inf"), "a finite number from 0 to 1"),
    ],
    ids=repr,
)
def test_a_sampling_setting_of_the_wrong_type_or_range_is_refused_before_sending(
    server, tmp_path, key, value, takes
):
    with pytest.raises(UsageError, match=key):  # NaN and inf: "a number JSON cannot write"
        hk.Harness([lookup_order], make(server), log_dir=tmp_path, settings={key: value})
    with pytest.raises(UsageError, match=rf"settings\['{key}'\] takes {takes}.*; got "):
        ModelRequest(messages=(Message(role="user", content="hi"),), settings={key: value})
    assert server.requests == []


def test_valid_sampling_settings_and_none_are_sent_as_given(server):
    server.script(Reply(json=completion("hi")))
    settings = {"max_tokens": 64, "temperature": 1.5, "top_p": 1, "max_completion_tokens": None}
    make(server).request(
        ModelRequest(messages=(Message(role="user", content="q"),), settings=settings)
    )

    sent = server.requests[0].body
    assert [sent[k] for k in settings] == [64, 1.5, 1, None]
