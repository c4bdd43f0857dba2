"""Context: policies as data and the builder that assembles every prompt under one.

Context policies (data, with built-in YAML), the prompt builder, its rules, the injection record
and token estimates. Stands on `log`, `data` and the value types; never calls a model.
"""

from harnesskit.context.builder import (
    BUILTIN_POLICIES,
    POLICY_DIR,
    ContextBuilder,
    ContextPolicy,
    InjectionRecord,
    Prompt,
    detect_conflicts,
    event_text,
    event_to_message,
    injection_records,
    is_untrusted,
    looks_like_instruction,
    policy_problems,
)
from harnesskit.context.tokens import (
    TokenEstimator,
    estimate_tokens,
)

__all__ = [
    "BUILTIN_POLICIES",
    "ContextBuilder",
    "ContextPolicy",
    "InjectionRecord",
    "POLICY_DIR",
    "Prompt",
    "TokenEstimator",
    "detect_conflicts",
    "estimate_tokens",
    "event_text",
    "event_to_message",
    "injection_records",
    "is_untrusted",
    "looks_like_instruction",
    "policy_problems",
]
