"""Data transport: large results kept out of the prompt and exact values carried by the runtime.

Data transport: the artifact store, inspection calls, the single-representation check, `$bind`
bindings and the transport that wires them into a run. Stands on `tools`, `log` and the value types.
"""

from harnesskit.data.artifacts import (
    INSPECTION_TOOLS,
    ArtifactRef,
    ArtifactStore,
    Piece,
    Preview,
    RepresentationChecker,
    RepresentationViolation,
    check_representation,
    oversize_reason,
    summarize,
    verify_preview,
)
from harnesskit.data.bindings import (
    BINDINGS_NOTE,
    ID_PATTERNS,
    Binder,
    TransportAudit,
    transport_audit,
)
from harnesskit.data.idmatch import altered_copy, edit_distance
from harnesskit.data.representation import (
    FORMS,
)
from harnesskit.data.transport import (
    Transport,
    TransportPolicy,
)

__all__ = [
    "ArtifactRef",
    "ArtifactStore",
    "BINDINGS_NOTE",
    "Binder",
    "FORMS",
    "ID_PATTERNS",
    "INSPECTION_TOOLS",
    "Piece",
    "Preview",
    "RepresentationChecker",
    "RepresentationViolation",
    "Transport",
    "TransportAudit",
    "TransportPolicy",
    "altered_copy",
    "check_representation",
    "edit_distance",
    "oversize_reason",
    "summarize",
    "transport_audit",
    "verify_preview",
]
