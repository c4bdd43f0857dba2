"""Serve N fuzzed chat-completions replies (bodies and SSE streams) to full Harness runs.

    python benchmarks/fuzz_replies.py --n 10000 --seed 1

Each reply is drawn from the hostile families in `benchmarks/_fuzz.py` (lone surrogates, huge
integers, deep nesting, NaN/Infinity, duplicate keys, invalid UTF-8, NUL, 1 MB+ strings, cut
bodies, error objects, garbage) and served by a real loopback server, followed by plain closing
answers; about one reply in 1,000 is a 100 MB body (the client's `max_response_bytes` cap must
drop it). A run counts as a crash when an exception other than a documented harnesskit error
reaches the caller (or sits in `run.error`), a hang when it takes longer than `--hang-seconds`,
and unfinished when it ends without `run.finished` or with an undocumented finish reason.
Crashes are printed with their traceback tail; the last line reads
`replies=N crashes=C hangs=H unfinished=U`.
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import random
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import harnesskit as hk
from benchmarks import _fuzz
from harnesskit.models import base
from harnesskit.models._retry import RetryPolicy
from tests.support.loopback import LoopbackServer, Reply

HUGE = 100_000_000


def main(argv: list[str] | None = None) -> int:
    """Run the fuzz campaign; return 1 when any run crashed, hung or did not finish."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="number of fuzzed replies")
    ap.add_argument("--seed", type=int, default=0, help="seed of the reply generator")
    ap.add_argument("--hang-seconds", type=float, default=20.0, help="a slower run is a hang")
    ap.add_argument("--show", type=int, default=5, help="crashes printed in full")
    args = ap.parse_args(argv)
    base.ALLOW_MODEL_REQUESTS = True
    rng = random.Random(args.seed)
    counts: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    shown = 0
    t0 = time.monotonic()
    huge = b'{"choices": [{"message": {"content": "' + b"x" * HUGE + b'"}}]}'
    with LoopbackServer() as srv:
        retry = RetryPolicy(max_retries=0)
        plain = hk.get_model("openai-compat:fuzz", base_url=srv.url, retry=retry)
        streamed = hk.get_model("openai-compat:fuzz", base_url=srv.url, retry=retry, stream=True)
        for i in range(args.n):
            if i % 1000 == 999:
                reply, model, label = Reply(body=huge), plain, "100MB body"
            elif rng.random() < 0.5:
                reply, model, label = Reply(sse=_fuzz.sse_for(rng)), streamed, "sse"
            else:
                reply, model, label = Reply(body=_fuzz.body_for(rng)), plain, "body"
            out = _fuzz.run_one(srv, reply, model, hang_seconds=args.hang_seconds)
            counts[out.status] += 1
            reasons[str(out.finish_reason)] += 1
            if out.status != "ok" and shown < args.show:
                shown += 1
                print(f"--- reply {i} ({label}): {out.status}\n{out.detail}", flush=True)
            if (i + 1) % 1000 == 0:
                rate = (i + 1) / (time.monotonic() - t0)
                print(f"... {i + 1} replies, {rate:.0f}/s, {dict(counts)}", flush=True)
    print("finish reasons:", dict(sorted(reasons.items())))
    print(
        f"replies={args.n} crashes={counts['crash']} hangs={counts['hang']} "
        f"unfinished={counts['unfinished']}"
    )
    return 1 if counts["crash"] or counts["hang"] or counts["unfinished"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
