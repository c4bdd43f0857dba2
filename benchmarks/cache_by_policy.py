"""Prompt-cache reuse per context policy on one airline task, on a `local:` model.

Runs the demo's first airline task under each policy on one local llama.cpp server (started
once) with a small step limit, and prints per policy: steps, prompt tokens, cached tokens and
the share of prompt tokens served from the server's cache from step 2 on (the cold first step
left out), plus the per-request shares.

    python benchmarks/cache_by_policy.py [--model qwen2.5-coder-0.5b] [--steps 5]
        [--policy default --policy window ...] [--task 0] [--json]

Needs `make local`.
"""

from __future__ import annotations

import argparse
import json

import harnesskit as hk
from harnesskit.domains.airline import DEMO_TASKS
from harnesskit.domains.airline.data import load_database
from harnesskit.domains.airline.tools import POLICY, tools
from harnesskit.models import base
from harnesskit.models.local import LocalModel


def measure(
    model: LocalModel, policy: str, *, task: int, steps: int, stable_tools: bool = True
) -> dict:
    """Run one demo task under `policy` and return its cache figures.

    Args:
        model: a started (or startable) local model.
        policy: a context policy name.
        task: index into `DEMO_TASKS`.
        steps: the `max_steps` brake.
        stable_tools: `Harness(stable_tools=...)`; False shows the layout before it (a tool
            list that changes when a circuit opens or the first artifact is stored).

    Returns:
        A dict: policy, steps, finish, prompt_tokens, cached_tokens, cache_from_step2 (0-1),
        per_request (cached / prompt per request, 0-1).
    """
    demo = DEMO_TASKS[task]
    h = hk.Harness(
        tools=tools(load_database(), mode="strict"),
        model=model,
        system_prompt=POLICY,
        policy=policy,
        limits=hk.Limits(max_steps=steps),
        settings={"temperature": 0, "seed": 42, "max_tokens": 256},
        stable_tools=stable_tools,
    )
    run = h.run(demo.user_message)
    usages = [e.payload["usage"] for e in run.log.of_type("model.response")]
    prompt = [int(u["prompt_tokens"]) for u in usages]
    cached = [int(u.get("cached_tokens") or 0) for u in usages]
    later_p, later_c = sum(prompt[1:]), sum(cached[1:])
    return {
        "policy": policy,
        "stable_tools": stable_tools,
        "task": demo.name,
        "steps": run.state.step,
        "finish": run.finish_reason,
        "prompt_tokens": sum(prompt),
        "cached_tokens": sum(cached),
        "cache_from_step2": round(later_c / later_p, 3) if later_p else None,
        "per_request": [
            round(c / p, 2) if p else None for c, p in zip(cached, prompt, strict=True)
        ],
        "prompt_per_request": prompt,
        "cached_per_request": cached,
    }


def main() -> None:
    """Parse the arguments, run each policy, print one row each."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--task", type=int, action="append", help="demo task index (repeatable)")
    ap.add_argument("--policy", action="append")
    ap.add_argument("--ctx-size", type=int, default=8192)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--stable-tools",
        choices=["on", "off", "both"],
        default="on",
        help="the tool list kept stable (on, the default for local models), or not (before)",
    )
    args = ap.parse_args()
    base.ALLOW_MODEL_REQUESTS = True
    rows = []
    with LocalModel(args.model, ctx_size=args.ctx_size) as model:
        stable = {"on": [True], "off": [False], "both": [False, True]}[args.stable_tools]
        for policy in args.policy or ["full-history", "default", "window"]:
            for keep in stable:
                for task in args.task or [0]:
                    rows.append(
                        measure(model, policy, task=task, steps=args.steps, stable_tools=keep)
                    )
                    _print(rows[-1], args.json)
                if len(args.task or [0]) > 1:
                    _total(rows, policy, keep, args.json)
    if args.json:
        print(json.dumps(rows, indent=2))


def _print(row: dict, quiet: bool) -> None:
    if quiet:
        return
    keep = row["stable_tools"]
    print(
        f"{row['policy']:<13} stable_tools={keep!s:<5} task={row['task']} "
        f"steps={row['steps']} "
        f"finish={row['finish']} prompt={row['prompt_tokens']} "
        f"cached={row['cached_tokens']} from-step-2={row['cache_from_step2']} "
        f"per-request={row['per_request']} prompt/request={row['prompt_per_request']}",
        flush=True,
    )


def _total(rows: list[dict], policy: str, keep: bool, quiet: bool) -> None:
    """Print (and append) the policy's share from step 2 on over all its tasks."""
    mine = [r for r in rows if r["policy"] == policy and r["stable_tools"] == keep]
    prompt = sum(sum(r["prompt_per_request"][1:]) for r in mine)
    cached = sum(sum(r["cached_per_request"][1:]) for r in mine)
    if not quiet:
        print(
            f"{policy:<13} stable_tools={keep!s:<5} ALL tasks={len(mine)} "
            f"from-step-2={cached / prompt if prompt else float('nan'):.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
