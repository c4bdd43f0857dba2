"""Plain-Python effects of the airline tools on an `AirlineDB`, τ-bench v1 compatible.

Each function takes the database and the tool's arguments and returns the text the τ-bench v1
airline environment returned: a JSON dump of the affected object, or an error string starting
with `"Error: "`. Database effects (prices, balances, refunds, statuses, new ids) follow the
benchmark exactly so that final states hash equal; this module checks no airline policy (that is
`truth.py`'s job). Where the benchmark behaves oddly, the oddity is kept on purpose and named in
the docstring, because recorded runs depend on it.

`dispatch(db, name, arguments)` runs one call the way the benchmark environment did: an unknown
name or an argument mismatch answers with an error string instead of raising.
"""

from __future__ import annotations

import ast
import copy
import datetime as _dt
import inspect
import json
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harnesskit.domains.airline.data import AirlineDB, read_only_values

__all__ = [
    "AIRPORTS",
    "BAG_FEE",
    "BOOKING_CREATED_AT",
    "CERTIFICATE_IDS",
    "INSURANCE_FEE",
    "NEW_RESERVATION_IDS",
    "OPERATIONS",
    "book_reservation",
    "calculate",
    "cancel_reservation",
    "dispatch",
    "get_reservation_details",
    "get_user_details",
    "list_all_airports",
    "search_direct_flight",
    "search_onestop_flight",
    "send_certificate",
    "think",
    "transfer_to_human_agents",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
]

#: Price of one checked bag beyond the free allowance, in dollars.
BAG_FEE = 50
#: Price of travel insurance per passenger, in dollars.
INSURANCE_FEE = 30
#: The creation time stamped on every new reservation (the benchmark's fixed "now", EST).
BOOKING_CREATED_AT = "2024-05-15T15:00:00"
#: Ids given to new reservations, in order; the benchmark assumes at most three per task.
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
#: Numeric parts of the ids given to new certificates, in order (at most three per user).
CERTIFICATE_IDS = (3221322, 3221323, 3221324)

#: IATA code to city for every airport served, in the order the airport list shows them.
AIRPORTS: Mapping[str, str] = {
    "SFO": "San Francisco",
    "JFK": "New York",
    "LAX": "Los Angeles",
    "ORD": "Chicago",
    "DFW": "Dallas",
    "DEN": "Denver",
    "SEA": "Seattle",
    "ATL": "Atlanta",
    "MIA": "Miami",
    "BOS": "Boston",
    "PHX": "Phoenix",
    "IAH": "Houston",
    "LAS": "Las Vegas",
    "MCO": "Orlando",
    "EWR": "Newark",
    "CLT": "Charlotte",
    "MSP": "Minneapolis",
    "DTW": "Detroit",
    "PHL": "Philadelphia",
    "LGA": "LaGuardia",
}

_STORED_VALUE = ("gift_card", "certificate")


def _dump(value: Any) -> str:
    return json.dumps(value)


# ---------------------------------------------------------------- reads


def get_user_details(db: AirlineDB, user_id: str) -> str:
    """Return the user's profile as JSON, or `"Error: user not found"`."""
    user = db.users.get(user_id)
    return _dump(user) if user is not None else "Error: user not found"


def get_reservation_details(db: AirlineDB, reservation_id: str) -> str:
    """Return the reservation as JSON.

    An unknown id answers `"Error: user not found"` (sic): the benchmark's wording, kept so
    recorded outputs compare equal.
    """
    reservation = db.reservations.get(reservation_id)
    return _dump(reservation) if reservation is not None else "Error: user not found"


def list_all_airports(db: AirlineDB) -> str:
    """Return the IATA-code-to-city mapping as JSON."""
    del db
    return _dump(dict(AIRPORTS))


def _flight_on(flight: Mapping[str, Any], date: str) -> dict[str, Any]:
    """A flight's static fields merged with its record for one date (no `dates` table)."""
    row = {key: value for key, value in flight.items() if key != "dates"}
    row.update(flight["dates"][date])
    return row


def search_direct_flight(db: AirlineDB, origin: str, destination: str, date: str) -> str:
    """Return a JSON list of the bookable direct flights from `origin` to `destination`.

    Only flights whose status on `date` is `available` are listed, in database order, each with
    its schedule, seats left and prices per cabin.
    """
    rows = [
        _flight_on(flight, date)
        for flight in read_only_values(db.flights)
        if flight["origin"] == origin
        and flight["destination"] == destination
        and flight["dates"].get(date, {}).get("status") == "available"
    ]
    return _dump(rows)


