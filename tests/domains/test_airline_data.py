import json

import pytest

from harnesskit.domains import airline
from harnesskit.domains.airline import ops
from harnesskit.errors import UsageError


def test_each_load_is_a_private_copy():
    first = airline.load_database()
    second = airline.load_database()
    first.users["mia_li_3668"]["membership"] = "platinum"
    del first.reservations["4WQ150"]
    assert second.users["mia_li_3668"]["membership"] == "gold"
    assert "4WQ150" in second.reservations
    assert airline.load_database().users["mia_li_3668"]["membership"] == "gold"


def test_database_sizes_and_repr():
    db = airline.load_database()
    assert (len(db.flights), len(db.reservations), len(db.users)) == (300, 2000, 500)
    assert repr(db) == "AirlineDB(flights=300, reservations=2000, users=500, changed=0)"


def test_state_hash_matches_the_tuple_text_definition():
    # τ-bench's definition: sha256 of str() of the data with dicts as sorted (key, value) tuples
    def as_tuples(value):
        if isinstance(value, dict):
            return tuple((k, as_tuples(v)) for k, v in sorted(value.items()))
        if isinstance(value, list):
            return tuple(as_tuples(v) for v in value)
        return value

    sample = {"b": [1, {"x": 2.0}], "a": {"only": "one"}, "c": [], "d": ["solo"]}
    assert airline.canonical_text(sample) == str(as_tuples(sample))
    db = airline.load_database()
    assert db.state_hash() == db.state_hash(full=True)
    assert db.state_hash(full=True) == airline.state_hash(db.data)


def test_int_and_float_amounts_hash_differently():
    assert airline.state_hash({"amount": 100}) != airline.state_hash({"amount": 100.0})


def test_incremental_hash_follows_every_kind_of_write():
    db = airline.load_database()
    fresh = db.state_hash()
    calls = [
        ("send_certificate", {"user_id": "mia_li_3668", "amount": 150}),
        ("cancel_reservation", {"reservation_id": "4WQ150"}),
        (
            "update_reservation_baggages",
            {
                "reservation_id": "NO6JO3",
                "total_baggages": 5,
                "nonfree_baggages": 3,
                "payment_id": "credit_card_4421486",
            },
        ),
        (
            "update_reservation_passengers",
            {
                "reservation_id": "4WQ150",
                "passengers": [{"first_name": "A", "last_name": "B", "dob": "2000-01-01"}] * 3,
            },
        ),
    ]
    for name, args in calls:
        ops.dispatch(db, name, args)
        assert db.state_hash() == db.state_hash(full=True), name
    assert db.state_hash() != fresh
    assert ("users", "mia_li_3668") in db.changed


def test_unmarked_direct_edit_needs_full_hash():
    db = airline.load_database()
    db.reservations["4WQ150"]["insurance"] = "yes"
    assert db.state_hash(full=True) != db.state_hash()  # documented: mark_changed or full=True
    db.mark_changed("reservations", "4WQ150")
    assert db.state_hash(full=True) == db.state_hash()
    with pytest.raises(UsageError, match="unknown section"):
        db.mark_changed("planes", "x")


def test_copy_is_independent():
    db = airline.load_database()
    twin = db.copy()
    ops.cancel_reservation(twin, "4WQ150")
    assert "status" not in db.reservations["4WQ150"]
    assert twin.state_hash() == twin.state_hash(full=True) != db.state_hash()


def test_recording_time_address_key_keeps_field_order():
    old = airline.load_database(address_key="province")
    new = airline.load_database()
    old_address = old.users["mia_li_3668"]["address"]
    new_address = new.users["mia_li_3668"]["address"]
    assert list(old_address) == ["address1", "address2", "city", "country", "province", "zip"]
    assert list(new_address) == ["address1", "address2", "city", "country", "state", "zip"]
    assert old_address["province"] == new_address["state"] == "TX"
    assert old.state_hash() == old.state_hash(full=True) != new.state_hash()
    with pytest.raises(UsageError, match="address_key"):
        airline.load_database(address_key="county")


def test_missing_data_dir_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="flights.json"):
        airline.load_database(tmp_path)


def test_data_dir_from_environment(tmp_path, monkeypatch):
    source = airline.default_data_dir()
    for name in ("flights", "reservations", "users"):
        data = json.loads((source / f"{name}.json").read_text())
        if name == "users":
            data = {"mia_li_3668": data["mia_li_3668"]}
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    monkeypatch.setenv("HARNESSKIT_AIRLINE_DATA", str(tmp_path))
    assert airline.default_data_dir() == tmp_path
    assert list(airline.load_database().users) == ["mia_li_3668"]


def test_shipped_files_unchanged_after_runs():
    before = airline.shipped_files_digest()
    assert before["flights"].startswith("444d7565c684")
    assert before["reservations"].startswith("1cf0bbc58ad9")
    assert before["users"].startswith("bd264e2a31e0")
    db = airline.load_database()
    airline.cancel(db, "4WQ150", reason="other")
    ops.dispatch(db, "send_certificate", {"user_id": "mia_li_3668", "amount": 100})
    ops.dispatch(db, "cancel_reservation", {"reservation_id": "NO6JO3"})
    assert airline.shipped_files_digest() == before


def test_incremental_hash_matches_full_after_edits_anywhere():
    # the hash resumes from a saved state before the first change: edits at the start, the
    # end, in the middle, additions before/after every key and deletions must all agree
    import random

    rng = random.Random(7)
    for trial in range(12):
        db = airline.load_database()
        for _ in range(rng.randint(1, 4)):
            name = rng.choice(["flights", "reservations", "users"])
            section = getattr(db, name)
            keys = sorted(section)
            op = rng.choice(["edit", "add", "delete", "edit-first", "edit-last"])
            if op == "add":
                key = rng.choice(["", "0", "ZZZZZZ", keys[rng.randrange(len(keys))] + "x"])
                section[key] = {"added": trial}
            elif op == "delete":
                key = rng.choice([keys[0], keys[-1], keys[rng.randrange(len(keys))]])
                del section[key]
            else:
                key = {"edit-first": keys[0], "edit-last": keys[-1]}.get(op) or rng.choice(keys)
                section[key] = {"edited": trial, "was": len(str(section[key]))}
            db.mark_changed(name, key)
            assert db.state_hash() == db.state_hash(full=True), (trial, name, op, key)
