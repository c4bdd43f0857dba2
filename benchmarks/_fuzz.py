"""Fuzzed chat-completions replies (bodies and SSE streams) and one full Harness run per reply.

`reply_for(rng)` draws one hostile reply from the families harnesskit must survive; `run_one`
serves it (then plain closing answers) from a loopback server to a `Harness` run and says how
the run ended. Used by `benchmarks/fuzz_replies.py`.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import tempfile
import time
import traceback
from dataclasses import dataclass
from typing import Any

import harnesskit as hk
from harnesskit.errors import HarnessError

FINISH_REASONS = {
    "stop",
    "max_steps",
    "max_tokens",
    "max_prompt_tokens",
    "max_seconds",
    "max_consecutive_errors",
    "cancelled",
    "paused",
    "error",
}
"""The documented finish reasons (AGENTS.md)."""

_ODD_DIR = tempfile.mkdtemp(prefix="hk-fuzz-")
# a folder holding a name that is not UTF-8: os.listdir returns a lone surrogate
with contextlib.suppress(OSError):
    open(os.path.join(os.fsencode(_ODD_DIR), b"caf\xe9.txt"), "wb").close()


@hk.tool
def echo(text: str) -> str:
    """Return the text."""
    return text


@hk.tool
def listing() -> list[str]:
    """List a folder whose file names are not all UTF-8."""
    return sorted(os.listdir(_ODD_DIR))


@hk.tool
def count(n: int, items: list[Any] | None = None) -> dict[str, Any]:
    """Count."""
    return {"n": n, "items": items or []}


TOOLS = [echo, listing, count]

_STRINGS = [
    "hi \\ud83d",  # a lone high surrogate escape
    "\\ude00 tail",  # a lone low surrogate escape
    "nul \\u0000 byte",
    "<|im_end|> control",
    "</tool_call>",
    "caf\\u00e9",
    "plain",
    "",
]


def _str(rng: random.Random) -> str:
    return rng.choice(_STRINGS)


def _big_int(rng: random.Random) -> str:
    return "9" * rng.choice([4301, 5000, 20000])


def _deep(rng: random.Random, inner: str = "1") -> str:
    n = rng.choice([150, 900, 1100, 100_000])
    return "[" * n + inner + "]" * n


def _args_text(rng: random.Random) -> str:
    kind = rng.randrange(14)
    if kind == 0:
        return '{"text": "' + _str(rng) + '"}'
    if kind == 1:
        return '{"n": ' + _big_int(rng) + "}"
    if kind == 2:
        return '{"n": 1, "items": ' + _deep(rng) + "}"
    if kind == 3:
        return '{"n": ' + rng.choice(["NaN", "Infinity", "-Infinity"]) + "}"
    if kind == 4:
        return '{"text": "a", "text": "b"}'
    if kind == 5:
        return "```json\n" + '{"text": "fenced"}' + rng.choice(["\n```", ""])
    if kind == 6:
        return "{'text': 'python', 'flag': True}"
    if kind == 7:
        return '{"text": "x"} trailing </tool_call>'
    if kind == 8:
        return '{"text": "cut mid'
    if kind == 9:
        return '{"text": "' + "y" * rng.choice([1_100_000, 50_000]) + '"}'
    if kind == 10:
        return json.dumps(json.dumps({"text": "double"}))
    if kind == 11:
        return "null"
    if kind == 12:
        return rng.choice(["[]", "3", '"str"', "true"])
    return "".join(chr(rng.randrange(0, 0x110000)) for _ in range(rng.randrange(1, 40)))


def _message(rng: random.Random) -> str:
    """A JSON text of an assistant message (possibly hostile)."""
    kind = rng.randrange(6)
    if kind == 0:
        return '{"role": "assistant", "content": "' + _str(rng) + '"}'
    calls = []
    for i in range(rng.randrange(1, 4)):
        name = rng.choice(["echo", "listing", "count", "no_such_tool", "", "ech\\ud800o"])
        cid = rng.choice([f'"c{i}"', '""', "null", "7", f'"c{i}"'])
        calls.append(
            '{"id": '
            + cid
            + ', "type": "function", "function": {"name": "'
            + name
            + '", "arguments": '
            + json.dumps(_args_text(rng))
            + "}}"
        )
    content = "null" if kind < 4 else '"' + _str(rng) + '"'
    return (
        '{"role": "assistant", "content": ' + content + ', "tool_calls": [' + ",".join(calls) + "]}"
    )


def _usage(rng: random.Random) -> str:
    kind = rng.randrange(5)
    if kind == 0:
        return '{"prompt_tokens": ' + _big_int(rng) + ', "completion_tokens": 1}'
    if kind == 1:
        return '{"prompt_tokens": NaN, "completion_tokens": Infinity}'
    if kind == 2:
        return '{"prompt_tokens": -5, "completion_tokens": "x"}'
    if kind == 3:
        return '{"prompt_tokens": 10, "completion_tokens": 1024}'
    return '{"prompt_tokens": 10, "completion_tokens": 3}'


def body_for(rng: random.Random) -> bytes:
    """One non-streamed response body (bytes, possibly not JSON at all)."""
    kind = rng.randrange(12)
    finish = rng.choice(['"stop"', '"tool_calls"', '"length"', "null", "5"])
    good = (
        '{"id": "x", "choices": [{"index": 0, "message": '
        + _message(rng)
        + ', "finish_reason": '
        + finish
        + '}], "usage": '
        + _usage(rng)
        + "}"
    )
    if kind <= 5:
        return good.encode()
    if kind == 6:
        return b'{"choices": ' + _deep(rng).encode() + b"}"
    if kind == 7:
        raw = bytearray(good.encode())
        for _ in range(rng.randrange(1, 5)):
            raw.insert(rng.randrange(len(raw) + 1), rng.choice([0xFF, 0xFE, 0xC3, 0x80, 0xED]))
        return bytes(raw)
    if kind == 8:
        return good.encode()[: rng.randrange(1, len(good))]
    if kind == 9:
        return rng.choice([b"", b"null", b"[]", b'"text"', b"<html>502</html>", b"\x00\x00"])
    if kind == 10:
        return b'{"error": {"message": "' + _str(rng).encode() + b'", "code": 503}}'
    return good.replace('"choices"', '"choices", "choices"', 1).encode()


def sse_for(rng: random.Random) -> list[str]:
    """One SSE stream as event texts (possibly hostile)."""
    events: list[str] = []
    text = rng.choice(["\\ud83d", "\\ud83d\\ude00", "plain", "\\udce9"])
    if rng.random() < 0.5:  # an emoji split across two chunks
        for part in ("\\ud83d", "\\ude00"):
            events.append('data: {"choices":[{"index":0,"delta":{"content":"' + part + '"}}]}\n\n')
    else:
        events.append('data: {"choices":[{"index":0,"delta":{"content":"' + text + '"}}]}\n\n')
    kind = rng.randrange(8)
    if kind == 0:
        args = json.dumps(_args_text(rng))
        for i in range(0, len(args), max(1, len(args) // 3)):
            piece = json.dumps(args[i : i + max(1, len(args) // 3)])
            events.append(
                'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"s1",'
                '"function":{"name":"echo","arguments":' + piece + "}}]}}]}\n\n"
            )
    elif kind == 1:
        events.append('data: {"choices":' + _deep(rng) + "}\n\n")
    elif kind == 2:
        events.append('data: {"usage": ' + _usage(rng) + "}\n\n")
    elif kind == 3:
        events.append('data: {"error": {"message": "over capacity", "code": 503}}\n\n')
    elif kind == 4:
        events.append(": ping\n\n")
        events.append("data: not json\n\n")
    elif kind == 5:
        events.append("data: " + "z" * 1_100_000 + "\n\n")
    if rng.random() < 0.8:
        events.append('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n')
    if rng.random() < 0.8:
        events.append("data: [DONE]\n\n")
    return events


@dataclass
class Outcome:
    """How one fuzzed run ended."""

    status: str
    """`ok`, `crash` (an undocumented exception), `hang` or `unfinished`."""
    detail: str = ""
    finish_reason: str | None = None
    seconds: float = 0.0


def run_one(srv: Any, reply: Any, model: Any, *, hang_seconds: float = 20.0) -> Outcome:
    """Serve `reply`, then closing answers, to one full Harness run; classify the end."""
    from tests.support.loopback import Reply, completion

    srv._replies.clear()
    srv.script(reply, *[Reply(json=completion("done"))] * 4)
    h = hk.Harness(TOOLS, model, limits=hk.Limits(max_steps=3, max_seconds=60))
    t0 = time.monotonic()
    run = None
    try:
        run = h.start("fuzz")
        run.run()
    except HarnessError as exc:  # documented: the caller may get these
        detail = f"{type(exc).__name__}"
    except BaseException as exc:
        return Outcome("crash", "".join(traceback.format_exception(exc)[-4:]))
    else:
        detail = ""
    seconds = time.monotonic() - t0
    if run is None:
        return Outcome("crash", f"no run: {detail}", seconds=seconds)
    if run.error is not None and not isinstance(run.error, HarnessError):
        return Outcome("crash", f"run.error {type(run.error).__name__}: {run.error}"[:2000])
    finished = [e for e in run.log if e.type == "run.finished"]
    reason = run.finish_reason
    if not finished or reason not in FINISH_REASONS:
        return Outcome("unfinished", f"finish_reason={reason!r} {detail}", reason, seconds)
    if seconds > hang_seconds:
        return Outcome("hang", f"{seconds:.1f}s", reason, seconds)
    return Outcome("ok", detail, reason, seconds)