def _next_day_text(date: str) -> str:
    """The benchmark's 'next day' of a May 2024 date: the day number plus one, unpadded.

    `"2024-05-20"` gives `"2024-05-21"` but `"2024-05-05"` gives `"2024-05-6"`, a date no flight
    has, so overnight connections from early-May dates are never found. Kept for fidelity.
    """
    return f"2024-05-{int(date[-2:]) + 1}"


def _calendar_next_day(date: str) -> str:
    try:
        return (_dt.date.fromisoformat(date) + _dt.timedelta(days=1)).isoformat()
    except ValueError:
        return date


def search_onestop_flight(
    db: AirlineDB, origin: str, destination: str, date: str, *, exact: bool = False
) -> str:
    """Return a JSON list of `[first_leg, second_leg]` pairs with one connection.

    The first leg departs `origin` on `date`; the second leaves the connecting airport no
    earlier (by scheduled EST clock time) than the first arrives, on the same day, or on the
    next day when the first leg arrives after midnight (`"+1"`). Both legs must be
    `available`. Each leg carries a `date` field.

    Benchmark oddities kept: the second leg's seats and prices are those of `date` even when it
    flies the next day, and the next day is computed as in `_next_day_text`. When the second leg
    has no record for `date`, the benchmark crashed; this raises `KeyError` the same way, which
    `dispatch` turns into the same error text. With `exact=True` (strict mode) the next day is
    the true calendar day and the second leg shows its own day's seats and prices, i.e. the
    prices a booking will be charged.
    """
    flights = list(read_only_values(db.flights))
    pairs = []
    for first in flights:
        if first["origin"] != origin:
            continue
        arrival = first["scheduled_arrival_time_est"]
        for second in flights:
            if second["destination"] != destination or first["destination"] != second["origin"]:
                continue
            overnight = "+1" in arrival
            if exact:
                second_date = _calendar_next_day(date) if overnight else date
            else:
                second_date = _next_day_text(date) if overnight else date
            if arrival > second["scheduled_departure_time_est"]:
                continue
            first_day = first["dates"].get(date)
            second_day = second["dates"].get(second_date)
            if first_day is None or second_day is None:
                continue
            if first_day["status"] != "available" or second_day["status"] != "available":
                continue
            leg1 = _flight_on(first, date)
            leg1["date"] = date
            leg2 = _flight_on(second, second_date if exact else date)
            leg2["date"] = second_date
            pairs.append([leg1, leg2])
    return _dump(pairs)


# ---------------------------------------------------------------- writes


def _priced_segments(
    db: AirlineDB, segments: Sequence[Mapping[str, Any]], cabin: str, seats_needed: int
) -> tuple[list[dict[str, Any]], str | None]:
    """Copy `segments` adding price, origin and destination; or return the first error text."""
    priced = []
    for given in segments:
        segment = copy.deepcopy(dict(given))
        error = _price_segment(db, segment, cabin, seats_needed)
        if error:
            return [], error
        priced.append(segment)
    return priced, None


def _price_segment(
    db: AirlineDB, segment: dict[str, Any], cabin: str, seats_needed: int
) -> str | None:
    """Fill one segment's price and endpoints from the flight table (in place), or say why not."""
    number = segment["flight_number"]
    flight = db.flights.get(number)
    if flight is None:
        return f"Error: flight {number} not found"
    day = flight["dates"].get(segment["date"])
    if day is None:
        return f"Error: flight {number} not found on date {segment['date']}"
    if day["status"] != "available":
        return f"Error: flight {number} not available on date {segment['date']}"
    if day["available_seats"][cabin] < seats_needed:
        return f"Error: not enough seats on flight {number}"
    segment["price"] = day["prices"][cabin]
    segment["origin"] = flight["origin"]
    segment["destination"] = flight["destination"]
    return None


def new_reservation_id(db: AirlineDB, *, extend: bool = False) -> str:
    """Return the id the next booking gets.

    The benchmark tries `HATHAT`, `HATHAU`, then takes `HATHAV` even if it exists (a fourth
    booking overwrites the third). With `extend=True` the sequence continues (`HATHAW`, ...)
    and never overwrites.
    """
    for candidate in NEW_RESERVATION_IDS[:-1]:
        if candidate not in db.reservations:
            return candidate
    last = NEW_RESERVATION_IDS[-1]
    if not extend or last not in db.reservations:
        return last
    letters = "WXYZ"
    for first in "HIJKLMNOPQRSTUVWXYZ":
        for second in letters if first == "H" else "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
            candidate = f"HATH{first}{second}" if first != "H" else f"HATHA{second}"
            if candidate not in db.reservations:
                return candidate
    return last


