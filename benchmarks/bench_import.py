"""Cold `import harnesskit` in fresh interpreters (median), against `import jsonschema`.

Each sample is a new process timing only the import statement (interpreter start-up is not
counted). Bytecode caches are written first, as on any normal first import (this machine sets
PYTHONDONTWRITEBYTECODE, which would make every import recompile the sources). The baseline is
jsonschema, harnesskit's one import-time dependency candidate, measured in alternation.
Target: at most 0.3 s (the fastest peer, smolagents, takes about 0.39 s here).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

import _common

PROBE = (
    "import json, sys, time; t = time.perf_counter(); import {module}; "
    "dt = time.perf_counter() - t; "
    "heavy = sorted(m for m in ('pandas', 'matplotlib', 'httpx', 'ipywidgets', 'tqdm', 'numpy') "
    "if m in sys.modules); print(json.dumps([dt, heavy]))"
)


def sample(module: str, env: dict[str, str]) -> tuple[float, list[str]]:
    """Seconds to import `module` in a fresh interpreter, and the heavy modules it pulled in."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=_common.ROOT,
    ).stdout
    seconds, heavy = json.loads(out)
    return seconds, heavy


def main() -> None:
    ap = _common.parser(__doc__.splitlines()[0])
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_common.ROOT), env.get("PYTHONPATH")]))
    for module in ("harnesskit", "jsonschema"):  # write bytecode caches, as a first import does
        sample(module, env)
    runs: dict[str, list[float]] = {"harnesskit": [], "jsonschema": []}
    heavy: list[str] = []
    for _ in range(max(args.repeat, 5)):
        for module in runs:
            seconds, pulled = sample(module, env)
            runs[module].append(seconds)
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
            target=0.3,
            note=note,
        )
    ]
    _common.report(rows, args.json)


if __name__ == "__main__":
    main()
