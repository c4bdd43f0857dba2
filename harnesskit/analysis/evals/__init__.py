"""Evaluation: behaviour-scored cases, experiments, pass^k (R-P3).

Cases are scored on behaviour; experiments run cases × policies × models × repeats.

```python
import harnesskit as hk
cases = hk.load_cases("datasets/cases/shop.jsonl")
result = hk.Experiment(cases, ["full-history"], ["shop:careful", "shop:hasty"], repeats=4).run()
result.summary()                               # pass rate, pass^1..4, tokens per pass
hk.analysis.evals.score(cases[0], result.log(result.rows[0]["run_id"])).failed
```

Modules: `cases` (the `Case` value, JSON Schema, JSONL I/O), `scoring` (checks on the
trajectory, pass^k), `experiment` (parallel runs, domains), `results` (frames, summaries,
charts, run directories).
"""

from harnesskit.analysis.evals.cases import (
    CASE_SCHEMA,
    CASE_SCHEMA_VERSION,
    CallSpec,
    Case,
    Fact,
    load_cases,
    save_cases,
    validate_case,
)
from harnesskit.analysis.evals.experiment import (
    Domain,
    Experiment,
    Trial,
    derive_seed,
    endpoint_of,
    get_domain,
    register_domain,
)
from harnesskit.analysis.evals.results import RESULT_COLUMNS, ExperimentResult, load_results
from harnesskit.analysis.evals.scoring import (
    AFFIRMATIVE,
    CONFIRMATION_QUESTION,
    CheckResult,
    Score,
    pass_hat_k,
    score,
    trajectory,
)
from harnesskit.analysis.evals.user import STOP_TOKEN, UserSimulator, user_instruction

__all__ = [
    "AFFIRMATIVE",
    "CASE_SCHEMA",
    "CASE_SCHEMA_VERSION",
    "CONFIRMATION_QUESTION",
    "RESULT_COLUMNS",
    "STOP_TOKEN",
    "CallSpec",
    "Case",
    "CheckResult",
    "Domain",
    "Experiment",
    "ExperimentResult",
    "Fact",
    "Score",
    "Trial",
    "UserSimulator",
    "derive_seed",
    "endpoint_of",
    "get_domain",
    "load_cases",
    "load_results",
    "pass_hat_k",
    "register_domain",
    "save_cases",
    "score",
    "trajectory",
    "user_instruction",
    "validate_case",
]
