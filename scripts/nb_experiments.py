"""Regenerate notebooks/06_experiments.ipynb (executed, outputs stored).

Run from the repository root: `PYTHONPATH=$PWD python scripts/nb_experiments.py`.
The `parameters` cell is tagged for papermill, e.g.
`papermill notebooks/06_experiments.ipynb out.ipynb -p REPEATS 8 -p SEED 3`.
"""

from make_notebook import build

cells = [
    (
        "md",
        """# Experiments: cases × policies × models × repeats

Evaluation cases are scored on **behaviour** — which tools were called with which arguments,
what was never done, which facts the answer holds — not on exact text. An experiment runs every
case under every context policy and model, several times, in parallel, and reports the pass
rate, **pass^k** (the chance that *k* independent trials of a task all pass, τ-bench's
definition) and the tokens spent per passing trial. Everything lands in a run directory that
reloads into the same table, and the four-point audit checks how the bytes travelled.""",
    ),
    (
        "parameters",
        """# Parameters (papermill): which cases, policies, models, how many repeats.
CASES = "../datasets/cases/shop.jsonl"
POLICIES = ["full-history", "default"]
MODELS = ["shop:careful", "shop:hasty"]
REPEATS = 4
SEED = 0
MAX_WORKERS = 4
AIRLINE_CASES = "../datasets/cases"
AIRLINE_TASKS = ["0", "1", "7", "9", "19", "28", "37", "45", "47"]  # tau2 task ids""",
    ),
    (
        "code",
        """import tempfile

import pandas as pd

import harnesskit as hk

pd.set_option("display.width", 160)
pd.set_option("display.max_colwidth", 70)""",
    ),
    ("md", "## The cases\n\nOne JSON object per line, validated by a JSON Schema on load."),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
cases = hk.load_cases(CASES)
pd.DataFrame(
    [
        {"case": c.id, "turns": len(c.input), "expected calls": [s.tool for s in c.calls],
         "forbidden": list(c.forbid_tools) + list(c.forbid_risks)
         + (["write w/o confirmation"] if c.forbid_write_without_confirmation else []),
         "tags": list(c.tags)}
        for c in cases
    ]
)""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
cases[3].to_dict()  # a write that must follow an explicit yes""",
    ),
    (
        "md",
        """## Run the experiment

Threads run the trials; a per-endpoint semaphore bounds the requests in flight to one model
endpoint. Each trial's seed comes from (seed, case, repeat), so a serial run gives the same
table.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
exp = hk.Experiment(cases, POLICIES, MODELS, repeats=REPEATS, seed=SEED, max_workers=MAX_WORKERS)
out_dir = tempfile.mkdtemp(prefix="hk-exp-")
result = exp.run(f"{out_dir}/run", progress=False)
print(exp)
print(len(result), "trials")""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
result.frame.drop(columns=["seed", "run_id", "error"]).head(10)""",
    ),
    ("md", "## Summary per policy and model"),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
result.summary().round(3)""",
    ),
    (
        "code",
        """fig = result.chart(by="policy", hue="model")""",
    ),
    (
        "md",
        """## Past one machine: the same experiment on a Dask cluster

`Experiment.run(executor=...)` takes a `distributed.Client` (extra `[distributed]`): each trial
is one task that writes its own log and artifacts into the run directory and sends back its
row. Here a `LocalCluster` of two worker processes on loopback runs a smaller experiment; its
table equals the one the threads give. Against a remote scheduler, give its address
(`executor="tcp://head:8786"`, or `harnesskit eval ... --executor tcp://head:8786`) and a run
directory on a disk the workers share.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
from distributed import Client, LocalCluster

small = hk.Experiment(cases, POLICIES[:1], MODELS, repeats=2, seed=SEED, name="small")
on_threads = small.run(f"{out_dir}/small-threads", progress=False)
with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                  dashboard_address=None) as cluster, Client(cluster) as client:
    on_cluster = small.run(f"{out_dir}/small-cluster", progress=False, executor=client)
    print(len(client.nthreads()), "workers")
same = ["case", "policy", "model", "repeat", "pass", "steps", "tool_calls", "failed_checks"]
print(len(on_cluster), "trials; same table as on threads:",
      on_cluster.frame[same].equals(on_threads.frame[same]))
on_cluster.summary()[["trials", "pass_rate", "pass^2", "errors"]].round(3)""",
    ),
    (
        "md",
        """Ctrl-C during a run stops starting trials and lets the running ones finish (a second
Ctrl-C cancels them); `results.jsonl` then holds what finished, and
`exp.resume(path)` — or `harnesskit eval --resume DIR` — runs only the missing trials.""",
    ),
    (
        "md",
        """## pass^k by hand

