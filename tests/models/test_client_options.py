"""The HTTP client's options are refused when the model is made, not at its first request.

A timeout given as `"5"` or `-1`, a truthy `stream="no"`, `headers="x"` or a callback of the
wrong arity failed (or misbehaved) only once a run was under way, with a raw `TypeError` /
`ValueError` / `AttributeError`. Each is now a `UsageError` naming the option and what it takes.
"""

from __future__ import annotations

import re

import pytest

import harnesskit as hk
from harnesskit.errors import RateLimitError, UsageError
from harnesskit.models import get_model
from tests.support.edge_client import ask, make
from tests.support.loopback import Reply, completion


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


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("timeout_seconds", 1e300),  # was a raw OverflowError at the first request
        ("timeout_seconds", float("nan")),
        ("timeout_seconds", 86_401),
        ("max_wait_seconds", 1e300),
    ],
)
def test_a_timeout_out_of_range_is_refused_at_construction(server, option, value):
    with pytest.raises(UsageError, match=rf"\({option}=\.\.\.\) takes .* at most 86400"):
        get_model("openai-compat:edge", base_url=server.url, **{option: value})
    assert server.requests == []


def test_the_longest_timeout_accepted_still_sends(server):
    server.script(Reply(json=completion("ok")))
    assert make(server, timeout_seconds=86_400).request(ask()).message.content == "ok"


@pytest.mark.parametrize(
    ("headers", "said"),
    [
        ({"X-A": "\u00fcn\u00ef"}, "header 'X-A' holds a non-ASCII character (U+00FC)"),
        ({"X-A": "v\r\nX-Injected: 1"}, "header 'X-A' holds a line break at position 1"),
        ({"X-A": "v\x00"}, "header 'X-A' holds a NUL character"),
        ({"X A:": "v"}, "header name 'X A:' is not an HTTP field name"),
        ({"": "v"}, "header name '' is not an HTTP field name"),
        ({"X-\u00c4": "v"}, "is not an HTTP field name"),
        ({"Content-Length": "5"}, "'Content-Length' is set by the HTTP client"),
        ({"host": "evil.example"}, "'host' is set by the HTTP client"),
        ({"Transfer-Encoding": "chunked"}, "'Transfer-Encoding' is set by the HTTP client"),
    ],
    ids=[
        "non-ascii",
        "crlf",
        "nul",
        "space-colon",
        "empty",
        "non-ascii-name",
        "content-length",
        "host",
        "transfer-encoding",
    ],
)
def test_a_header_httpx_cannot_send_is_refused_naming_it(server, headers, said):
    with pytest.raises(UsageError, match=re.escape(said)):
        make(server, headers=headers)
    assert server.requests == []


def test_a_header_value_is_not_shown_when_refused():
    with pytest.raises(UsageError) as info:
        get_model(
            "openai-compat:edge",
            base_url="http://127.0.0.1:9/v1",
            headers={"X-Api-Key": "s3cr\u00e9t-value"},
        )
    assert "s3cr" not in str(info.value) and "X-Api-Key" in str(info.value)


def test_an_api_key_with_a_line_break_is_refused_without_showing_it():
    with pytest.raises(UsageError, match="api_key=...\\) holds a line break") as info:
        get_model("openai-compat:edge", base_url="http://127.0.0.1:9/v1", api_key="sk-a\r\nX: 1")
    assert "sk-a" not in str(info.value)


def test_visible_ascii_headers_with_spaces_and_tabs_are_sent(server):
    server.script(Reply(json=completion("ok")))
    make(server, headers={"X-Client": "note book\tv1", "x_b.c~": "!#$"}).request(ask())
    assert server.requests[0].headers["x-client"] == "note book\tv1"


@pytest.mark.parametrize(
    "kw",
    [
        {"initial_backoff_seconds": 1e300, "max_backoff_seconds": 1e300},  # sleep() overflowed
        {"max_backoff_seconds": float("nan")},  # sleep(nan): a raw ValueError
        {"max_retry_after_seconds": float("inf")},
        {"max_retries": "3"},  # a raw TypeError
        {"max_retries": True},
    ],
    ids=["huge-backoff", "nan-backoff", "inf-retry-after", "str-retries", "bool-retries"],
)
def test_a_retry_policy_out_of_range_is_refused_when_made(kw):
    from harnesskit.models._retry import RetryPolicy

    with pytest.raises(UsageError, match=r"RetryPolicy\(\w+=\.\.\.\) takes"):
        RetryPolicy(**kw)


def test_a_server_asking_to_wait_past_the_retry_after_cap_is_not_waited_for(server):
    from harnesskit.models._retry import RetryPolicy

    server.script(Reply(status=429, headers={"Retry-After": "1e300"}), Reply(json=completion()))
    retry = RetryPolicy(max_retries=1, max_retry_after_seconds=86_400)
    with pytest.raises(RateLimitError, match="longer than max_retry_after_seconds=86400"):
        make(server, retry=retry).request(ask())
