"""The airline domain's value shapes: which typed values its tool calls carry, by kind.

Ordered most specific first; a span claimed by an earlier shape is not claimed again. So a
six-character reservation id such as `BOH180` is a reservation, never a flight number; a flight
number is the carrier's `HAT` followed by three digits (`HAT001`). Pass them to
`hk.sufficiency(..., shapes=VALUE_SHAPES)` and `hk.transport_audit(..., patterns=...)`.
"""

from __future__ import annotations

__all__ = ["VALUE_SHAPES"]

#: `{kind: regular expression}` in priority order (a mapping keeps its order).
VALUE_SHAPES: dict[str, str] = {
    "date": r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b",
    "payment_id": r"\b(?:credit_card|gift_card|certificate|paypal)_\d+\b",
    "user_id": r"\b[a-z]+(?:_[a-z]+)*_\d{3,}\b",
    "reservation_id": r"\b(?!HAT\d{3}\b)[A-Z0-9]{6}\b",
    "flight_number": r"\b[A-Z]{3}\d{3}\b",
    "airport": r"\b[A-Z]{3}\b",
}
