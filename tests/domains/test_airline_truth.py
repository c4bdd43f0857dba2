from datetime import UTC, datetime, timedelta

import pytest

from harnesskit.domains import airline
from harnesskit.domains.airline import ops, truth
from harnesskit.errors import UsageError

# Reservations picked from the shipped database for each combination of facts (at the
# benchmark's now, 2024-05-15 15:00 EST):
ECONOMY_PLAIN = "VAAOXJ"  # economy, no insurance, booked long ago, nothing flown or cancelled
ECONOMY_INSURED = "CDXEBS"  # economy with insurance
BUSINESS = "4WQ150"  # business, no insurance
RECENT_ECONOMY = "JEPRZB"  # economy, no insurance, booked within the last 24 h
AIRLINE_CANCELLED = "521ARH"  # economy, no insurance, one flight cancelled by the airline
FLOWN_BASIC = "DLCYQ9"  # basic economy, a segment already flown
FLOWN_BUSINESS = "JECMMV"  # business, a segment already flown


@pytest.fixture(scope="module")
def db():
    return airline.load_database()


def decide(db, rid, reason=None, now=None):
    return airline.decide_cancellation(airline.cancellation_facts(db, rid, now=now), reason)


def hits(decision):
    return {c.rule for c in decision.checks if c.hit}


def test_facts_come_from_database_and_clock(db):
    facts = airline.cancellation_facts(db, BUSINESS)
    assert facts.cabin == "business"
    assert not facts.has_insurance
    assert facts.now == airline.BENCHMARK_NOW == datetime(2024, 5, 15, 20, 0, tzinfo=UTC)
    assert facts.created_at == datetime(2024, 5, 2, 3, 10, 19, tzinfo=airline.EST)
    assert [s.status for s in facts.segments] == ["available", "available"]
    assert airline.cancellation_facts(db, "NOPE00") is None
    assert facts.to_dict()["flown_segments"] == []


def test_no_rule_allows_plain_economy(db):
    decision = decide(db, ECONOMY_PLAIN, "change_of_plan")
    assert (decision.allowed, decision.rule) == (False, "no_rule_allows")
    assert hits(decision) == set()
    assert "no insurance" in decision.explanation


def test_within_24h_hit_and_not_hit(db):
    decision = decide(db, RECENT_ECONOMY, "change_of_plan")
    assert (decision.allowed, decision.rule) == (True, "within_24h_of_booking")
    later = airline.BENCHMARK_NOW + timedelta(days=2)
    decision = decide(db, RECENT_ECONOMY, "change_of_plan", now=later)
    assert "within_24h_of_booking" not in hits(decision)
    assert not decision.allowed


def test_airline_cancelled_hit_and_not_hit(db):
    decision = decide(db, AIRLINE_CANCELLED, "other")
    assert (decision.allowed, decision.rule) == (True, "airline_cancelled_flight")
    assert "airline_cancelled_flight" not in hits(
        decide(db, ECONOMY_PLAIN, "airline_cancelled_flight")
    )
    # the user saying so does not make it true
    assert not decide(db, ECONOMY_PLAIN, "airline_cancelled_flight").allowed


def test_business_hit_and_not_hit(db):
    decision = decide(db, BUSINESS, "change_of_plan")
    assert (decision.allowed, decision.rule) == (True, "business_class")
    assert "business_class" not in hits(decide(db, ECONOMY_PLAIN))


@pytest.mark.parametrize(
    ("rid", "reason", "allowed"),
    [
        (ECONOMY_INSURED, "health", True),
        (ECONOMY_INSURED, "weather", True),
        (ECONOMY_INSURED, "change_of_plan", False),
        (ECONOMY_INSURED, None, False),
        (ECONOMY_PLAIN, "health", False),
    ],
)
def test_insurance_covers_reason(db, rid, reason, allowed):
    decision = decide(db, rid, reason)
    assert decision.allowed is allowed
    assert ("insurance_covers_reason" in hits(decision)) is allowed