def book_reservation(
    db: AirlineDB,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: str,
    cabin: str,
    flights: list[dict[str, Any]],
    passengers: list[dict[str, Any]],
    payment_methods: list[dict[str, Any]],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: str,
    *,
    extend_ids: bool = False,
    created_at: str = BOOKING_CREATED_AT,
) -> str:
    """Create a reservation, charge its payment methods and return it as JSON.

    Price = sum of the segments' current `cabin` prices times the number of passengers, plus
    30 per passenger with insurance `"yes"`, plus 50 per non-free bag. The payments must name
    the user's own methods, stored-value methods (gift cards, certificates) must hold at least
    their amount, and the amounts must add up to the price exactly. Gift cards are debited; a
    certificate used is removed whole (its rest is lost); credit cards are not tracked. Seat
    counts are not decremented (as in the benchmark). Nothing changes when any check fails.

    Args:
        db: the run's database.
        user_id: the booking user.
        origin: IATA code of the trip's origin.
        destination: IATA code of the trip's destination.
        flight_type: `one_way` or `round_trip` (stored as given).
        cabin: `basic_economy`, `economy` or `business`.
        flights: segments `{"flight_number", "date"}`.
        passengers: `{"first_name", "last_name", "dob"}` per passenger.
        payment_methods: `{"payment_id", "amount"}` per payment, in dollars.
        total_baggages: checked bags in total.
        nonfree_baggages: checked bags that are paid for.
        insurance: `yes` or `no`.
        extend_ids: continue the id sequence past `HATHAV` instead of overwriting it.
        created_at: the booking time to store (EST, ISO without zone); the benchmark always
            stores its fixed "now".
    """
    user = db.users.get(user_id)
    if user is None:
        return "Error: user not found"
    reservation_id = new_reservation_id(db, extend=extend_ids)
    segments, error = _priced_segments(db, flights, cabin, len(passengers))
    if error:
        return error
    price = sum(segment["price"] * len(passengers) for segment in segments)
    if insurance == "yes":
        price += INSURANCE_FEE * len(passengers)
    price += BAG_FEE * nonfree_baggages

    methods = user["payment_methods"]
    for payment in payment_methods:
        method = methods.get(payment["payment_id"])
        if method is None:
            return f"Error: payment method {payment['payment_id']} not found"
        if method["source"] in _STORED_VALUE and method["amount"] < payment["amount"]:
            return f"Error: not enough balance in payment method {payment['payment_id']}"
    paid = sum(payment["amount"] for payment in payment_methods)
    if paid != price:
        return f"Error: payment amount does not add up, total price is {price}, but paid {paid}"

    for payment in payment_methods:
        method = methods[payment["payment_id"]]
        if method["source"] == "gift_card":
            method["amount"] -= payment["amount"]
        elif method["source"] == "certificate":
            del methods[payment["payment_id"]]
    reservation = {
        "reservation_id": reservation_id,
        "user_id": user_id,
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": segments,
        "passengers": copy.deepcopy(passengers),
        "payment_history": copy.deepcopy(payment_methods),
        "created_at": created_at,
        "total_baggages": total_baggages,
        "nonfree_baggages": nonfree_baggages,
        "insurance": insurance,
    }
    db.reservations[reservation_id] = reservation
    user["reservations"].append(reservation_id)
    db.mark_changed("reservations", reservation_id)
    db.mark_changed("users", user_id)
    return _dump(reservation)


def cancel_reservation(db: AirlineDB, reservation_id: str) -> str:
    """Cancel the whole reservation and return it as JSON; checks no policy.

    Every payment so far gets a matching negative entry in `payment_history` and `status`
    becomes `cancelled`. Balances are not restored (refunds reach the original methods later,
    outside the database). Cancelling twice appends the refunds twice, as the benchmark did.
    """
    reservation = db.reservations.get(reservation_id)
    if reservation is None:
        return "Error: reservation not found"
    history = reservation["payment_history"]
    history.extend(
        [{"payment_id": entry["payment_id"], "amount": -entry["amount"]} for entry in list(history)]
    )
    reservation["status"] = "cancelled"
    db.mark_changed("reservations", reservation_id)
    return _dump(reservation)


