import json

import pytest

from harnesskit.domains import airline
from harnesskit.domains.airline import ops


@pytest.fixture
def db():
    return airline.load_database()


def one_way_jfk_sea(**overrides):
    """Task 0's reference booking: HAT136 + HAT039 in economy, 152 + 103 = 255."""
    args = {
        "user_id": "mia_li_3668",
        "origin": "JFK",
        "destination": "SEA",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [
            {"flight_number": "HAT136", "date": "2024-05-20"},
            {"flight_number": "HAT039", "date": "2024-05-20"},
        ],
        "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
        "payment_methods": [
            {"payment_id": "certificate_7504069", "amount": 250},
            {"payment_id": "credit_card_4421486", "amount": 5},
        ],
        "total_baggages": 3,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    args.update(overrides)
    return args


def test_reads_and_their_error_texts(db):
    user = json.loads(ops.get_user_details(db, "mia_li_3668"))
    assert user["reservations"] == ["NO6JO3", "AIXC49", "HKEG34"]
    assert ops.get_user_details(db, "nobody") == "Error: user not found"
    assert json.loads(ops.get_reservation_details(db, "4WQ150"))["cabin"] == "business"
    # the benchmark's wording for a missing reservation, kept on purpose
    assert ops.get_reservation_details(db, "ZZZZZZ") == "Error: user not found"
    airports = json.loads(ops.list_all_airports(db))
    assert len(airports) == 20
    assert airports["LGA"] == "LaGuardia"


def test_direct_search_lists_only_available_flights(db):
    rows = json.loads(ops.search_direct_flight(db, "JFK", "SEA", "2024-05-20"))
    assert [r["flight_number"] for r in rows] == ["HAT069", "HAT083"]
    assert rows[0]["prices"] == {"basic_economy": 51, "economy": 121, "business": 239}
    assert "dates" not in rows[0]
    assert rows[0]["status"] == "available"
    assert ops.search_direct_flight(db, "JFK", "SEA", "2024-05-01") == "[]"  # all landed


def test_onestop_search_next_day_connection_and_kept_quirks(db):
    pairs = json.loads(ops.search_onestop_flight(db, "SEA", "SFO", "2024-05-20"))
    overnight = [p for p in pairs if p[0]["flight_number"] == "HAT021"]
    assert [(p[1]["flight_number"], p[1]["date"]) for p in overnight] == [("HAT023", "2024-05-21")]
    # second leg's prices are those of the first leg's date (benchmark behaviour)
    assert overnight[0][1]["prices"] == db.flights["HAT023"]["dates"]["2024-05-20"]["prices"]
    # the next day of an early-May date is unpadded ("2024-05-6"), so no overnight pair exists
    early = json.loads(ops.search_onestop_flight(db, "SEA", "SFO", "2024-05-05"))
    assert not [p for p in early if "+1" in p[0]["scheduled_arrival_time_est"]]


def test_book_prices_charges_and_stores(db):
    out = json.loads(ops.book_reservation(db, **one_way_jfk_sea()))
    assert out["reservation_id"] == "HATHAT"
    assert out["created_at"] == "2024-05-15T15:00:00"
    assert [(f["flight_number"], f["price"], f["origin"]) for f in out["flights"]] == [
        ("HAT136", 152, "JFK"),
        ("HAT039", 103, "ATL"),
    ]
    user = db.users["mia_li_3668"]
    assert "certificate_7504069" not in user["payment_methods"]  # used certificates vanish
    assert user["reservations"][-1] == "HATHAT"
    assert db.reservations["HATHAT"] == out


def test_book_with_insurance_bags_and_gift_card(db):
    # 2 passengers x (152 + 103) + 2 x 30 insurance + 2 x 50 bags = 670
    args = one_way_jfk_sea(
        user_id="mei_hernandez_8984",
        passengers=[
            {"first_name": "Mei", "last_name": "Hernandez", "dob": "1981-01-01"},
            {"first_name": "Ann", "last_name": "Lee", "dob": "1990-02-02"},
        ],
        payment_methods=[
            {"payment_id": "gift_card_5309492", "amount": 90},
            {"payment_id": "credit_card_2140654", "amount": 580},
        ],
        insurance="yes",
        nonfree_baggages=2,
    )
    out = json.loads(ops.book_reservation(db, **args))
    assert sum(p["amount"] for p in out["payment_history"]) == 670
    assert db.users["mei_hernandez_8984"]["payment_methods"]["gift_card_5309492"]["amount"] == 8


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"user_id": "nobody"}, "Error: user not found"),
        (
            {"flights": [{"flight_number": "HAT999", "date": "2024-05-20"}]},
            "Error: flight HAT999 not found",
        ),
        (
            {"flights": [{"flight_number": "HAT136", "date": "2024-06-20"}]},
            "Error: flight HAT136 not found on date 2024-06-20",
        ),
        (
            {"flights": [{"flight_number": "HAT136", "date": "2024-05-01"}]},
            "Error: flight HAT136 not available on date 2024-05-01",
        ),
        (
            {"payment_methods": [{"payment_id": "credit_card_0", "amount": 255}]},
            "Error: payment method credit_card_0 not found",
        ),
        (
            {"payment_methods": [{"payment_id": "certificate_4856383", "amount": 255}]},
            "Error: not enough balance in payment method certificate_4856383",
        ),
        (
            {"payment_methods": [{"payment_id": "credit_card_4421486", "amount": 250}]},
            "Error: payment amount does not add up, total price is 255, but paid 250",
        ),
    ],
)
def test_failed_booking_changes_nothing(db, overrides, error):
    assert ops.book_reservation(db, **one_way_jfk_sea(**overrides)) == error
    assert db.data == airline.load_database().data
    assert not db.changed


