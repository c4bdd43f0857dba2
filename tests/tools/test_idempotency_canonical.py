"""A write re-sent with `100.0` for `100`, or with a default spelt out, is the same write (R-E5).

The key and the unknown-outcome match see arguments as `canonical_arguments` gives them: whole
floats as ints and schema defaults left out; `"100"` stays a string. A ledger written by an
earlier version (keys derived from arguments not in that form) still matches on resume.
"""

from __future__ import annotations

import hashlib
import json

import harnesskit as hk
from harnesskit.messages import ToolCall
from harnesskit.testing import reply
from harnesskit.tools import IdempotencyLedger, key_for
from harnesskit.tools.spec import ToolContext


def _pay(charges: list[tuple], *, fail_first: bool = False):
    @hk.tool(risk="write")
    def pay(ref: str, amount: float, currency: str = "USD") -> dict:
        """Charge a payment.

        Args:
            ref: payment reference.
            amount: amount.
            currency: currency code.

        Returns:
            The receipt.
        """
        charges.append((ref, amount, currency))
        if fail_first and len(charges) == 1:  # died mid-call: the outcome is unknown
            raise RuntimeError("connection reset")
        return {"charged": amount}

    return pay


def _run(second: dict, *, fail_first: bool = False) -> tuple[list[tuple], list]:
    charges: list[tuple] = []
    turns = [
        reply.tool_call("pay", ref="P1", amount=100),
        reply.tool_call("pay", **second),
        "ok",
    ]
    h = hk.Harness([_pay(charges, fail_first=fail_first)], hk.ScriptedModel(turns))
    run = h.start("pay").run()
    return charges, [e for e in run.log.events if e.type == "tool.result"]


def test_a_done_write_resent_with_a_float_or_an_explicit_default_does_not_run_again():
    for second in (
        {"ref": "P1", "amount": 100.0},
        {"ref": "P1", "amount": 100, "currency": "USD"},
        {"ref": "P1", "amount": 100.0, "currency": "USD"},
    ):
        charges, results = _run(second)
        assert charges == [("P1", 100, "USD")], second
        assert results[-1].payload.get("duplicate") is True
    charges, _ = _run({"ref": "P1", "amount": 100.5})  # another amount is another write
    assert len(charges) == 2
    charges, _ = _run({"ref": "P1", "amount": 100, "currency": "EUR"})
    assert len(charges) == 2


def test_an_unknown_write_resent_with_a_float_or_an_explicit_default_is_refused():
    for second in ({"ref": "P1", "amount": 100.0}, {"ref": "P1", "amount": 100, "currency": "USD"}):
        charges, results = _run(second, fail_first=True)
        assert len(charges) == 1, second
        assert results[0].outcome_unknown
        assert results[-1].ok is False and "unknown outcome" in results[-1].content


def test_keys_see_numbers_by_value_but_not_strings_as_numbers():
    params = {"properties": {"currency": {"type": "string", "default": "USD"}}}
    base = key_for("r", "main", "pay", {"amount": 100}, params)
    assert key_for("r", "main", "pay", {"amount": 100.0}, params) == base
    assert key_for("r", "main", "pay", {"amount": 100, "currency": "USD"}, params) == base
    assert key_for("r", "main", "pay", {"amount": "100"}, params) != base
    assert key_for("r", "main", "pay", {"amount": True}, params) != key_for(
        "r", "main", "pay", {"amount": 1}, params
    )
    assert key_for("r", "main", "pay", {"items": [{"n": 2.0}]}) == key_for(
        "r", "main", "pay", {"items": [{"n": 2}]}
    )


def _old_key(run_id: str, branch: str, tool: str, arguments: dict) -> str:
    """The key as versions before canonical arguments derived it (JSON of the args as sent)."""
    blob = json.dumps(
        [run_id, branch, tool, arguments], sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def test_keys_of_canonical_arguments_are_the_keys_earlier_versions_wrote():
    args = {"ref": "P1", "amount": 100}
    params = _pay([]).parameters
    assert key_for("r", "main", "pay", args, params) == _old_key("r", "main", "pay", args)


def test_an_old_ledger_keyed_on_a_float_and_a_spelt_out_default_still_matches(tmp_path):
    pay = _pay([])
    path = tmp_path / "r.jsonl.idem"
    lines = []
    for n, (state, args) in enumerate(
        [
            ("done", {"ref": "P1", "amount": 100.0, "currency": "USD"}),
            ("unknown", {"ref": "P2", "amount": 7.0}),
        ]
    ):
        result = {"ok": True, "content": '{"charged": 100}', "error_type": None}
        lines.append(
            json.dumps(
                {
                    "v": 1,
                    "key": _old_key("r", "main", "pay", args),
                    "state": state,
                    "tool": "pay",
                    "arguments": args,
                    "run_id": "r",
                    "branch_id": "main",
                    "step": n + 1,
                    "tool_call_id": f"tc_{n}",
                    "natural": None,
                    "result": result if state == "done" else None,
                    "note": "",
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")
    ledger = IdempotencyLedger.open(path)

    def admit(args: dict):
        ctx = ToolContext(run_id="r", branch_id="main", step=9, tool_call_id="tc_9")
        call = ToolCall(id="tc_9", name="pay", arguments=args)
        return ledger.admit(pay, call, args, ctx), ctx

    done, ctx = admit({"ref": "P1", "amount": 100})
    assert done is not None and done.meta["duplicate"] is True
    assert json.loads(done.content) == {"charged": 100}
    assert ctx.idempotency_key == _old_key(
        "r", "main", "pay", {"ref": "P1", "amount": 100.0, "currency": "USD"}
    )
    blocked, _ = admit({"ref": "P2", "amount": 7, "currency": "USD"})
    assert blocked is not None and blocked.ok is False and blocked.meta["outcome_unknown"]
    fresh, _ = admit({"ref": "P3", "amount": 7})
    assert fresh is None


def test_a_write_resent_with_an_explicit_none_for_an_optional_parameter_does_not_run_again():
    charges: list[tuple] = []

    @hk.tool(risk="write")
    def pay(ref: str, amount: float, meta: dict | None = None) -> dict:
        """Charge a payment.

        Args:
            ref: payment reference.
            amount: amount.
            meta: metadata.

        Returns:
            The receipt.
        """
        charges.append((ref, amount, meta))
        return {"charged": amount}

    assert "default" not in pay.parameters["properties"]["meta"]  # `= None` states none
    turns = [
        reply.tool_call("pay", ref="P1", amount=100),
        reply.tool_call("pay", ref="P1", amount=100, meta=None),
        reply.tool_call("pay", ref="P1", amount=100, meta={"a": 1}),  # another write
        "ok",
    ]
    run = hk.Harness([pay], hk.ScriptedModel(turns)).start("pay").run()
    assert charges == [("P1", 100, None), ("P1", 100, {"a": 1})]
    results = [e for e in run.log.events if e.type == "tool.result"]
    assert results[1].payload.get("duplicate") is True
