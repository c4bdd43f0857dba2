"""harnesskit: a Jupyter-native research toolkit for LLM agent harnesses.

```python
import harnesskit as hk
h = hk.Harness(tools=[...], model=hk.ScriptedModel([...]), limits=hk.Limits(max_steps=10))
run = h.start("hello")
run.step()          # one model turn and its tool calls
run.run()           # to the end or a brake
run.log.frame()     # one row per event
```

Importing harnesskit has no side effects and loads neither pandas, matplotlib nor httpx.
"""

from harnesskit.audit import AuditReport, ExperimentAudit, audit
from harnesskit.context import ContextBuilder, ContextPolicy, InjectionRecord, Prompt
from harnesskit.display import set_display
from harnesskit.errors import (
    ArtifactError,
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    BrakeTripped,
    ContextError,
    CorruptLogError,
    EventLogError,
    HarnessError,
    ModelError,
    ModelOutputError,
    ResumeError,
    SchemaVersionError,
    StopRun,
    ToolArgumentsError,
    ToolError,
    ToolNotFoundError,
    ToolTimeoutError,
    UsageError,
)
from harnesskit.evals import (
    CallSpec,
    Case,
    CheckResult,
    Domain,
    Experiment,
    ExperimentResult,
    Fact,
    Score,
    Trial,
    load_cases,
    pass_hat_k,
    register_domain,
    save_cases,
    score,
)
from harnesskit.events import Event, EventLog
from harnesskit.executor import Executor
from harnesskit.gate import ApprovalRequest, Gate, allow_all, deny_all
from harnesskit.idempotency import EffectCheck, IdempotencyLedger, WriteRecord
from harnesskit.loop import Harness, Limits, Progress, Run, RunState
from harnesskit.messages import Message, ModelResponse, ToolCall, ToolResult, Usage
from harnesskit.models import (
    FallbackModel,
    FallbackNode,
    FunctionModel,
    Model,
    ModelRequest,
    ReplayModel,
    ScriptedModel,
    get_model,
    register_provider,
)
from harnesskit.probes import compare_policies, plot_policy_tokens, probe_heatmap, run_probes
from harnesskit.progress import TqdmProgress
from harnesskit.redact import Redactor
from harnesskit.replay import Divergence, ReplayReport, counterfactual, replay
from harnesskit.resume import ResumeCheck, ResumeReport, check_resume
from harnesskit.tokens import TokenEstimator, estimate_tokens
from harnesskit.tools import LintIssue, Tool, ToolContext, ToolRegistry, lint, tool
from harnesskit.trace import (
    budget_frame,
    comparison_frame,
    composition_frame,
    frame,
    plot_budget,
    plot_comparison,
    plot_composition,
)
from harnesskit.trajectory import Evidence, Gap, Trajectory, visible_events
from harnesskit.widgets import ApprovalPrompt, StepControls, TraceExplorer

__version__ = "0.1.0"

__all__ = [
    "ApprovalPrompt",
    "ApprovalRequest",
    "ArtifactError",
    "ArtifactIntegrityError",
    "ArtifactNotFoundError",
    "AuditReport",
    "BrakeTripped",
    "CallSpec",
    "Case",
    "CheckResult",
    "ContextBuilder",
    "ContextError",
    "ContextPolicy",
    "CorruptLogError",
    "Divergence",
    "Domain",
    "EffectCheck",
    "Event",
    "EventLog",
    "EventLogError",
    "Evidence",
    "Executor",
    "Experiment",
    "ExperimentAudit",
    "ExperimentResult",
    "Fact",
    "FallbackModel",
    "FallbackNode",
    "FunctionModel",
    "Gap",
    "Gate",
    "Harness",
    "HarnessError",
    "IdempotencyLedger",
    "InjectionRecord",
    "Limits",
    "LintIssue",
    "Message",
    "Model",
    "ModelError",
    "ModelOutputError",
    "ModelRequest",
    "ModelResponse",
    "Progress",
    "Prompt",
    "Redactor",
    "ReplayModel",
    "ReplayReport",
    "ResumeCheck",
    "ResumeError",
    "ResumeReport",
    "Run",
    "RunState",
    "SchemaVersionError",
    "Score",
    "ScriptedModel",
    "StepControls",
    "StopRun",
    "TokenEstimator",
    "Tool",
    "ToolArgumentsError",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolNotFoundError",
    "ToolRegistry",
    "ToolResult",
    "ToolTimeoutError",
    "TqdmProgress",
    "TraceExplorer",
    "Trajectory",
    "Trial",
    "Usage",
    "UsageError",
    "WriteRecord",
    "allow_all",
    "audit",
    "budget_frame",
    "check_resume",
    "compare_policies",
    "comparison_frame",
    "composition_frame",
    "counterfactual",
    "deny_all",
    "estimate_tokens",
    "frame",
    "get_model",
    "lint",
    "load_cases",
    "pass_hat_k",
    "plot_budget",
    "plot_comparison",
    "plot_composition",
    "plot_policy_tokens",
    "probe_heatmap",
    "register_domain",
    "register_provider",
    "replay",
    "run_probes",
    "save_cases",
    "score",
    "set_display",
    "tool",
    "visible_events",
]