def _charge(
    db: AirlineDB, reservation: dict[str, Any], payment_id: str, amount: Any
) -> tuple[dict[str, Any] | None, str | None]:
    """Check that `payment_id` can pay `amount` for a change; return the method or an error."""
    method = db.users[reservation["user_id"]]["payment_methods"].get(payment_id)
    if method is None:
        return None, "Error: payment method not found"
    if method["source"] == "certificate":
        return None, "Error: certificate cannot be used to update reservation"
    if method["source"] == "gift_card" and method["amount"] < amount:
        return None, "Error: gift card balance is not enough"
    return method, None


def _settle(
    db: AirlineDB,
    reservation: dict[str, Any],
    method: dict[str, Any],
    payment_id: str,
    amount: Any,
) -> None:
    """Debit (or, for a negative amount, credit) a gift card and log a non-zero payment."""
    if method["source"] == "gift_card":
        method["amount"] -= amount
        db.mark_changed("users", reservation["user_id"])
    if amount != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": amount})


def update_reservation_flights(
    db: AirlineDB,
    reservation_id: str,
    cabin: str,
    flights: list[dict[str, Any]],
    payment_id: str,
    *,
    update_cabin: bool = False,
) -> str:
    """Replace the reservation's segments and settle the difference; return it as JSON.

    A segment with the same flight number and date as a current one keeps its old price when the
    cabin is unchanged; other segments are priced at today's `cabin` price and need enough seats.
    The difference (new total minus old total, times passengers) is charged to a credit card or
    gift card, or credited back when negative (a gift card's balance then grows); certificates
    cannot pay. A non-zero difference is logged in `payment_history`.

    Benchmark oddity kept unless `update_cabin=True`: the reservation's `cabin` field is not
    changed even when the flights were priced in another cabin.

    Args:
        db: the run's database.
        reservation_id: the reservation to change.
        cabin: the cabin to price the new segments in.
        flights: every segment of the new itinerary, `{"flight_number", "date"}`.
        payment_id: the user's payment method for the difference.
        update_cabin: also store `cabin` in the reservation (strict mode).
    """
    reservation = db.reservations.get(reservation_id)
    if reservation is None:
        return "Error: reservation not found"
    travellers = len(reservation["passengers"])
    new_segments = []
    total = 0
    for given in flights:
        segment = copy.deepcopy(dict(given))
        kept = _same_segment(reservation, segment, cabin)
        if kept is not None:
            segment["price"] = kept["price"]
            segment["origin"] = kept["origin"]
            segment["destination"] = kept["destination"]
        else:
            error = _price_segment(db, segment, cabin, travellers)
            if error:
                return error
        total += segment["price"] * travellers
        new_segments.append(segment)
    total -= sum(segment["price"] for segment in reservation["flights"]) * travellers

    method, error = _charge(db, reservation, payment_id, total)
    if method is None:
        return error or "Error: payment method not found"
    _settle(db, reservation, method, payment_id, total)
    reservation["flights"] = new_segments
    if update_cabin:
        reservation["cabin"] = cabin
    db.mark_changed("reservations", reservation_id)
    return _dump(reservation)


def _same_segment(
    reservation: Mapping[str, Any], segment: Mapping[str, Any], cabin: str
) -> Mapping[str, Any] | None:
    if cabin != reservation["cabin"]:
        return None
    current: Mapping[str, Any]
    for current in reservation["flights"]:
        if (
            current["flight_number"] == segment["flight_number"]
            and current["date"] == segment["date"]
        ):
            return current
    return None


def update_reservation_baggages(
    db: AirlineDB,
    reservation_id: str,
    total_baggages: int,
    nonfree_baggages: int,
    payment_id: str,
) -> str:
    """Set the bag counts and charge 50 per added non-free bag; return the reservation as JSON.

    Fewer non-free bags than before cost nothing and refund nothing. The payment rules are
    those of `update_reservation_flights`.
    """
    reservation = db.reservations.get(reservation_id)
    if reservation is None:
        return "Error: reservation not found"
    fee = BAG_FEE * max(0, nonfree_baggages - reservation["nonfree_baggages"])
    method, error = _charge(db, reservation, payment_id, fee)
    if method is None:
        return error or "Error: payment method not found"
    reservation["total_baggages"] = total_baggages
    reservation["nonfree_baggages"] = nonfree_baggages
    _settle(db, reservation, method, payment_id, fee)
    db.mark_changed("reservations", reservation_id)
    return _dump(reservation)


def update_reservation_passengers(
    db: AirlineDB, reservation_id: str, passengers: list[dict[str, Any]]
) -> str:
    """Replace the passenger list (same count only) and return the reservation as JSON."""
    reservation = db.reservations.get(reservation_id)
    if reservation is None:
        return "Error: reservation not found"
    if len(passengers) != len(reservation["passengers"]):
        return "Error: number of passengers does not match"
    reservation["passengers"] = copy.deepcopy(passengers)
    db.mark_changed("reservations", reservation_id)
    return _dump(reservation)


