"""Credentials in `base_url` (userinfo or query) never show in a repr or an error message.

`repr(OpenAICompatModel(base_url="http://h/v1?api_key=SECRET"))` showed the key, as did every
hint and timeout message quoting the base URL; the request itself went to
`/v1?api_key=SECRET/chat/completions`, the path glued onto the query.
"""

from __future__ import annotations

import pytest

from harnesskit.errors import ModelError, UsageError
from harnesskit.models import get_model
from harnesskit.models._retry import RetryPolicy
from harnesskit.models.openai_compat import OpenAICompatModel
from tests.support.edge_client import FAST, ask
from tests.support.loopback import Reply, completion

SECRET = "SeCrEt-0123456789"


def _make(base_url: str, **kw: object) -> OpenAICompatModel:
    kw.setdefault("retry", FAST)
    return OpenAICompatModel("edge", base_url=base_url, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"http://h/v1?api_key={SECRET}", "http://h/v1?api_key=***"),
        (f"http://h/v1?api-version=2024-06-01&key={SECRET}", "?api-version=2024-06-01&key=***"),
        (f"http://h/v1?access_token={SECRET}&sig={SECRET}", "?access_token=***&sig=***"),
        (f"http://user:{SECRET}@h/v1?code={SECRET}", "http://h/v1?code=***"),
    ],
    ids=["api_key", "key-beside-version", "token-and-sig", "userinfo-and-code"],
)
def test_a_credential_in_base_url_is_masked_in_repr_and_str(url, shown):
    model = OpenAICompatModel("m", base_url=url)

    for text in (repr(model), str(model), model.base_url):
        assert SECRET not in text
        assert shown in text


def test_the_key_in_the_query_is_sent_and_the_path_goes_before_it(server):
    server.script(Reply(json=completion("hi")))
    _make(f"{server.url}?api_key={SECRET}").request(ask())

    assert server.requests[0].path == f"/v1/chat/completions?api_key={SECRET}"


def test_an_error_echoing_the_url_never_shows_the_key(server):
    echo = {"error": {"message": f"no route for /v1/chat/completions?api_key={SECRET}"}}
    server.script(Reply(status=404, json=echo))
    model = _make(f"{server.url}?api_key={SECRET}")
    with pytest.raises(ModelError) as info:
        model.request(ask())

    text = f"{info.value} {info.value.body}"
    assert SECRET not in text
    assert "check base_url (" in text and "api_key=***" in text


def test_a_timeout_message_never_shows_the_key(server):
    server.script(Reply(json=completion("late"), delay_seconds=1.0))
    model = _make(
        f"{server.url}?token={SECRET}", timeout_seconds=0.2, retry=RetryPolicy(max_retries=0)
    )
    with pytest.raises(ModelError, match=r"timeout after .*token=\*\*\*") as info:
        model.request(ask())
    assert SECRET not in str(info.value)


def test_a_refused_base_url_never_shows_the_key():
    with pytest.raises(UsageError) as info:
        get_model("openai-compat:m", base_url=f"ftp://h/v1?api_key={SECRET}")
    assert SECRET not in str(info.value) and "api_key=***" in str(info.value)