def test_not_enough_seats(db):
    seats = db.flights["HAT136"]["dates"]["2024-05-20"]["available_seats"]["economy"]
    people = [
        {"first_name": "P", "last_name": str(i), "dob": "2000-01-01"} for i in range(seats + 1)
    ]
    assert ops.book_reservation(db, **one_way_jfk_sea(passengers=people)) == (
        "Error: not enough seats on flight HAT136"
    )


def test_new_reservation_ids_and_the_fourth_booking(db):
    cheap = {"payment_methods": [{"payment_id": "credit_card_4421486", "amount": 255}]}
    ids = [
        json.loads(ops.book_reservation(db, **one_way_jfk_sea(**cheap)))["reservation_id"]
        for _ in range(3)
    ]
    assert ids == ["HATHAT", "HATHAU", "HATHAV"]
    assert ops.new_reservation_id(db) == "HATHAV"  # the benchmark would overwrite
    assert ops.new_reservation_id(db, extend=True) == "HATHAW"


def test_cancel_appends_refunds_and_keeps_balances(db):
    balance = db.users["chen_jackson_3290"]["payment_methods"]["gift_card_3576581"]["amount"]
    out = json.loads(ops.cancel_reservation(db, "4WQ150"))
    assert out["status"] == "cancelled"
    assert out["payment_history"] == [
        {"payment_id": "gift_card_3576581", "amount": 4986},
        {"payment_id": "gift_card_3576581", "amount": -4986},
    ]
    assert (
        db.users["chen_jackson_3290"]["payment_methods"]["gift_card_3576581"]["amount"] == balance
    )
    assert ops.cancel_reservation(db, "ZZZZZZ") == "Error: reservation not found"


def test_update_flights_keeps_old_price_and_charges_difference(db):
    res = db.reservations["4WQ150"]  # business DFW-LAX round trip, 3 passengers, 883 + 779
    kept, changed = res["flights"][0], res["flights"][1]
    new_day = db.flights[changed["flight_number"]]["dates"]["2024-05-27"]
    assert new_day["status"] == "available"
    out = json.loads(
        ops.update_reservation_flights(
            db,
            "4WQ150",
            "business",
            [
                {"flight_number": kept["flight_number"], "date": kept["date"]},
                {"flight_number": changed["flight_number"], "date": "2024-05-27"},
            ],
            "gift_card_3576581",
        )
    )
    diff = (new_day["prices"]["business"] - 779) * 3
    assert out["flights"][0]["price"] == 883
    assert out["flights"][1]["price"] == new_day["prices"]["business"]
    assert out["payment_history"][-1] == {"payment_id": "gift_card_3576581", "amount": diff}
    assert (
        db.users["chen_jackson_3290"]["payment_methods"]["gift_card_3576581"]["amount"]
        == 245 - diff
    )


def test_downgrade_refunds_to_gift_card_and_cabin_field_is_kept(db):
    res = db.reservations["4WQ150"]
    flights = [{"flight_number": f["flight_number"], "date": f["date"]} for f in res["flights"]]
    economy = sum(
        db.flights[f["flight_number"]]["dates"][f["date"]]["prices"]["economy"] for f in flights
    )
    out = json.loads(
        ops.update_reservation_flights(db, "4WQ150", "economy", flights, "gift_card_3576581")
    )
    refund = (economy - (883 + 779)) * 3
    assert refund < 0
    assert out["payment_history"][-1]["amount"] == refund
    assert (
        db.users["chen_jackson_3290"]["payment_methods"]["gift_card_3576581"]["amount"]
        == 245 - refund
    )
    assert out["cabin"] == "business"  # benchmark v1 never stored the new cabin
    strict = airline.load_database()
    fixed = json.loads(
        ops.update_reservation_flights(
            strict, "4WQ150", "economy", flights, "gift_card_3576581", update_cabin=True
        )
    )
    assert fixed["cabin"] == "economy"


