"""Run the shared peer runner with harnesskit added, and print harnesskit's ratios and targets.

    python benchmarks/peers/compare.py                       # floor only (any venv with jsonschema)
    python benchmarks/peers/compare.py --peers-python /tmp/peers-venv/bin/python   # all five peers

The runner (../shared/bench/peers/run.py) measures every variant in one process, interleaved,
with ratios per round; this script adds `bench_harnesskit.py` with `--add`, saves the raw JSON
and reports, for each harnesskit variant, the per-step overhead, x floor and x smolagents
(medians of per-round ratios), the per-turn slope and the fixed cost per run.
Targets: x floor <= 3.5, x smolagents <= 1/3, slope <= 1 us/turn (flat).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import _common  # noqa: E402

RUN_PY = _common.SHARED / "bench" / "peers" / "run.py"
SMOL = "smolagents/sync"
#: Variants measured beside the default ones but not judged against the targets (opt-in paths).
OPT_IN = frozenset({"harnesskit/disk-inline"})


def default_peers_python() -> str | None:
    """`$PEERS_PYTHON`, else /tmp/peers-venv/bin/python when it exists."""
    env = os.environ.get("PEERS_PYTHON")
    if env:
        return env
    guess = Path("/tmp/peers-venv/bin/python")
    return str(guess) if guess.exists() else None


def per_round(res: dict, name: str, ref: str) -> float | None:
    """Median over rounds of name's per-step time / ref's (same round, same process)."""
    ps = res["per_step_s"]
    if name not in ps or ref not in ps:
        return None
    return statistics.median(a / b for a, b in zip(ps[name], ps[ref], strict=True))


def main() -> None:
    ap = _common.parser(__doc__.splitlines()[0])
    ap.add_argument("--peers-python", default=None, help="interpreter with the peers installed")
    ap.add_argument("--floor-only", action="store_true", help="measure against the floor only")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--raw", help="keep the runner's raw JSON here")
    ap.add_argument("--table", action="store_true", help="also print the runner's own table")
    args = ap.parse_args()
    if not RUN_PY.is_file():
        rows = [_common.skipped("peers", "per-step overhead", f"peer runner not found at {RUN_PY}")]
        _common.report(rows, args.json)
        return
    python = None if args.floor_only else (args.peers_python or default_peers_python())
    cmd = [python or sys.executable, str(RUN_PY), "--add", str(HERE / "bench_harnesskit.py")]
    cmd += ["--rounds", str(args.rounds)]
    if python is None:
        cmd += ["--modules", "bench_floor"]
    raw = Path(args.raw) if args.raw else Path(tempfile.mkdtemp(prefix="hk-peers-")) / "raw.json"
    cmd += ["--json", str(raw)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_common.ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=RUN_PY.parent)
    if done.returncode != 0:
        print(done.stdout + done.stderr, file=sys.stderr)
        raise SystemExit(f"peer runner failed ({done.returncode}): {' '.join(cmd)}")
    if args.table:
        print(done.stdout)
    res = json.loads(raw.read_text())
    rows_by_name = {r["variant"]: r for r in res["rows"]}
    out = []
    smol = rows_by_name.get(SMOL)
    for name, r in rows_by_name.items():
        if not name.startswith("harnesskit"):
            continue
        judged = name not in OPT_IN  # an opt-in variant is shown beside, not judged
        x_floor = per_round(res, name, "floor")
        x_smol = per_round(res, name, SMOL)
        out.append(
            _common.row(
                "peers",
                f"{name}: x floor (per-step {r['med_us']:.0f} us)",
                x_floor,
                "x",
                baseline=f"floor {rows_by_name['floor']['med_us']:.0f} us/step",
                target=3.5 if judged else None,
            )
        )
        if smol is not None:
            out.append(
                _common.row(
                    "peers",
                    f"{name}: x {SMOL}",
                    x_smol,
                    "x",
                    baseline=f"{SMOL} {smol['med_us']:.0f} us/step",
                    target=1 / 3 if judged else None,
                )
            )
        if "turn_slope_us" in r:
            out.append(
                _common.row(
                    "peers",
                    f"{name}: per-turn slope",
                    r["turn_slope_us"],
                    "us/turn",
                    target=1.0 if judged else None,
                    note=f"turns 1-3 {r['turn_first3_us']:.0f} us -> 18-20 {r['turn_last3_us']:.0f}"
                    f" us; fixed {r['fixed_ms_per_run']:.2f} ms/run",
                )
            )
    if smol is None:
        out.append(_common.skipped("peers", f"x {SMOL}", "peers not installed (--peers-python)"))
    _common.report(out, args.json)
    print(f"raw results: {raw}")


if __name__ == "__main__":
    main()
