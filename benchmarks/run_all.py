"""Run every benchmark and print one table (what `make bench` runs).

Each script runs in its own process (so imports and memory do not leak between them) with
`--json`; the rows are gathered into one Markdown table: figure, value, baseline measured in
the same process, ratio, target and verdict, each by wall time and by CPU time, and the last
line reads `targets met: X of Y`. The peer comparison needs the peers installed in
a separate interpreter (`--peers-python`, `$PEERS_PYTHON` or /tmp/peers-venv/bin/python);
without one it measures harnesskit against the floor only.

    python benchmarks/run_all.py [--quick] [--peers-python PATH] [--only append frame ...]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _common  # noqa: E402

SCRIPTS = {
    "peers": HERE / "peers" / "compare.py",
    "append": HERE / "bench_append.py",
    "fold": HERE / "bench_fold_context.py",
    "frame": HERE / "bench_frame.py",
    "replay": HERE / "bench_replay.py",
    "import": HERE / "bench_import.py",
    "history": HERE / "bench_history.py",
}

#: The issue 19 target each script judges, counted as not met when the script fails (so a
#: crash never drops a target from `targets met: X of Y`).
FAILED_TARGETS: dict[str, dict[str, object]] = {
    "peers": {"target_ratio": 3.5},
    "append": {"target_ratio": 1.2},
    "fold": {"target": 0.05, "unit": "s"},
    "frame": {"target_ratio": 1.3},
    "replay": {"target": 5.0, "unit": "s"},
    "import": {"target": 0.15, "unit": "s"},
    "history": {"target_ratio": 1.2},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions and peer rounds")
    ap.add_argument("--peers-python", help="interpreter with the peer frameworks installed")
    ap.add_argument("--only", nargs="*", choices=sorted(SCRIPTS), help="run only these")
    ap.add_argument("--json", help="also write all rows here")
    args = ap.parse_args()
    names = args.only or list(SCRIPTS)
    out_dir = Path(tempfile.mkdtemp(prefix="hk-bench-"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_common.ROOT), env.get("PYTHONPATH")]))
    rows: list[dict] = []
    for name in names:
        path = out_dir / f"{name}.json"
        cmd = [sys.executable, str(SCRIPTS[name]), "--json", str(path)]
        cmd += ["--repeat", "3" if args.quick else "5"]
        if name == "peers":
            cmd += ["--rounds", "5" if args.quick else "11"]
            if args.peers_python:
                cmd += ["--peers-python", args.peers_python]
        print(f"[{time.strftime('%H:%M:%S')}] {name}: {' '.join(cmd[1:2])}", flush=True)
        done = subprocess.run(cmd, env=env, text=True, capture_output=True)
        if done.returncode != 0 or not path.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            failed = _common.skipped(name, str(SCRIPTS[name].name), f"failed: {tail[0]}")
            if name in FAILED_TARGETS:  # a script that fails has not met its target
                failed.update(FAILED_TARGETS[name], met=False)
            rows.append(failed)
            continue
        rows.extend(json.loads(path.read_text()))
    print()
    print(
        f"harnesskit benchmarks - python {platform.python_version()}, {os.cpu_count()} cpus, "
        f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")


def table(rows: list[dict]) -> str:
    """The rows as one Markdown table (wall and CPU side by side), then `targets met: X of Y`."""
    lines = [
        "| bench | figure | value (wall) | value (CPU) | baseline (same process) | "
        "baseline (CPU) | ratio | ratio (CPU) | target | met |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        unit = r["unit"]
        base = r["baseline"]
        if r["baseline_value"] is not None:
            base += f": {_common.fmt(r['baseline_value'], unit)}"
        cpu = r.get("cpu_value")
        cpu_base = r.get("cpu_baseline_value")
        cpu_ratio = r.get("cpu_ratio")
        ratio = f"x{r['ratio']:.2f}" if r["ratio"] is not None else ""
        target = _common.target_text(r)
        met = {True: "yes", False: "**no**", None: ""}[r["met"]]
        if r["met"] is False and r.get("wall_met") is not None and r.get("cpu_met") is not None:
            met += (
                f" (wall {'yes' if r['wall_met'] else 'no'}, CPU {'yes' if r['cpu_met'] else 'no'})"
            )
        value = _common.fmt(r["value"], unit)
        if r["note"]:
            value = f"{value} ({r['note']})" if r["value"] is not None else r["note"]
        cells = [
            r["bench"],
            r["figure"],
            value,
            _common.fmt(cpu, unit) if cpu is not None else "",
            base,
            _common.fmt(cpu_base, unit) if cpu_base is not None else "",
            ratio,
            f"x{cpu_ratio:.2f}" if cpu_ratio is not None else "",
            target,
            met,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(_common.targets_line(rows))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
