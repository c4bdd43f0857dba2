"""Secret scanning before anything is written (R-S1).

`Redactor` finds API keys, bearer tokens, passwords, private keys and e-mail addresses in text
and replaces each with a `[REDACTED:<kind>]` marker. The event log runs every line through it
before the line exists anywhere (memory, disk, prompt), so model output and tool text are
covered too. Patterns only ever match characters that cannot end a JSON string, so redacting
a JSON line keeps it valid JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["DEFAULT_KINDS", "Redactor"]

_PATTERNS: dict[str, str] = {
    # Provider keys: OpenAI/Anthropic/DeepSeek style, GitHub, Slack, AWS access key ids, Google.
    "api_key": r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|xox[abpr]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35})",
    "bearer": r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{16,}=*",
    # "password": "...", password=..., pwd: ... (the value only; the key stays readable).
    "password": r"(?i)((?:password|passwd|pwd|secret|api_key|apikey|access_token)\\?[\"']?"
    r"\s*[:=]\s*\\?[\"']?)(?!\[REDACTED)[^\s\"'\\,}]{4,}",
    "private_key": r"-----BEGIN [A-Z ]*PRIVATE KEY-----[^-]*-----END [A-Z ]*PRIVATE KEY-----",
    "email": r"\b[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63})*"
    r"\.[A-Za-z]{2,}\b",
}
# Cheap substring triggers: a kind's regex runs only when one of its triggers is in the text
# (lower-cased), which keeps the common case (no secret) to a few `in` checks per line.
_TRIGGERS: dict[str, tuple[str, ...]] = {
    "api_key": ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "xox", "akia", "aiza"),
    "bearer": ("bearer",),
    "password": ("passw", "pwd", "secret", "api_key", "apikey", "access_token"),
    "private_key": ("private key",),
    "email": ("@",),
}
DEFAULT_KINDS: tuple[str, ...] = ("api_key", "bearer", "password", "private_key", "email")


@dataclass(slots=True)
class Redactor:
    """Replaces secrets in text with `[REDACTED:<kind>]`.

    Args:
        kinds: which built-in patterns to apply (default all: api_key, bearer, password,
            private_key, email).
        extra: more `{kind: regex}` patterns (e.g. a customer id format).
    """

    kinds: Iterable[str] = DEFAULT_KINDS
    extra: dict[str, str] = field(default_factory=dict)
    _compiled: list[tuple[str, re.Pattern[str], tuple[str, ...]]] = field(init=False, repr=False)
    _triggers: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        unknown = set(self.kinds) - set(_PATTERNS)
        if unknown:
            raise ValueError(
                f"unknown redaction kinds {sorted(unknown)}; known: {sorted(_PATTERNS)}"
            )
        patterns = {k: _PATTERNS[k] for k in self.kinds} | dict(self.extra)
        self._compiled = [(k, re.compile(p), _TRIGGERS.get(k, ())) for k, p in patterns.items()]
        self._triggers = tuple(sorted({t for k in patterns for t in _TRIGGERS.get(k, ())}))

    def needs(self, text: str) -> bool:
        """True when `text` may hold a secret (substring checks, no regex)."""
        if self.extra:
            return True
        low = text.lower()
        for trigger in self._triggers:  # noqa: SIM110 - a plain loop is ~2x faster than any()
            if trigger in low:
                return True
        return False

    def redact(self, text: str) -> tuple[str, dict[str, int]]:
        """Return `(redacted_text, {kind: count})`."""
        counts: dict[str, int] = {}
        low = text.lower()
        for kind, pattern, triggers in self._compiled:
            if triggers and not any(t in low for t in triggers):
                continue
            repl = rf"\1{_marker(kind)}" if pattern.groups else _marker(kind)
            text, n = pattern.subn(repl, text)
            if n:
                counts[kind] = n
        return text, counts


def _marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"
