"""The airline tools as a harnesskit `ToolRegistry`, and the domain's policy text.

```python
import harnesskit as hk
from harnesskit.domains import airline

db = airline.load_database()
h = hk.Harness(tools=airline.tools(db), system_prompt=airline.POLICY, ...)
```

Two modes:

- `strict` (default): the policy is enforced where the server can know the facts. Cancellation
  is decided from the database and the server clock (`truth.py`); the model's optional claims
  (`expected_cabin_class`, `expected_has_insurance`) are checked and every differing claim is
  logged as an `alert.mismatch` event without changing the decision. Failures raise
  `hk.ToolError`s, so the model gets structured errors. New bookings are stamped with the
  clock's time, a changed cabin is stored, and one-stop searches show each leg's own day's
  prices (the benchmark showed the first day's prices for next-day connections). Bookings and
  changes are checked against the rules the server can decide (`rules.py`: passenger count,
  payment mix, basic economy flights, same trip, bags only added). Writes act only for the
  signed-in customer: given as `customer=`, or else the first user whose profile
  `get_user_details` returned in this registry's session (the conversation establishes who is
  signed in, as an agent authenticates the caller); a write for another user, or on another
  user's reservation, is refused as `permission_denied` (`hk.errors.ToolPermissionError`). Before
  anyone is signed in, writes are not restricted.
- `tau_bench`: the benchmark's tools reproduced byte for byte, for replaying recorded runs. No
  policy is checked (the decision is still computed and claims still checked, for audit), and
  outputs are the benchmark's texts, `"Error: ..."` strings included. The cancellation reason
  is optional and nested objects accept extra keys, because the benchmark validated nothing and
  recorded calls must run as they ran.

All tools of one registry share the database and run one at a time (a lock), so parallel
calls in one turn cannot interleave their writes.
"""

from __future__ import annotations

import copy
import datetime as dt
import threading
from collections.abc import Callable
from typing import Any, Literal, TypedDict

import harnesskit as hk
from harnesskit.domains.airline import ops, rules, truth
from harnesskit.domains.airline.data import AirlineDB

__all__ = ["POLICY", "Flight", "Passenger", "Payment", "tools"]

Cabin = Literal["basic_economy", "economy", "business"]
Reason = Literal["change_of_plan", "airline_cancelled_flight", "health", "weather", "other"]

#: The domain's policy for the agent (harnesskit's own text), used as the system prompt.
POLICY = """\
You are the customer-service agent of an airline. You help signed-in customers look up, book,
change and cancel flight reservations, using only the tools you are given.

Time: the airline's clock says it is 2024-05-15 15:00 EST. The tools know the time; you do not
need to send it.

Working rules
- Identify the customer by user id before acting on their behalf. Act only on reservations that
  belong to that user.
- Before any change to the database (booking, changing flights or cabin, bags, passengers,
  cancelling, sending a certificate) state exactly what will happen and its price, and proceed
  only after the customer answers yes.
- Use what the tools tell you. Do not invent policies, prices or facts, and do not give personal
  opinions. Ids and amounts come from tool results: copy them exactly.
- Make one tool call at a time, and do not talk to the customer in the same turn as a tool call.
- Refuse requests this policy does not allow. Hand over to a human agent only when the request
  is outside what your tools can do.

Booking
- Ask for the trip type (one way or round trip), origin, destination, dates, cabin and, for
  every passenger (five at most), first name, last name and date of birth.
- All passengers travel on the same flights in the same cabin.
- Payment: at most one travel certificate, one credit card and three gift cards per booking, all
  already saved in the customer's profile. A certificate's unused value is lost.
- Free checked bags per passenger: regular members 0 (basic economy) / 1 (economy) / 2
  (business); silver 1 / 2 / 3; gold 2 / 3 / 3. Each extra bag costs $50.
- Travel insurance costs $30 per passenger and gives a full refund when a trip is cancelled for
  health or weather reasons. Offer it; never add it later.

Changing a reservation
- Flights of basic economy reservations cannot be changed. Other reservations may change flights
  but keep their origin, destination and trip type. Segments kept unchanged keep their old price.
- The cabin may be changed for every reservation (basic economy included), for all segments at
  once, without changing flights; the customer pays or is refunded the price difference.
- Checked bags can be added, not removed. Passengers can be renamed but never added or removed.
- Price differences are paid with, or refunded to, one credit card or gift card from the profile;
  certificates cannot pay for changes.

Cancelling
- Collect the reservation id and the reason (change of plan, flight cancelled by the airline,
  health, weather, or other).
- The cancellation tool decides from the airline's own records whether the cancellation is
  allowed and tells you why: a reservation can be cancelled within 24 hours of booking, when the
  airline cancelled one of its flights, when it is business class, or when insurance covers the
  reason. A trip with any segment already flown cannot be cancelled by you: transfer to a human.
- You may tell the tool what you believe (cabin, insurance) so that differences are flagged; it
  never decides from your belief.
- Refunds go back to the original payment methods within 5 to 7 business days.

Compensation
- Only when a customer complains and asks for it: silver or gold members, insured customers and
  business travellers may get a travel certificate of $100 per passenger for a flight cancelled
  by the airline, or $50 per passenger for a delayed flight once their reservation has been
  changed or cancelled. Never offer compensation unprompted.
"""


