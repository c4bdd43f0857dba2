"""The data transport on the airline domain and on the recorded GPT-4o runs (../shared)."""

import json
from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.domains import airline
from harnesskit.testing import reply

RECORDED = (
    Path(__file__).resolve().parents[2].parent
    / "shared/datasets/sierra-research__tau-bench/historical_trajectories/gpt-4o-airline.json"
)
needs_shared = pytest.mark.skipif(
    not RECORDED.is_file(), reason=f"recorded τ-bench runs not at {RECORDED} (dev setup only)"
)
ROUTE = {"origin": "ATL", "destination": "PHX", "date": "2024-05-20"}


def test_a_flight_search_over_10_results_reaches_the_model_as_ref_and_bounded_summary(tmp_path):
    full = json.loads(airline.tools(airline.load_database())["search_onestop_flight"].fn(**ROUTE))
    assert len(full) == 37  # itineraries: more than 10
    model = hk.ScriptedModel([reply.tool_call("search_onestop_flight", id="s1", **ROUTE),
                              reply.text("I found 37 itineraries.")])  # fmt: skip
    h = hk.Harness(airline.tools(airline.load_database()), model, system_prompt=airline.POLICY,
                   log_dir=tmp_path)  # fmt: skip
    run = h.run("One-stop flights from ATL to PHX on May 20, please.", run_id="air")
    request = run.log.of_type("model.request")[1]
    sent = run.log.request_messages(request.event_id)  # exactly what the model received
    tool_message = sent[-1]
    assert (tool_message["role"], tool_message["tool_call_id"]) == ("tool", "s1")
    summary = json.loads(tool_message["content"])
    store = run.transport.store
    assert summary["form"] == "summary" and summary["complete"] is False
    assert summary["artifact_ref"] in store and summary["items"] == 37
    assert summary["why"] == (
        "stored as an artifact because its text is 25028 chars (inline limit 8000) and it holds "
        "an array of 37 items at the top level (inline limit 10); only this summary is shown"
    )
    assert len(tool_message["content"]) <= 2000 < len(json.dumps(full))
    assert summary["shape"]["item"] == {
        "type": "array",
        "items": 2,
        "item": summary["shape"]["item"]["item"],
    }
    assert store.verify_preview(summary["artifact_ref"], summary["preview"])
    # the bounded summary holds one preview, not the array: at most the first itinerary's legs
    assert "HAT" not in json.dumps({k: v for k, v in summary.items() if k != "preview"})
    assert summary["preview"]["text"].count('"flight_number": "HAT') <= 2
    text = run.log.request_text(request.event_id)
    assert not any(json.dumps(pair) in text for pair in full[1:])
    assert store.value(summary["artifact_ref"]) == full  # the whole is kept, exactly
    assert [r.tool_names[-1] for r in model.requests] == [
        "transfer_to_human_agents",
        "artifact_slice",
    ]


def test_an_airline_booking_with_bindings_delivers_the_exact_values():
    db = airline.load_database()
    art = (
        "art_"
        + __import__("hashlib")
        .sha256(
            airline.tools(airline.load_database())["search_onestop_flight"].fn(**ROUTE).encode()
        )
        .hexdigest()[:12]
    )
    user = "u1"
    pair = 6  # HAT102 + HAT095, the cheapest economy itinerary
    leg = lambda i: {"flight_number": {"$bind": f"{art}#/{pair}/{i}/flight_number"},  # noqa: E731
                     "date": {"$bind": f"{art}#/{pair}/{i}/date"}}  # fmt: skip
    model = hk.ScriptedModel([
        reply.tool_call("get_user_details", id=user, user_id="mei_hernandez_8984"),
        reply.tool_call("search_onestop_flight", id="s1", **ROUTE),
        reply.tool_call("artifact_slice", ref=art, pointer="", start=pair, stop=pair + 1),
        reply.tool_call(
            "book_reservation", user_id="mei_hernandez_8984",  # the customer typed it: no source
            origin="ATL", destination="PHX", flight_type="one_way", cabin="economy",
            flights=[leg(0), leg(1)],
            passengers=[{"first_name": {"$bind": f"{user}#/name/first_name"},
                         "last_name": {"$bind": f"{user}#/name/last_name"},
                         "dob": {"$bind": f"{user}#/dob"}}],
            payment_methods=[
                {"payment_id": {"$bind": f"{user}#/payment_methods/gift_card_5309492/id"},
                 "amount": 98},
                {"payment_id": {"$bind": f"{user}#/payment_methods/credit_card_2140654/id"},
                 "amount": 113}],
            total_baggages=2, nonfree_baggages=0, insurance="no"),
        reply.text("Booked."),
    ])  # fmt: skip
    h = hk.Harness(airline.tools(db), model, gate=hk.Gate(confirm=hk.allow_all))
    run = h.run("I'm mei_hernandez_8984: the cheapest one-stop ATL to PHX on 2024-05-20, please.")
    sliced = json.loads(run.log.of_type("tool.result")[2].payload["content"])
    assert sliced["part"] == "items 6–6 of 37"
    assert [leg["flight_number"] for leg in sliced["items"][0]] == ["HAT102", "HAT095"]
    booked = run.log.of_type("tool.result")[3].payload
    assert booked["ok"] is True, booked["content"]
    body = json.loads(booked["content"])
    assert [(f["flight_number"], f["date"]) for f in body["flights"]] == [
        ("HAT102", "2024-05-20"), ("HAT095", "2024-05-21")]  # fmt: skip
    assert body["passengers"] == [
        {"first_name": "Mei", "last_name": "Hernandez", "dob": "1981-01-11"}
    ]
    audit = hk.transport_audit(run)
    assert audit.counts["ids_bound"] == 9 and audit.counts["from_tool"] == 0
    assert audit.counts["from_user"] == 2  # the user id, typed from the customer's message


