"""Cold `import harnesskit` in fresh interpreters (median), against `import jsonschema`.

Each sample is a new process timing only the import statement (interpreter start-up is not
counted). Bytecode caches are written first, as on any normal first import (this machine sets
PYTHONDONTWRITEBYTECODE, which would make every import recompile the sources). The baseline is
jsonschema, harnesskit's one import-time dependency candidate, measured in alternation.
CPU time (`process_time` around the import) is reported beside wall time. Target (issue 19):
at most 0.15 s (the fastest peer, smolagents, takes about 0.39 s here).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

import _common

PROBE = (
    "import json, sys, time; c = time.process_time(); t = time.perf_counter(); import {module}; "
    "dt = time.perf_counter() - t; dc = time.process_time() - c; "
    "heavy = sorted(m for m in ('pandas', 'matplotlib', 'httpx', 'ipywidgets', 'tqdm', 'numpy') "
    "if m in sys.modules); print(json.dumps([dt, dc, heavy]))"
)


def sample(module: str, env: dict[str, str]) -> tuple[float, float, list[str]]:
    """Wall and CPU seconds to import `module` in a fresh interpreter, and the heavy modules."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=_common.ROOT,
    ).stdout
    seconds, cpu, heavy = json.loads(out)
    return seconds, cpu, heavy


def main() -> None:
    ap = _common.parser(__doc__.splitlines()[0])
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_common.ROOT), env.get("PYTHONPATH")]))
    for module in ("harnesskit", "jsonschema"):  # write bytecode caches, as a first import does
        sample(module, env)
    runs: dict[str, list[float]] = {"harnesskit": [], "jsonschema": []}
    cpus: dict[str, list[float]] = {"harnesskit": [], "jsonschema": []}
    heavy: list[str] = []
    for _ in range(max(args.repeat, 5)):
        for module in runs:
            seconds, cpu, pulled = sample(module, env)
            runs[module].append(seconds)
            cpus[module].append(cpu)
            if module == "harnesskit":
                heavy = pulled
    hk_s = statistics.median(runs["harnesskit"])
    base = statistics.median(runs["jsonschema"])
    note = (
        f"min {min(runs['harnesskit']):.3f} s; heavy modules loaded: {', '.join(heavy) or 'none'}"
    )
    rows = [
        _common.row(
            "import",
            "cold import harnesskit (median of fresh processes)",
            hk_s,
            "s",
            baseline="import jsonschema",
            baseline_value=base,
            ratio=_common.ratio_median(runs["harnesskit"], runs["jsonschema"]),
            target=0.15,
            cpu_value=statistics.median(cpus["harnesskit"]),
            cpu_baseline_value=statistics.median(cpus["jsonschema"]),
            cpu_ratio=_common.ratio_median(cpus["harnesskit"], cpus["jsonschema"]),
            note=note,
        )
    ]
    _common.report(rows, args.json)


if __name__ == "__main__":
    main()
