"""Per-task speed and prompt-cache figures of a demo run folder (what `make real-demo` prints).

    python scripts/local_demo_report.py [runs/real-demo]   # newest demo-* folder inside

For each run log: model steps, seconds per step (model time / steps), prompt and cached
tokens as the server reported them, the cache share from step 2 on, and the time outside
the model call (harness + tools) as a share of the run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def events(path: Path) -> list[dict]:
    """Return the events of one JSONL run log, in order.

    Args:
        path: the log file.

    Returns:
        One dict per line.
    """
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def summarize(path: Path) -> dict:
    """Return one row of figures for one run log.

    Args:
        path: the log file.

    Returns:
        A dict: run, steps, finish, run_s (seconds), s_per_step (model seconds per step),
        gen_tok_s (tokens/s), prompt_tokens, cached_tokens, cache_from_step2 (0-1),
        outside_model (share of the run's seconds not spent in model calls, 0-1).
    """
    evs = events(path)
    responses = [e["payload"] for e in evs if e.get("type") == "model.response"]
    finished = next((e["payload"] for e in evs if e.get("type") == "run.finished"), {})
    model_s = sum(r.get("seconds", 0.0) for r in responses)
    prompt = [r["usage"].get("prompt_tokens", 0) for r in responses if r.get("usage")]
    cached = [r["usage"].get("cached_tokens", 0) for r in responses if r.get("usage")]
    completion = sum(r["usage"].get("completion_tokens", 0) for r in responses if r.get("usage"))
    run_s = float(finished.get("seconds") or 0.0)
    later_prompt, later_cached = sum(prompt[1:]), sum(cached[1:])
    return {
        "run": path.stem,
        "steps": len(responses),
        "finish": finished.get("finish_reason"),
        "run_s": round(run_s, 1),
        "s_per_step": round(model_s / len(responses), 2) if responses else None,
        "gen_tok_s": round(completion / model_s, 1) if model_s else None,
        "prompt_tokens": sum(prompt),
        "cached_tokens": sum(cached),
        "cache_from_step2": round(later_cached / later_prompt, 3) if later_prompt else None,
        "outside_model": round(1 - model_s / run_s, 4) if run_s else None,
    }


def main(argv: list[str]) -> int:
    """Print the table for the newest demo folder under `argv[0]` (default runs/real-demo).

    Args:
        argv: command-line arguments.

    Returns:
        0, or 1 when no run logs were found.
    """
    root = Path(argv[0] if argv else "runs/real-demo")
    folders = sorted(p for p in root.glob("demo-*") if p.is_dir()) or [root]
    folder = folders[-1]
    rows = [summarize(p) for p in sorted(folder.glob("*.jsonl"))]
    if not rows:
        print(f"no run logs in {folder}")
        return 1
    cols = list(rows[0])
    print(f"{folder}:")
    print(" | ".join(cols))
    for row in rows:
        print(" | ".join(str(row[c]) for c in cols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
