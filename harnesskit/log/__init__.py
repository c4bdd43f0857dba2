"""The trajectory: typed events in an append-only log, statuses, branches, resume and search.

The trajectory: events, the append-only event log, statuses and branch views, resume checks,
search and redaction. Stands on `tools` and the value types.
"""

from harnesskit.log.events import (
    EVENT_TYPES,
    FACT_TYPES,
    INTERPRETATION_TYPES,
    SCHEMA_VERSION,
    Event,
    EventLog,
)
from harnesskit.log.redact import (
    DEFAULT_KINDS,
    Redactor,
)
from harnesskit.log.resume import (
    ResumeCheck,
    ResumePoint,
    ResumeReport,
    check_resume,
    rebuild_state,
    reopen,
    restart_point,
)
from harnesskit.log.trajectory import (
    STAGES,
    STATUSES,
    Evidence,
    Gap,
    Trajectory,
    branch_filter,
    branch_limits,
    frozen_start,
    visible_events,
)

__all__ = [
    "DEFAULT_KINDS",
    "EVENT_TYPES",
    "Event",
    "EventLog",
    "Evidence",
    "FACT_TYPES",
    "Gap",
    "INTERPRETATION_TYPES",
    "Redactor",
    "ResumeCheck",
    "ResumePoint",
    "ResumeReport",
    "SCHEMA_VERSION",
    "STAGES",
    "STATUSES",
    "Trajectory",
    "branch_filter",
    "branch_limits",
    "check_resume",
    "frozen_start",
    "rebuild_state",
    "reopen",
    "restart_point",
    "visible_events",
]
