"""The run: the loop, its limits, the harness and progress.

The run: the loop, limits, the harness and progress. Ties tools, context, data and a model.
"""

from harnesskit.run.loop import (
    Harness,
    Limits,
    Progress,
    Run,
    RunState,
)
from harnesskit.run.progress import (
    TqdmProgress,
)

__all__ = [
    "Harness",
    "Limits",
    "Progress",
    "Run",
    "RunState",
    "TqdmProgress",
]
