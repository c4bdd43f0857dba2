"""Transport audit (R-A7) of the recorded τ-bench GPT-4o airline runs, replayed through harnesskit.

Usage: `PYTHONPATH=$PWD python scripts/audit_recorded_runs.py [PATH] [--limit N]`

Each recorded run is replayed with `airline.replay_run(..., redact=False)`: redaction would hide
e-mail addresses the model derived user ids from, and the audit must see what the model saw.
Prints the verdict, the counts, where typed ids came from (by kind and by source tool), every
altered or invented id, and how many runs restate tool results in assistant text.
"""

from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path

import harnesskit as hk
from harnesskit.domains import airline

DEFAULT = (
    Path(__file__).resolve().parents[2]
    / "shared/datasets/sierra-research__tau-bench/historical_trajectories/gpt-4o-airline.json"
)


def main() -> None:
    """Replay, audit and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=str(DEFAULT))
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    runs = airline.load_recorded_runs(args.path, limit=args.limit)
    logs = [airline.replay_run(run, redact=False).log for run in runs]
    audit = hk.data.TransportAudit.merge(hk.transport_audit(log) for log in logs)
    print(f"{len(logs)} runs replayed and audited in {time.perf_counter() - started:.0f} s")
    print(audit.verdict)
    for key, value in audit.counts.items():
        print(f"  {key:28} {value}")
    typed = [r for r in audit.rows if r["transport"] == "typed" and r["kind"] != "array"]
    whole = [r for r in typed if not r["in_text"]]
    print("typed ids by kind and origin:")
    by = collections.Counter((r["kind"], r["origin"] or "nowhere") for r in whole)
    for (kind, origin), n in sorted(by.items()):
        print(f"  {kind:16} {origin:8} {n}")
    tools = collections.Counter(
        r["source"].split("(")[-1].rstrip(")") for r in whole if r["origin"] == "tool"
    )
    print("ids typed from tool results, by the tool that produced them:", dict(tools))
    for r in whole:
        if r["status"] in ("altered", "invented"):
            print(f"  {r['status']:8} {r['run_id']} {r['tool']}{r['path']} = {r['value']!r}"
                  f" ({r['how']}; closest {r['closest']!r}; {r['source']})")  # fmt: skip
    arrays = collections.Counter(r["status"] for r in audit.rows if r["kind"] == "array")
    print("arrays typed:", dict(arrays))
    externalized = sum(len(log.of_type("artifact.created")) for log in logs)
    results = sum(len(log.of_type("tool.result")) for log in logs)
    print(
        f"tool results externalized under R-A1 (8000 chars / 10 items): {externalized} of {results}"
    )
    for n in (200, 100, 50):
        restating = sum(
            hk.transport_audit(log, restate_chars=n).counts["runs_restating"] for log in logs
        )
        print(f"runs whose assistant text restates >= {n} chars of a result verbatim: {restating}")


if __name__ == "__main__":
    main()
