"""The run: the loop, its limits, the harness, the lifecycle around the loop, and progress.

Ties tools, context, data and a model together.
"""

from harnesskit.run.harness import Harness
from harnesskit.run.limits import Limits
from harnesskit.run.loop import Run
from harnesskit.run.progress import Progress, TqdmProgress
from harnesskit.run.state import RunState

__all__ = [
    "Harness",
    "Limits",
    "Progress",
    "Run",
    "RunState",
    "TqdmProgress",
]
