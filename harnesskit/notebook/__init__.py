"""The notebook layer: display and renderers, frames, charts and widgets.

The notebook layer: display and renderers, frames, charts and widgets. Reads logs and results.
"""

from harnesskit.notebook import renderers  # noqa: F401  (registers the report renderers)
from harnesskit.notebook.display import (
    get_display,
    set_display,
)
from harnesskit.notebook.trace import (
    COMPOSITION_CATEGORIES,
    budget_frame,
    comparison_frame,
    composition_frame,
    frame,
    plot_budget,
    plot_comparison,
    plot_composition,
)
from harnesskit.notebook.widgets import (
    ApprovalDecision,
    ApprovalPrompt,
    Snapshot,
    StepControls,
    TraceExplorer,
)

__all__ = [
    "ApprovalDecision",
    "ApprovalPrompt",
    "COMPOSITION_CATEGORIES",
    "Snapshot",
    "StepControls",
    "TraceExplorer",
    "budget_frame",
    "comparison_frame",
    "composition_frame",
    "frame",
    "get_display",
    "plot_budget",
    "plot_comparison",
    "plot_composition",
    "set_display",
]
