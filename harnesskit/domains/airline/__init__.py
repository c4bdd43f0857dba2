"""The airline customer-service domain: τ-bench's airline database with harnesskit's own tools.

```python
from harnesskit.domains import airline

db = airline.load_database()                 # a private copy; the shipped files never change
airline.ops.dispatch(db, "get_user_details", {"user_id": "mia_li_3668"})
db.state_hash()                              # τ-bench-compatible hash of the whole state
```

With the harness:

```python
import harnesskit as hk

h = hk.Harness(
    tools=airline.tools(db),                 # strict mode: policy facts from the database
    model=airline.agent_model(),             # the embedded offline agent (or any model)
    system_prompt=airline.POLICY,
    gate=hk.Gate(confirm=hk.allow_all),      # cancellation is `destructive`: confirm it
)
run = h.run("I'm chen_jackson_3290. My plans changed, please cancel 4WQ150.")
airline.run_demo("runs/")                    # what `harnesskit demo` prints
airline.run_replay("gpt-4o-airline.json")    # what `harnesskit replay PATH` prints
```

Layers: `data` (loading, hashing), `ops` (every tool's database effect, τ-bench v1 compatible),
`truth` (server-side cancellation facts, policy decision, claim checks), `tools` (the harness
tools and `POLICY`), `scoring` (reward and pass^k), `trajectories` (the recorded GPT-4o runs),
`recompute` (harness-free re-execution of recorded runs), `replay` (the same through the
harness, with events), `agent` (the offline agent and demo tasks) and `jobs` (`run_demo`,
`run_replay`) and `eval` (the eval domain, registered on import).
"""

from harnesskit.domains.airline import eval, ops, rules  # eval registers the domain
from harnesskit.domains.airline.agent import DEMO_TASKS, DemoTask, agent_model, agent_policy
from harnesskit.domains.airline.data import (
    AirlineDB,
    canonical_text,
    default_data_dir,
    load_database,
    shipped_files_digest,
    state_hash,
)
from harnesskit.domains.airline.eval import DOMAIN, AirlineEnvironment
from harnesskit.domains.airline.jobs import (
    DemoReport,
    DemoRow,
    ReplayReport,
    run_demo,
    run_replay,
)
from harnesskit.domains.airline.recompute import (
    OutputDivergence,
    Recomputation,
    recompute_all,
    recompute_run,
)
from harnesskit.domains.airline.replay import (
    REASON_RULES,
    DerivedField,
    ReplayResult,
    derive_reason,
    replay_harness,
    replay_run,
)
from harnesskit.domains.airline.scoring import (
    RewardResult,
    apply_actions,
    expected_state_hash,
    outputs_found,
    pass_hat_k,
    pass_hat_ks,
    score,
)
from harnesskit.domains.airline.tools import POLICY, tools
from harnesskit.domains.airline.trajectories import (
    ExpectedAction,
    RecordedCall,
    RecordedRun,
    Task,
    load_recorded_runs,
)
from harnesskit.domains.airline.truth import (
    BENCHMARK_NOW,
    EST,
    CancellationDecision,
    CancellationFacts,
    CancellationOutcome,
    Mismatch,
    benchmark_clock,
    cancel,
    cancellation_facts,
    check_claims,
    decide_cancellation,
)
from harnesskit.domains.airline.values import VALUE_SHAPES

__all__ = [
    "REASON_RULES",
    "DerivedField",
    "derive_reason",
    "VALUE_SHAPES",
    "BENCHMARK_NOW",
    "DEMO_TASKS",
    "DOMAIN",
    "EST",
    "POLICY",
    "AirlineDB",
    "AirlineEnvironment",
    "CancellationDecision",
    "CancellationFacts",
    "CancellationOutcome",
    "DemoReport",
    "DemoRow",
    "DemoTask",
    "ExpectedAction",
    "Mismatch",
    "OutputDivergence",
    "Recomputation",
    "RecordedCall",
    "RecordedRun",
    "ReplayReport",
    "ReplayResult",
    "RewardResult",
    "Task",
    "agent_model",
    "agent_policy",
    "apply_actions",
    "benchmark_clock",
    "canonical_text",
    "cancel",
    "cancellation_facts",
    "check_claims",
    "decide_cancellation",
    "default_data_dir",
    "expected_state_hash",
    "load_database",
    "load_recorded_runs",
    "eval",
    "ops",
    "outputs_found",
    "pass_hat_k",
    "pass_hat_ks",
    "recompute_all",
    "recompute_run",
    "replay_harness",
    "replay_run",
    "rules",
    "run_demo",
    "run_replay",
    "score",
    "shipped_files_digest",
    "state_hash",
    "tools",
]
