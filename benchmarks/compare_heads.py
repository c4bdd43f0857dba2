"""Per-step cost of the peer workload at two commits, interleaved in one process.

    .venv/bin/python benchmarks/compare_heads.py 72acfb7 HEAD
    .venv/bin/python benchmarks/compare_heads.py main my-branch --rounds 9 --target 1.0

Each commit is checked out once into a temporary worktree (`git worktree add --detach`) and
its `harnesskit` imported under that worktree; the modules of each head are kept apart and put
back into `sys.modules` before each of that head's runs, so lazy imports inside a run resolve to
the same head. The workload is the shared peer workload (`../shared/bench/peers/workload.py`: 10
tools, 20 scripted tool turns, a final answer) driven through `benchmarks/peers/bench_harnesskit.py`
at each head (log on disk, flushed per step), with the hand-written floor beside them.

Every round runs the floor and both heads once each, in a shuffled order; a batch is sized to take
about `--target` seconds. Printed per variant: µs per step by wall time and by CPU time (median,
min, max over rounds) and the ratios B/A and each/floor, computed within each round. The last line
reads `A=<sha> B=<sha> cpu_ratio=<B/A> wall_ratio=<B/A>`.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEERS = ROOT.parent / "shared" / "bench" / "peers"


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


@contextlib.contextmanager
def _worktree(rev: str) -> Iterator[Path]:
    """A detached worktree of `rev` in a temporary folder, removed on exit."""
    tmp = Path(tempfile.mkdtemp(prefix="hk-head-"))
    path = tmp / "wt"
    _git("worktree", "add", "--detach", "--quiet", str(path), rev)
    try:
        yield path
    finally:
        _git("worktree", "remove", "--force", str(path))


def _load_head(path: Path) -> tuple[Callable[[], Any], dict[str, Any]]:
    """Import harnesskit and its peer bench module from `path`; return (run, its modules)."""
    for name in [m for m in sys.modules if m == "harnesskit" or m.startswith("harnesskit.")]:
        del sys.modules[name]
    sys.modules.pop("bench_harnesskit", None)
    sys.path.insert(0, str(path))
    sys.path.insert(0, str(path / "benchmarks" / "peers"))
    try:
        mod = importlib.import_module("bench_harnesskit")
        kind, run = mod.VARIANTS["harnesskit/disk"]()
        if kind == "sync":
            run()  # imports the head's lazily imported modules too, so its snapshot is whole
    finally:
        sys.path.remove(str(path))
        sys.path.remove(str(path / "benchmarks" / "peers"))
    if kind != "sync":
        raise SystemExit(f"{path}: expected a sync variant, got {kind}")
    mods = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "harnesskit"}
    return run, mods


def _batch(run: Callable[[], Any], n: int, mods: dict[str, Any] | None) -> tuple[float, float]:
    """Wall and CPU seconds of `n` runs back to back (the head's modules installed first)."""
    if mods is not None:  # exactly this head's modules: none of the other head's may linger
        for name in [m for m in sys.modules if m.split(".")[0] == "harnesskit" and m not in mods]:
            del sys.modules[name]
        sys.modules.update(mods)
    gc.collect()
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(n):
        run()
    return time.perf_counter() - w0, time.process_time() - c0


def main(argv: list[str] | None = None) -> int:
    """Run the comparison and print the table; returns the exit code."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", help="baseline commit (any git revision)")
    ap.add_argument("b", help="commit to compare with it")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    ap.add_argument("--target", type=float, default=0.6, help="seconds per batch (default 0.6)")
    args = ap.parse_args(argv)
    if not (PEERS / "workload.py").is_file():
        raise SystemExit(f"the shared peer workload is not at {PEERS}")
    sys.path.insert(0, str(PEERS))
    import bench_floor
    import workload

    shas = {k: _git("rev-parse", "--short", rev) for k, rev in (("A", args.a), ("B", args.b))}
    with _worktree(args.a) as pa, _worktree(args.b) as pb:
        run_a, mods_a = _load_head(pa)
        run_b, mods_b = _load_head(pb)
        _, run_floor = bench_floor.VARIANTS["floor"]()
        variants: dict[str, tuple[Callable[[], Any], dict[str, Any] | None]] = {
            "floor": (run_floor, None),
            f"A {shas['A']}": (run_a, mods_a),
            f"B {shas['B']}": (run_b, mods_b),
        }
        sizes = {}
        for name, (run, mods) in variants.items():
            _batch(run, 3, mods)  # warm up
            wall, _ = _batch(run, 5, mods)
            sizes[name] = max(1, round(args.target / (wall / 5)))
        steps = workload.N_TOOL_STEPS
        per: dict[str, dict[str, list[float]]] = {n: {"wall": [], "cpu": []} for n in variants}
        order = list(variants)
        for _ in range(args.rounds):
            random.shuffle(order)
            for name in order:
                run, mods = variants[name]
                wall, cpu = _batch(run, sizes[name], mods)
                per[name]["wall"].append(wall / sizes[name] / steps * 1e6)
                per[name]["cpu"].append(cpu / sizes[name] / steps * 1e6)
    names = list(variants)
    print(f"{'variant':<14} {'wall µs/step (med min max)':>28} {'cpu µs/step (med min max)':>28}")
    for n in names:
        cols = []
        for k in ("wall", "cpu"):
            xs = per[n][k]
            cols.append(f"{statistics.median(xs):8.1f} {min(xs):8.1f} {max(xs):8.1f}")
        print(f"{n:<14} {cols[0]:>28} {cols[1]:>28}")
    ratios: dict[str, float] = {}
    for k in ("wall", "cpu"):
        a, b, f = per[names[1]][k], per[names[2]][k], per["floor"][k]
        ratios[k] = statistics.median(y / x for x, y in zip(a, b, strict=True))
        ra = statistics.median(x / z for x, z in zip(a, f, strict=True))
        rb = statistics.median(y / z for y, z in zip(b, f, strict=True))
        print(f"{k}: B/A {ratios[k]:.3f}   A/floor {ra:.2f}   B/floor {rb:.2f}")
    print(
        f"A={shas['A']} B={shas['B']} cpu_ratio={ratios['cpu']:.3f} wall_ratio={ratios['wall']:.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
