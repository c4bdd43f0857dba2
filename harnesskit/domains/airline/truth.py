"""Server-side truth for cancellations (R-F1): facts come from the database and the clock.

The cancellation rules read the reservation's cabin, insurance, booking time, each flight's
status and the server's clock; none of them is taken from the model. The model may state
*claims* (`expected_cabin_class`, `expected_has_insurance`) as a checklist: `check_claims`
returns every claim that differs from the truth (the tool layer logs each as an
`alert.mismatch` event), and a claim never changes the decision.

Everything here is a pure function of the database and a time, except `cancel` which applies
the decision to the database.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

import harnesskit as hk
from harnesskit.domains.airline import ops
from harnesskit.domains.airline.data import AirlineDB

__all__ = [
    "BENCHMARK_NOW",
    "CANCEL_REASONS",
    "EST",
    "INSURED_REASONS",
    "CancelReason",
    "CancellationDecision",
    "CancellationFacts",
    "CancellationOutcome",
    "Clock",
    "Mismatch",
    "Mode",
    "RuleCheck",
    "SegmentFact",
    "benchmark_clock",
    "cancel",
    "cancellation_facts",
    "check_claims",
    "decide_cancellation",
    "parse_est",
]

#: The benchmark's time zone: US Eastern Standard Time, a fixed UTC-5 offset.
EST = timezone(timedelta(hours=-5), "EST")
#: The benchmark's "now": 2024-05-15 15:00 EST.
BENCHMARK_NOW = datetime(2024, 5, 15, 15, 0, tzinfo=EST)

Clock = Callable[[], datetime]
Mode = Literal["strict", "tau_bench"]
CancelReason = Literal["change_of_plan", "airline_cancelled_flight", "health", "weather", "other"]
#: Every reason a cancellation may give.
CANCEL_REASONS: tuple[str, ...] = (
    "change_of_plan",
    "airline_cancelled_flight",
    "health",
    "weather",
    "other",
)
#: Reasons that travel insurance covers.
INSURED_REASONS = frozenset({"health", "weather"})

_FLOWN_STATUSES = frozenset({"landed", "flying"})
_BOOKING_WINDOW = timedelta(hours=24)


def benchmark_clock() -> datetime:
    """The default server clock: always `BENCHMARK_NOW`."""
    return BENCHMARK_NOW


def parse_est(text: str) -> datetime:
    """Parse an ISO date-time written without a zone in the database, as EST.

    Raises:
        UsageError: the text is not an ISO date-time.
    """
    try:
        value = datetime.fromisoformat(text)
    except ValueError as exc:
        raise hk.UsageError(f"not an ISO date-time: {text!r}") from exc
    return value if value.tzinfo is not None else value.replace(tzinfo=EST)


@dataclass(frozen=True, slots=True, kw_only=True)
class SegmentFact:
    """What the flight table says about one segment of a reservation."""

    flight_number: str
    """E.g. `HAT170`."""
    date: str
    """The segment's date, `YYYY-MM-DD`."""
    status: str | None
    """The flight's status on that date (`available`, `landed`, `cancelled`, ...) or `None`."""
    departure: datetime | None
    """Actual, estimated or scheduled departure (in that order of preference), EST."""
    flown: bool
    """The segment has been (or is being) flown."""
    cancelled_by_airline: bool
    """The airline cancelled this flight on this date."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CancellationFacts:
    """Everything the cancellation rules need, read from the database and the clock."""

    reservation_id: str
    """The reservation."""
    user_id: str
    """Its owner."""
    cabin: str
    """`basic_economy`, `economy` or `business`."""
    has_insurance: bool
    """Travel insurance was bought."""
    created_at: datetime
    """When it was booked (EST)."""
    now: datetime
    """The server clock's time when the facts were read."""
    already_cancelled: bool
    """The reservation's status is already `cancelled`."""
    segments: tuple[SegmentFact, ...] = ()
    """One entry per flight segment, in itinerary order."""

    @property
    def flown_segments(self) -> tuple[SegmentFact, ...]:
        """Segments already flown or in the air."""
        return tuple(s for s in self.segments if s.flown)

    @property
    def booked_within_24h(self) -> bool:
        """The booking is at most 24 hours old (and not in the future)."""
        return timedelta(0) <= self.now - self.created_at <= _BOOKING_WINDOW

    @property
    def airline_cancelled(self) -> bool:
        """At least one segment's flight was cancelled by the airline."""
        return any(s.cancelled_by_airline for s in self.segments)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (times as ISO text)."""
        return {
            "reservation_id": self.reservation_id,
            "user_id": self.user_id,
            "cabin": self.cabin,
            "has_insurance": self.has_insurance,
            "created_at": self.created_at.isoformat(),
            "now": self.now.isoformat(),
            "already_cancelled": self.already_cancelled,
            "booked_within_24h": self.booked_within_24h,
            "airline_cancelled": self.airline_cancelled,
            "flown_segments": [f"{s.flight_number} {s.date}" for s in self.flown_segments],
        }


def _segment_fact(db: AirlineDB, segment: Mapping[str, Any], now: datetime) -> SegmentFact:
    number, date = segment["flight_number"], segment["date"]
    flight = db.flights.get(number) or {}
    day = (flight.get("dates") or {}).get(date) or {}
    status = day.get("status")
    departure_text = (
        day.get("actual_departure_time_est")
        or day.get("estimated_departure_time_est")
        or (
            f"{date}T{flight['scheduled_departure_time_est']}"
            if "scheduled_departure_time_est" in flight
            else None
        )
    )
    departure = parse_est(departure_text) if departure_text else None
    if status in _FLOWN_STATUSES:
        flown = True
    elif status == "cancelled":
        flown = False
    else:
        flown = departure is not None and departure <= now
    return SegmentFact(
        flight_number=number,
        date=date,
        status=status,
        departure=departure,
        flown=flown,
        cancelled_by_airline=status == "cancelled",
    )


def cancellation_facts(
    db: AirlineDB, reservation_id: str, *, now: datetime | None = None
) -> CancellationFacts | None:
    """Read the facts the cancellation rules need.

    Args:
        db: the run's database.
        reservation_id: the reservation to check.
        now: the server time (timezone-aware); `None` means `BENCHMARK_NOW`.

    Returns:
        The facts, or `None` when no such reservation exists.

    Raises:
        UsageError: `now` is a naive datetime.
    """
    now = BENCHMARK_NOW if now is None else now
    if now.tzinfo is None:
        raise hk.UsageError("the server clock must return timezone-aware datetimes (e.g. tz=EST)")
    reservation = db.reservations.get(reservation_id)
    if reservation is None:
        return None
    return CancellationFacts(
        reservation_id=reservation_id,
        user_id=reservation["user_id"],
        cabin=reservation["cabin"],
        has_insurance=reservation.get("insurance") == "yes",
        created_at=parse_est(reservation["created_at"]),
        now=now,
        already_cancelled=reservation.get("status") == "cancelled",
        segments=tuple(_segment_fact(db, s, now) for s in reservation["flights"]),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleCheck:
    """One cancellation rule and whether the facts hit it."""

    rule: str
    """The rule's name, e.g. `within_24h_of_booking`."""
    hit: bool
    """The rule applies to this reservation."""
    effect: Literal["deny", "allow"]
    """What a hit does."""
    detail: str
    """The facts behind it, in words."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CancellationDecision:
    """Whether the reservation may be cancelled, and which rule decided."""

    allowed: bool
    """True when the cancellation may go ahead."""
    rule: str
    """The deciding rule (the first deny rule hit, else the first allow rule hit, else
    `no_rule_allows`)."""
    explanation: str
    """One sentence for the model and the log."""
    checks: tuple[RuleCheck, ...] = ()
    """Every rule, hit or not, in evaluation order."""


def decide_cancellation(facts: CancellationFacts, reason: str | None) -> CancellationDecision:
    """Apply the cancellation policy to the facts.

    Deny rules come first: an already-cancelled reservation, or any flown segment (a
    partly used trip cannot be cancelled here; it needs a human agent). Then any allow rule
    suffices: booked within 24 hours, a flight cancelled by the airline, business class, or
    insurance that covers the stated reason (health or weather). Nothing else allows it.

    Args:
        facts: from `cancellation_facts`.
        reason: why the user cancels, one of `CANCEL_REASONS` (`None` if not given).

    Returns:
        The decision with every rule checked.
    """
    flown = ", ".join(f"{s.flight_number} on {s.date}" for s in facts.flown_segments)
    covered = facts.has_insurance and reason in INSURED_REASONS
    checks = (
        RuleCheck(
            rule="already_cancelled",
            hit=facts.already_cancelled,
            effect="deny",
            detail="the reservation is already cancelled"
            if facts.already_cancelled
            else "the reservation is active",
        ),
        RuleCheck(
            rule="segment_flown",
            hit=bool(flown),
            effect="deny",
            detail=f"already flown: {flown}" if flown else "no segment has been flown",
        ),
        RuleCheck(
            rule="within_24h_of_booking",
            hit=facts.booked_within_24h,
            effect="allow",
            detail=f"booked {facts.created_at.isoformat()}, now {facts.now.isoformat()}",
        ),
        RuleCheck(
            rule="airline_cancelled_flight",
            hit=facts.airline_cancelled,
            effect="allow",
            detail="the airline cancelled a flight of this reservation"
            if facts.airline_cancelled
            else "no flight of this reservation was cancelled by the airline",
        ),
        RuleCheck(
            rule="business_class",
            hit=facts.cabin == "business",
            effect="allow",
            detail=f"cabin is {facts.cabin}",
        ),
        RuleCheck(
            rule="insurance_covers_reason",
            hit=covered,
            effect="allow",
            detail=(
                f"insurance {'yes' if facts.has_insurance else 'no'}, "
                f"reason {reason or 'not given'} "
                f"(covered reasons: {', '.join(sorted(INSURED_REASONS))})"
            ),
        ),
    )
    for check in checks:
        if check.effect == "deny" and check.hit:
            return CancellationDecision(
                allowed=False,
                rule=check.rule,
                explanation=f"cannot cancel {facts.reservation_id}: {check.detail}",
                checks=checks,
            )
    for check in checks:
        if check.effect == "allow" and check.hit:
            return CancellationDecision(
                allowed=True,
                rule=check.rule,
                explanation=(
                    f"{facts.reservation_id} may be cancelled ({check.rule}: {check.detail})"
                ),
                checks=checks,
            )
    return CancellationDecision(
        allowed=False,
        rule="no_rule_allows",
        explanation=(
            f"cannot cancel {facts.reservation_id}: booked more than 24 hours ago, no flight "
            f"cancelled by the airline, {facts.cabin} cabin, and "
            + (
                "insurance does not cover the reason given"
                if facts.has_insurance
                else "no insurance"
            )
        ),
        checks=checks,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Mismatch:
    """A model claim that differs from the system's truth (payload of `alert.mismatch`)."""

    field: str
    """What was claimed about, e.g. `cabin_class`."""
    claimed: Any
    """The model's value."""
    actual: Any
    """The database's value."""
    subject: str = ""
    """What the fact belongs to, e.g. the reservation id."""

    def to_dict(self) -> dict[str, Any]:
        """The event payload."""
        return {
            "field": self.field,
            "claimed": self.claimed,
            "actual": self.actual,
            "subject": self.subject,
        }


