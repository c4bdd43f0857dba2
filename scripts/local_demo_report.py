"""Per-task speed and prompt-cache figures of a demo run folder (what `make real-demo` prints).

    python scripts/local_demo_report.py [runs/real-demo]   # newest demo-* folder inside

For each run log: model steps, seconds per step (model time / steps), prompt and cached
tokens as the server reported them, the cache share from step 2 on, and the time outside
the model call (harness + tools) as a share of the run.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path


def events(path: Path) -> list[dict]:
    """Return the events of one JSONL run log, in order.

    Args:
        path: the log file.

    Returns:
        One dict per line.
    """
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _stamp(event: dict) -> float:
    """The event's `created_at` as seconds since the epoch."""
    return datetime.fromisoformat(event["created_at"]).timestamp()


def _model_seconds(evs: list[dict]) -> float:
    """Seconds spent waiting for the model: each request to the next event but a retry."""
    total, started = 0.0, None
    for e in evs:
        if started is not None and e.get("type") != "model.retry":
            total += _stamp(e) - started
            started = None
        if e.get("type") == "model.request":
            started = _stamp(e)
    return total


def summarize(path: Path) -> dict:
    """Return one row of figures for one run log.

    Args:
        path: the log file.

    Returns:
        A dict: run, steps, finish, run_s (seconds), s_per_step (model seconds per step),
        out_tok_s (completion tokens per second of model time, prompt evaluation included),
        prompt_tokens, cached_tokens, cache_from_step2 (0-1),
        outside_model (share of the run's seconds not spent waiting for the model, 0-1:
        the harness and the tools; a model call is timed from its `model.request` event to the
        next event that is not a `model.retry`, so failed calls count as model time).
    """
    evs = events(path)
    responses = [e["payload"] for e in evs if e.get("type") == "model.response"]
    finished = next((e["payload"] for e in evs if e.get("type") == "run.finished"), {})
    model_s = _model_seconds(evs)
    prompt = [r["usage"].get("prompt_tokens", 0) for r in responses if r.get("usage")]
    cached = [r["usage"].get("cached_tokens", 0) for r in responses if r.get("usage")]
    completion = sum(r["usage"].get("completion_tokens", 0) for r in responses if r.get("usage"))
    run_s = _stamp(evs[-1]) - _stamp(evs[0]) if evs else 0.0
    later_prompt, later_cached = sum(prompt[1:]), sum(cached[1:])
    return {
        "run": path.stem,
        "steps": len(responses),
        "finish": finished.get("finish_reason"),
        "run_s": round(run_s, 1),
        "s_per_step": round(model_s / len(responses), 2) if responses else None,
        "out_tok_s": round(completion / model_s, 1) if model_s else None,
        "_model_s": model_s,
        "_completion": completion,
        "_later": (later_prompt, later_cached),
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
    cols = [c for c in rows[0] if not c.startswith("_")]
    print(f"{folder}:")
    print(" | ".join(cols))
    for row in rows:
        print(" | ".join(str(row[c]) for c in cols))
    steps = sum(r["steps"] for r in rows)
    model_s = sum(r["_model_s"] for r in rows)
    run_s = sum(r["run_s"] for r in rows)
    later_p = sum(r["_later"][0] for r in rows)
    later_c = sum(r["_later"][1] for r in rows)
    print(
        f"all runs: {steps} steps, {model_s / steps if steps else 0:.2f} s per step, "
        f"{sum(r['_completion'] for r in rows) / model_s if model_s else 0:.1f} output tokens/s, "
        f"cache from step 2 {later_c / later_p if later_p else 0:.3f}, "
        f"outside the model {1 - model_s / run_s if run_s else 0:.4f} of the run time"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