class Flight(TypedDict):
    """One flight segment of an itinerary."""

    flight_number: str
    date: dt.date


class Passenger(TypedDict):
    """One traveller."""

    first_name: str
    last_name: str
    dob: dt.date


class Payment(TypedDict):
    """One payment: a saved payment method and the amount in dollars it pays."""

    payment_id: str
    amount: float


_NOT_FOUND = ("not found",)


def _strict_result(tool_name: str, text: str | None) -> str:
    """Turn an `Error: ...` text into a structured tool error (strict mode)."""
    if text is None:
        raise hk.ToolError(
            f"{tool_name} could not complete",
            hint="the user already holds the maximum number of new certificates",
        )
    if not text.startswith("Error: "):
        return text
    message = text[len("Error: ") :]
    if any(marker in message for marker in _NOT_FOUND):
        raise hk.ToolNotFoundError(
            message, hint="check the id against the user's profile or a previous tool result"
        )
    raise hk.ToolError(message, hint="fix the request (see the message) or explain it to the user")


def _est_text(moment: dt.datetime) -> str:
    return moment.astimezone(truth.EST).strftime("%Y-%m-%dT%H:%M:%S")


def tools(
    db: AirlineDB,
    *,
    mode: truth.Mode = "strict",
    clock: truth.Clock | None = None,
    customer: str | None = None,
) -> hk.ToolRegistry:
    """Build the airline tools over one database.

    Args:
        db: the run's private database (`load_database()`); the tools mutate it.
        mode: `strict` (policy enforced, structured errors) or `tau_bench` (the benchmark's
            behaviour and texts, for replay).
        clock: the server clock, returning timezone-aware datetimes; `None` means the
            benchmark's fixed now (2024-05-15 15:00 EST).
        customer: the signed-in customer's user id; `None` means the first user whose profile
            `get_user_details` returns (`strict` mode only; `tau_bench` restricts nothing).

    Returns:
        A `ToolRegistry` of the 14 airline tools.

    Raises:
        UsageError: `mode` is not `strict` or `tau_bench`.
    """
    if mode not in ("strict", "tau_bench"):
        raise hk.UsageError(f"mode must be 'strict' or 'tau_bench', got {mode!r}")
    now = clock or truth.benchmark_clock
    strict = mode == "strict"
    lock = threading.Lock()
    signed_in: list[str | None] = [customer]  # the session's authenticated customer

    def own(user_id: str | None, what: str) -> None:
        """Refuse a write for someone other than the signed-in customer (strict mode)."""
        who = signed_in[0]
        if strict and who is not None and user_id is not None and user_id != who:
            raise hk.errors.ToolPermissionError(
                f"{what} belongs to user {user_id}, but the signed-in customer is {who}",
                hint="act only for the signed-in customer; do not retry for another user",
            )

    def own_reservation(reservation_id: str) -> None:
        reservation = db.reservations.get(reservation_id)
        if reservation is not None:
            own(reservation.get("user_id"), f"reservation {reservation_id}")

    def run(name: str, fn: Callable[..., str | None], *args: Any, **kwargs: Any) -> str | None:
        with lock:
            text = fn(db, *args, **kwargs)
        return _strict_result(name, text) if strict else text

    def refuse(problem: str | None) -> None:
        if problem is not None:
            raise hk.ToolError(
                problem, hint="explain the rule to the customer; do not retry the same request"
            )

    def make(fn: Callable[..., Any], **options: Any) -> hk.Tool:
        # The spec depends only on the mode and the function's code, never on `db`: derive it
        # once per process and give later registries the template with their own closure.
        key = (strict, fn.__name__)
        template = _templates.get(key)
        if template is None:
            template = _templates[key] = _finished_tool(hk.tool(fn, **options), relax=not strict)
        # a copy with this registry's function: the validator and everything else derived
        # from the schema and the signature is the template's (`replace` rebuilt it per run)
        twin = copy.copy(template)
        object.__setattr__(twin, "fn", fn)
        return twin

    def args_of(values: dict[str, Any]) -> dict[str, Any]:
        return {k: (str(v) if isinstance(v, dt.date) else v) for k, v in values.items()}

    # ------------------------------------------------------------------ reads

    def get_user_details(user_id: str) -> str | None:
        """Look up a customer's profile.

        Use this when you need the customer's saved payment methods (ids, gift-card and
        certificate balances), membership tier, date of birth, saved passengers or the ids of
        their reservations. Do not use it to find a reservation's flights or cabin (call
        get_reservation_details with one of the ids).

        Args:
            user_id: the customer's user id, e.g. `mia_li_3668`.

        Returns:
            The profile as JSON: name, address, email, dob, payment_methods (by payment id),
            saved_passengers, membership, reservations (ids).
        """
        text = run("get_user_details", ops.get_user_details, user_id)
        if signed_in[0] is None and user_id in db.users:
            signed_in[0] = user_id  # the profile the conversation looked up first signs in
        return text

    def get_reservation_details(reservation_id: str) -> str | None:
        """Look up one reservation.

        Use this when you need a reservation's flights (number, date, price paid), cabin,
        passengers, bags, insurance, payment history, booking time or status. Do not use it to
        decide whether a cancellation is allowed: the cancellation tool checks that itself.

        Args:
            reservation_id: the 6-character reservation id, e.g. `4WQ150`.

        Returns:
            The reservation as JSON.
        """
        return run("get_reservation_details", ops.get_reservation_details, reservation_id)

    def search_direct_flight(origin: str, destination: str, date: dt.date) -> str | None:
        """Find the non-stop flights between two airports on one date that can still be booked.

        Use this when a customer wants to book or move to a non-stop flight. Do not use it for
        connections (search_onestop_flight) or to check the status of a flight already booked.

        Args:
            origin: IATA code of the departure airport, e.g. `JFK`.
            destination: IATA code of the arrival airport, e.g. `SEA`.
            date: the departure date.

        Returns:
            A JSON list of flights with schedule (EST), status, seats left and price per cabin;
            `[]` when none.
        """
        return run("search_direct_flight", ops.search_direct_flight, origin, destination, str(date))

    def search_onestop_flight(origin: str, destination: str, date: dt.date) -> str | None:
        """Find itineraries with exactly one connection between two airports.

        Use this when a customer accepts a connection or no non-stop flight suits them.
        Do not use it for non-stop flights. Results can be long (dozens of pairs).

        Args:
            origin: IATA code of the departure airport.
            destination: IATA code of the final arrival airport.
            date: the departure date of the first flight.

        Returns:
            A JSON list of `[first_flight, second_flight]` pairs, each flight with its own
            `date`, schedule, seats left and prices per cabin for that date.
        """
        return run(
            "search_onestop_flight",
            ops.search_onestop_flight,
            origin,
            destination,
            str(date),
            **({"exact": True} if strict else {}),
        )

    def list_all_airports() -> str | None:
        """List every airport the airline serves with its city.

        Use this when the customer names a city and you need its IATA code. Do not use it to
        search flights.

        Returns:
            A JSON object mapping IATA code to city.
        """
        return run("list_all_airports", ops.list_all_airports)

    # ------------------------------------------------------------------ writes

    def book_reservation(
        user_id: str,
        origin: str,
        destination: str,
        flight_type: Literal["one_way", "round_trip"],
        cabin: Cabin,
        flights: list[Flight],
        passengers: list[Passenger],
        payment_methods: list[Payment],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: Literal["yes", "no"],
    ) -> str | None:
        """Book a new reservation and charge it.

        Use this when the customer has confirmed every detail of a new booking and its total.
        Do not use it to change an existing reservation. The server prices each flight at
        today's price for the cabin; the payments must add up to exactly: flight prices x
        passengers + $30 x passengers with insurance + $50 per non-free bag.

        Args:
            user_id: the booking customer's user id.
            origin: IATA code where the trip starts.
            destination: IATA code where the trip ends (the outbound destination for a round
                trip).
            flight_type: `one_way` or `round_trip`.
            cabin: the cabin for every segment.
            flights: every segment, outbound then return, as flight number and date.
            passengers: every traveller (at most five).
            payment_methods: saved payment ids with the amount each pays, in dollars.
            total_baggages: checked bags in total.
            nonfree_baggages: checked bags beyond the free allowance.
            insurance: `yes` to buy travel insurance.

        Returns:
            The new reservation as JSON, including its `reservation_id`.
        """
        own(user_id, "the booking")
        if strict:
            refuse(rules.check_booking(db, user_id, passengers, payment_methods))
        extra = {"extend_ids": True, "created_at": _est_text(now())} if strict else {}
        return run(
            "book_reservation",
            ops.book_reservation,
            user_id,
            origin,
            destination,
            flight_type,
            cabin,
            [args_of(dict(f)) for f in flights],
            [args_of(dict(p)) for p in passengers],
            [dict(p) for p in payment_methods],
            total_baggages,
            nonfree_baggages,
            insurance,
            **extra,
        )

    def update_reservation_flights(
        reservation_id: str, cabin: Cabin, flights: list[Flight], payment_id: str
    ) -> str | None:
        """Change a reservation's flights or cabin and settle the price difference.

        Use this when the customer has confirmed a new itinerary or a cabin change and the
        payment method for the difference. Do not use it for basic economy flight changes
        (not allowed), for bags or passengers, or to cancel. List every segment of the new
        itinerary, changed or not; unchanged segments in the same cabin keep their old price.

        Args:
            reservation_id: the reservation to change.
            cabin: the cabin of the whole reservation after the change.
            flights: every segment of the new itinerary.
            payment_id: the saved credit card or gift card that pays or receives the difference.

        Returns:
            The updated reservation as JSON.
        """
        own_reservation(reservation_id)
        if strict:
            refuse(rules.check_flight_change(db, reservation_id, cabin, flights))
        extra = {"update_cabin": True} if strict else {}
        return run(
            "update_reservation_flights",
            ops.update_reservation_flights,
            reservation_id,
            cabin,
            [args_of(dict(f)) for f in flights],
            payment_id,
            **extra,
        )

    def update_reservation_baggages(
        reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
    ) -> str | None:
        """Set a reservation's checked bags; each added non-free bag costs $50.

        Use this when the customer has confirmed adding bags and the payment method. Do not use
        it to remove bags (not allowed) or to add insurance.

        Args:
            reservation_id: the reservation to change.
            total_baggages: checked bags in total after the change.
            nonfree_baggages: paid bags in total after the change.
            payment_id: the saved credit card or gift card that pays.

        Returns:
            The updated reservation as JSON.
        """
        own_reservation(reservation_id)
        if strict:
            refuse(rules.check_baggage_change(db, reservation_id, total_baggages, nonfree_baggages))
        return run(
            "update_reservation_baggages",
            ops.update_reservation_baggages,
            reservation_id,
            total_baggages,
            nonfree_baggages,
            payment_id,
        )

    def update_reservation_passengers(
        reservation_id: str, passengers: list[Passenger]
    ) -> str | None:
        """Replace the names and birth dates of a reservation's passengers.

        Use this when the customer has confirmed corrected passenger details. Do not use it to
        add or remove passengers: the count must stay the same.

        Args:
            reservation_id: the reservation to change.
            passengers: every passenger after the change, same count as before.

        Returns:
            The updated reservation as JSON.
        """
        own_reservation(reservation_id)
        return run(
            "update_reservation_passengers",
            ops.update_reservation_passengers,
            reservation_id,
            [args_of(dict(p)) for p in passengers],
        )

    def cancel(
        reservation_id: str,
        reason: Reason | None,
        expected_cabin_class: Cabin | None,
        expected_has_insurance: bool | None,
        ctx: hk.ToolContext,
    ) -> str | None:
        own_reservation(reservation_id)
        with lock:
            outcome = truth.cancel(
                db,
                reservation_id,
                reason=reason,
                mode=mode,
                now=now(),
                expected_cabin_class=expected_cabin_class,
                expected_has_insurance=expected_has_insurance,
            )
        for mismatch in outcome.mismatches:
            ctx.emit("alert.mismatch", {"tool": "cancel_reservation", **mismatch.to_dict()})
        if outcome.decision is not None and not outcome.decision.allowed and strict:
            raise hk.ToolError(
                outcome.decision.explanation,
                hint="tell the customer why; if a segment was already flown, transfer to a "
                "human agent",
            )
        return _strict_result("cancel_reservation", outcome.output) if strict else outcome.output

    cancel_doc = """Cancel a whole reservation, if the airline's rules allow it.

        Use this when the customer has confirmed they want to cancel and has given the reason.
        Do not use it to cancel part of a trip or to change flights. The server decides from
        its own records and clock: allowed within 24 hours of booking, when the airline
        cancelled a flight of the reservation, for business class, or when insurance covers the
        reason (health, weather); never once a segment has been flown. Your optional beliefs
        about the cabin and insurance are only compared with the records: a difference is
        flagged and never changes the decision.

        Args:
            reservation_id: the reservation to cancel.
            reason: why the customer cancels.
            expected_cabin_class: the cabin you believe the reservation has (optional check).
            expected_has_insurance: whether you believe insurance was bought (optional check).

        Returns:
            The cancelled reservation as JSON, with refunds appended to its payment history.
        """

    if strict:

        def cancel_reservation(
            reservation_id: str,
            reason: Reason,
            ctx: hk.ToolContext,
            expected_cabin_class: Cabin | None = None,
            expected_has_insurance: bool | None = None,
        ) -> str | None:
            return cancel(reservation_id, reason, expected_cabin_class, expected_has_insurance, ctx)

    else:

        def cancel_reservation(  # type: ignore[misc]
            reservation_id: str,
            ctx: hk.ToolContext,
            reason: Reason | None = None,
            expected_cabin_class: Cabin | None = None,
            expected_has_insurance: bool | None = None,
        ) -> str | None:
            return cancel(reservation_id, reason, expected_cabin_class, expected_has_insurance, ctx)

    cancel_reservation.__doc__ = cancel_doc
    cancel_tool = make(
        cancel_reservation, group="changes", risk="destructive", timeout_seconds=None
    )

    def send_certificate(user_id: str, amount: float) -> str | None:
        """Give a customer a travel certificate as compensation.

        Use this only when the compensation rules apply and the customer asked for
        compensation. Do not use it to refund a cancellation (refunds are automatic).

        Args:
            user_id: the customer's user id.
            amount: the certificate's value in dollars.

        Returns:
            A sentence naming the new certificate's payment id and amount.
        """
        own(user_id, "the certificate")
        return run("send_certificate", ops.send_certificate, user_id, amount)

    # ------------------------------------------------------------------ no database effect

    def calculate(expression: str) -> str | None:
        """Evaluate an arithmetic expression exactly as written.

        Use this when you need a total, a difference or a split of prices. Do not use it for
        anything but numbers and `+ - * / ( )`.

        Args:
            expression: e.g. `(152 + 103) * 2 + 30 * 2`.

        Returns:
            The result rounded to 2 decimals, as text (e.g. `570.0`).
        """
        return run("calculate", ops.calculate, expression)

    def think(thought: str) -> str | None:
        """Write down a reasoning step; nothing is looked up or changed.

        Use this when you want to plan several steps or check a rule before acting. Do not use
        it to talk to the customer.

        Args:
            thought: the reasoning to note.

        Returns:
            An empty string.
        """
        return run("think", ops.think, thought)

    def transfer_to_human_agents(summary: str) -> str | None:
        """Hand the conversation over to a human agent.

        Use this when the customer explicitly asks for a human, or the request cannot be handled
        with your tools (e.g. cancelling a partly flown trip). Do not use it for requests you
        can handle or must refuse under the policy.

        Args:
            summary: the customer's issue in a few sentences, for the human agent.

        Returns:
            `Transfer successful`.
        """
        # The docstring is the model-facing description (kept as it was). In strict mode the
        # run ends here: StopRun("transferred"), as a tau-bench episode does.
        text = run("transfer_to_human_agents", ops.transfer_to_human_agents, summary)
        if strict:
            raise hk.StopRun("transferred", f"transferred to a human agent: {summary}")
        return text

    return hk.ToolRegistry(
        [
            make(get_user_details, group="lookup", timeout_seconds=None),
            make(get_reservation_details, group="lookup", timeout_seconds=None),
            make(
                search_direct_flight,
                group="flights",
                timeout_seconds=None,
                max_result_chars=2_000_000,
            ),
            make(
                search_onestop_flight,
                group="flights",
                timeout_seconds=None,
                max_result_chars=2_000_000,
            ),
            make(list_all_airports, group="flights", timeout_seconds=None),
            make(book_reservation, group="booking", risk="write", timeout_seconds=None),
            cancel_tool,
            make(update_reservation_flights, group="changes", risk="write", timeout_seconds=None),
            make(update_reservation_baggages, group="changes", risk="write", timeout_seconds=None),
            make(
                update_reservation_passengers, group="changes", risk="write", timeout_seconds=None
            ),
            make(send_certificate, group="support", risk="write", timeout_seconds=None),
            make(calculate, group="support", timeout_seconds=None),
            make(think, group="support", timeout_seconds=None),
            make(transfer_to_human_agents, group="support", timeout_seconds=None),
        ]
    )


