"""The airline tools inside a real harness (strict and tau_bench modes)."""

import json
from datetime import timedelta

import pytest

import harnesskit as hk
from harnesskit.domains import airline
from harnesskit.testing import reply


def harness(db, turns, *, mode="strict", clock=None, gate=None):
    return hk.Harness(
        tools=airline.tools(db, mode=mode, clock=clock),
        model=hk.ScriptedModel(turns),
        system_prompt=airline.POLICY,
        limits=hk.Limits(max_steps=10),
        gate=gate or hk.Gate(confirm=hk.allow_all),
    )


def results(run):
    return [e.payload for e in run.log.of_type("tool.result")]


def test_registry_shape_and_lint():
    db = airline.load_database()
    for mode in ("strict", "tau_bench"):
        registry = airline.tools(db, mode=mode)
        assert len(registry) == 14
        assert hk.lint(registry) == []
        assert registry["cancel_reservation"].risk == "destructive"
        assert registry["book_reservation"].risk == "write"
        assert registry["get_user_details"].risk == "read"
    strict = airline.tools(db)["cancel_reservation"].parameters
    bench = airline.tools(db, mode="tau_bench")["cancel_reservation"].parameters
    assert strict["required"] == ["reservation_id", "reason"]
    assert bench["required"] == ["reservation_id"]
    assert "ctx" not in strict["properties"]
    with pytest.raises(hk.UsageError, match="mode"):
        airline.tools(db, mode="lenient")


def test_false_claim_alerts_and_does_not_change_the_decision():
    db = airline.load_database()
    claim = reply.tool_call(
        "cancel_reservation",
        reservation_id="VAAOXJ",
        reason="health",
        expected_cabin_class="business",
        expected_has_insurance=True,
    )
    run = harness(db, [claim, reply.text("sorry")]).run("cancel VAAOXJ")
    alerts = [e.payload for e in run.log.of_type("alert.mismatch")]
    assert [(a["field"], a["claimed"], a["actual"]) for a in alerts] == [
        ("cabin_class", "business", "economy"),
        ("has_insurance", True, False),
    ]
    (result,) = results(run)
    assert result["ok"] is False and result["error_type"] == "tool_error"
    assert "cannot cancel VAAOXJ" in json.loads(result["content"])["message"]
    assert "status" not in db.reservations["VAAOXJ"]
    # the alert is caused by the call
    call = run.log.of_type("tool.call")[0]
    assert run.log.of_type("alert.mismatch")[0].parent_id == call.event_id


def test_true_claims_no_alert_and_allowed_cancel():
    db = airline.load_database()
    call = reply.tool_call(
        "cancel_reservation",
        reservation_id="4WQ150",
        reason="change_of_plan",
        expected_cabin_class="business",
        expected_has_insurance=False,
    )
    run = harness(db, [call, reply.text("done")]).run("cancel 4WQ150")
    assert run.log.of_type("alert.mismatch") == []
    (result,) = results(run)
    assert result["ok"] is True
    assert json.loads(result["content"])["status"] == "cancelled"
    assert db.reservations["4WQ150"]["status"] == "cancelled"


def test_flown_segment_is_refused_even_when_claims_say_otherwise():
    db = airline.load_database()
    call = reply.tool_call("cancel_reservation", reservation_id="JECMMV", reason="change_of_plan")
    run = harness(db, [call, reply.text("x")]).run("cancel")
    (result,) = results(run)
    assert not result["ok"] and "already flown" in json.loads(result["content"])["message"]


def test_tau_bench_mode_cancels_regardless_but_still_checks_claims():
    db = airline.load_database()
    call = reply.tool_call(
        "cancel_reservation", reservation_id="VAAOXJ", expected_cabin_class="business"
    )
    run = harness(db, [call, reply.text("x")], mode="tau_bench").run("cancel")
    (result,) = results(run)
    assert result["ok"] and db.reservations["VAAOXJ"]["status"] == "cancelled"
    assert result["content"] == json.dumps(db.reservations["VAAOXJ"])
    assert len(run.log.of_type("alert.mismatch")) == 1


def test_server_clock_is_injected():
    db = airline.load_database()
    later = lambda: airline.BENCHMARK_NOW + timedelta(days=3)  # noqa: E731
    call = reply.tool_call("cancel_reservation", reservation_id="JEPRZB", reason="change_of_plan")
    run = harness(db, [call, reply.text("x")], clock=later).run("cancel")
    assert not results(run)[0]["ok"]  # no longer within 24 h of booking
    db2 = airline.load_database()
    run = harness(db2, [call, reply.text("x")]).run("cancel")
    assert results(run)[0]["ok"]


