"""The notebook layer: display and renderers, frames, charts and widgets.

The notebook layer: display and renderers, frames, charts and widgets. Reads logs and results.
"""

import typing as _typing

from harnesskit._lazy import lazy_exports as _lazy_exports
from harnesskit.notebook import renderers  # noqa: F401  (registers the report renderers)
from harnesskit.notebook.display import (
    get_display,
    set_display,
)

if _typing.TYPE_CHECKING:  # imported on first use (`__getattr__`): `import harnesskit` stays fast
    from harnesskit.log.otel import export_otlp, otlp_json, spans_of
    from harnesskit.notebook.charts import (
        plot_budget,
        plot_comparison,
        plot_composition,
        plot_policy_tokens,
        plot_probes,
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

_LAZY = {
    **dict.fromkeys(("export_otlp", "otlp_json", "spans_of"), "harnesskit.log.otel"),
    **dict.fromkeys(
        ("plot_budget", "plot_comparison", "plot_composition", "plot_policy_tokens", "plot_probes"),
        "harnesskit.notebook.charts",
    ),
    **dict.fromkeys(
        ("BUDGET_COLUMNS", "COMPOSITION_CATEGORIES", "FRAME_KINDS", "frame"),
        "harnesskit.notebook.frames",
    ),
    **dict.fromkeys(("LiveStream", "live_stream"), "harnesskit.notebook.live"),
    **dict.fromkeys(
        ("PARQUET_TABLES", "export_parquet", "read_parquet", "typed_frame"),
        "harnesskit.notebook.parquet",
    ),
    **dict.fromkeys(
        ("ApprovalDecision", "ApprovalPrompt", "Snapshot", "StepControls", "TraceExplorer"),
        "harnesskit.notebook.widgets",
    ),
}


__getattr__, __dir__ = _lazy_exports("harnesskit.notebook", _LAZY, globals())  # PEP 562


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
