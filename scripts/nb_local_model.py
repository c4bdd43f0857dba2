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
2. **Two context policies**, on the same airline tasks: pass rate (the demo's scorer), prompt
   tokens, and how much of each prompt the server served from its prompt cache
   (`cached_tokens`).

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
        """## 2. Two context policies on the same airline tasks

Two of the demo's airline tasks (strict tools, the τ-bench policy as system prompt), each run
under `full-history` and under `default` with a 6-step brake, scored as `harnesskit demo`
scores them: the final database against the expected one, the required outputs said, the
expected `alert.mismatch` count. One server serves every run, so its prompt cache carries
over; `cached_tokens` is the server's own count of prompt tokens it did not evaluate again.
The first request of a run is cold, so the cache share is read from step 2 on.""",
    ),
    (
        "code",
        """import tempfile

from harnesskit.domains.airline import DEMO_TASKS, run_demo

OUT = tempfile.mkdtemp(prefix="nb08-")  # the run logs
TASKS = DEMO_TASKS[1:3]  # cancel-business, cancel-within-24h: short tasks
reports = {}
# one server for every run (ctx 8192: the airline tool specs and policy alone are ~4,400 tokens)
model = LocalModel(MODEL, ctx_size=8192) if READY else None


def run_policy(policy):
    reports[policy] = run_demo(
        OUT, tasks=TASKS, model=model, policy=policy, max_steps=6, echo=None
    )
    print(policy, [(r.task, r.finish_reason, r.passed) for r in reports[policy].rows])


if READY:
    run_policy("full-history")
else:
    print("skipped: needs the local model (make local)")""",
    ),
    (
        "code",
        """if READY:
    run_policy("default")
    model.close()  # stops the server""",
    ),
    (
        "code",
        """if READY:
    import pandas as pd

    rows = [
        {
            "policy": policy,
            "task": r.task,
            "steps": r.steps,
            "tool_calls": r.tool_calls,
            "finish_reason": r.finish_reason,
            "passed": r.passed,
            "prompt_tokens": r.prompt_tokens,
            "cached_tokens": r.cached_tokens,
            "cache_from_step_2": r.cache_share_from_step_2,
        }
        for policy, report in reports.items()
        for r in report.rows
    ]
    per_run = pd.DataFrame(rows).set_index(["policy", "task"])
    display(per_run)
    by_policy = per_run.groupby(level="policy").agg(
        pass_rate=("passed", "mean"),
        prompt_tokens=("prompt_tokens", "sum"),
        cached_tokens=("cached_tokens", "sum"),
    )
    later = {
        p: sum(sum(r.cached_per_step[1:]) for r in rep.rows)
        / max(1, sum(sum(r.tokens_per_step[1:]) for r in rep.rows))
        for p, rep in reports.items()
    }
    by_policy["cache_from_step_2"] = pd.Series(later).round(3)
    display(by_policy)""",
    ),
    (
        "md",
        """Per request, the size of each prompt under each policy, and for one run the part of each
prompt served from the cache (drawn lighter):""",
    ),
    (
        "code",
        """if READY:
    logs = {
        f"{policy} {r.task}": hk.EventLog.read(r.log_path)
        for policy, report in reports.items()
        for r in report.rows
    }
    hk.plot_comparison(logs)
    hk.plot_budget(logs[f"default {TASKS[0].name}"])""",
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