For one task with *n* trials of which *c* passed, pass^k = C(c, k) / C(n, k); the experiment's
pass^k is the mean over tasks. The same numbers, recomputed from the frame:""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
from math import comb

df = result.frame
cell = (POLICIES[0], MODELS[1])
g = df[(df.policy == cell[0]) & (df.model == cell[1])].groupby("case")["pass"].agg(["count", "sum"])
ks = range(1, REPEATS + 1)
pairs = list(zip(g["count"], g["sum"]))
by_hand = {k: sum(comb(c, k) / comb(n, k) for n, c in pairs) / len(pairs) for k in ks}
print("by hand:   ", {k: round(v, 4) for k, v in by_hand.items()})
print("pass_hat_k:", {k: round(float(result.pass_hat_k(k).loc[cell]), 4) for k in ks})""",
    ),
    (
        "md",
        "## What failed, and why\n\nEvery check is kept: a failure names the broken expectation.",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
failed = result.failures().explode("failed_checks")
failed.groupby(["model", "case", "failed_checks"]).size().rename("trials").to_frame()""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
first_failure = result.failures().iloc[0]
score = result.scores()[first_failure.name]
score.frame()[["passed", "kind", "name", "detail"]]""",
    ),
    (
        "md",
        """## The four-point audit

Ids and arrays the model typed instead of binding (and where they came from), a source in two
forms in one prompt, previews not byte-equal to their source, policy facts supplied by the
model.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
audit = hk.audit(result)
audit.summary().round(3)""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
flagged = audit.runs().query("not clean").iloc[0]
columns = ["point", "flag", "tool", "argument", "value", "source", "detail"]
hk.audit(result.log(flagged.run_id)).frame()[columns]""",
    ),
    (
        "md",
        """## The airline domain: tasks converted from τ2-bench

`scripts/convert_tau2_cases.py` turns each tau2 airline task into a case: its expected write
actions become expected calls (argument constraints, in order), every other write is forbidden,
writes need the user's yes, checkable assertions ("does not cancel X") become forbidden calls,
and the final database must equal τ-bench's expected one. For every task with a write there is
also a **do-not-act** case: the opening request alone must end in a confirmation question.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
airline_cases = [
    c for c in hk.load_cases(AIRLINE_CASES, domain="airline")
    if c.setup["tau2_task_id"] in AIRLINE_TASKS
]
pd.DataFrame(
    [
        {"case": c.id, "turns": len(c.input), "expected calls": [s.tool for s in c.calls],
         "forbidden calls": len(c.forbid_tools) + len(c.forbid_calls) + len(c.forbid_risks),
         "asks first": c.asks_confirmation}
        for c in airline_cases
    ]
)""",
    ),
    (
        "md",
        """The embedded airline agent acts on the first message. A thin wrapper around its policy
asks before any write and acts only after a yes — the do-not-act cases tell the two apart.""",
    ),
    (
        "code",
        """import json

from harnesskit.domains import airline
from harnesskit.analysis.evals import AFFIRMATIVE

WRITES = {"book_reservation", "cancel_reservation", "update_reservation_flights",
          "update_reservation_baggages", "update_reservation_passengers", "send_certificate"}
ASK = "Shall I go ahead? Please confirm with yes."


def confirming(trial):
    \"\"\"The embedded agent, but it asks before any write (a model factory: one per trial).\"\"\"

    def policy(messages, info):
        turn = airline.agent_policy(messages, info)
        if isinstance(turn, hk.ToolCall) and turn.name in WRITES:
            last_user = [m for m in messages if m.role == "user"][-1]
            asked = any(m.role == "assistant" and m.text.endswith(ASK) for m in messages)
            if not (asked and AFFIRMATIVE.match(last_user.text)):
                return f"I can call {turn.name} with {json.dumps(turn.arguments)}. {ASK}"
        return turn

    return hk.FunctionModel(policy, name="airline-confirming")""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
models = {"embedded": "airline:embedded", "confirming": confirming}
air = hk.Experiment(airline_cases, POLICIES, models, seed=SEED, max_workers=MAX_WORKERS).run(
    f"{out_dir}/airline", progress=False
)
air.summary().round(3)""",
    ),
    (
        "code",
        """fig = air.chart(by="policy", hue="model")""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
df = air.frame[air.frame.policy == POLICIES[0]]
df.pivot(index="case", columns="model", values="pass")""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
row = air.frame.query("model == 'embedded' and case == 'tau2-airline/45'").iloc[0]
air.scores()[row.name].frame()[["passed", "kind", "name", "detail"]]""",
    ),
    ("md", "## The run directory reloads into the same table"),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
again = hk.ExperimentResult.load(result.path)
print(again.frame.equals(result.frame), sorted(p.name for p in result.path.iterdir()))""",
    ),
]

build("notebooks/06_experiments.ipynb", cells)
