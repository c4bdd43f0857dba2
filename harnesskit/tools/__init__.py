"""Tools: what the model may call, and the gate and executor that run the calls.

Tools: specs and schema derivation, the registry, lint, the permission gate, the executor and
the idempotency ledger. Stands on `errors` and `messages` only.
"""

from harnesskit.tools.executor import (
    CircuitBreaker,
    Executed,
    Executor,
    schema_error_message,
)
from harnesskit.tools.gate import (
    ApprovalRequest,
    Gate,
    GateDecision,
    allow_all,
    deny_all,
    terminal_prompt,
)
from harnesskit.tools.groups import CHOOSE_GROUP, GroupSelector, ToolGroups
from harnesskit.tools.idempotency import (
    EffectCheck,
    IdempotencyLedger,
    WriteRecord,
    key_for,
    ledger_path,
    natural_key_for,
)
from harnesskit.tools.mcp import MCPConnection, mcp_tools, risk_from_annotations
from harnesskit.tools.spec import (
    RISKS,
    LintIssue,
    Tool,
    ToolContext,
    ToolRegistry,
    lint,
    schema_for_type,
    tool,
)

__all__ = [
    "CHOOSE_GROUP",
    "ApprovalRequest",
    "CircuitBreaker",
    "EffectCheck",
    "Executed",
    "Executor",
    "Gate",
    "GateDecision",
    "GroupSelector",
    "IdempotencyLedger",
    "LintIssue",
    "MCPConnection",
    "RISKS",
    "Tool",
    "ToolContext",
    "ToolGroups",
    "ToolRegistry",
    "WriteRecord",
    "allow_all",
    "deny_all",
    "key_for",
    "ledger_path",
    "lint",
    "mcp_tools",
    "natural_key_for",
    "risk_from_annotations",
    "schema_error_message",
    "schema_for_type",
    "terminal_prompt",
    "tool",
]
