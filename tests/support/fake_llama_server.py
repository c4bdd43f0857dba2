"""A stand-in for `llama-server` (a real process on 127.0.0.1) for `local:` lifecycle tests.

It accepts llama-server's flags, answers `/health` with 503 for its first 0.3 s (loading) and
then 200, `/props` with a `build_info`, and `/v1/chat/completions` with a fixed tool call and
llama-server-shaped `usage` and `timings`. `--exit-at-start N` makes it exit with code N.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--host", default="127.0.0.1")
parser.add_argument("--exit-at-start", type=int, default=None)
args, _ = parser.parse_known_args()
if args.exit_at_start is not None:
    print("fake llama-server: failed to load model", flush=True)
    sys.exit(args.exit_at_start)
STARTED = time.monotonic()
ARGV = sys.argv[1:]

COMPLETION = {
    "object": "chat.completion",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            },
        }
    ],
    "usage": {
        "prompt_tokens": 120,
        "completion_tokens": 9,
        "total_tokens": 129,
        "prompt_tokens_details": {"cached_tokens": 100},
    },
    "timings": {
        "cache_n": 100,
        "prompt_n": 20,
        "prompt_ms": 400.0,
        "predicted_n": 9,
        "predicted_ms": 900.0,
    },
}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):  # keep the log quiet
        pass

    def _json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            loading = time.monotonic() - STARTED < 0.3
            self._json(503 if loading else 200, {"status": "loading" if loading else "ok"})
        elif self.path == "/props":
            self._json(200, {"build_info": "b0-fake", "argv": ARGV})
        else:
            self._json(404, {"error": {"message": "not found"}})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self._json(200, COMPLETION)


print(f"fake llama-server listening on {args.host}:{args.port}", flush=True)
HTTPServer((args.host, args.port), Handler).serve_forever()
