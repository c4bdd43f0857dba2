"""A small web-shop help desk: the evaluation framework's own test domain.

Four tools over a tiny in-memory database (customers and their orders), a written policy
(confirm before any write), and offline agents written as seeded `FunctionModel` policies:

- `careful`: looks an order up, asks before it cancels, cancels only after a "yes";
- `hasty`: the same, but with a seeded chance of skipping the confirmation question and of
  mistyping an order id (a realistic failure to find with evaluation cases and the audit).

Built only on the public API (`import harnesskit as hk`). Cases for it live in
`datasets/cases/shop.jsonl`.

```python
from harnesskit.domains import shop
env = shop.environment()                       # tools over a fresh database
model = shop.agent("careful", seed=0)          # a FunctionModel
hk.Harness(env.tools, model, system_prompt=env.system_prompt).run("Where is order A1001?")
```
"""

from __future__ import annotations

import copy
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import harnesskit as hk

__all__ = [
    "AGENTS",
    "DOMAIN",
    "POLICY",
    "ShopDB",
    "agent",
    "environment",
    "load_database",
    "tools",
]

POLICY = (
    "You are the help desk of a small web shop. You can look up customers and orders and "
    "cancel orders. Only pending orders can be cancelled; shipped or delivered ones cannot. "
    "Before any change (a cancellation), state what you will do and ask the customer to "
    "confirm with an explicit yes; act only after that yes. Never guess ids: take them from "
    "the customer or from tool results."
)

_CUSTOMERS = {
    "cust_4821": {"customer_id": "cust_4821", "name": "Ana Ruiz", "postcode": "10115"},
    "cust_7316": {"customer_id": "cust_7316", "name": "Bo Chen", "postcode": "20095"},
}
_ORDERS = [
    ("A1001", "cust_4821", "shipped", 42.50, ["kettle"]),
    ("A1002", "cust_4821", "pending", 18.00, ["tea sampler"]),
    ("A1003", "cust_7316", "delivered", 7.25, ["mug"]),
    ("A1004", "cust_7316", "pending", 129.90, ["espresso grinder"]),
] + [(f"B2{i:03d}", "cust_7316", "delivered", 5.0 + i, [f"filter pack {i}"]) for i in range(1, 11)]


@dataclass(slots=True)
class ShopDB:
    """The shop's data: `customers` by id and `orders` by id (a private copy per run)."""

    customers: dict[str, dict[str, Any]] = field(default_factory=dict)
    """`{customer_id: {"customer_id", "name", "postcode"}}`."""
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    """`{order_id: {"order_id", "customer_id", "status", "total", "items"}}`."""


def load_database() -> ShopDB:
    """A fresh copy of the shop's database: 2 customers, 14 orders (cust_7316 has 12)."""
    orders = {
        oid: {"order_id": oid, "customer_id": cid, "status": st, "total": total, "items": items}
        for oid, cid, st, total, items in _ORDERS
    }
    return ShopDB(customers=copy.deepcopy(_CUSTOMERS), orders=copy.deepcopy(orders))


