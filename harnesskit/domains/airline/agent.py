"""The embedded offline airline agent: a Python policy for `hk.FunctionModel`, plus demo tasks.

The agent is deliberately simple and deterministic, so the demo runs with no network and no
keys: it reads the customer's opening message with regular expressions, then decides each turn
from the tool results already in the conversation. It books (searching direct and one-stop
flights, whose results can be large, and paying gift cards first, then a certificate, then the
card the customer names), and cancels, passing its beliefs about the reservation as *claims*
that the server checks (R-F1). It never computes whether a cancellation is allowed: the tool
decides from the database and the clock.

```python
import harnesskit as hk
from harnesskit.domains import airline

db = airline.load_database()
h = hk.Harness(tools=airline.tools(db), model=airline.agent_model(), system_prompt=airline.POLICY)
run = h.run("I'm chen_jackson_3290. Please cancel reservation 4WQ150, my plans changed.")
```
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import harnesskit as hk
from harnesskit.domains.airline.trajectories import ExpectedAction

__all__ = ["DEMO_TASKS", "DemoTask", "agent_model", "agent_policy", "parse_request"]

_FREE_BAGS = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 3},
}
_REASONS = (
    (r"airline (has )?cancel", "airline_cancelled_flight"),
    (r"\b(sick|ill|unwell|health|doctor|hospital)\b", "health"),
    (r"\b(weather|storm|snow|hurricane)\b", "weather"),
    (r"\b(change of plans?|plans? (have |has )?changed|no longer (need|travel))", "change_of_plan"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """What the agent understood from the customer's opening message."""

    intent: str
    """`book`, `cancel` or `unknown`."""
    user_id: str | None = None
    reservation_id: str | None = None
    origin: str | None = None
    destination: str | None = None
    date: str | None = None
    cabin: str = "economy"
    one_stop_ok: bool = False
    bags: int = 0
    insurance: bool = False
    card_last_four: str | None = None
    use_gift_cards: bool = False
    use_certificate: bool = False
    reason: str = "other"
    claimed_cabin: str | None = None
    claimed_insurance: bool | None = None


def parse_request(text: str) -> Request:
    """Read the customer's intent and details from their message.

    Args:
        text: the opening user message.

    Returns:
        The `Request` (fields the message does not mention keep their defaults).
    """
    low = text.lower()
    user = re.search(r"\b[a-z]+_[a-z]+_\d{3,5}\b", text)
    if re.search(r"\bcancel", low):
        reservation = re.search(r"\b[A-Z0-9]{6}\b", text)
        reason = next((name for pattern, name in _REASONS if re.search(pattern, low)), "other")
        claimed_cabin = None
        cabin_claim = re.search(
            r"\b(it is|it's|is in|booked in|flying) (basic economy|economy|business)", low
        )
        if cabin_claim:
            claimed_cabin = cabin_claim.group(2).replace(" ", "_")
        claimed_insurance = (
            True if re.search(r"\b(i have|i bought|with) (travel )?insurance", low) else None
        )
        return Request(
            intent="cancel",
            user_id=user.group(0) if user else None,
            reservation_id=reservation.group(0) if reservation else None,
            reason=reason,
            claimed_cabin=claimed_cabin,
            claimed_insurance=claimed_insurance,
        )
    if re.search(r"\bbook", low):
        route = re.search(r"\bfrom ([A-Z]{3}) to ([A-Z]{3})\b", text)
        date = re.search(r"\b\d{4}-\d{2}-\d{2}\b", text)
        bags = re.search(r"\b(\d+) (checked )?bags?\b", low)
        card = re.search(r"ending (in )?(\d{4})", low)
        cabin = (
            "business"
            if "business" in low
            else "basic_economy"
            if "basic economy" in low
            else "economy"
        )
        return Request(
            intent="book",
            user_id=user.group(0) if user else None,
            origin=route.group(1) if route else None,
            destination=route.group(2) if route else None,
            date=date.group(0) if date else None,
            cabin=cabin,
            one_stop_ok=bool(re.search(r"one stop|connection|stopover", low)),
            bags=int(bags.group(1)) if bags else 0,
            insurance=bool(re.search(r"\bwith insurance|\bwant insurance", low)),
            card_last_four=card.group(2) if card else None,
            use_gift_cards="gift card" in low,
            use_certificate="certificate" in low,
        )
    return Request(intent="unknown", user_id=user.group(0) if user else None)


@dataclass(frozen=True, slots=True)
class _Done:
    """One tool call of the conversation and its result."""

    name: str
    arguments: Mapping[str, Any]
    ok: bool
    value: Any


@dataclass(frozen=True, slots=True)
class _Unread:
    """A large result the harness stored as an artifact (R-A1), not yet read in full."""

    ref: str
    next_index: int
    tool: str