def check_claims(
    facts: CancellationFacts,
    *,
    expected_cabin_class: str | None = None,
    expected_has_insurance: bool | None = None,
) -> tuple[Mismatch, ...]:
    """Compare the model's optional claims with the facts.

    Args:
        facts: from `cancellation_facts`.
        expected_cabin_class: the cabin the model believes the reservation has (`None`: no claim).
        expected_has_insurance: whether the model believes insurance was bought (`None`: no
            claim).

    Returns:
        One `Mismatch` per claim that differs, in argument order; empty when all agree.
    """
    mismatches = []
    if expected_cabin_class is not None and expected_cabin_class != facts.cabin:
        mismatches.append(
            Mismatch(
                field="cabin_class",
                claimed=expected_cabin_class,
                actual=facts.cabin,
                subject=facts.reservation_id,
            )
        )
    if expected_has_insurance is not None and bool(expected_has_insurance) != facts.has_insurance:
        mismatches.append(
            Mismatch(
                field="has_insurance",
                claimed=expected_has_insurance,
                actual=facts.has_insurance,
                subject=facts.reservation_id,
            )
        )
    return tuple(mismatches)


@dataclass(frozen=True, slots=True, kw_only=True)
class CancellationOutcome:
    """What a cancellation call did."""

    output: str
    """The tool's output text (the reservation JSON, or an `Error: ...` string)."""
    cancelled: bool
    """The database was changed."""
    decision: CancellationDecision | None = None
    """The policy decision (`None` when the reservation does not exist)."""
    mismatches: tuple[Mismatch, ...] = field(default=())
    """Claims that differed from the truth."""