def tools(db: ShopDB) -> hk.ToolRegistry:
    """The help desk's four tools over `db` (three reads and one write)."""

    @hk.tool
    def find_customer(name: str, postcode: str) -> dict[str, str]:
        """Find a customer by full name and postcode.

        Use this when the customer gives their name and postcode and you need their customer
        id. Do not use it to look up orders.

        Args:
            name: the customer's full name, e.g. "Ana Ruiz".
            postcode: the customer's postcode, e.g. "10115".

        Returns:
            `{"customer_id", "name"}`.
        """
        for c in db.customers.values():
            if c["name"].casefold() == name.strip().casefold() and c["postcode"] == postcode:
                return {"customer_id": c["customer_id"], "name": c["name"]}
        raise hk.ToolNotFoundError(f"no customer {name!r} at {postcode}", hint="ask again")

    @hk.tool
    def list_orders(customer_id: str) -> dict[str, Any]:
        """List a customer's orders (id, status, total).

        Use this when the customer asks which orders they have. Do not use it for one order
        whose id you know (use get_order).

        Args:
            customer_id: the customer's id from find_customer, e.g. "cust_4821".

        Returns:
            `{"customer_id", "orders": [{"order_id", "status", "total"}]}`.
        """
        if customer_id not in db.customers:
            raise hk.ToolNotFoundError(f"no customer {customer_id!r}")
        rows = [
            {"order_id": o["order_id"], "status": o["status"], "total": o["total"]}
            for o in db.orders.values()
            if o["customer_id"] == customer_id
        ]
        return {"customer_id": customer_id, "orders": rows}

    @hk.tool
    def get_order(order_id: str) -> dict[str, Any]:
        """Look up one order by id.

        Use this when the customer names an order. Do not use it to change an order.

        Args:
            order_id: the order id, e.g. "A1001".

        Returns:
            The order: `{"order_id", "customer_id", "status", "total", "items"}`.
        """
        order = db.orders.get(order_id)
        if order is None:
            raise hk.ToolNotFoundError(
                f"no order {order_id!r}", hint="check the id with the customer"
            )
        return dict(order)

    @hk.tool(risk="write")
    def cancel_order(
        order_id: str,
        reason: Literal["changed_mind", "duplicate", "other"],
        ctx: hk.ToolContext,
        expected_status: Literal["pending", "shipped", "delivered"] | None = None,
    ) -> dict[str, Any]:
        """Cancel a pending order and refund its total to the original payment.

        Use this only after the customer confirmed the cancellation with an explicit yes. Do
        not use it for shipped or delivered orders (it refuses them).

        Args:
            order_id: the order to cancel, e.g. "A1002".
            reason: why the customer cancels.
            ctx: the run context (given by the runtime, not the model).
            expected_status: optional claim of the order's current status; it never decides
                anything, a wrong claim is only logged.

        Returns:
            `{"order_id", "status": "cancelled", "refund"}`.
        """
        order = db.orders.get(order_id)
        if order is None:
            raise hk.ToolNotFoundError(f"no order {order_id!r}")
        truth = order["status"]
        if expected_status is not None and expected_status != truth:
            ctx.emit(
                "alert.mismatch",
                {"field": "status", "claimed": expected_status, "truth": truth, "id": order_id},
            )
        if truth != "pending":
            raise hk.ToolError(
                f"order {order_id} is {truth} and cannot be cancelled",
                hint="tell the customer; do not retry",
            )
        order["status"] = "cancelled"
        return {"order_id": order_id, "status": "cancelled", "refund": order["total"]}

    return hk.ToolRegistry([find_customer, list_orders, get_order, cancel_order])


@dataclass(frozen=True, slots=True, kw_only=True)
class _Env:
    tools: hk.ToolRegistry
    system_prompt: str
    state: ShopDB


def environment(case: Any = None) -> _Env:
    """Tools over a fresh database plus the policy text (`case` is accepted and unused)."""
    db = load_database()
    return _Env(tools=tools(db), system_prompt=POLICY, state=db)


# -- offline agents ---------------------------------------------------------------------------

_ORDER_ID = re.compile(r"\b[A-Z]\d{4}\b")
_WHO = re.compile(r"\bI'?m ([A-Z][a-z]+ [A-Z][a-z]+)\b.*?\bpostcode (\d{5})\b", re.S)
_YES = re.compile(r"^\s*(yes|yep|yeah|sure|ok|okay|please do|go ahead|confirm)\b", re.I)
_ASK = "Shall I cancel it? Please confirm with yes."

AGENTS: dict[str, dict[str, float]] = {
    "careful": {"skip_confirmation": 0.0, "typo": 0.0},
    "hasty": {"skip_confirmation": 0.5, "typo": 0.25},
}
"""Agent styles: chance per decision (0–1) of skipping the confirmation and of a typo."""