def test_strict_booking_stamps_the_clock_and_errors_are_structured():
    db = airline.load_database()
    clock = lambda: airline.BENCHMARK_NOW + timedelta(hours=2)  # noqa: E731
    args = {
        "user_id": "mia_li_3668",
        "origin": "JFK",
        "destination": "SEA",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": "HAT083", "date": "2024-05-20"}],
        "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
        "payment_methods": [{"payment_id": "credit_card_4421486", "amount": 99}],
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    fixed = dict(args, payment_methods=[{"payment_id": "credit_card_4421486", "amount": 100}])
    turns = [
        reply.tool_call("book_reservation", **args),
        reply.tool_call("book_reservation", **fixed),
        reply.text("ok"),
    ]
    run = harness(db, turns, clock=clock).run("book")
    first, second = results(run)
    assert first["ok"] is False
    assert json.loads(first["content"])["message"] == (
        "payment amount does not add up, total price is 100, but paid 99"
    )
    assert json.loads(second["content"])["created_at"] == "2024-05-15T17:00:00"


def test_not_found_error_type():
    db = airline.load_database()
    turns = [reply.tool_call("get_reservation_details", reservation_id="NOPE00"), reply.text("x")]
    run = harness(db, turns).run("look")
    assert results(run)[0]["error_type"] == "not_found"


def test_replay_mode_keeps_benchmark_texts_and_accepts_extra_segment_keys():
    db = airline.load_database()
    flights = [
        {"flight_number": f["flight_number"], "date": f["date"], "origin": f["origin"]}
        for f in db.reservations["4WQ150"]["flights"]
    ]
    call = reply.tool_call(
        "update_reservation_flights",
        reservation_id="4WQ150",
        cabin="business",
        flights=flights,
        payment_id="gift_card_3576581",
    )
    missing = reply.tool_call("get_reservation_details", reservation_id="NOPE00")
    run = harness(db, [call, missing, reply.text("x")], mode="tau_bench").run("change")
    first, second = results(run)
    assert first["ok"] and json.loads(first["content"])["reservation_id"] == "4WQ150"
    assert second["ok"] and second["content"] == "Error: user not found"
    strict_run = harness(airline.load_database(), [call, reply.text("x")]).run("change")
    assert results(strict_run)[0]["error_type"] == "invalid_argument"


def test_default_gate_asks_before_cancelling():
    db = airline.load_database()
    call = reply.tool_call("cancel_reservation", reservation_id="4WQ150", reason="other")
    run = harness(db, [call, reply.text("x")], gate=hk.Gate()).run("cancel")
    assert results(run)[0]["error_type"] == "permission_denied"
    assert "status" not in db.reservations["4WQ150"]


def test_shipped_database_unchanged_after_harness_runs():
    before = airline.shipped_files_digest()
    db = airline.load_database()
    call = reply.tool_call("cancel_reservation", reservation_id="4WQ150", reason="other")
    harness(db, [call, reply.text("x")]).run("cancel")
    assert db.reservations["4WQ150"]["status"] == "cancelled"
    assert airline.shipped_files_digest() == before
    assert "status" not in airline.load_database().reservations["4WQ150"]


def test_a_transfer_to_a_human_agent_ends_the_run_as_in_tau_bench():
    db = airline.load_database()
    transfer = reply.tool_call("transfer_to_human_agents", summary="wants a human")
    turns = [transfer, transfer, transfer, reply.text("never asked")]
    run = harness(db, turns).run("I want a human")
    assert run.finish_reason == "transferred"
    assert [e.payload["tool"] for e in run.log.of_type("tool.call")] == ["transfer_to_human_agents"]
    assert len(run.log.of_type("model.response")) == 1


def test_a_transfer_in_tau_bench_mode_returns_the_benchmark_text():
    db = airline.load_database()
    turns = [reply.tool_call("transfer_to_human_agents", summary="x"), reply.text("done")]
    run = harness(db, turns, mode="tau_bench").run("I want a human")
    assert run.finish_reason == "stop"
    assert results(run)[0]["content"] == "Transfer successful"


def _two_users(db):
    first, second = list(db.users)[:2]
    theirs = next(r for r, v in db.reservations.items() if v["user_id"] == second)
    return first, second, theirs


def test_writes_for_another_user_than_the_signed_in_customer_are_refused():
    db = airline.load_database()
    me, other, theirs = _two_users(db)
    turns = [
        reply.tool_call("get_user_details", user_id=me),  # signs `me` in
        reply.tool_call("send_certificate", user_id=other, amount=5000),
        reply.tool_call("cancel_reservation", reservation_id=theirs, reason="change_of_plan"),
        reply.tool_call("send_certificate", user_id=me, amount=50),
        reply.text("done"),
    ]
    before = db.users[other]["payment_methods"].copy()
    run = harness(db, turns).run("help")
    got = [(r["tool"], r["error_type"]) for r in results(run)]
    assert got == [
        ("get_user_details", None),
        ("send_certificate", "permission_denied"),
        ("cancel_reservation", "permission_denied"),
        ("send_certificate", None),
    ]
    assert db.users[other]["payment_methods"] == before
    assert db.reservations[theirs].get("status") != "cancelled"


def test_the_signed_in_customer_can_be_given_and_tau_bench_mode_restricts_nothing():
    db = airline.load_database()
    me, other, _ = _two_users(db)
    turns = [reply.tool_call("send_certificate", user_id=other, amount=10), reply.text("x")]
    given = hk.Harness(
        tools=airline.tools(db, customer=me),
        model=hk.ScriptedModel(turns),
        gate=hk.Gate(confirm=hk.allow_all),
    ).run("help")
    assert results(given)[0]["error_type"] == "permission_denied"
    turns = [reply.tool_call("get_user_details", user_id=me), *turns]
    replayed = harness(airline.load_database(), turns, mode="tau_bench").run("help")
    assert [r["error_type"] for r in results(replayed)] == [None, None]


def test_the_demo_gate_lets_one_write_through_per_turn(tmp_path):
    from harnesskit.domains.airline import jobs

    user = "mia_li_3668"
    cert = [hk.ToolCall(id=f"c{i}", name="send_certificate", arguments={"user_id": user,
            "amount": 100}) for i in range(3)]  # fmt: skip
    model = hk.ScriptedModel([cert, cert[:1], reply.text("done")])
    row = jobs._run_task(airline.DEMO_TASKS[0], tmp_path, model)
    assert row.finish_reason == "stop"
    got = [(r.payload["tool_call_id"], r.payload["error_type"])
           for r in hk.EventLog.read(row.log_path).of_type("tool.result")]  # fmt: skip
    # turn 1: the first of three writes acts, the other two are refused; turn 2: one acts
    assert [e for _, e in got] == [None, "permission_denied", "permission_denied", None]
