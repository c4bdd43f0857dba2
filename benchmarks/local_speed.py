"""Speed of the `local:` models on this machine: one cold and one warm step per model.

Sends the airline demo's real system prompt and tool specs plus one customer message (the
prompt a demo step sends), first cold, then again with one more user turn so the server can
serve the stable prefix from its prompt cache. Prints one row per request: wall seconds, prompt
tokens evaluated / cached, prompt and generated tokens per second (the server's own timings).

    python benchmarks/local_speed.py [--model qwen2.5-coder-0.5b ...] [--json]

Needs `make local`; a model that is not installed is reported and skipped.
"""

from __future__ import annotations

import argparse
import json
import time

from harnesskit.errors import UsageError
from harnesskit.messages import Message
from harnesskit.models import base
from harnesskit.models._local_install import CATALOGUE
from harnesskit.models.base import ModelRequest
from harnesskit.models.local import LocalModel, server_timings


def airline_prompt() -> tuple[tuple[Message, ...], tuple[dict, ...]]:
    from harnesskit.domains.airline.data import load_database
    from harnesskit.domains.airline.tools import POLICY, tools

    registry = tools(load_database(), mode="strict")
    return (Message(role="system", content=POLICY),), tuple(registry.specs())


def measure(key: str, *, max_tokens: int) -> list[dict]:
    messages, tools = airline_prompt()
    rows = []
    start = time.monotonic()
    with LocalModel(key, ctx_size=8192) as model:
        started = time.monotonic() - start
        turns = [
            "Hi, I want to change the flights of my reservation. My user id is mia_li_3668.",
            "Sorry, I meant reservation NO6JO3. Can you look it up?",
        ]
        history = messages
        for label, text in zip(("cold", "warm"), turns, strict=True):
            history = (*history, Message(role="user", content=text))
            t0 = time.monotonic()
            r = model.request(
                ModelRequest(
                    messages=history,
                    tools=tools,
                    settings={"temperature": 0, "seed": 42, "max_tokens": max_tokens},
                )
            )
            wall = time.monotonic() - t0
            t = server_timings(r)
            rows.append(
                {
                    "model": key,
                    "request": label,
                    "server_start_s": round(started, 2),
                    "wall_s": round(wall, 2),
                    "prompt_evaluated": t.prompt_evaluated if t else None,
                    "prompt_cached": t.prompt_cached if t else None,
                    "generated": t.generated if t else None,
                    "prompt_tok_s": round(t.prompt_tokens_per_second, 1) if t else None,
                    "gen_tok_s": round(t.generated_tokens_per_second, 1) if t else None,
                    "tool_calls": [c.name for c in r.message.tool_calls],
                }
            )
            history = (*history, r.message)
            if r.message.tool_calls:  # answer the call so the next turn is valid
                history = (
                    *history,
                    *(
                        Message(role="tool", tool_call_id=c.id, content='{"ok": true}')
                        for c in r.message.tool_calls
                    ),
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", action="append", choices=sorted(CATALOGUE))
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    base.ALLOW_MODEL_REQUESTS = True
    rows: list[dict] = []
    for key in args.model or sorted(CATALOGUE):
        try:
            rows += measure(key, max_tokens=args.max_tokens)
        except UsageError as exc:
            print(f"skipped {key}: {exc}")
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    cols = list(rows[0]) if rows else []
    print(" | ".join(cols))
    for row in rows:
        print(" | ".join(str(row[c]) for c in cols))


if __name__ == "__main__":
    main()
