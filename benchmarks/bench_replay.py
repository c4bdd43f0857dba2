"""Replay and score the 200 recorded GPT-4o airline runs, against parsing the recording.

Runs `harnesskit replay <gpt-4o-airline.json>` in this process (every recorded assistant turn
through the harness against a fresh database, events recorded, each run scored like
tau-bench; a process pool with one worker per CPU). Baseline: `json.load` of the same
recording. A second row replays in this process only (`workers=1`), measured in the same
process right after. CPU time is that of this process plus its workers, divided by the number
of processes that ran at once (what the wall time would be on idle cores). Skipped, with a
message, until `harnesskit.domains.airline` exists or when ../shared is absent. Target (issue
19): at most 5 s wall on a 2-core machine.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import json
import os
import resource
import time
from collections.abc import Callable
from typing import Any

import _common

RECORDING = (
    _common.SHARED
    / "datasets"
    / "sierra-research__tau-bench"
    / "historical_trajectories"
    / "gpt-4o-airline.json"
)


def main() -> None:
    args = _common.parser(__doc__.splitlines()[0]).parse_args()
    figure = "replay + score 200 recorded airline runs"
    try:
        importlib.import_module("harnesskit.domains.airline")
    except ImportError:
        rows = [_common.skipped("replay", figure, "harnesskit.domains.airline does not exist yet")]
        _common.report(rows, args.json)
        return
    if not RECORDING.is_file():
        rows = [_common.skipped("replay", figure, f"recording not found at {RECORDING}")]
        _common.report(rows, args.json)
        return
    from harnesskit import cli
    from harnesskit.domains.airline import jobs

    t = time.perf_counter()
    c = time.process_time()
    with RECORDING.open(encoding="utf-8") as fh:
        json.load(fh)
    parse_s, parse_cpu = time.perf_counter() - t, time.process_time() - c
    pooled = "workers" in inspect.signature(jobs.run_replay).parameters
    workers = (os.cpu_count() or 1) if pooled else 1
    out = io.StringIO()
    codes: list[int] = []
    replay_s, replay_cpu = timed(lambda: codes.append(cli.main(["replay", str(RECORDING)])), out)
    code = codes[0]
    tail = [line for line in out.getvalue().splitlines() if line.strip()][-3:]
    rows = [
        _common.row(
            "replay",
            figure + (f" ({workers} workers)" if pooled else ""),
            replay_s,
            "s",
            baseline="json.load of the recording",
            baseline_value=parse_s,
            target=5.0,
            cpu_value=replay_cpu / workers,
            cpu_baseline_value=parse_cpu,
            note=f"exit {code}; CPU {replay_cpu:.1f} s over {workers} process(es); "
            + " / ".join(tail),
        )
    ]
    if pooled:
        serial_s, serial_cpu = timed(
            lambda: jobs.run_replay(RECORDING, echo=None, workers=1), io.StringIO()
        )
        rows.append(
            _common.row(
                "replay",
                figure + " (in this process, workers=1)",
                serial_s,
                "s",
                baseline="json.load of the recording",
                baseline_value=parse_s,
                cpu_value=serial_cpu,
                cpu_baseline_value=parse_cpu,
            )
        )
    _common.report(rows, args.json)


def timed(fn: Callable[[], Any], out: io.StringIO) -> tuple[float, float]:
    """Wall seconds and CPU seconds (this process plus finished children) of `fn()`."""

    def cpu() -> float:
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time() + kids.ru_utime + kids.ru_stime

    c = cpu()
    t = time.perf_counter()
    with contextlib.redirect_stdout(out):
        fn()
    return time.perf_counter() - t, cpu() - c


if __name__ == "__main__":
    main()
