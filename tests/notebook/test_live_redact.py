"""The live display never shows a secret in clear (R-S1), even one split across deltas."""

from __future__ import annotations

import io

import pytest

import harnesskit as hk
from harnesskit.messages import StreamDelta
from harnesskit.notebook import LiveStream

KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUv123456"
ANSWER = (
    f'Sure. Your key is {KEY} and password: "pa\'ss wordLEAK" ok\nnext line here\n'
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowPEMLEAK\n-----END RSA PRIVATE KEY-----\ndone"
)
CLEAR = ("AbCdEfGh", "wordLEAK", "pa'ss", "PEMLEAK")


def test_a_streamed_answer_with_a_key_is_shown_redacted_in_text_mode():
    out = io.StringIO()
    live = LiveStream(display="text", stream=out)
    model = hk.ScriptedModel([f"Your key is {KEY} - keep it safe.\nBye"])
    run = hk.Harness([], model, settings={"stream": True}, on_delta=live).run("my key?")
    assert run.finish_reason == "stop"
    assert out.getvalue() == "Your key is [REDACTED:api_key] - keep it safe.\nBye"
    assert KEY in live.text  # kept exact for the program


@pytest.mark.parametrize("size", [1, 2, 3, 7, 50])
def test_a_secret_split_across_deltas_is_never_written_in_clear(size):
    out = io.StringIO()
    live = LiveStream(display="text", stream=out)
    live(StreamDelta(kind="start"))
    for i in range(0, len(ANSWER), size):
        live(StreamDelta(kind="text", text=ANSWER[i : i + size]))
        assert not any(c in out.getvalue() for c in CLEAR), out.getvalue()
        assert not any(c in live.html() for c in CLEAR)
    live.end()
    assert out.getvalue() == (
        'Sure. Your key is [REDACTED:api_key] and password: "[REDACTED:password]" ok\n'
        "next line here\n[REDACTED:private_key]\ndone"
    )


def test_tool_call_arguments_are_shown_redacted_and_blocks_stay_in_order():
    out = io.StringIO()
    live = LiveStream(display="text", stream=out)
    args = '{"user": "bob", "password": "hunter22LEAK"}'
    live(StreamDelta(kind="start"))
    live(StreamDelta(kind="text", text="Saving "))
    live(StreamDelta(kind="text", text="it."))
    for i in range(0, len(args), 4):
        live(StreamDelta(kind="tool_call", index=0, name="save", text=args[i : i + 4]))
        assert "LEAK" not in out.getvalue()
    live.end()
    assert out.getvalue() == 'Saving it.{"user": "bob", "password": "[REDACTED:password]"}'
    assert "LEAK" not in live.html()


def test_redactor_none_shows_the_text_exact_as_it_arrives():
    out = io.StringIO()
    live = LiveStream(display="text", stream=out, redactor=None)
    for piece in ("key ", KEY[:10], KEY[10:]):
        live(StreamDelta(kind="text", text=piece))
    assert out.getvalue() == f"key {KEY}"
