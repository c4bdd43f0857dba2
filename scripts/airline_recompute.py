"""Recompute the reward of every recorded τ-bench airline run with the domain layer (no harness).

Usage: python scripts/airline_recompute.py [PATH] [--province]
Prints agreement with the recorded rewards, each disagreement and output-divergence causes.
"""

from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path

from harnesskit.domains.airline.recompute import recompute_run
from harnesskit.domains.airline.scoring import expected_state_hash, pass_hat_ks
from harnesskit.domains.airline.trajectories import load_recorded_runs

DEFAULT = (
    Path(__file__).resolve().parents[1]
    / "../shared/datasets/sierra-research__tau-bench/historical_trajectories/gpt-4o-airline.json"
)


def main() -> None:
    """Recompute every run and print the agreement report."""
    parser = argparse.ArgumentParser()
    parser.add_argument("path", nargs="?", default=str(DEFAULT))
    parser.add_argument(
        "--province", action="store_true", help="use the recording-time address key"
    )
    args = parser.parse_args()
    key = "province" if args.province else "state"
    t0 = time.perf_counter()
    runs = load_recorded_runs(args.path)
    t1 = time.perf_counter()
    results = [recompute_run(r, address_key=key) for r in runs]
    t2 = time.perf_counter()
    agree = sum(r.agrees for r in results)
    print(f"loaded {len(runs)} runs in {t1 - t0:.2f}s, recomputed in {t2 - t1:.2f}s")
    print(f"agreement {agree}/{len(results)}")
    mean = sum(r.result.reward for r in results) / len(results)
    rec = sum(r.recorded_reward for r in results) / len(results)
    print(f"mean reward computed {mean:.4f} recorded {rec:.4f}")
    by_task = collections.defaultdict(list)
    for r in results:
        by_task[r.task_id].append(r.result.reward)
    print("pass^k", {k: round(v, 4) for k, v in pass_hat_ks(by_task).items()})
    for r in results:
        if not r.agrees:
            print(
                f"DISAGREE task {r.task_id} trial {r.trial}: recorded {r.recorded_reward} "
                f"computed {r.result.reward} ({r.result.reason})"
            )
    causes = collections.Counter((d.tool, d.cause) for r in results for d in r.divergences)
    print("output divergences:", dict(causes))
    # ground-truth hash check against the recording
    gt_ok = gt_n = 0
    for run in runs:
        info = (run.reward_info or {}).get("info") or {}
        if "gt_data_hash" in info:
            gt_n += 1
            gt_ok += expected_state_hash(run.task.actions, address_key=key) == info["gt_data_hash"]
    print(f"recorded gt_data_hash reproduced: {gt_ok}/{gt_n}")
    print("runs reusing a tool_call id:", sum(1 for r in results if r.reused_call_ids))


if __name__ == "__main__":
    main()
