"""Search over a 100k-event log (R-V8): index build and query times, printed (never asserted).

Usage: PYTHONPATH=. python benchmarks/trajectory_search.py [n_events]
"""

from __future__ import annotations

import statistics
import sys
import time

import harnesskit as hk

WORDS = ("order seat payment refund flight cabin baggage delay reservation passenger").split()  # noqa: SIM905


def build_log(n: int) -> hk.EventLog:
    """A log of `n` events: tool calls and results, model responses, user turns, 3 branches."""
    ticks = iter(range(1_700_000_000, 1_700_000_000 + n + 10_000))
    log = hk.EventLog(None, clock=lambda: float(next(ticks)), redactor=None)
    log.append("task.contract", {"run_id": "bench"})
    tr = hk.Trajectory(log)
    branches = ["main"]
    while len(log) < n:
        i = len(log)
        branch = branches[i % len(branches)]
        w = WORDS[i % len(WORDS)]
        k = i % 5
        if k == 0:
            log.append(
                "user.message", {"content": f"please check the {w} of R{i}"}, branch_id=branch
            )
        elif k == 1:
            msg = {"role": "assistant", "content": f"I will look at {w} {i}"}
            log.append(
                "model.response", {"step": i // 5, "message": msg}, branch_id=branch, source="model"
            )
        elif k == 2:
            log.append(
                "tool.call",
                {"step": i // 5, "tool": "get", "arguments": {"id": f"R{i}"}},
                branch_id=branch,
            )
        elif k == 3:
            content = f'{{"id": "R{i}", "{w}": "{i * 7 % 1000}", "status": "ok"}}'
            log.append(
                "tool.result",
                {"step": i // 5, "tool": "get", "ok": True, "content": content},
                branch_id=branch,
            )
        elif i % 1000 == 4 and len(branches) < 3:
            tr.fork(i, f"b{len(branches)}")
            branches.append(f"b{len(branches)}")
        else:
            tr.supersede(i - 1, reason="newer data") if i % 50 == 4 else log.append(
                "checkpoint", {"stage": "context-ready"}, branch_id=branch
            )
    return log


def timed(fn, repeat: int = 5) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    t0 = time.perf_counter()
    log = build_log(n)
    print(f"built a log of {len(log):,} events in {time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    import pandas  # noqa: F401  (a one-time cost of the session, not of search)

    print(f"import pandas: {(time.perf_counter() - t0) * 1000:.0f} ms (once per session)")
    tr = hk.Trajectory(log)
    t0 = time.perf_counter()
    tr.search(type="checkpoint")
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    tr.search("refund")
    first_text = time.perf_counter() - t0
    print(f"first search (column index + status fold): {first * 1000:.0f} ms")
    print(f"first text search (adds the payload text index): {first_text * 1000:.0f} ms")
    for _ in range(100):
        log.append("user.message", {"content": "one more refund request"})
    seconds, _ = timed(lambda: tr.search("refund"), repeat=1)
    print(f"text search after 100 new events (index extended): {seconds * 1000:.0f} ms")
    since = log[n // 2].created_at
    queries = {
        "text='refund'": lambda: tr.search("refund"),
        "text='r99999' (rare)": lambda: tr.search("r99999"),
        "type='tool.result'": lambda: tr.search(type="tool.result"),
        "branch='b1', status='active'": lambda: tr.search(branch="b1", status="active"),
        "status='superseded'": lambda: tr.search(status="superseded"),
        "since=<middle>, type='user.message'": lambda: tr.search(since=since, type="user.message"),
        "text+type+branch+status+time": lambda: tr.search(
            "seat", type="tool.result", branch="main", status="active", since=since
        ),
        "no filter (all rows)": lambda: tr.search(),
    }
    print(f"{'query':40} {'median ms':>10} {'rows':>8}")
    for name, fn in queries.items():
        seconds, df = timed(fn)
        print(f"{name:40} {seconds * 1000:10.1f} {len(df):8,}")


if __name__ == "__main__":
    main()