def test_update_payment_errors(db):
    flights = [
        {"flight_number": f["flight_number"], "date": f["date"]}
        for f in db.reservations["NO6JO3"]["flights"]
    ]
    cabin = db.reservations["NO6JO3"]["cabin"]
    assert ops.update_reservation_flights(db, "NO6JO3", cabin, flights, "credit_card_0") == (
        "Error: payment method not found"
    )
    assert ops.update_reservation_flights(db, "NO6JO3", cabin, flights, "certificate_7504069") == (
        "Error: certificate cannot be used to update reservation"
    )
    assert (
        ops.update_reservation_flights(db, "NOPE00", cabin, flights, "x")
        == "Error: reservation not found"
    )
    # unchanged itinerary: nothing to pay, nothing logged
    before = list(db.reservations["NO6JO3"]["payment_history"])
    ops.update_reservation_flights(db, "NO6JO3", cabin, flights, "credit_card_4421486")
    assert db.reservations["NO6JO3"]["payment_history"] == before


def test_baggage_fee_only_for_added_nonfree_bags(db):
    res = db.reservations["4WQ150"]
    base = res["nonfree_baggages"]
    out = json.loads(
        ops.update_reservation_baggages(db, "4WQ150", 8, base + 2, "gift_card_3576581")
    )
    assert out["payment_history"][-1] == {"payment_id": "gift_card_3576581", "amount": 100}
    assert db.users["chen_jackson_3290"]["payment_methods"]["gift_card_3576581"]["amount"] == 145
    history = list(out["payment_history"])
    out = json.loads(ops.update_reservation_baggages(db, "4WQ150", 1, 0, "gift_card_3576581"))
    assert out["payment_history"] == history
    assert out["nonfree_baggages"] == 0
    assert ops.update_reservation_baggages(db, "4WQ150", 9, 9, "gift_card_3576581") == (
        "Error: gift card balance is not enough"
    )


def test_update_passengers_requires_same_count(db):
    people = [{"first_name": "A", "last_name": "B", "dob": "2000-01-01"}]
    assert ops.update_reservation_passengers(db, "4WQ150", people) == (
        "Error: number of passengers does not match"
    )
    out = json.loads(ops.update_reservation_passengers(db, "4WQ150", people * 3))
    assert out["passengers"] == people * 3


def test_certificates_get_three_fixed_ids_then_nothing(db):
    texts = [ops.send_certificate(db, "mia_li_3668", 50) for _ in range(4)]
    assert texts[:3] == [
        f"Certificate certificate_{n} added to user mia_li_3668 with amount 50."
        for n in (3221322, 3221323, 3221324)
    ]
    assert texts[3] is None
    assert db.users["mia_li_3668"]["payment_methods"]["certificate_3221322"] == {
        "source": "certificate",
        "amount": 50,
        "id": "certificate_3221322",
    }
    assert ops.send_certificate(db, "nobody", 50) == "Error: user not found"


@pytest.mark.parametrize(
    ("expression", "text"),
    [
        ("2 + 2", "4.0"),
        ("(152 + 103) * 2 - 10 / 4", "507.5"),
        ("-3 * 38", "-114.0"),
        ("1 / 3", "0.33"),
        ("2 ** 10", "1024.0"),
        ("1 / 0", "Error: division by zero"),
        ("import os", "Error: invalid characters in expression"),
        ("2 ** 99999", "Error: exponent 99999 is too large (limit 1000)"),
    ],
)
def test_calculate(db, expression, text):
    assert ops.calculate(db, expression) == text


def test_calculate_syntax_error_is_text(db):
    assert ops.calculate(db, "2 +").startswith("Error: ")


def test_think_and_transfer(db):
    assert ops.think(db, "hmm") == ""
    assert ops.transfer_to_human_agents(db, "summary") == "Transfer successful"


def test_dispatch_never_raises(db):
    assert ops.dispatch(db, "fly_me", {}) == "Unknown action fly_me"
    assert ops.dispatch(db, "get_user_details", {}) == (
        "Error: get_user_details is missing required argument(s) user_id"
    )
    assert ops.dispatch(db, "think", {"thought": "x", "mood": 1}) == (
        "Error: think got unexpected argument(s) mood"
    )
    # options of the Python functions are not benchmark arguments
    assert ops.dispatch(
        db, "book_reservation", {**one_way_jfk_sea(), "extend_ids": True}
    ).startswith("Error: book_reservation got unexpected")
    assert ops.dispatch(db, "book_reservation", one_way_jfk_sea(cabin="first")) == "Error: 'first'"
    assert ops.dispatch(db, "list_all_airports", None).startswith('{"SFO"')
