"""`idempotency_fields` mistakes are refused when the tool is made, not silently ignored (R-E5).

A str would be iterated by character and a misspelt name is never in the arguments: either one
switched duplicate protection off, so a payment with the same reference charged twice.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

import harnesskit as hk
from harnesskit.errors import UsageError
from harnesskit.testing import reply


def _pay_fn(paid: list[tuple[str, int]]):
    def pay(ref: str, amount: int) -> dict:
        """Charge a card once per payment reference.

        Use when the user confirmed. Do not use twice.

        Args:
            ref: payment reference.
            amount: amount in cents.

        Returns:
            The receipt.
        """
        paid.append((ref, amount))
        return {"paid": ref, "amount": amount}

    return pay


def test_a_str_is_refused_with_how_to_wrap_it():
    with pytest.raises(UsageError, match=r"wrap it: idempotency_fields=\('ref',\)"):
        hk.tool(risk="write", idempotency_fields="ref")(_pay_fn([]))


def test_a_name_that_is_not_a_parameter_is_refused_naming_the_parameters():
    with pytest.raises(UsageError, match=r"'reff' is not a parameter.*parameters are: ref, amount"):
        hk.tool(risk="write", idempotency_fields=("reff",))(_pay_fn([]))


def test_tool_construction_checks_the_fields_too():
    good = hk.tool(risk="write", idempotency_fields=["ref"])(_pay_fn([]))
    assert good.idempotency_fields == ("ref",)  # a list is kept as a tuple
    with pytest.raises(UsageError, match="wrap it"):
        dataclasses.replace(good, idempotency_fields="ref")
    with pytest.raises(UsageError, match="'amt', 'when' are not parameters"):
        dataclasses.replace(good, idempotency_fields=("ref", "amt", "when"))
    with pytest.raises(UsageError, match="parameter names"):
        dataclasses.replace(good, idempotency_fields=(1,))
    with pytest.raises(UsageError, match="tuple of parameter names"):
        dataclasses.replace(good, idempotency_fields=5)


def test_the_natural_key_still_stops_a_second_charge(tmp_path):
    paid: list[tuple[str, int]] = []
    pay = hk.tool(risk="write", idempotency_fields=("ref",))(_pay_fn(paid))
    model = hk.ScriptedModel(
        [
            reply.tool_call("pay", ref="R1", amount=10),
            reply.tool_call("pay", ref="R1", amount=11),
            "done",
        ]
    )
    run = hk.Harness([pay], model, log_dir=tmp_path).run("pay")
    assert paid == [("R1", 10)]
    second = [e for e in run.log.events if e.type == "tool.result"][1]
    assert second.payload["duplicate"] is True


def _second_result(calls: list[dict]) -> tuple[list[tuple[str, int]], hk.Event]:
    paid: list[tuple[str, int]] = []
    pay = hk.tool(risk="write", idempotency_fields=("ref",))(_pay_fn(paid))
    model = hk.ScriptedModel([*(reply.tool_call("pay", **c) for c in calls), "done"])
    run = hk.Harness([pay], model).run("pay")
    return paid, [e for e in run.log.events if e.type == "tool.result"][1]


def test_a_later_call_with_the_same_key_but_other_arguments_is_told_it_was_not_run():
    paid, second = _second_result([{"ref": "P1", "amount": 100}, {"ref": "P1", "amount": 101}])

    assert paid == [("P1", 100)]
    body = json.loads(second.payload["content"])
    assert body["duplicate"] is True and body["not_run"] is True
    assert body["duplicate_of"] == second.payload["duplicate_of"]
    assert body["differing_arguments"] == ["amount"] == second.payload["differing_arguments"]
    assert "amount: 101 now, 100 then" in body["message"]
    assert "earlier" in body["message"] and "NOT run" in body["message"]
    assert body["earlier_result"] == {"paid": "P1", "amount": 100}


@pytest.mark.parametrize("amount", [100, 100.0])
def test_a_later_call_with_equal_arguments_keeps_the_recorded_result_as_is(amount):
    paid, second = _second_result([{"ref": "P1", "amount": 100}, {"ref": "P1", "amount": amount}])

    assert paid == [("P1", 100)]
    assert second.payload["duplicate"] is True
    assert "differing_arguments" not in second.payload
    assert json.loads(second.payload["content"]) == {"paid": "P1", "amount": 100}


def test_a_numeric_reference_sent_as_a_whole_float_then_an_int_is_one_write(tmp_path):
    # the natural key takes numbers by value, as the idempotency key does: a second turn
    # sending order 7 as 7 after 7.0 is the same write, not a second refund
    refunds: list[object] = []

    @hk.tool(risk="write", idempotency_fields=("order",))
    def refund(order: int, note: str) -> dict:
        """Refund one order once.

        Use when the user asked for a refund. Do not use twice.

        Args:
            order: the order number.
            note: why.

        Returns:
            The refund receipt.
        """
        refunds.append(order)
        return {"refunded": order}

    model = hk.ScriptedModel(
        [
            reply.tool_call("refund", order=7.0, note="late"),
            reply.tool_call("refund", order=7, note="late delivery"),
            "done",
        ]
    )
    run = hk.Harness([refund], model, log_dir=tmp_path).run("refund order 7")
    assert refunds == [7.0]
    second = [e for e in run.log.events if e.type == "tool.result"][1]
    assert second.payload["duplicate"] is True
