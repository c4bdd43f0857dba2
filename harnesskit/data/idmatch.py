"""The one id matcher: is a typed id an altered copy of an id seen earlier?

Both audits use it: `transport_audit` (`harnesskit.data.bindings`) to say where a typed id came
from, and `audit` (`harnesskit.analysis.audit`) to flag a copied id that arrived changed; they
and the sufficiency check (R-C9) decide "the value was there" with `token_occurs` /
`amount_occurs`. The distance is the optimal string alignment (restricted Damerau–Levenshtein)
distance: an insertion, a deletion, a substitution or a swap of two adjacent characters is one
edit, so the transposed `4WQ150` → `4WQ105` is one edit, not two.
"""

from __future__ import annotations

import re

__all__ = ["altered_copy", "amount_occurs", "edit_distance", "token_occurs"]

_DIGITS = re.compile(r"\d{4,}$")


def token_occurs(token: str, text: str) -> bool:
    """Whether `token` is in `text` as a whole token, not a piece of a longer one.

    A token is bounded by characters other than word characters and `-`: `ABC12` does not
    occur in `ABC123` nor in `X-ABC12`, but does in `(ABC12)` and `ABC12.` Both audits and
    the sufficiency check (R-C9) decide "the value was there" with this one test.

    Args:
        token: the value typed (an id, a code, a date).
        text: the text the model could read.

    Returns:
        True when a bounded occurrence exists.
    """
    if not token or token not in text:  # the cheap test first; the bounded one decides
        return False
    return re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", text) is not None


def amount_occurs(number: str, text: str) -> bool:
    """Whether the number written `number` (`150`, `150.5`) is in `text` as a whole number.

    `150` is found in `$150`, `150.00` and `150,` but not in `1500`, `$1,150`, `2150` or
    `150.5` (another amount).

    Args:
        number: the number as text (digits, optionally a decimal part).
        text: the text the model could read.

    Returns:
        True when a bounded occurrence exists (trailing zeros of a decimal part allowed).
    """
    if not number or number not in text:
        return False
    zeros = "0*" if "." in number else r"(?:\.0+)?"  # 150.5 as 150.50; 150 as 150.00
    rx = rf"(?<![\d.])(?<!\d,){re.escape(number)}{zeros}(?![.,]?\d)"
    return re.search(rx, text) is not None


def edit_distance(a: str, b: str, *, cap: int | None = None) -> int:
    """Optimal string alignment distance between `a` and `b` (an adjacent swap is one edit).

    Args:
        a: one string.
        b: the other.
        cap: stop early once every alignment needs more than `cap` edits; `None` computes the
            exact distance.

    Returns:
        The number of edits, or `cap + 1` when it is above `cap`.
    """
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if cap is not None and min(cur) > cap:
            return cap + 1
        prev2, prev = prev, cur
    return prev[-1]


def altered_copy(token: str, cand: str, *, max_edits: int | None = None) -> tuple[int, str] | None:
    """`(rank, how)` when `token` is an altered copy of the earlier id `cand`, else `None`.

    Alterations, closest first (a lower rank is closer): the case changed (rank 0); cut to a
    prefix of at least 4 characters or extended from one (rank 1); mixed up by `d` edits of
    `edit_distance` (rank `1 + d`); the same trailing number of 4 or more digits under another
    prefix, such as `gift_card_5634230` for `credit_card_5634230` (rank 3).

    Args:
        token: the id as typed.
        cand: an id seen earlier (not equal to `token`).
        max_edits: the most edits that still count as a mix-up; `None` allows one edit per
            8 characters of `cand` (at least one) and lengths differing by at most one.

    Returns:
        `(rank, how)`, `how` a short phrase such as `"mixed up (1 edits)"`, or `None`.
    """
    if token.lower() == cand.lower():
        return 0, "case changed"
    if len(token) >= 4 and cand.startswith(token):
        return 1, f"cut ({len(token)} of {len(cand)} chars)"
    if len(cand) >= 4 and token.startswith(cand):
        return 1, f"extended ({len(token)} chars, was {len(cand)})"
    limit = max(1, len(cand) // 8) if max_edits is None else max_edits
    if abs(len(token) - len(cand)) <= (1 if max_edits is None else max_edits):
        d = edit_distance(token, cand, cap=limit)
        if d <= limit:
            return 1 + d, f"mixed up ({d} edits)"
    mine, theirs = _DIGITS.search(token), _DIGITS.search(cand)
    if (
        mine
        and theirs
        and mine.group() == theirs.group()
        and token[: mine.start()] != cand[: theirs.start()]
    ):
        return 3, f"mixed up (same number, {cand[: theirs.start()]}… → {token[: mine.start()]}…)"
    return None
