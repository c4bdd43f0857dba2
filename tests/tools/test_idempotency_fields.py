"""`idempotency_fields` mistakes are refused when the tool is made, not silently ignored (R-E5).

A str would be iterated by character and a misspelt name is never in the arguments: either one
switched duplicate protection off, so a payment with the same reference charged twice.
"""

from __future__ import annotations

import dataclasses

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
