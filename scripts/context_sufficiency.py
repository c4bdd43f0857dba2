"""Regenerate datasets/context_sufficiency.json: tokens vs sufficiency per built-in policy.

Replays the 200 recorded GPT-4o airline runs (../shared/datasets/...) once each and judges every
request under each policy with `hk.sufficiency` (R-C9), as `harnesskit sufficiency` does.
Takes a few minutes; run it niced from the repository root:

    PYTHONPATH=$PWD nice -n 10 python scripts/context_sufficiency.py
"""

import json
import subprocess
import sys
from pathlib import Path

from harnesskit.analysis.sufficiency import combine, sufficiency
from harnesskit.domains import airline

RECORDED = Path(
    "../shared/datasets/sierra-research__tau-bench/historical_trajectories/gpt-4o-airline.json"
)
POLICIES = ("full-history", "window", "default", "summary")
KEYS = (
    "calls",
    "calls_complete",
    "values",
    "values_present",
    "values_bindable",
    "values_derived",
    "requests",
    "unbuildable",
    "history_token_ratio",
    "with_system_ratio",
    "with_tools_ratio",
)


def main() -> int:
    """Measure every policy on every recorded run and write the JSON; returns the exit code."""
    commit = subprocess.run(  # the code measured: HEAD when the measure starts
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    runs = airline.load_recorded_runs(RECORDED)
    frames: dict[str, list] = {p: [] for p in POLICIES}
    for run in runs:
        replayed = airline.replay_run(run)
        for p in POLICIES:
            frames[p].append(sufficiency(replayed, p, shapes=airline.VALUE_SHAPES))
    out = {
        "source": str(RECORDED.name),
        "runs": len(runs),
        "commit": commit,
        "policies": {
            p: {k: combine(frames[p]).attrs["summary"][k] for k in KEYS} for p in POLICIES
        },
    }
    path = Path("datasets/context_sufficiency.json")
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
