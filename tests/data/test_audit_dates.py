"""The transport audit covers dates (explicit and derived) and classes ids by domain shapes."""

from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.domains import airline
from harnesskit.testing import reply

RECORDED = (
    Path(__file__).parents[2]
    / "../shared/datasets/sierra-research__tau-bench/historical_trajectories/gpt-4o-airline.json"
)


@hk.tool
def get_reservation_details(reservation_id: str) -> dict:
    """Read a reservation."""
    return {"reservation_id": reservation_id, "flights": [{"flight_number": "HAT001"}]}


@hk.tool
def search_direct_flight(origin: str, destination: str, date: str) -> list:
    """Search flights."""
    return []


def audited(today=None, **kw):
    model = hk.ScriptedModel(
        [
            reply.tool_call("get_reservation_details", reservation_id="BOH180"),
            reply.tool_call(
                "search_direct_flight", origin="JFK", destination="SEA", date="2024-05-16"
            ),
            reply.tool_call(
                "search_direct_flight", origin="JFK", destination="SEA", date="2024-05-20"
            ),
            reply.tool_call(
                "search_direct_flight", origin="JFK", destination="SEA", date="2024-06-02"
            ),
            reply.text("done"),
        ]
    )
    run = hk.Harness([get_reservation_details, search_direct_flight], model).run(
        "Reservation BOH180: move me to tomorrow, or else May 20th, JFK to SEA."
    )
    return hk.transport_audit(run, today=today, **kw)


def test_boh180_is_a_reservation_under_the_airline_shapes():
    rows = {r["value"]: r for r in audited(patterns=airline.VALUE_SHAPES).rows}
    assert rows["BOH180"]["kind"] == "reservation_id" and rows["BOH180"]["status"] == "exact"
    assert rows["JFK"]["kind"] == "airport"


def test_dates_are_audited_explicit_and_derived():
    audit = audited(today="2024-05-15")
    dates = {r["value"]: r for r in audit.rows if r["kind"] == "date"}
    assert dates["2024-05-16"]["status"] == "derived"
    assert dates["2024-05-16"]["how"] == "derived from 'tomorrow' (today 2024-05-15)"
    assert dates["2024-05-20"]["status"] == "derived" and "May 20th" in dates["2024-05-20"]["how"]
    assert dates["2024-05-20"]["source"].startswith("user message")
    assert dates["2024-06-02"]["status"] == "invented"
    c = audit.counts
    assert (c["dates_typed"], c["dates_derived"], c["dates_invented"]) == (3, 2, 1)
    # without today only the date named in words is derived
    plain = {r["value"]: r["status"] for r in audited().rows if r["kind"] == "date"}
    assert plain == {"2024-05-16": "invented", "2024-05-20": "derived", "2024-06-02": "invented"}


@pytest.mark.skipif(not RECORDED.is_file(), reason=f"recorded runs not at {RECORDED}")
def test_a_real_run_has_its_dates_audited():
    run = airline.load_recorded_runs(RECORDED, limit=1)[0]  # t00-r0: "May 20th"
    audit = hk.transport_audit(
        airline.replay_run(run).log, patterns=airline.VALUE_SHAPES, today="2024-05-15"
    )
    dates = [r for r in audit.rows if r["kind"] == "date"]
    assert dates and all(r["status"] in ("exact", "derived") for r in dates)
    assert any(r["status"] == "derived" for r in dates)
