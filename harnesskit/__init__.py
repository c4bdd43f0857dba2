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

from harnesskit.context import ContextBuilder, ContextPolicy, Prompt
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
from harnesskit.replay import Divergence, ReplayReport, counterfactual, replay
from harnesskit.resume import ResumeCheck, ResumeReport, check_resume
from harnesskit.tokens import TokenEstimator, estimate_tokens
from harnesskit.tools import LintIssue, Tool, ToolContext, ToolRegistry, lint, tool
from harnesskit.trajectory import Evidence, Gap, Trajectory, visible_events

__version__ = "0.1.0"

__all__ = [
    "ApprovalRequest",
    "ArtifactError",
    "ArtifactIntegrityError",
    "ArtifactNotFoundError",
    "BrakeTripped",
    "ContextBuilder",
    "ContextError",
    "ContextPolicy",
    "CorruptLogError",
    "Divergence",
    "EffectCheck",
    "Event",
    "EventLog",
    "EventLogError",
    "Evidence",
    "Executor",
    "FallbackModel",
    "FallbackNode",
    "FunctionModel",
    "Gap",
    "Gate",
    "Harness",
    "HarnessError",
    "IdempotencyLedger",
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
    "ReplayModel",
    "ReplayReport",
    "ResumeCheck",
    "ResumeError",
    "ResumeReport",
    "Run",
    "RunState",
    "SchemaVersionError",
    "ScriptedModel",
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
    "Trajectory",
    "Usage",
    "UsageError",
    "WriteRecord",
    "allow_all",
    "check_resume",
    "counterfactual",
    "deny_all",
    "estimate_tokens",
    "get_model",
    "lint",
    "register_provider",
    "replay",
    "set_display",
    "tool",
    "visible_events",
]