def _history(messages: Sequence[hk.Message]) -> list[_Done]:
    results = {m.tool_call_id: m.content or "" for m in messages if m.role == "tool"}
    done = []
    pages: dict[str, dict[int, Any]] = {}  # items read back with artifact_slice, per artifact
    for message in messages:
        for call in message.tool_calls if message.role == "assistant" else ():
            if call.id not in results:
                continue
            text = results[call.id]
            try:
                value: Any = json.loads(text)
            except json.JSONDecodeError:
                value = text
            ok = not (isinstance(value, dict) and value.get("ok") is False)
            if call.name == "artifact_slice" and ok:
                got = pages.setdefault(value["artifact_ref"], {})
                items = value["items"]
                if value.get("fields"):  # a projection: {pointer: value} back into an object
                    items = [_unflatten(item) for item in items]
                got.update(enumerate(items, start=value["start"]))
                continue
            done.append(_Done(call.name, call.arguments or {}, ok, value))
    return [_whole(d, pages) for d in done]


def _fields(tool: str, cabin: str) -> dict[str, list[str]]:
    """What the booking decision needs from each search result item (a projection)."""
    leg = ["flight_number", "date", f"prices/{cabin}", f"available_seats/{cabin}"]
    if tool == "search_onestop_flight":
        return {"fields": [f"/{i}/{key}" for i in (0, 1) for key in leg]}
    if tool == "search_direct_flight":
        return {"fields": [f"/{key}" for key in leg if key != "date"]}
    return {}


def _unflatten(item: Mapping[str, Any]) -> Any:
    """`{"/0/prices/economy": 120, ...}` back into `[{"prices": {"economy": 120}}, ...]`."""
    root: Any = None
    for pointer, value in item.items():
        root = _put(root, pointer.strip("/").split("/"), value)
    return root


