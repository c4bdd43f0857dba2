import inspect
import os
import subprocess
import sys
from pathlib import Path

import harnesskit as hk

#: What a notebook user types, pinned: adding or removing a top-level name is an API change.
EXPORTED = [
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


def test_the_top_level_exports_exactly_the_pinned_names():
    assert hk.__all__ == EXPORTED
    assert sorted(EXPORTED) == EXPORTED and len(EXPORTED) <= 60
    public = {n for n in dir(hk) if not n.startswith("_")}  # dir: lazy names too (PEP 562)
    subpackages = {n for n in public if inspect.ismodule(getattr(hk, n))}
    assert public - subpackages == set(EXPORTED)


def test_every_exported_name_has_a_docstring():
    missing = [n for n in EXPORTED if not (inspect.getdoc(getattr(hk, n)) or "").strip()]
    assert missing == []


def test_service_classes_stay_in_their_subpackage():
    from harnesskit.context import ContextBuilder
    from harnesskit.data import Transport
    from harnesskit.models import ModelRequest
    from harnesskit.run import RunState
    from harnesskit.tools import Executor, IdempotencyLedger

    for cls in (ContextBuilder, Transport, RunState, Executor, IdempotencyLedger):
        assert not hasattr(hk, cls.__name__)
    assert ModelRequest is hk.ModelRequest


def test_import_is_light_and_silent():
    code = (
        "import sys, io, contextlib\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):\n"
        "    import harnesskit\n"
        "heavy = [m for m in ('pandas', 'matplotlib', 'httpx', 'ipywidgets', 'tqdm', 'mcp', 'opentelemetry', 'pyarrow') if m in sys.modules]\n"
        "print(repr(buf.getvalue()), heavy, harnesskit.__file__)"
    )
    root = Path(hk.__file__).parents[1]  # this checkout, not whatever is installed
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/", env=env
    )
    assert out.stdout.strip() == f"'' [] {hk.__file__}"
