"""Replay and score the 200 recorded GPT-4o airline runs, against parsing the recording.

Runs `harnesskit replay <gpt-4o-airline.json>` in this process (every recorded assistant turn
through the harness against a fresh database, events recorded, each run scored like
tau-bench). Baseline: `json.load` of the same recording. Skipped, with a message, until
`harnesskit.domains.airline` exists or when ../shared is absent. Target: at most 10 s.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import time

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

    t = time.perf_counter()
    with RECORDING.open(encoding="utf-8") as fh:
        json.load(fh)
    parse_s = time.perf_counter() - t
    out = io.StringIO()
    t = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = cli.main(["replay", str(RECORDING)])
    replay_s = time.perf_counter() - t
    tail = [line for line in out.getvalue().splitlines() if line.strip()][-3:]
    rows = [
        _common.row(
            "replay",
            figure,
            replay_s,
            "s",
            baseline="json.load of the recording",
            baseline_value=parse_s,
            target=10.0,
            note=f"exit {code}; " + " / ".join(tail),
        )
    ]
    _common.report(rows, args.json)


if __name__ == "__main__":
    main()
