"""Regenerate notebooks/08_local_model.ipynb (executed, outputs stored) on the real local model.

Run from the repository root after `make local` (the 0.5B is enough):
`PYTHONPATH=$PWD python scripts/nb_local_model.py`. Without the local runtime or weights the
notebook says so and skips its real-model cells, so nbval passes on any install; `make
test-local` runs it under nbval (`make test` does not: it would need the model).
"""

from make_notebook import build

cells = [
    (
        "md",
        """# The research loop on a real model (llama.cpp, Qwen2.5-Coder 0.5B, on this CPU)

Scripted models read neither tool descriptions nor context, so comparing those on them compares
nothing. Here a real model answers: `local:qwen2.5-coder-0.5b` starts a llama.cpp server on a
loopback port (built and verified by `make local`; no keys, no network at run time) and stops it
at the end. Two questions, each answered the same way — same cases, one thing changed:

1. **Two descriptions of one tool**, on the same two requests: which one gets called right?
2. **Two context policies**, on the same airline task: pass or not, prompt tokens, and how much
   of each prompt the server served from its prompt cache (`cached_tokens`).

It is kept small (a few steps, temperature 0, fixed seed) so it runs in minutes on 2 cores;
the figures are one machine's, one seed's: a start for a study, not a result.""",
    ),
    (
        "code",
        """import json

import harnesskit as hk
from harnesskit.log import ToolResultEvent
from harnesskit.models import base
from harnesskit.models.local import LocalModel

MODEL = "qwen2.5-coder-0.5b"
try:
    LocalModel(MODEL)  # resolves the runtime and the verified weights; starts nothing
    READY, WHY = True, ""
except hk.HarnessError as exc:
    READY, WHY = False, str(exc)
print("local model ready" if READY else f"skipped: the local model is not installed ({WHY})")
base.ALLOW_MODEL_REQUESTS = READY  # real requests from this notebook only when it is there
SETTINGS = {"temperature": 0, "seed": 42, "max_tokens": 192}""",
    ),
    ("md", "## 1. Two descriptions of the same tool"),
    (
        "code",
        '''BOOKED = []


def book_table_v1(day: str, seats: int) -> dict:
    """Book a table."""
    return _book(day, seats)


def book_table_v2(day: str, seats: int) -> dict:
    """Book a restaurant table.

    Args:
        day: the date as YYYY-MM-DD (e.g. 2024-06-14); convert what the user says.
        seats: the number of people, a whole number from 1 to 12.
    """
    return _book(day, seats)


def _book(day, seats):
    import datetime

    try:
        datetime.date.fromisoformat(day)
    except ValueError:
        raise hk.ToolArgumentsError(f"day {day!r} is not YYYY-MM-DD", hint="e.g. 2024-06-14")
    BOOKED.append((day, seats))
    return {"booked": True, "day": day, "seats": seats}


v1 = hk.tool(book_table_v1, name="book_table")
v2 = hk.tool(book_table_v2, name="book_table")
CASES = [
    {"text": "Book a table for 4 on June 14 2024.", "day": "2024-06-14", "seats": 4},
    {"text": "Table for six, the 3rd of August 2024.", "day": "2024-08-03", "seats": 6},
]''',
    ),
    (
        "code",
        """def booked_right(run, case):
    return any(
        e.ok
        and json.loads(e.content) == {"booked": True, "day": case["day"], "seats": case["seats"]}
        for e in run.log.of_type(ToolResultEvent)
    )


desc_runs, right = {}, {}
if READY:
    with LocalModel(MODEL, ctx_size=4096) as model:
        for label, tool in (("v1", v1), ("v2", v2)):
            for i, case in enumerate(CASES, 1):
                h = hk.Harness([tool], model, limits=hk.Limits(max_steps=2), settings=SETTINGS)
                run = h.run(case["text"], run_id=f"{label}-{i}")
                desc_runs[f"{label} case {i}"] = run
                right[f"{label} case {i}"] = booked_right(run, case)
    table = hk.frame(desc_runs, kind="comparison")
    table["booked_right"] = [right[k] for k in table.index]
    summary = table.groupby(table.index.str[:2]).agg(
        cases=("steps", "size"),
        pass_rate=("booked_right", "mean"),
        tool_errors=("tool_errors", "sum"),
        prompt_tokens=("prompt_tokens", "sum"),
    )
    display(table[["steps", "tool_calls", "tool_errors", "prompt_tokens", "booked_right"]])
    display(summary)
else:
    print("skipped: needs the local model (make local)")""",
    ),
    (
        "code",
        """if READY:
    hk.plot_comparison({"v1": desc_runs["v1 case 1"], "v2": desc_runs["v2 case 1"]})""",
    ),
    (
        "md",
        """## 2. Two context policies on the same airline task

The demo's first airline task (strict tools, the τ-bench policy as system prompt), under
`full-history` and `default`, with a 3-step brake. `cached_tokens` is the server's own count of
prompt tokens it did not evaluate again; the first request of a run is cold, so the share is
read from request 2 on.""",
    ),
    (
        "code",
        """from harnesskit.domains.airline import DEMO_TASKS
from harnesskit.domains.airline.data import load_database
from harnesskit.domains.airline.tools import POLICY, tools

TASK = DEMO_TASKS[0]
policy_runs = {}


def run_policy(policy):
    # ctx 8192: the airline tool specs and policy alone are ~4,400 tokens
    with LocalModel(MODEL, ctx_size=8192) as model:
        h = hk.Harness(
            tools=tools(load_database(), mode="strict"),
            model=model,
            system_prompt=POLICY,
            policy=policy,
            limits=hk.Limits(max_steps=3),
            settings=SETTINGS,
        )
        policy_runs[policy] = h.run(TASK.user_message, run_id=f"airline-{policy}")
        print(policy, policy_runs[policy].finish_reason)


if READY:
    run_policy("full-history")
else:
    print("skipped: needs the local model (make local)")""",
    ),
    (
        "code",
        """if READY:
    run_policy("default")""",
    ),
    (
        "code",
        """if READY:
    import pandas as pd

    rows = []
    for policy, run in policy_runs.items():
        b = hk.frame(run, kind="budget")
        later = b.iloc[1:]
        failed = [e for e in run.log.of_type(ToolResultEvent) if not e.ok]
        rows.append(
            {
                "policy": policy,
                "requests": len(b),
                "finish_reason": run.finish_reason,
                "passed": run.finish_reason == "stop" and not failed,
                "prompt_tokens": int(b["prompt_tokens"].sum()),
                "cached_tokens": int(b["cached_tokens"].sum()),
                "cache_from_request_2": round(
                    later["cached_tokens"].sum() / max(1, later["prompt_tokens"].sum()), 3
                ),
            }
        )
    display(pd.DataFrame(rows).set_index("policy"))""",
    ),
    (
        "md",
        """`passed` here is a rough stand-in (the run answered and no tool call failed); the demo's
scorer (`harnesskit demo`) compares the database state with the expected one. Per request, the
prompt and the part served from the cache:""",
    ),
    (
        "code",
        """if READY:
    for policy, run in policy_runs.items():
        print(policy)
        cols = ["request", "prompt_tokens", "cached_tokens", "seconds"]
        display(hk.frame(run, kind="budget")[cols])
    hk.plot_comparison(policy_runs)
    hk.plot_budget(policy_runs["default"])""",
    ),
    (
        "md",
        """What to take from it: change one thing, run the same cases, read the same columns. On a
real model the description and the context layout show up in pass rate, tool errors, prompt
tokens and cache reuse — figures a scripted model cannot give.""",
    ),
]

if __name__ == "__main__":
    build("notebooks/08_local_model.ipynb", cells)