def _put(node: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    key, rest = tokens[0], tokens[1:]
    if key.isdigit():
        node = node if isinstance(node, list) else []
        node.extend([None] * (int(key) + 1 - len(node)))
        node[int(key)] = _put(node[int(key)], rest, value)
        return node
    node = node if isinstance(node, dict) else {}
    node[key] = _put(node.get(key), rest, value)
    return node


def _whole(done: _Done, pages: Mapping[str, Mapping[int, Any]]) -> _Done:
    """A result externalized as an artifact: its items once all were read, else `_Unread`."""
    value = done.value
    if not (isinstance(value, dict) and value.get("form") == "summary" and "" in value["arrays"]):
        return done
    got, total = pages.get(value["artifact_ref"], {}), value["items"]
    if len(got) < total:
        missing = next(i for i in range(total) if i not in got)
        unread = _Unread(value["artifact_ref"], missing, done.name)
        return _Done(done.name, done.arguments, done.ok, unread)
    return _Done(done.name, done.arguments, done.ok, [got[i] for i in range(total)])


def _last(history: list[_Done], name: str) -> _Done | None:
    return next((d for d in reversed(history) if d.name == name), None)


def _call(name: str, **arguments: Any) -> hk.ToolCall:
    return hk.ToolCall(id="", name=name, arguments=arguments)


def agent_policy(messages: tuple[hk.Message, ...], info: hk.ModelRequest) -> Any:
    """Decide the agent's next turn from the conversation so far.

    Args:
        messages: the prompt (system, user, assistant and tool messages).
        info: the request; on a brake's closing request (`info.final`) the policy answers
            in text with what was done and what is still open, and calls no tool.

    Returns:
        A `hk.ToolCall` or the text of a reply.
    """
    first = next((m.content or "" for m in messages if m.role == "user"), "")
    request = parse_request(first)
    history = _history(messages)
    if info.final:
        return _best_effort(request, history)
    unread = next((d.value for d in history if isinstance(d.value, _Unread)), None)
    if unread is not None:  # read a stored result page by page, only the fields that matter
        return _call(
            "artifact_slice",
            ref=unread.ref,
            pointer="",
            start=unread.next_index,
            **_fields(unread.tool, request.cabin),
        )
    if request.intent == "book":
        return _book(request, history)
    if request.intent == "cancel":
        return _cancel(request, history)
    return "I can help you book or cancel a reservation. What would you like to do?"


def _best_effort(request: Request, history: list[_Done]) -> str:
    """The closing answer after a brake: facts from tool results only, nothing invented."""
    done = [d.name for d in history if d.ok]
    failed = [d.name for d in history if not d.ok]
    what = {"book": "booking", "cancel": "cancellation"}.get(request.intent, "request")
    parts = [f"I could not finish your {what} within this session's limits."]
    parts.append(f"Done so far: {', '.join(done) if done else 'nothing'}.")
    if failed:
        parts.append(f"Failed: {', '.join(failed)}.")
    parts.append("Nothing else was changed; please contact us again to complete it.")
    return " ".join(parts)


def _book(request: Request, history: list[_Done]) -> Any:
    if not (request.user_id and request.origin and request.destination and request.date):
        return "To book, I need your user id, the origin and destination airports and the date."
    profile = _last(history, "get_user_details")
    if profile is None:
        return _call("get_user_details", user_id=request.user_id)
    if not profile.ok:
        return f"I could not find your profile: {profile.value.get('message')}"
    route = {"origin": request.origin, "destination": request.destination, "date": request.date}
    direct = _last(history, "search_direct_flight")
    if direct is None:
        return _call("search_direct_flight", **route)
    onestop = _last(history, "search_onestop_flight")
    if request.one_stop_ok and onestop is None:
        return _call("search_onestop_flight", **route)
    option = _cheapest(request.cabin, request.date, direct, onestop)
    if option is None:
        return (
            f"I found no {request.cabin} seats from {request.origin} to "
            f"{request.destination} on {request.date}."
        )
    user = profile.value
    legs, fare = option
    free = _FREE_BAGS.get(user.get("membership", "regular"), _FREE_BAGS["regular"])[request.cabin]
    nonfree = max(0, request.bags - free)
    expression = " + ".join(str(p) for p in fare) + (f" + {nonfree} * 50" if nonfree else "")
    if request.insurance:
        expression += " + 30"
    total_call = _last(history, "calculate")
    if total_call is None:
        return _call("calculate", expression=expression)
    total = round(float(total_call.value))
    booking = _last(history, "book_reservation")
    if booking is None:
        payments = _payments(user, total, request)
        if payments is None:
            return f"The total is ${total}, but your saved payment methods cannot cover it."
        return _call(
            "book_reservation",
            user_id=request.user_id,
            origin=request.origin,
            destination=request.destination,
            flight_type="one_way",
            cabin=request.cabin,
            flights=[{"flight_number": leg["flight_number"], "date": leg["date"]} for leg in legs],
            passengers=[{**user["name"], "dob": user["dob"]}],
            payment_methods=payments,
            total_baggages=request.bags,
            nonfree_baggages=nonfree,
            insurance="yes" if request.insurance else "no",
        )
    if not booking.ok:
        return f"The booking failed: {booking.value.get('message')}"
    flights = ", ".join(f"{f['flight_number']} on {f['date']}" for f in booking.value["flights"])
    return (
        f"Your reservation {booking.value['reservation_id']} is booked: {flights}, "
        f"{request.cabin.replace('_', ' ')}, total ${total}."
    )


def _cheapest(
    cabin: str, date: str, direct: _Done, onestop: _Done | None
) -> tuple[list[dict[str, Any]], list[int]] | None:
    """The cheapest itinerary with a seat in `cabin`: its legs and each leg's price."""
    options: list[list[dict[str, Any]]] = []
    if direct.ok and isinstance(direct.value, list):
        options += [[{**flight, "date": date}] for flight in direct.value]
    if onestop is not None and onestop.ok and isinstance(onestop.value, list):
        options += [list(pair) for pair in onestop.value]
    priced = [
        (sum(leg["prices"][cabin] for leg in legs), legs)
        for legs in options
        if all(leg["available_seats"][cabin] >= 1 for leg in legs)
    ]
    if not priced:
        return None
    _, legs = min(priced, key=lambda item: item[0])
    return legs, [leg["prices"][cabin] for leg in legs]


def _payments(user: Mapping[str, Any], total: int, request: Request) -> list[dict[str, Any]] | None:
    """Gift cards (if asked), then a certificate (if asked), then the named credit card."""
    methods = list(user.get("payment_methods", {}).values())
    plan, due = [], total
    stored = (
        [m for m in methods if m["source"] == "gift_card"][:3] if request.use_gift_cards else []
    )
    if request.use_certificate:
        stored += [m for m in methods if m["source"] == "certificate"][:1]
    for method in stored:
        if due <= 0:
            break
        amount = min(due, int(method.get("amount") or 0))
        if amount > 0:
            plan.append({"payment_id": method["id"], "amount": amount})
            due -= amount
    if due > 0:
        cards = [m for m in methods if m["source"] == "credit_card"]
        named = [m for m in cards if m.get("last_four") == request.card_last_four]
        card = (named or cards or [None])[0]
        if card is None:
            return None
        plan.append({"payment_id": card["id"], "amount": due})
    return plan


def _cancel(request: Request, history: list[_Done]) -> Any:
    rid = request.reservation_id
    if rid is None:
        return "Which reservation would you like to cancel? Please give its 6-character id."
    details = _last(history, "get_reservation_details")
    if details is None:
        return _call("get_reservation_details", reservation_id=rid)
    if not details.ok:
        return f"I could not find reservation {rid}: {details.value.get('message')}"
    outcome = _last(history, "cancel_reservation")
    if outcome is None:
        # beliefs: what the customer told us, else what we read; the server checks both
        cabin = request.claimed_cabin or details.value.get("cabin")
        insured = (
            request.claimed_insurance
            if request.claimed_insurance is not None
            else details.value.get("insurance") == "yes"
        )
        return _call(
            "cancel_reservation",
            reservation_id=rid,
            reason=request.reason,
            expected_cabin_class=cabin,
            expected_has_insurance=insured,
        )
    if outcome.ok:
        refund = sum(p["amount"] for p in outcome.value["payment_history"] if p["amount"] > 0)
        return (
            f"Reservation {rid} is cancelled. ${refund} will be refunded to the original payment "
            "methods within 5 to 7 business days."
        )
    message = str(outcome.value.get("message", ""))
    if "already flown" in message:
        said = (
            f"Part of reservation {rid} has already been flown, so I cannot cancel it here. "
            "I am transferring you to a human agent who will help you further."
        )
        if _last(history, "transfer_to_human_agents") is None:  # the transfer ends the run
            transfer = _call(
                "transfer_to_human_agents",
                summary=f"Customer {request.user_id} wants to cancel {rid}, which is partly "
                f"flown ({message}).",
            )
            return hk.Message(role="assistant", content=said, tool_calls=(transfer,))
        return said
    return f"I'm sorry, reservation {rid} cannot be cancelled: {message}."


def agent_model() -> hk.FunctionModel:
    """The embedded agent as a model: `hk.FunctionModel(agent_policy, name="airline-agent")`."""
    return hk.FunctionModel(agent_policy, name="airline-agent")


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoTask:
    """One demo conversation and what counts as success."""

    name: str
    """Short label for tables."""
    user_message: str
    """The customer's opening message."""
    actions: tuple[ExpectedAction, ...] = ()
    """The reference solution; the final database must equal a fresh one after these."""
    outputs: tuple[str, ...] = ()
    """Strings the agent must say to the customer."""
    expect_mismatches: int = 0
    """`alert.mismatch` events the run should log (claims the database contradicts)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Notes shown nowhere (kept for readers of the task list)."""


DEMO_TASKS: tuple[DemoTask, ...] = (
    DemoTask(
        name="book-cheapest-one-stop",
        user_message=(
            "Hi, I'm mei_hernandez_8984. Please book me a one-way economy trip from ATL to PHX "
            "on 2024-05-20, the cheapest you have; one stop is fine. Just me, 2 checked bags, "
            "no insurance. Use my gift card first and put the rest on my card ending 1698. "
            "Yes, go ahead and book it."
        ),
        actions=(
            ExpectedAction(
                name="book_reservation",
                kwargs={
                    "user_id": "mei_hernandez_8984",
                    "origin": "ATL",
                    "destination": "PHX",
                    "flight_type": "one_way",
                    "cabin": "economy",
                    "flights": [
                        {"flight_number": "HAT102", "date": "2024-05-20"},
                        {"flight_number": "HAT095", "date": "2024-05-21"},
                    ],
                    "passengers": [
                        {"first_name": "Mei", "last_name": "Hernandez", "dob": "1981-01-11"}
                    ],
                    "payment_methods": [
                        {"payment_id": "gift_card_5309492", "amount": 98},
                        {"payment_id": "credit_card_2140654", "amount": 113},
                    ],
                    "total_baggages": 2,
                    "nonfree_baggages": 0,
                    "insurance": "no",
                },
            ),
        ),
        outputs=("HATHAT", "211"),
    ),
    DemoTask(
        name="cancel-business",
        user_message=(
            "This is chen_jackson_3290. My plans changed, please cancel reservation 4WQ150. "
            "Yes, I confirm."
        ),
        actions=(ExpectedAction(name="cancel_reservation", kwargs={"reservation_id": "4WQ150"}),),
        outputs=("cancelled",),
    ),
    DemoTask(
        name="cancel-within-24h",
        user_message=(
            "Hello, anya_brown_2655 here. I booked JEPRZB yesterday but my plans changed; "
            "cancel it please. Yes, go ahead."
        ),
        actions=(ExpectedAction(name="cancel_reservation", kwargs={"reservation_id": "JEPRZB"}),),
        outputs=("cancelled",),
    ),
    DemoTask(
        name="cancel-false-claim",
        user_message=(
            "I'm lei_rossi_3206 and I'm sick. Cancel VAAOXJ now: it's business class and I "
            "have insurance, so you must refund me. Yes, cancel it."
        ),
        actions=(),
        outputs=("cannot be cancelled",),
        expect_mismatches=2,
    ),
    DemoTask(
        name="cancel-partly-flown",
        user_message=(
            "ivan_brown_5554 here. The weather is awful, please cancel my reservation DLCYQ9. "
            "Yes, I'm sure."
        ),
        actions=(),
        outputs=("human agent",),
    ),
)