def send_certificate(db: AirlineDB, user_id: str, amount: Any) -> str | None:
    """Add a travel certificate worth `amount` dollars to the user's payment methods.

    The certificate gets the first free id of `CERTIFICATE_IDS`. When all three are taken the
    benchmark added nothing and answered `None`; so does this.
    """
    user = db.users.get(user_id)
    if user is None:
        return "Error: user not found"
    methods = user["payment_methods"]
    for number in CERTIFICATE_IDS:
        payment_id = f"certificate_{number}"
        if payment_id not in methods:
            methods[payment_id] = {"source": "certificate", "amount": amount, "id": payment_id}
            db.mark_changed("users", user_id)
            return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
    return None


# ---------------------------------------------------------------- no database effect


def think(db: AirlineDB, thought: str) -> str:
    """Record nothing and return an empty string (the thought lives in the call itself)."""
    del db, thought
    return ""


def transfer_to_human_agents(db: AirlineDB, summary: str) -> str:
    """Hand the conversation to a human; returns `"Transfer successful"`."""
    del db, summary
    return "Transfer successful"


_ALLOWED_CHARS = frozenset("0123456789+-*/(). ")
_BINARY: Mapping[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_MAX_EXPONENT = 1000
_UNARY: Mapping[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


def calculate(db: AirlineDB, expression: str) -> str:
    """Evaluate an arithmetic expression and return the result rounded to 2 decimals as text.

    Only digits, `+ - * / ( ) .` and spaces are accepted. The result is always printed as a
    float (`"12.0"`), as in the benchmark. The expression is parsed and walked node by node;
    nothing is `eval`-ed.
    """
    del db
    if not set(expression) <= _ALLOWED_CHARS:
        return "Error: invalid characters in expression"
    try:
        tree = ast.parse(expression, filename="<string>", mode="eval")
        return str(round(float(_evaluate(tree.body)), 2))
    except (SyntaxError, ArithmeticError, ValueError, TypeError) as exc:
        return f"Error: {exc}"


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
            raise ValueError(f"exponent {right} is too large (limit {_MAX_EXPONENT})")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.Tuple):
        raise TypeError("float() argument must be a string or a real number, not 'tuple'")
    raise ValueError(f"unsupported expression element {type(node).__name__}")


# ---------------------------------------------------------------- dispatch

#: Every tool's effect by tool name.
OPERATIONS: Mapping[str, Callable[..., str | None]] = {
    "get_user_details": get_user_details,
    "get_reservation_details": get_reservation_details,
    "search_direct_flight": search_direct_flight,
    "search_onestop_flight": search_onestop_flight,
    "list_all_airports": list_all_airports,
    "book_reservation": book_reservation,
    "cancel_reservation": cancel_reservation,
    "update_reservation_flights": update_reservation_flights,
    "update_reservation_baggages": update_reservation_baggages,
    "update_reservation_passengers": update_reservation_passengers,
    "send_certificate": send_certificate,
    "calculate": calculate,
    "think": think,
    "transfer_to_human_agents": transfer_to_human_agents,
}


def _benchmark_parameters(fn: Callable[..., Any]) -> list[inspect.Parameter]:
    """The parameters the benchmark tool had: positional ones after `db`, no options."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    return [p for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]


def dispatch(db: AirlineDB, name: str, arguments: Mapping[str, Any] | None) -> str | None:
    """Run one tool call the way the τ-bench v1 environment did and return its output text.

    Args:
        db: the run's database (mutated by write tools).
        name: the tool name as the model wrote it.
        arguments: the parsed arguments.

    Returns:
        The tool's output; `"Unknown action <name>"` for a name no tool has; `"Error: ..."`
        when the arguments do not fit the tool's parameters or the tool fails on them.
    """
    fn = OPERATIONS.get(name)
    if fn is None:
        return f"Unknown action {name}"
    args = dict(arguments or {})
    params = [p.name for p in _benchmark_parameters(fn)]
    unexpected = [key for key in args if key not in params]
    if unexpected:
        return f"Error: {name} got unexpected argument(s) {', '.join(unexpected)}"
    missing = [param for param in params if param not in args]
    if missing:
        return f"Error: {name} is missing required argument(s) {', '.join(missing)}"
    try:
        return fn(db, **args)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return f"Error: {exc}"
