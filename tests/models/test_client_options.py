"""The HTTP client's options are refused when the model is made, not at its first request.

A timeout given as `"5"` or `-1`, a truthy `stream="no"`, `headers="x"` or a callback of the
wrong arity failed (or misbehaved) only once a run was under way, with a raw `TypeError` /
`ValueError` / `AttributeError`. Each is now a `UsageError` naming the option and what it takes.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.errors import UsageError
from harnesskit.models import get_model
from tests.support.edge_client import ask, make


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("timeout_seconds", "5"),
        ("timeout_seconds", -1),
        ("timeout_seconds", float("inf")),
        ("max_wait_seconds", "x"),
        ("stream", "no"),
        ("stream_usage", 1),
        ("base_url", 5),
        ("base_url", "not a url"),
        ("base_url", "ftp://host/v1"),
        ("headers", "x"),
        ("headers", {"x-n": 5}),
        ("extra_body", "x"),
        ("extra_body", {"top_k": object()}),
        ("retry", {"max_retries": 1}),
        ("seed", "x"),
        ("max_response_bytes", True),
        ("context_window", "big"),
        ("on_attempt", "log"),
        ("on_attempt", lambda: None),
        ("clock", lambda now: now),
        ("http_client", "client"),
    ],
)
def test_a_bad_option_is_refused_at_construction_naming_it(server, option, value):
    kw = {"base_url": server.url, option: value}
    with pytest.raises(UsageError, match=rf"\({option}=\.\.\.\) (takes|is called with)"):
        get_model("openai-compat:edge", **kw)
    assert server.requests == []


def test_an_unknown_option_is_named_by_get_model():
    with pytest.raises(UsageError, match="does not take: bogus"):
        get_model("openai-compat:edge", base_url="http://127.0.0.1:9/v1", bogus=1)


def test_a_url_with_credentials_is_refused_without_showing_them():
    with pytest.raises(UsageError) as info:
        get_model("openai-compat:edge", base_url="ftp://user:s3cret@host/v1")
    assert "s3cret" not in str(info.value)


def test_a_per_request_stream_setting_must_be_a_bool(server):
    with pytest.raises(UsageError, match=r"settings\['stream'\] takes True or False"):
        make(server).request(ask(stream="no"))
    assert server.requests == []


def test_a_function_model_of_the_wrong_arity_is_refused_at_construction():
    with pytest.raises(UsageError, match=r"FunctionModel\(fn=\.\.\.\) is called with 2"):
        hk.FunctionModel(lambda: 1)
    with pytest.raises(UsageError, match="takes a function"):
        hk.FunctionModel(5)
    assert hk.FunctionModel(lambda messages, info, *rest: "ok").name == "function"