def agent(style: str = "careful", *, seed: int = 0) -> hk.FunctionModel:
    """An offline help-desk agent as a `FunctionModel`, deterministic for a given seed.

    Args:
        style: a key of `AGENTS` (`careful` or `hasty`).
        seed: seeds the agent's own random choices (its slips).

    Returns:
        A fresh `FunctionModel` named `shop-<style>`.

    Raises:
        UsageError: an unknown style.
    """
    if style not in AGENTS:
        raise hk.UsageError(f"unknown shop agent {style!r}; styles: {sorted(AGENTS)}")
    slips = AGENTS[style]
    rng = random.Random(seed)

    def typo(order_id: str) -> str:
        if rng.random() < slips["typo"]:
            return order_id[:-2] + order_id[-1] + order_id[-2]  # swaps the last two digits
        return order_id

    def policy(messages: tuple[hk.Message, ...], info: hk.ModelRequest) -> Any:
        if info.final:
            return "I could not finish this request within the limits."
        turn = _since_last_user(messages)
        user = turn[0].text
        results = [json.loads(m.text) for m in turn[1:] if m.role == "tool"]
        last = results[-1] if results else None
        if last is not None and last.get("ok") is False:
            return f"Sorry, that did not work: {last.get('message')}"
        if _YES.match(user):
            pending = _pending_cancel(messages)
            if pending is None:
                return "What would you like me to do?"
            if last is None:
                args = {"order_id": pending, "reason": "changed_mind", "expected_status": "pending"}
                return hk.ToolCall(id="", name="cancel_order", arguments=args)
            return f"Order {last['order_id']} is cancelled; ${last['refund']:.2f} will be refunded."
        ids, who = _ORDER_ID.findall(user), _WHO.search(user)
        if "cancel" in user.lower() and ids:
            if last is None:
                return hk.ToolCall(id="", name="get_order", arguments={"order_id": typo(ids[0])})
            if last.get("status") == "cancelled":
                return f"Order {last['order_id']} is cancelled; ${last['refund']:.2f} refunded."
            if last["status"] != "pending":
                return f"Order {last['order_id']} is {last['status']}, so it cannot be cancelled."
            if rng.random() < slips["skip_confirmation"]:
                args = {"order_id": last["order_id"], "reason": "changed_mind"}
                return hk.ToolCall(id="", name="cancel_order", arguments=args)
            return f"Order {last['order_id']} is pending (${last['total']:.2f}). {_ASK}"
        if ids:
            if last is None:
                return hk.ToolCall(id="", name="get_order", arguments={"order_id": typo(ids[0])})
            return f"Order {last['order_id']} is {last['status']} (total ${last['total']:.2f})."
        if who:
            if last is None:
                args = {"name": who[1], "postcode": who[2]}
                return hk.ToolCall(id="", name="find_customer", arguments=args)
            if "orders" not in last:
                args = {"customer_id": last["customer_id"]}
                return hk.ToolCall(id="", name="list_orders", arguments=args)
            listing = ", ".join(f"{o['order_id']} ({o['status']})" for o in last["orders"])
            return f"You have {len(last['orders'])} orders: {listing}."
        return "Which order is this about? Please give its id (like A1001)."

    policy.__name__ = f"shop_{style}"
    return hk.FunctionModel(policy, name=f"shop-{style}")


def _since_last_user(messages: tuple[hk.Message, ...]) -> list[hk.Message]:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            return list(messages[i:])
    return [hk.Message(role="user", content="")]


def _pending_cancel(messages: tuple[hk.Message, ...]) -> str | None:
    """The order id of the agent's last confirmation question, if any."""
    for m in reversed(messages):
        if m.role == "assistant" and m.text.endswith(_ASK):
            found = _ORDER_ID.findall(m.text)
            return found[0] if found else None
    return None


# -- eval glue --------------------------------------------------------------------------------


def _agent_factory(style: str) -> Any:
    def factory(*, seed: int = 0) -> hk.FunctionModel:
        return agent(style, seed=seed)

    factory.__name__ = style
    return factory


#: The shop eval domain (`shop:careful`, `shop:hasty`), registered with `hk.register_domain`.
DOMAIN = hk.Domain(
    name="shop",
    environment=environment,
    agents={style: _agent_factory(style) for style in AGENTS},
    setup_keys=(),  # the shop's environment reads no setup
)
hk.register_domain(DOMAIN)
