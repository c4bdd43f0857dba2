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

from harnesskit.analysis.audit import AuditReport, ExperimentAudit, audit
from harnesskit.analysis.evals import (
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
from harnesskit.analysis.probes import (
    compare_policies,
    plot_policy_tokens,
    probe_heatmap,
    run_probes,
)
from harnesskit.analysis.replay import Divergence, ReplayReport, counterfactual, replay
from harnesskit.context.builder import ContextBuilder, ContextPolicy, InjectionRecord, Prompt
from harnesskit.context.tokens import TokenEstimator, estimate_tokens
from harnesskit.data.artifacts import (
    ArtifactRef,
    ArtifactStore,
    Preview,
    RepresentationViolation,
    check_representation,
    verify_preview,
)
from harnesskit.data.bindings import TransportAudit, transport_audit
from harnesskit.data.transport import Transport, TransportPolicy
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
    RepresentationError,
    ResumeError,
    SchemaVersionError,
    StopRun,
    ToolArgumentsError,
    ToolError,
    ToolNotFoundError,
    ToolTimeoutError,
    UsageError,
)
from harnesskit.log.events import Event, EventLog
from harnesskit.log.redact import Redactor
from harnesskit.log.resume import ResumeCheck, ResumeReport, check_resume
from harnesskit.log.trajectory import Evidence, Gap, Trajectory, visible_events
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
from harnesskit.notebook.display import set_display
from harnesskit.notebook.trace import (
    budget_frame,
    comparison_frame,
    composition_frame,
    frame,
    plot_budget,
    plot_comparison,
    plot_composition,
)
from harnesskit.notebook.widgets import ApprovalPrompt, StepControls, TraceExplorer
from harnesskit.run.loop import Harness, Limits, Progress, Run, RunState
from harnesskit.run.progress import TqdmProgress
from harnesskit.tools.executor import Executor
from harnesskit.tools.gate import ApprovalRequest, Gate, allow_all, deny_all
from harnesskit.tools.idempotency import EffectCheck, IdempotencyLedger, WriteRecord
from harnesskit.tools.spec import LintIssue, Tool, ToolContext, ToolRegistry, lint, tool

__version__ = "0.1.0"

__all__ = [
    "ApprovalPrompt",
    "ApprovalRequest",
    "ArtifactError",
    "ArtifactIntegrityError",
    "ArtifactNotFoundError",
    "ArtifactRef",
    "ArtifactStore",
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
    "Preview",
    "Progress",
    "Prompt",
    "Redactor",
    "ReplayModel",
    "ReplayReport",
    "RepresentationError",
    "RepresentationViolation",
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
    "Transport",
    "TransportAudit",
    "TransportPolicy",
    "Trial",
    "Usage",
    "UsageError",
    "WriteRecord",
    "allow_all",
    "audit",
    "budget_frame",
    "check_representation",
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
    "transport_audit",
    "verify_preview",
    "visible_events",
]
