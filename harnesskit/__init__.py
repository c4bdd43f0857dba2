"""harnesskit: a Jupyter-native research toolkit for LLM agent harnesses.

```python
import harnesskit as hk
h = hk.Harness(tools=[...], model=hk.ScriptedModel([...]), limits=hk.Limits(max_steps=10))
run = h.start("hello")
run.step()                      # one model turn and its tool calls
run.run()                       # to the end or a brake
hk.frame(run)                   # one row per event; kind="budget" | "composition" | "comparison"
hk.plot_budget(run)             # charts are hk.plot_<what>
```

The top level holds what a notebook user types (pinned by `tests/test_public_api.py`); service
classes a user rarely builds (`Executor`, `ContextBuilder`, `Transport`, `RunState`, ...) are
imported from their subpackage (`harnesskit.tools`, `harnesskit.context`, ...).

Importing harnesskit has no side effects and loads neither pandas, matplotlib nor httpx. It
imports the notebook layer's display module, which installs the HTML renderers behind every
`_repr_html_`; the analysis layer (evals, probes, replay, audit) and the notebook charts, frames
and widgets load on first use of one of their names.
"""

import typing as _typing

from harnesskit._lazy import lazy_exports as _lazy_exports
from harnesskit.context.builder import ContextPolicy
from harnesskit.data.artifacts import ArtifactStore
from harnesskit.data.bindings import transport_audit
from harnesskit.data.transport import TransportPolicy
from harnesskit.errors import (
    BrakeTripped,
    HarnessError,
    ModelError,
    ModelOutputError,
    ResumeError,
    StopRun,
    ToolArgumentsError,
    ToolError,
    ToolNotFoundError,
    UsageError,
)
from harnesskit.log.events import EventLog
from harnesskit.log.resume import check_resume
from harnesskit.log.trajectory import Trajectory
from harnesskit.messages import Message, ModelResponse, ToolCall
from harnesskit.models import (
    FunctionModel,
    ModelRequest,
    ReplayModel,
    ScriptedModel,
    get_model,
)
from harnesskit.notebook.display import set_display
from harnesskit.run import Harness, Limits, Run
from harnesskit.run.progress import TqdmProgress
from harnesskit.tools.gate import Gate, allow_all, deny_all
from harnesskit.tools.spec import Tool, ToolContext, ToolRegistry, lint, tool

if (
    _typing.TYPE_CHECKING
):  # imported on first use (`__getattr__`), so `import harnesskit` stays fast
    from harnesskit.analysis.audit import audit
    from harnesskit.analysis.evals import (
        CheckResult,
        Domain,
        Experiment,
        ExperimentResult,
        load_cases,
        pass_hat_k,
        register_domain,
    )
    from harnesskit.analysis.probes import compare_policies, run_probes
    from harnesskit.analysis.replay import counterfactual, replay
    from harnesskit.analysis.sufficiency import sufficiency
    from harnesskit.notebook.charts import (
        plot_budget,
        plot_comparison,
        plot_composition,
        plot_policy_tokens,
        plot_probes,
    )
    from harnesskit.notebook.frames import frame
    from harnesskit.notebook.widgets import ApprovalPrompt, StepControls, TraceExplorer

#: Top-level names whose modules load on first use: the analysis and notebook layers.
_LAZY = {
    "audit": "harnesskit.analysis.audit",
    **dict.fromkeys(
        (
            "CheckResult",
            "Domain",
            "Experiment",
            "ExperimentResult",
            "load_cases",
            "pass_hat_k",
            "register_domain",
        ),
        "harnesskit.analysis.evals",
    ),
    "compare_policies": "harnesskit.analysis.probes",
    "run_probes": "harnesskit.analysis.probes",
    "counterfactual": "harnesskit.analysis.replay",
    "replay": "harnesskit.analysis.replay",
    "sufficiency": "harnesskit.analysis.sufficiency",
    **dict.fromkeys(
        ("plot_budget", "plot_comparison", "plot_composition", "plot_policy_tokens", "plot_probes"),
        "harnesskit.notebook.charts",
    ),
    "frame": "harnesskit.notebook.frames",
    **dict.fromkeys(
        ("ApprovalPrompt", "StepControls", "TraceExplorer"), "harnesskit.notebook.widgets"
    ),
}


__getattr__, __dir__ = _lazy_exports("harnesskit", _LAZY, globals())  # PEP 562


__version__ = "0.1.0"

__all__ = [
    "ApprovalPrompt",
    "ArtifactStore",
    "BrakeTripped",
    "CheckResult",
    "ContextPolicy",
    "Domain",
    "EventLog",
    "Experiment",
    "ExperimentResult",
    "FunctionModel",
    "Gate",
    "Harness",
    "HarnessError",
    "Limits",
    "Message",
    "ModelError",
    "ModelOutputError",
    "ModelRequest",
    "ModelResponse",
    "ReplayModel",
    "ResumeError",
    "Run",
    "ScriptedModel",
    "StepControls",
    "StopRun",
    "Tool",
    "ToolArgumentsError",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolNotFoundError",
    "ToolRegistry",
    "TqdmProgress",
    "TraceExplorer",
    "Trajectory",
    "TransportPolicy",
    "UsageError",
    "allow_all",
    "audit",
    "check_resume",
    "compare_policies",
    "counterfactual",
    "deny_all",
    "frame",
    "get_model",
    "lint",
    "load_cases",
    "pass_hat_k",
    "plot_budget",
    "plot_comparison",
    "plot_composition",
    "plot_policy_tokens",
    "plot_probes",
    "register_domain",
    "replay",
    "run_probes",
    "set_display",
    "sufficiency",
    "tool",
    "transport_audit",
]
