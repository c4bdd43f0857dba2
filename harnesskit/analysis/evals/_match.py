"""Argument constraints of expected calls: literals (equality) and `$`-operators."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

OPERATORS = (
    "$eq", "$ne", "$in", "$nin", "$contains", "$regex", "$exists", "$unordered", "$gte", "$lte",
    "$icase", "$len",
)  # fmt: skip
"""The operators a constraint object may use."""


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()


def is_operator(c: Any) -> bool:
    return isinstance(c, Mapping) and bool(c) and all(str(k).startswith("$") for k in c)


def is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def equal(a: Any, b: Any) -> bool:
    if is_number(a) and is_number(b):
        return bool(a == b)
    if type(a) is not type(b) and not (isinstance(a, Mapping) and isinstance(b, Mapping)):
        return False
    if isinstance(a, Mapping):
        return set(a) == set(b) and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(equal, a, b))
    return bool(a == b)


def check_value(constraint: Any, actual: Any) -> str | None:
    """`None` when `actual` satisfies `constraint`, else why not."""
    if not is_operator(constraint):
        if actual is MISSING:
            return f"missing (expected {short(constraint)})"
        return (
            None
            if equal(constraint, actual)
            else f"expected {short(constraint)}, got {short(actual)}"
        )
    for op, want in constraint.items():
        if op == "$exists":
            if (actual is not MISSING) is not want:
                return "present" if want is False else "missing"
            continue
        if actual is MISSING:
            return f"missing (expected {op} {short(want)})"
        ok = _OPS[op](want, actual)
        if not ok:
            return f"expected {op} {short(want)}, got {short(actual)}"
    return None


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


_OPS: dict[str, Any] = {
    "$eq": equal,
    "$ne": lambda w, a: not equal(w, a),
    "$in": lambda w, a: any(equal(x, a) for x in w),
    "$nin": lambda w, a: not any(equal(x, a) for x in w),
    "$contains": lambda w, a: (
        (isinstance(a, str) and isinstance(w, str) and w in a)
        or (isinstance(a, list) and any(equal(w, x) for x in a))
        or (isinstance(a, Mapping) and w in a)
    ),
    "$regex": lambda w, a: isinstance(a, str) and re.search(w, a) is not None,
    "$unordered": lambda w, a: (
        isinstance(a, list) and sorted(map(_canon, w)) == sorted(map(_canon, a))
    ),
    "$gte": lambda w, a: is_number(a) and a >= w,
    "$lte": lambda w, a: is_number(a) and a <= w,
    "$icase": lambda w, a: isinstance(a, str) and norm(a) == norm(str(w)),
    "$len": lambda w, a: isinstance(a, list | str | Mapping) and len(a) == w,
}


def norm(text: str) -> str:
    return " ".join(text.casefold().split())


def short(value: Any, limit: int = 60) -> str:
    s = (
        value
        if isinstance(value, str) and limit > 60
        else json.dumps(value, ensure_ascii=False, default=str)
    )
    return s if len(s) <= limit else s[: limit - 1] + "…"
