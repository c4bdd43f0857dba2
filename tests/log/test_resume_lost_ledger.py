"""A lost, emptied or cut write ledger never lets a write act twice (R-E5, R-V6).

The loop flushes a write's `tool.call` to the log before the tool acts, so the log alone proves
which writes started: one without a result has an unknown outcome (resume refuses until a
confirmer or a human settles it), one with a result was done (a repeat gets that result).
"""

from __future__ import annotations

import json
import time

import pytest

import harnesskit as hk
from harnesskit.testing import reply
from harnesskit.tools import EffectCheck, IdempotencyLedger, ledger_path


def _tools(paid: list[str], *, die_in: str):
    """`pay` (a write with a natural key) and `look` (a read); `die_in` stops the run once."""
    died: list[bool] = []

    @hk.tool(risk="write", idempotency_fields=("ref",))
    def pay(ref: str, amount: int) -> dict:
        """Charge a card.

        Args:
            ref: payment reference.
            amount: amount in cents.
        """
        paid.append(ref)
        if die_in == "pay" and not died:  # the process "dies" after the charge, before its result
            died.append(True)
            raise hk.StopRun("crashed")
        return {"paid": ref}

    @hk.tool
    def look(ref: str) -> dict:
        """Look at a payment.

        Args:
            ref: payment reference.
        """
        if die_in == "look" and not died:
            died.append(True)
            raise hk.StopRun("crashed")
        return {"ref": ref}

    return [pay, look]


def _harness(tools, turns, tmp_path, **kw):
    return hk.Harness(tools, hk.ScriptedModel(turns), log_dir=tmp_path, **kw)


def _died_in_pay(tmp_path):
    """A run killed after its charge acted, before its result: the log ends with the call."""
    paid: list[str] = []
    tools = _tools(paid, die_in="pay")
    run = _harness(tools, [reply.tool_call("pay", ref="R1", amount=10)], tmp_path).start(
        "pay", run_id="r"
    )
    run.run()
    run.log.close()
    assert run.finish_reason == "crashed" and paid == ["R1"]
    path = tmp_path / "r.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    call = next(i for i, x in enumerate(lines) if json.loads(x)["type"] == "tool.call")
    path.write_bytes(b"".join(lines[: call + 1]))  # SIGKILLed after the charge: nothing after
    return tools, paid, path


def _damage(idem, how):
    if how == "missing":
        idem.unlink()
    elif how == "empty":
        idem.write_bytes(b"")
    else:  # the `started` line cut off mid-way (a torn last line is skipped when read)
        idem.write_bytes(idem.read_bytes()[:30])


@pytest.mark.parametrize("how", ["missing", "empty", "cut"])
def test_a_logged_write_without_result_or_ledger_line_blocks_resume(tmp_path, how):
    tools, paid, path = _died_in_pay(tmp_path)
    _damage(ledger_path(path), how)
    report = hk.check_resume(_harness(tools, ["done"], tmp_path), path)
    assert report.failed == ("tool_calls",)
    with pytest.raises(hk.ResumeError) as info:
        _harness(tools, ["done"], tmp_path).resume(path)
    assert info.value.failed == ("tool_calls",) and "confirmers" in str(info.value)
    assert paid == ["R1"]
    # the write is now `started` in the ledger, so a human can settle it by the key named
    ledger = IdempotencyLedger.open(ledger_path(path))
    (record,) = ledger.records.values()
    assert record.state == "started" and record.tool == "pay" and record.arguments["ref"] == "R1"
    ledger.settle(record.key, EffectCheck(applied=True, value={"paid": "R1"}), by="human:t")
    run = _harness(tools, ["done"], tmp_path).resume(path)
    run.log.close()
    last = [e for e in run.log.events if e.type == "tool.result"][-1]
    assert json.loads(last.content) == {"paid": "R1"} and paid == ["R1"]


def test_a_confirmer_settles_a_write_the_ledger_lost(tmp_path):
    tools, paid, path = _died_in_pay(tmp_path)
    ledger_path(path).unlink()
    seen = []

    def confirm(record):
        seen.append(record.arguments["ref"])
        return EffectCheck(applied=True, value={"paid": "R1"}, evidence="bank says so")

    h = _harness(tools, ["done"], tmp_path, confirmers={"pay": confirm})
    run = h.resume(path)
    run.log.close()
    assert seen == ["R1"] and paid == ["R1"]
    results = [e for e in run.log.events if e.type == "tool.result"]
    assert json.loads(results[-1].content) == {"paid": "R1"}


