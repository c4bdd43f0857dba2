"""Analysis that drives or reads runs: replay, audit, probes and evals."""

from harnesskit.analysis import evals
from harnesskit.analysis.audit import (
    POINTS,
    AuditReport,
    ExperimentAudit,
    Finding,
    audit,
    is_identifier,
)
from harnesskit.analysis.probes import (
    PROBE_KINDS,
    ProbeResult,
    compare_policies,
    debug_session,
    run_probe,
    run_probes,
)
from harnesskit.analysis.replay import (
    Divergence,
    ReplayReport,
    counterfactual,
    replay,
)
from harnesskit.analysis.sufficiency import (
    DEFAULT_SHAPES,
    ValueShape,
    combine,
    extract_values,
    sufficiency,
    summary_line,
)

__all__ = [
    "DEFAULT_SHAPES",
    "AuditReport",
    "Divergence",
    "ExperimentAudit",
    "Finding",
    "POINTS",
    "PROBE_KINDS",
    "ProbeResult",
    "ReplayReport",
    "audit",
    "compare_policies",
    "counterfactual",
    "debug_session",
    "evals",
    "is_identifier",
    "replay",
    "run_probe",
    "run_probes",
    "sufficiency",
    "summary_line",
    "ValueShape",
    "combine",
    "extract_values",
]
