"""Strict-mode checks of bookings and changes that the server can decide from its own data.

Each check is a pure function of the database and the call's arguments and returns `None` when
the request is allowed, or one sentence saying which rule it breaks. The `strict` tools run them
before acting; the `tau_bench` tools do not (the benchmark checked none of them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from harnesskit.domains.airline.data import AirlineDB

__all__ = [
    "MAX_PASSENGERS",
    "PAYMENT_LIMITS",
    "check_baggage_change",
    "check_booking",
    "check_flight_change",
]

#: Most passengers one reservation may hold.
MAX_PASSENGERS = 5
#: Most payment methods of each kind one booking may use.
PAYMENT_LIMITS: Mapping[str, int] = {"certificate": 1, "credit_card": 1, "gift_card": 3}


def check_booking(
    db: AirlineDB,
    user_id: str,
    passengers: Sequence[Mapping[str, Any]],
    payment_methods: Sequence[Mapping[str, Any]],
) -> str | None:
    """Passenger count and payment-method mix of a new booking.

    Returns:
        `None` when allowed, else the broken rule.
    """
    if not 1 <= len(passengers) <= MAX_PASSENGERS:
        return f"a reservation holds 1 to {MAX_PASSENGERS} passengers, not {len(passengers)}"
    user = db.users.get(user_id)
    if user is None:
        return None  # the booking itself answers "user not found"
    kinds = Counter(
        user["payment_methods"].get(p.get("payment_id"), {}).get("source") for p in payment_methods
    )
    for kind, limit in PAYMENT_LIMITS.items():
        if kinds[kind] > limit:
            return (
                f"a booking may use at most {limit} {kind.replace('_', ' ')}(s), not {kinds[kind]}"
            )
    return None


def check_flight_change(
    db: AirlineDB, reservation_id: str, cabin: str, flights: Sequence[Mapping[str, Any]]
) -> str | None:
    """A change of flights or cabin keeps the trip; basic economy flights never change.

    Returns:
        `None` when allowed, else the broken rule.
    """
    reservation = db.reservations.get(reservation_id)
    if reservation is None:
        return None  # the change itself answers "reservation not found"
    if reservation.get("status") == "cancelled":
        return f"reservation {reservation_id} is cancelled"
    current = [(f["flight_number"], f["date"]) for f in reservation["flights"]]
    wanted = [(f.get("flight_number"), str(f.get("date"))) for f in flights]
    if reservation["cabin"] == "basic_economy" and wanted != current:
        return "the flights of a basic economy reservation cannot be changed (only its cabin)"
    if not wanted:
        return "the new itinerary has no flights"
    legs = []
    for number, _ in wanted:
        flight = db.flights.get(str(number))
        if flight is None:
            return None  # the change itself answers "flight not found"
        legs.append((flight["origin"], flight["destination"]))
    if legs[0][0] != reservation["origin"]:
        return f"the trip must still start at {reservation['origin']}, not {legs[0][0]}"
    if reservation["flight_type"] == "one_way":
        if legs[-1][1] != reservation["destination"]:
            return f"the trip must still end at {reservation['destination']}, not {legs[-1][1]}"
    else:
        if legs[-1][1] != reservation["origin"]:
            return f"a round trip must return to {reservation['origin']}, not {legs[-1][1]}"
        if all(dest != reservation["destination"] for _, dest in legs):
            return f"the round trip must still visit {reservation['destination']}"
    return None


def check_baggage_change(
    db: AirlineDB, reservation_id: str, total_baggages: int, nonfree_baggages: int
) -> str | None:
    """Bags can be added, never removed.

    Returns:
        `None` when allowed, else the broken rule.
    """
    reservation = db.reservations.get(reservation_id)
    if reservation is None:
        return None
    if total_baggages < reservation["total_baggages"]:
        return (
            f"checked bags cannot be removed: the reservation has {reservation['total_baggages']}, "
            f"the request says {total_baggages}"
        )
    if nonfree_baggages < reservation["nonfree_baggages"]:
        return "paid bags cannot be removed"
    if nonfree_baggages > total_baggages:
        return "there cannot be more paid bags than bags"
    return None