def test_a_restart_without_the_ledger_does_not_repeat_the_unknown_write(tmp_path):
    tools, paid, path = _died_in_pay(tmp_path)
    ledger_path(path).unlink()
    h = _harness(tools, [reply.tool_call("pay", ref="R1", amount=10), "done"], tmp_path)
    run = h.restart(path, reason="crashed").run()
    run.log.close()
    assert paid == ["R1"]
    last = [e for e in run.log.events if e.type == "tool.result"][-1]
    assert last.ok is False and last.outcome_unknown


def test_a_write_done_in_the_log_is_a_duplicate_after_the_ledger_is_lost(tmp_path):
    paid: list[str] = []
    tools = _tools(paid, die_in="")
    turns = [reply.tool_call("pay", ref="R1", amount=10), "done"]
    _harness(tools, turns, tmp_path).start("pay", run_id="r").run()
    assert paid == ["R1"]
    path = tmp_path / "r.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    kept = next(i for i, x in enumerate(lines) if json.loads(x)["type"] == "tool.result")
    path.write_bytes(b"".join(lines[: kept + 1]))  # killed right after the payment's result
    ledger_path(path).unlink()
    again = [reply.tool_call("pay", ref="R1", amount=10), "done"]  # the model forgot it paid
    run = _harness(tools, again, tmp_path).resume(path).run()
    run.log.close()
    assert run.finish_reason == "stop" and paid == ["R1"]
    last = [e for e in run.log.events if e.type == "tool.result"][-1]
    assert last.payload.get("duplicate") is True and json.loads(last.content) == {"paid": "R1"}


def test_a_write_a_gate_paused_before_it_started_runs_after_the_pause(tmp_path):
    """A run that stopped in order (a gate waiting for approval) before a write began, with a
    ledger that holds every write the log shows: the write never started, and runs on resume."""
    paid: list[str] = []
    tools = _tools(paid, die_in="")
    approved: list[bool] = []

    def confirm(request) -> bool:
        if approved:
            return True
        raise hk.StopRun("paused", "pay waits for approval")

    gate = hk.Gate(policy={"write": "confirm"}, confirm=confirm)
    turns = [reply.tool_call("pay", ref="R1", amount=10), "done"]
    run = _harness(tools, turns, tmp_path, gate=gate).start("pay", run_id="r").run()
    run.log.close()
    assert run.finish_reason == "paused" and paid == []
    path = tmp_path / "r.jsonl"
    assert not ledger_path(path).exists()  # no write began, so no ledger line was written
    assert hk.check_resume(_harness(tools, ["done"], tmp_path, gate=gate), path).ok
    approved.append(True)
    run = _harness(tools, ["done"], tmp_path, gate=gate).resume(path).run()
    run.log.close()
    assert run.finish_reason == "stop" and paid == ["R1"]


def _timed_out_then_lost(tmp_path, how):
    """A write that timed out (the log says so), finished late, and then lost its ledger."""
    charges: list[tuple] = []

    @hk.tool(risk="write", timeout_seconds=0.1)
    def charge(ref: str, amount: float) -> dict:
        """Charge a card.

        Args:
            ref: payment reference.
            amount: amount.
        """
        charges.append((ref, amount))
        time.sleep(0.4)
        return {"charged": amount}

    turns = [reply.tool_call("charge", ref="P3", amount=5), "checking"]
    run = _harness([charge], turns, tmp_path).start("pay", run_id="r").run()
    run.log.close()
    path = tmp_path / "r.jsonl"
    idem = ledger_path(path)
    for _ in range(100):  # the late outcome reaches the ledger on the worker thread
        if "finished late" in idem.read_text():
            break
        time.sleep(0.05)
    assert [e.error_type for e in run.log.events if e.type == "tool.result"] == ["timeout"]
    _damage(idem, how)
    return charge, charges, path


@pytest.mark.parametrize("how", ["missing", "empty"])
@pytest.mark.parametrize("amount", [5, 5.0])
def test_a_write_the_log_shows_timed_out_is_not_run_again_after_the_ledger_is_lost(
    tmp_path, how, amount
):
    charge, charges, path = _timed_out_then_lost(tmp_path, how)
    again = [reply.tool_call("charge", ref="P3", amount=amount), "ok"]
    run = _harness([charge], again, tmp_path).resume(path)
    run.send("retry please").run()
    run.log.close()
    assert charges == [("P3", 5)]
    last = [e for e in run.log.events if e.type == "tool.result"][-1]
    assert last.ok is False and last.payload.get("outcome_unknown") is True
    (record,) = IdempotencyLedger.open(ledger_path(path)).records.values()
    assert record.state == "unknown" and "timed out" in record.note