@needs_shared
def test_replaying_recorded_runs_with_externalized_results_reproduces_their_outputs():
    runs = {(r.task_id, r.trial): r for r in airline.load_recorded_runs(RECORDED)}
    for key, tool in [((4, 2), "search_onestop_flight")]:
        result = airline.replay_run(runs[key])
        (created,) = result.log.of_type("artifact.created")
        assert created.payload["source"]["tool"] == tool
        assert result.agrees
        assert {d.cause for d in result.divergences} <= {
            "address field renamed (province -> state) after the recording"
        }


@needs_shared
def test_run_163s_profile_stays_inline_because_a_summary_would_not_pay():
    """Real run 163 (task 13, trial 3): an 843-char get_user_details result lists 11
    reservations; its summary would be about twice as long and hold fewer ids."""
    runs = {(r.task_id, r.trial): r for r in airline.load_recorded_runs(RECORDED)}
    result = airline.replay_run(runs[(13, 3)])
    assert not result.log.of_type("artifact.created")
    profile = next(
        e for e in result.log.of_type("tool.result") if e.payload["tool"] == "get_user_details"
    )
    body = json.loads(profile.payload["content"])
    assert len(body["reservations"]) == 11 and len(profile.payload["content"]) < 1000
    assert "gift_card" in profile.payload["content"]  # the balances stay in view
    assert result.agrees


@needs_shared
def test_audit_of_recorded_gpt4o_runs_finds_the_mixed_up_and_the_invented_payment_ids():
    runs = {(r.task_id, r.trial): r for r in airline.load_recorded_runs(RECORDED)}
    audits = {k: hk.transport_audit(airline.replay_run(runs[k], redact=False).log)
              for k in [(20, 1), (26, 0)]}  # fmt: skip
    mixed = [r for r in audits[(20, 1)].rows if r["status"] == "altered"]
    assert [(r["tool"], r["path"], r["value"], r["closest"]) for r in mixed] == [
        ("update_reservation_flights", "/payment_id", "credit_card_5634230", "gift_card_5634230")
    ]
    assert mixed[0]["source"].startswith("tool result TOOL-")  # the reservation's payment history
    assert mixed[0]["source"].endswith("(get_reservation_details)")
    invented = [r for r in audits[(26, 0)].rows if r["status"] == "invented"]
    assert [(r["value"], r["source"]) for r in invented] == [("credit_card_7334", "nowhere")]
    for audit in audits.values():
        c = audit.counts
        assert c["ids_bound"] == 0 and c["from_tool"] > 0 and c["from_user"] > 0
        assert audit.verdict.startswith("leaky — ")


def test_reading_an_artifact_page_by_page_is_not_flagged_as_transport():
    task = next(t for t in airline.DEMO_TASKS if t.name == "book-cheapest-one-stop")
    h = hk.Harness(airline.tools(airline.load_database()), airline.agent_model(),
                   system_prompt=airline.POLICY, gate=hk.Gate(confirm=hk.allow_all),
                   limits=hk.Limits(max_steps=20))  # fmt: skip
    run = h.run(task.user_message)
    slices = [e for e in run.log.of_type("tool.call") if e.payload["tool"] == "artifact_slice"]
    assert len(slices) == 4 and run.final_text.startswith("Your reservation HATHAT is booked")
    mine = hk.transport_audit(run)
    assert not [r for r in mine.rows if r["tool"] == "artifact_slice"]
    assert mine.counts["from_tool"] == 4  # flight numbers and payment ids, typed by the agent
    report = hk.audit(run)  # the four-point audit agrees: reads are not transport
    assert report.counts()["two_forms"] == 0
    assert not [f for f in report.findings if f.tool == "artifact_slice"]
