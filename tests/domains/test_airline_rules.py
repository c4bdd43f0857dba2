"""Strict-mode rules for bookings and changes (server-decidable facts)."""

import json

import pytest

import harnesskit as hk
from harnesskit.domains import airline
from harnesskit.domains.airline import rules
from harnesskit.testing import reply


@pytest.fixture(scope="module")
def db():
    return airline.load_database()


PERSON = {"first_name": "A", "last_name": "B", "dob": "2000-01-01"}


def test_booking_passenger_count(db):
    pay = [{"payment_id": "credit_card_4421486", "amount": 1}]
    assert rules.check_booking(db, "mia_li_3668", [PERSON] * 5, pay) is None
    assert "1 to 5 passengers, not 6" in rules.check_booking(db, "mia_li_3668", [PERSON] * 6, pay)
    assert "not 0" in rules.check_booking(db, "mia_li_3668", [], pay)


def test_booking_payment_mix(db):
    two_certificates = [
        {"payment_id": "certificate_7504069", "amount": 1},
        {"payment_id": "certificate_4856383", "amount": 1},
    ]
    assert "at most 1 certificate(s), not 2" in rules.check_booking(
        db, "mia_li_3668", [PERSON], two_certificates
    )
    two_cards = [
        {"payment_id": "credit_card_4421486", "amount": 1},
        {"payment_id": "credit_card_1955700", "amount": 1},
    ]
    assert "credit card" in rules.check_booking(db, "mia_li_3668", [PERSON], two_cards)
    assert (
        rules.check_booking(db, "mia_li_3668", [PERSON], two_cards[:1] + two_certificates[:1])
        is None
    )
    assert rules.check_booking(db, "nobody", [PERSON], two_cards) is None  # the tool says not found


def segments(db, rid):
    return [
        {"flight_number": f["flight_number"], "date": f["date"]}
        for f in db.reservations[rid]["flights"]
    ]


def test_basic_economy_flights_never_change_but_cabin_may(db):
    rid = "FMQD8I" if db.reservations["FMQD8I"]["cabin"] == "basic_economy" else None
    rid = rid or next(r for r, v in db.reservations.items() if v["cabin"] == "basic_economy")
    same = segments(db, rid)
    assert rules.check_flight_change(db, rid, "economy", same) is None
    moved = [dict(same[0], date="2024-05-29")] + same[1:]
    assert "basic economy" in rules.check_flight_change(db, rid, "basic_economy", moved)


def test_trip_must_keep_origin_and_destination(db):
    rid = "4WQ150"  # DFW -> LAX round trip
    assert rules.check_flight_change(db, rid, "business", segments(db, rid)) is None
    outbound_only = segments(db, rid)[:1]
    assert "must return to DFW" in rules.check_flight_change(db, rid, "business", outbound_only)
    return_only = segments(db, rid)[1:]
    assert "start at DFW" in rules.check_flight_change(db, rid, "business", return_only)
    one_way = next(
        r
        for r, v in db.reservations.items()
        if v["flight_type"] == "one_way"
        and v["cabin"] != "basic_economy"
        and len(v["flights"]) == 2
    )
    assert "end at" in rules.check_flight_change(db, one_way, "economy", segments(db, one_way)[:1])
    assert "no flights" in rules.check_flight_change(db, one_way, "economy", [])
    mine = db.copy()
    airline.ops.cancel_reservation(mine, rid)
    assert "is cancelled" in rules.check_flight_change(mine, rid, "business", segments(db, rid))


def test_bags_only_added(db):
    res = db.reservations["4WQ150"]
    total, paid = res["total_baggages"], res["nonfree_baggages"]
    assert rules.check_baggage_change(db, "4WQ150", total + 1, paid + 1) is None
    assert "cannot be removed" in rules.check_baggage_change(db, "4WQ150", total - 1, paid)
    assert rules.check_baggage_change(db, "4WQ150", total, total + 1) == (
        "there cannot be more paid bags than bags"
    )
    assert rules.check_baggage_change(db, "NOPE00", 0, 0) is None


def test_strict_tools_refuse_and_tau_bench_tools_do_not():
    args = {
        "reservation_id": "4WQ150",
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "payment_id": "gift_card_3576581",
    }
    for mode, ok in (("strict", False), ("tau_bench", True)):
        db = airline.load_database()
        h = hk.Harness(
            tools=airline.tools(db, mode=mode),
            model=hk.ScriptedModel(
                [reply.tool_call("update_reservation_baggages", **args), reply.text("x")]
            ),
        )
        (result,) = [e.payload for e in h.run("bags").log.of_type("tool.result")]
        assert result["ok"] is ok
        assert (db.reservations["4WQ150"]["total_baggages"] == 0) is ok
        if not ok:
            assert "cannot be removed" in json.loads(result["content"])["message"]
