"""Token estimation when a provider reports no usage (R-M4).

The rule: CJK characters count about one token each; other text about four characters per
token. `TokenEstimator.calibrate` fits both rates from recorded (text, reported tokens) pairs.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import UsageError

__all__ = ["TokenEstimator", "estimate_tokens"]


@functools.cache
def _cjk() -> re.Pattern[str]:
    """CJK unified ideographs (+ext A), kana, hangul, CJK punctuation and full-width forms.

    Compiled on first use (non-ASCII text only; 3 ms that `import harnesskit` need not pay).
    """
    return re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")


@frozen_dataclass(kw_only=True)
class TokenEstimator:
    """Estimates tokens from text: `cjk_chars * tokens_per_cjk + other_chars / chars_per_token`."""

    chars_per_token: float = 4.0
    """Non-CJK characters per token (default 4, the common rule of thumb for English/JSON)."""
    tokens_per_cjk: float = 1.0
    """Tokens per CJK character (default 1)."""
    per_message_tokens: int = 4
    """Overhead per chat message (role and separators), in tokens."""

    def count(self, text: str) -> int:
        """Estimated tokens in `text` (0 for empty text)."""
        if not text:
            return 0
        if text.isascii():
            return max(1, round(len(text) / self.chars_per_token))
        cjk = len(_cjk().findall(text))
        return max(1, round(cjk * self.tokens_per_cjk + (len(text) - cjk) / self.chars_per_token))

    def count_message(self, message: Any) -> int:
        """Estimated tokens of one `Message` including its tool calls and overhead."""
        n = self.per_message_tokens + self.count(message.content or "")
        for call in message.tool_calls:
            n += self.count(call.name) + self.count(
                call.raw_arguments or json.dumps(call.arguments)
            )
        return n

    def count_messages(self, messages: Iterable[Any]) -> int:
        """Estimated prompt tokens of a message list."""
        return sum(self.count_message(m) for m in messages)

    def count_tools(self, tools: Sequence[dict[str, Any]]) -> int:
        """Estimated tokens of the tool specs sent with a request (their JSON text)."""
        return self.count(json.dumps(tools, separators=(",", ":"))) if tools else 0

    @classmethod
    def calibrate(cls, samples: Iterable[tuple[str, int]]) -> tuple[TokenEstimator, float]:
        """Fit the two rates by least squares on `(text, reported_tokens)` pairs.

        Returns:
            `(estimator, mean_abs_relative_error)`; the error is measured on the samples,
            as a fraction (0.05 = 5 %).

        Raises:
            UsageError: fewer than two samples, or no sample with non-CJK text.
        """
        rows = [(len(_cjk().findall(t)), len(t), n) for t, n in samples if t]
        if len(rows) < 2:
            raise UsageError("calibrate needs at least two (text, tokens) samples with text")
        # Model: tokens = a * cjk + b * other, solved by the 2x2 normal equations.
        sxx = sum(c * c for c, _, _ in rows)
        syy = sum((t - c) ** 2 for c, t, _ in rows)
        sxy = sum(c * (t - c) for c, t, _ in rows)
        sxn = sum(c * n for c, _, n in rows)
        syn = sum((t - c) * n for c, t, n in rows)
        det = sxx * syy - sxy * sxy
        if syy == 0:
            raise UsageError("calibrate needs samples with non-CJK text")
        if det == 0:  # no CJK in the samples: fit only the non-CJK rate
            a, b = 1.0, syn / syy
        else:
            a = (sxn * syy - syn * sxy) / det
            b = (syn * sxx - sxn * sxy) / det
        est = cls(chars_per_token=1 / b if b > 0 else 4.0, tokens_per_cjk=a if a > 0 else 1.0)
        errs = [
            abs(c * est.tokens_per_cjk + (t - c) / est.chars_per_token - n) / n
            for c, t, n in rows
            if n
        ]
        return est, (sum(errs) / len(errs) if errs else 0.0)


_DEFAULT = TokenEstimator()


def estimate_tokens(text: str) -> int:
    """Estimate tokens in `text` with the default rates (CJK 1/char, other 4 chars/token)."""
    return _DEFAULT.count(text)