#: Descriptions of the fields of nested objects (TypedDict fields carry none of their own).
_FIELD_DOCS = {
    "flight_number": "the flight number, e.g. `HAT136`",
    "date": "the date the segment departs",
    "first_name": "the passenger's first name",
    "last_name": "the passenger's last name",
    "dob": "the passenger's date of birth",
    "payment_id": "a payment id saved in the customer's profile, e.g. `credit_card_4421486`",
    "amount": "the amount this method pays, in dollars",
}


#: Finished tool specs by (strict, function name), shared by every `tools()` call.
_templates: dict[tuple[bool, str], hk.Tool] = {}


def _finished_tool(t: hk.Tool, *, relax: bool) -> hk.Tool:
    """Rebuild a tool with nested field descriptions (and, for replay, open nested objects).

    With `relax`, nested objects accept extra keys: the benchmark validated nothing, and
    recorded calls (e.g. flight segments carrying their origin) must run as they ran.
    """
    return hk.Tool.from_function(
        t.fn,
        name=t.name,
        description=t.description,
        parameters=_rework(t.parameters, relax=relax, top=True),
        risk=t.risk,
        group=t.group,
        timeout_seconds=t.timeout_seconds,
        max_result_chars=t.max_result_chars,
        idempotent=t.idempotent,
        version=t.version,
    )


def _rework(schema: Any, *, relax: bool, top: bool = False) -> Any:
    if isinstance(schema, list):
        return [_rework(item, relax=relax) for item in schema]
    if not isinstance(schema, dict):
        return copy.deepcopy(schema)
    out = {}
    for key, value in schema.items():
        if key == "additionalProperties" and value is False and relax and not top:
            continue
        if key == "properties" and not top:
            value = {
                name: ({"description": _FIELD_DOCS[name], **sub} if name in _FIELD_DOCS else sub)
                for name, sub in value.items()
            }
        out[key] = _rework(value, relax=relax)
    return out