def cancel(
    db: AirlineDB,
    reservation_id: str,
    *,
    reason: str | None = None,
    mode: Mode = "strict",
    now: datetime | None = None,
    expected_cabin_class: str | None = None,
    expected_has_insurance: bool | None = None,
) -> CancellationOutcome:
    """Decide a cancellation from the database and clock, then apply it.

    In `strict` mode the policy decides; a denied cancellation changes nothing and answers
    `Error: <explanation>`. In `tau_bench` mode the benchmark's tool is reproduced: the
    reservation is cancelled whatever the policy says (the decision is still computed and
    returned, for audit). In both modes claims are checked and never affect the outcome.

    Args:
        db: the run's database.
        reservation_id: the reservation to cancel.
        reason: one of `CANCEL_REASONS` (`None`: not given).
        mode: `strict` or `tau_bench`.
        now: the server time; `None` means `BENCHMARK_NOW`.
        expected_cabin_class: optional claim, see `check_claims`.
        expected_has_insurance: optional claim, see `check_claims`.

    Returns:
        The outcome, with the decision and any mismatches.

    Raises:
        UsageError: `mode` or `reason` is not a known value.
    """
    if mode not in ("strict", "tau_bench"):
        raise hk.UsageError(f"mode must be 'strict' or 'tau_bench', got {mode!r}")
    if reason is not None and reason not in CANCEL_REASONS:
        raise hk.UsageError(f"reason must be one of {CANCEL_REASONS}, got {reason!r}")
    facts = cancellation_facts(db, reservation_id, now=now)
    if facts is None:
        return CancellationOutcome(output="Error: reservation not found", cancelled=False)
    decision = decide_cancellation(facts, reason)
    mismatches = check_claims(
        facts,
        expected_cabin_class=expected_cabin_class,
        expected_has_insurance=expected_has_insurance,
    )
    if mode == "strict" and not decision.allowed:
        return CancellationOutcome(
            output=f"Error: {decision.explanation}",
            cancelled=False,
            decision=decision,
            mismatches=mismatches,
        )
    return CancellationOutcome(
        output=ops.cancel_reservation(db, reservation_id),
        cancelled=True,
        decision=decision,
        mismatches=mismatches,
    )
