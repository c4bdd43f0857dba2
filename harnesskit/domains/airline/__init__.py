"""The airline customer-service domain: τ-bench's airline database with harnesskit's own tools.

```python
from harnesskit.domains import airline

db = airline.load_database()                 # a private copy; the shipped files never change
airline.ops.dispatch(db, "get_user_details", {"user_id": "mia_li_3668"})
db.state_hash()                              # τ-bench-compatible hash of the whole state
```

Layers: `data` (loading, hashing), `ops` (every tool's database effect, τ-bench v1 compatible),
`truth` (server-side cancellation facts, policy decision, claim checks), `scoring` (reward and
pass^k), `trajectories` (the recorded GPT-4o runs) and `recompute` (harness-free re-execution of
recorded runs).
"""

from harnesskit.domains.airline import ops
from harnesskit.domains.airline.data import (
    AirlineDB,
    canonical_text,
    default_data_dir,
    load_database,
    shipped_files_digest,
    state_hash,
)
from harnesskit.domains.airline.recompute import (
    OutputDivergence,
    Recomputation,
    recompute_all,
    recompute_run,
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

__all__ = [
    "BENCHMARK_NOW",
    "EST",
    "AirlineDB",
    "CancellationDecision",
    "CancellationFacts",
    "CancellationOutcome",
    "ExpectedAction",
    "Mismatch",
    "OutputDivergence",
    "Recomputation",
    "RecordedCall",
    "RecordedRun",
    "RewardResult",
    "Task",
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
    "ops",
    "outputs_found",
    "pass_hat_k",
    "pass_hat_ks",
    "recompute_all",
    "recompute_run",
    "score",
    "shipped_files_digest",
    "state_hash",
]