def test_flown_segment_denies_even_business(db):
    for rid in (FLOWN_BASIC, FLOWN_BUSINESS):
        decision = decide(db, rid, "health")
        assert (decision.allowed, decision.rule) == (False, "segment_flown")
    assert "business_class" in hits(decide(db, FLOWN_BUSINESS))
    assert "segment_flown" not in hits(decide(db, BUSINESS))


def test_clock_makes_a_future_segment_flown(db):
    first = db.reservations[BUSINESS]["flights"][0]  # HAT170 on 2024-05-22
    departure = airline.cancellation_facts(db, BUSINESS).segments[0].departure
    assert departure.date().isoformat() == first["date"]
    after = departure + timedelta(minutes=1)
    decision = decide(db, BUSINESS, now=after)
    assert (decision.allowed, decision.rule) == (False, "segment_flown")
    assert decide(db, BUSINESS, now=departure - timedelta(minutes=1)).allowed


def test_already_cancelled(db):
    mine = db.copy()
    ops.cancel_reservation(mine, BUSINESS)
    decision = decide(mine, BUSINESS)
    assert (decision.allowed, decision.rule) == (False, "already_cancelled")


def test_naive_clock_is_refused(db):
    with pytest.raises(UsageError, match="timezone-aware"):
        airline.cancellation_facts(db, BUSINESS, now=datetime(2024, 5, 15, 15, 0))  # noqa: DTZ001


def test_mismatching_claims_are_reported_and_change_nothing(db):
    facts = airline.cancellation_facts(db, ECONOMY_PLAIN)
    claims = {"expected_cabin_class": "business", "expected_has_insurance": True}
    mismatches = airline.check_claims(facts, **claims)
    assert [m.to_dict() for m in mismatches] == [
        {
            "field": "cabin_class",
            "claimed": "business",
            "actual": "economy",
            "subject": ECONOMY_PLAIN,
        },
        {"field": "has_insurance", "claimed": True, "actual": False, "subject": ECONOMY_PLAIN},
    ]
    assert (
        airline.check_claims(facts, expected_cabin_class="economy", expected_has_insurance=False)
        == ()
    )
    mine = db.copy()
    before = mine.state_hash()
    # the claim would allow it (business), the truth denies it: still denied, nothing changed
    outcome = airline.cancel(mine, ECONOMY_PLAIN, reason="change_of_plan", **claims)
    assert not outcome.cancelled
    assert outcome.decision.rule == "no_rule_allows"
    assert outcome.mismatches == mismatches
    assert outcome.output.startswith("Error: cannot cancel VAAOXJ")
    assert mine.state_hash() == before
    # and a false claim never blocks an allowed cancellation
    outcome = airline.cancel(
        mine, BUSINESS, reason="change_of_plan", expected_cabin_class="economy"
    )
    assert outcome.cancelled
    assert [m.field for m in outcome.mismatches] == ["cabin_class"]
    assert mine.reservations[BUSINESS]["status"] == "cancelled"


def test_modes(db):
    strict, bench = db.copy(), db.copy()
    denied = airline.cancel(strict, FLOWN_BASIC, reason="health")
    assert not denied.cancelled
    assert "status" not in strict.reservations[FLOWN_BASIC]
    reproduced = airline.cancel(bench, FLOWN_BASIC, reason="health", mode="tau_bench")
    assert reproduced.cancelled
    assert not reproduced.decision.allowed
    assert reproduced.output == ops.cancel_reservation(db.copy(), FLOWN_BASIC)
    assert airline.cancel(bench, "NOPE00").output == "Error: reservation not found"
    with pytest.raises(UsageError, match="mode"):
        airline.cancel(bench, BUSINESS, mode="lenient")
    with pytest.raises(UsageError, match="reason"):
        airline.cancel(bench, BUSINESS, reason="bored")


def test_parse_est():
    assert truth.parse_est("2024-05-15T15:00:00") == airline.BENCHMARK_NOW
    assert truth.parse_est("2024-05-15T20:00:00+00:00") == airline.BENCHMARK_NOW
    with pytest.raises(UsageError):
        truth.parse_est("yesterday")
    assert airline.benchmark_clock() == airline.BENCHMARK_NOW
