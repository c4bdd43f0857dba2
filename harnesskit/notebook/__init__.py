"""The notebook layer: display and renderers, frames, charts and widgets.

The notebook layer: display and renderers, frames, charts and widgets. Reads logs and results.
"""

from harnesskit.log.otel import export_otlp, otlp_json, spans_of
from harnesskit.notebook import renderers  # noqa: F401  (registers the report renderers)
from harnesskit.notebook.charts import (
    plot_budget,
    plot_comparison,
    plot_composition,
    plot_policy_tokens,
    plot_probes,
)
from harnesskit.notebook.display import (
    get_display,
    set_display,
)
from harnesskit.notebook.frames import (
    BUDGET_COLUMNS,
    COMPOSITION_CATEGORIES,
    FRAME_KINDS,
    frame,
)
from harnesskit.notebook.live import LiveStream, live_stream
from harnesskit.notebook.parquet import (
    PARQUET_TABLES,
    export_parquet,
    read_parquet,
    typed_frame,
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
    "BUDGET_COLUMNS",
    "COMPOSITION_CATEGORIES",
    "FRAME_KINDS",
    "LiveStream",
    "PARQUET_TABLES",
    "Snapshot",
    "StepControls",
    "TraceExplorer",
    "frame",
    "export_otlp",
    "export_parquet",
    "get_display",
    "live_stream",
    "otlp_json",
    "plot_budget",
    "plot_comparison",
    "plot_composition",
    "plot_policy_tokens",
    "plot_probes",
    "read_parquet",
    "set_display",
    "spans_of",
    "typed_frame",
]
