"""A small order-desk domain for the trajectory tests: a JSON-file database and write tools.

Every real side effect appends to `db["effects"]` (tool, order, idempotency key) in the same
atomic file replace as the change itself, so a test can count how often each write acted.
`HK_KILL_AT` names a point where the process announces itself on stdout and waits to be
SIGKILLed: `event:<n>` (after the n-th event is appended), `tool:<tool>:<order>:before|after`
(inside a write tool, before or after its effect reached the database).

Run as a script: `python orders_domain.py <db> <log_dir> start|resume` (used by the crash test).
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import threading
import time

import harnesskit as hk
from harnesskit.tools.idempotency import EffectCheck, WriteRecord

ORDERS = {"A1": 120, "A2": 75, "A3": 310, "A4": 42, "A5": 99, "A6": 180}
SYSTEM = "You run the order desk: pay every order and give it a seat."
TASK = "Settle all open orders."
RUN_ID = "orders-run"


def fresh_db(path: pathlib.Path) -> pathlib.Path:
    """Write the initial database and return its path."""
    db = {
        "orders": {k: {"amount": v, "paid": None, "seat": None} for k, v in ORDERS.items()},
        "effects": [],
    }
    path.write_text(json.dumps(db, indent=1))
    return path


def _kill_point(point: str) -> None:
    if os.environ.get("HK_KILL_AT") == point:
        print("AT", point, flush=True)
        time.sleep(120)


def make_tools(db_path: pathlib.Path) -> list[hk.Tool]:
    """The three tools, bound to the database at `db_path` (parallel calls share one lock)."""
    lock = threading.Lock()

    def load() -> dict:
        return json.loads(db_path.read_text())

    def save(db: dict) -> None:
        tmp = db_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(db, indent=1))
        os.replace(tmp, db_path)

    @hk.tool
    def get_order(order_id: str) -> dict:
        """Look up one order: its amount, payment and seat.

        Args:
            order_id: the order, e.g. "A1".
        """
        order = load()["orders"].get(order_id)
        if order is None:
            raise hk.ToolNotFoundError(f"no order {order_id}")
        return {"order_id": order_id, **order}

    @hk.tool(risk="write", idempotency_fields=("reference",))
    def pay(order_id: str, amount: int, reference: str, ctx: hk.ToolContext) -> dict:
        """Charge an order (a write; the reference is the payment's natural key).

        Args:
            order_id: the order.
            amount: the amount in euros.
            reference: the payment reference, unique per payment.
        """
        _kill_point(f"tool:pay:{order_id}:before")
        with lock:
            db = load()
            db["orders"][order_id]["paid"] = amount
            db["effects"].append({"tool": "pay", "order": order_id, "key": ctx.idempotency_key})
            save(db)
        _kill_point(f"tool:pay:{order_id}:after")
        return {"order_id": order_id, "paid": amount, "reference": reference}

    @hk.tool(risk="write")
    def assign_seat(order_id: str, seat: str, ctx: hk.ToolContext) -> dict:
        """Give an order a seat (a write).

        Args:
            order_id: the order.
            seat: the seat, e.g. "3A".
        """
        _kill_point(f"tool:assign_seat:{order_id}:before")
        with lock:
            db = load()
            db["orders"][order_id]["seat"] = seat
            db["effects"].append(
                {"tool": "assign_seat", "order": order_id, "key": ctx.idempotency_key}
            )
            save(db)
        _kill_point(f"tool:assign_seat:{order_id}:after")
        return {"order_id": order_id, "seat": seat}

    return [get_order, pay, assign_seat]


def make_confirmers(db_path: pathlib.Path) -> dict:
    """Confirmers that look in the database for the effect stored under the record's key."""

    def confirm(record: WriteRecord) -> EffectCheck:
        db = json.loads(db_path.read_text())
        hit = next((e for e in db["effects"] if e["key"] == record.key), None)
        if hit is None:
            return EffectCheck(applied=False, evidence=f"no effect with key {record.key}")
        order = record.arguments["order_id"]
        if record.tool == "pay":
            value = {
                "order_id": order,
                "paid": record.arguments["amount"],
                "reference": record.arguments["reference"],
            }
        else:
            value = {"order_id": order, "seat": record.arguments["seat"]}
        return EffectCheck(applied=True, value=value, evidence=f"effect with key {record.key}")

    return {"pay": confirm, "assign_seat": confirm}


def policy(messages, info):
    """A deterministic agent: per order, look it up, then pay and seat it in one turn."""
    results = [m for m in messages if m.role == "tool"]
    n = len(results)
    order_ids = list(ORDERS)
    i, phase = divmod(n, 3)
    if i >= len(order_ids):
        paid = sum(json.loads(m.content).get("paid") or 0 for m in results)
        return f"All {len(order_ids)} orders settled; {paid} euros charged."
    order = order_ids[i]
    if phase == 0:
        return hk.ToolCall(id=f"call_{n}", name="get_order", arguments={"order_id": order})
    amount = json.loads(results[-1].content)["amount"]
    return [
        hk.ToolCall(
            id=f"call_{n}",
            name="pay",
            arguments={"order_id": order, "amount": amount, "reference": f"PAY-{order}"},
        ),
        hk.ToolCall(
            id=f"call_{n + 1}",
            name="assign_seat",
            arguments={"order_id": order, "seat": f"{i + 1}A"},
        ),
    ]


def make_harness(db_path: pathlib.Path, log_dir: pathlib.Path | None, **kwargs) -> hk.Harness:
    """The harness of the order desk (a fixed clock so that logs are deterministic)."""
    options = {
        "model": hk.FunctionModel(policy, name="orders-policy"),
        "system_prompt": SYSTEM,
        "limits": hk.Limits(max_steps=40),
        "log_dir": log_dir,
        "workspace_revision": "orders-v1",
        "confirmers": make_confirmers(db_path),
        "clock": lambda: 1_700_000_000.0,
    }
    options.update(kwargs)
    return hk.Harness(make_tools(db_path), **options)


def business_state(db_path: pathlib.Path) -> dict:
    """The orders table (what the run is meant to change)."""
    return json.loads(db_path.read_text())["orders"]


def main() -> None:
    db_path, log_dir, mode = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
    h = make_harness(db_path, log_dir)
    run = h.start(TASK, run_id=RUN_ID) if mode == "start" else h.resume(log_dir / f"{RUN_ID}.jsonl")
    point = os.environ.get("HK_KILL_AT", "")
    if point.startswith("event:"):
        target = int(point.split(":")[1])
        run.log.subscribe(lambda e: _kill_point(point) if e.event_id == target else None)
    run.run()
    print("FINISHED", run.finish_reason, flush=True)


if __name__ == "__main__":
    main()
