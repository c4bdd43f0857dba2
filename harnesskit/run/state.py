"""`RunState`: everything the loop knows about a run between steps (R-L1)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from harnesskit import _repr

__all__ = ["RunState"]


@dataclass(slots=True, kw_only=True)
class RunState:
    """Everything the loop knows about a run between steps."""

    run_id: str
    """Unique id of the run."""
    branch_id: str = "main"
    """The branch being extended."""
    step: int = 0
    """Completed model turns."""
    prompt_tokens: int = 0
    """Cumulative prompt tokens (provider counts, else estimates)."""
    completion_tokens: int = 0
    """Cumulative completion tokens."""
    started: float = field(default_factory=time.monotonic)
    """The harness timer's reading (seconds) when the run started."""
    consecutive_errors: int = 0
    """Steps in a row whose every tool call failed."""
    tool_history: list[tuple[int, str, bool]] = field(default_factory=list)
    """`(step, tool, ok)` for every call, in order."""
    finish_reason: str | None = None
    """Why the run ended, or `None` while it can go on."""
    incomplete: bool = False
    """True when a brake ended the run (the final answer is a best effort)."""
    cancelled: bool = False
    """Set by `Run.cancel()`; honoured at the top of the next iteration."""
    call_ids: set[str] = field(default_factory=set)
    """Every tool_call_id used in the run (ids are made unique, R-E2)."""

    @property
    def total_tokens(self) -> int:
        """`prompt_tokens + completion_tokens`."""
        return self.prompt_tokens + self.completion_tokens

    def __repr__(self) -> str:
        return (
            f"<RunState {self.run_id} step={self.step} finish_reason={self.finish_reason} "
            f"tokens={self.total_tokens}>"
        )

    def _repr_html_(self) -> str | None:
        return _repr.html(self)
