"""The client's own API key, echoed back encoded or inside an answer, never reaches a log (R-S1).

A key without a known vendor prefix is found only as a literal. The client scrubbed it from
its errors raw and JSON-escaped, but a server echoing it percent-encoded (`zq%2BKey...`) or in
base64 (a proxy logging a `Basic` header) leaked it into the error, the `model.retry` and
`run.finished` events and the `.jsonl`; and a 200 answer whose text holds the key (a proxy's
debug text, a prompt-injected model) was logged verbatim, as the log's redactor did not know
the key. Now the model names its secrets (`secrets()`) and the run's log redactor takes them
as literals for every event.
"""

from __future__ import annotations

import base64
import re
import urllib.parse

import pytest

import harnesskit as hk
from harnesskit.errors import ModelError
from harnesskit.models._retry import RetryPolicy
from harnesskit.models.fallback import FallbackModel
from tests.support.edge_client import ask, make
from tests.support.loopback import Reply, completion

KEY = "zq+Key/With=Odd&Chars9876"
PASSWORD = "S3cretPw99xyz"
ECHOES = {
    "percent": urllib.parse.quote(KEY, safe=""),
    "percent-lower-hex": re.sub(
        r"%[0-9A-F]{2}", lambda m: m.group().lower(), urllib.parse.quote(KEY)
    ),
    "plus": urllib.parse.quote_plus(KEY),
    "base64": base64.b64encode(KEY.encode()).decode(),
    "basic-user": base64.b64encode(b"user:" + KEY.encode()).decode(),
    "basic-key-colon": base64.b64encode(KEY.encode() + b":").decode(),
}


def _forms(secret: str) -> list[str]:
    """How a secret may be found in a log line: raw, percent-encoded, base64 cores."""
    raw = secret.encode()
    return [
        secret,
        urllib.parse.quote(secret, safe=""),
        base64.b64encode(raw).decode().rstrip("="),
        # the part of `user:<secret>` in base64 the secret alone decides
        base64.b64encode(b"user:" + raw).decode()[8:-4],
    ]


def _leaks(text: str, secret: str = KEY) -> list[str]:
    return [f for f in _forms(secret) if f in text]


def _log_text(tmp_path) -> str:
    return "".join(p.read_text() for p in tmp_path.glob("*.jsonl"))


@pytest.mark.parametrize("echo", list(ECHOES), ids=str)
def test_an_encoded_echo_of_the_key_is_scrubbed_from_the_error_and_the_log(server, tmp_path, echo):
    message = f"Incorrect API key provided: {ECHOES[echo]}"
    server.script(Reply(status=401, json={"error": {"message": message}}))
    model = make(server, api_key=KEY, retry=RetryPolicy(max_retries=0))
    with pytest.raises(ModelError) as info:
        model.request(ask())
    assert ECHOES[echo] not in str(info.value) and not _leaks(str(info.value))
    assert "[REDACTED:secret]" in str(info.value)

    server.script(Reply(status=401, json={"error": {"message": message}}))
    run = hk.Harness([], model, log_dir=tmp_path).run("hi")
    assert run.finish_reason == "error"
    log = _log_text(tmp_path)
    assert ECHOES[echo] not in log and not _leaks(log)


def test_an_answer_holding_the_key_is_logged_without_it(server, tmp_path):
    said = f"Your key is {KEY}, or {ECHOES['percent']}, or {ECHOES['base64']}."
    server.script(Reply(json=completion(said)))
    model = make(server, api_key=KEY)
    h = hk.Harness([], model, log_dir=tmp_path)
    run = h.run("what is my key?")
    assert run.finish_reason == "stop"
    log = _log_text(tmp_path)
    assert "Your key is [REDACTED:secret]" in log
    assert not _leaks(log)
    assert KEY not in repr(h.redactor) and KEY not in repr(h.run_redactor())
    assert h.redactor.literals == ()  # the harness's own redactor stays as given


def test_url_credentials_in_an_answer_are_logged_without_them(server, tmp_path):
    url = server.url.replace("http://", f"http://admin:{PASSWORD}@")
    server.script(Reply(json=completion(f"the proxy saw admin:{PASSWORD}")))
    model = hk.get_model("openai-compat:edge", base_url=url)
    run = hk.Harness([], model, log_dir=tmp_path).run("hi")
    assert run.finish_reason == "stop"
    assert not _leaks(_log_text(tmp_path), PASSWORD)


def test_a_fallback_chain_names_every_node_s_key(server, tmp_path):
    server.script(Reply(json=completion(f"echo {KEY}")))
    chain = FallbackModel([make(server, api_key=KEY)])
    hk.Harness([], chain, log_dir=tmp_path).run("hi")
    assert not _leaks(_log_text(tmp_path))


def test_a_resumed_run_scrubs_the_key_too(server, tmp_path):
    server.script(Reply(json=completion("first")))
    model = make(server, api_key=KEY)
    run = hk.Harness([], model, log_dir=tmp_path).run("hi")
    run.log.close()
    server.script(Reply(json=completion(f"second: {KEY}")))
    again = hk.Harness([], make(server, api_key=KEY), log_dir=tmp_path).resume(run.log.path)
    again.send("and now?").run()
    assert "second: [REDACTED:secret]" in _log_text(tmp_path)
    assert not _leaks(_log_text(tmp_path))
