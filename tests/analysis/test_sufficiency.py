"""Context sufficiency (R-C9) on the real recorded GPT-4o airline runs (skipped when absent)."""

from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.analysis.sufficiency import combine, extract_values, summary_line
from harnesskit.cli import main
from harnesskit.domains import airline

SHARED = Path(__file__).parents[2] / "../shared/datasets"
RECORDED = SHARED / "sierra-research__tau-bench/historical_trajectories/gpt-4o-airline.json"

needs_shared = pytest.mark.skipif(
    not RECORDED.is_file(),
    reason=f"recorded τ-bench runs not at {RECORDED} (../shared exists only in the dev setup)",
)


@pytest.fixture(scope="module")
def runs():
    return airline.load_recorded_runs(RECORDED, limit=12)


@pytest.fixture(scope="module")
def first_run(runs):
    return airline.replay_run(runs[0])


def test_airline_shapes_class_values_in_priority_order():
    args = {
        "reservation_id": "BOH180",
        "flights": [{"flight_number": "HAT001", "date": "2024-05-15"}],
        "origin": "JFK",
        "user_id": "mia_li_3668",
        "payment_methods": [{"payment_id": "certificate_7504069", "amount": 250}],
        "total_baggages": 1,
    }
    found = extract_values(args, airline.VALUE_SHAPES)
    assert found == [
        ("/reservation_id", "reservation_id", "BOH180"),
        ("/flights/0/flight_number", "flight_number", "HAT001"),
        ("/flights/0/date", "date", "2024-05-15"),
        ("/origin", "airport", "JFK"),
        ("/user_id", "user_id", "mia_li_3668"),
        ("/payment_methods/0/payment_id", "payment_id", "certificate_7504069"),
        ("/payment_methods/0/amount", "amount", "250"),
    ]


def test_a_bad_shape_is_a_usage_error():
    with pytest.raises(hk.UsageError, match="regular expression"):
        extract_values({"a": "x"}, {"broken": "("})


@needs_shared
def test_recorded_prompts_hold_every_value_and_sources_are_labelled(first_run):
    frame = hk.sufficiency(first_run, shapes=airline.VALUE_SHAPES)
    s = frame.attrs["summary"]
    assert s["calls"] == len(first_run.log.of_type("tool.call"))
    assert s["calls_complete"] == 1.0 and s["unbuildable"] == 0
    cert = frame[frame["value"] == "certificate_7504069"]
    assert set(cert["source"]) == {"tool"}
    assert cert["source_label"].str.match(r"TOOL-\d+").all()
    user_id = frame[frame["value"] == "mia_li_3668"]
    assert set(user_id["source"]) == {"user"}


@needs_shared
def test_a_request_the_policy_cannot_build_is_counted_and_the_rest_judged(first_run):
    tiny = {"name": "tiny", "limits": {"max_prompt_tokens": 5, "recent_turns": 1}}
    frame = hk.sufficiency(first_run, tiny, shapes=airline.VALUE_SHAPES)
    s = frame.attrs["summary"]
    assert s["unbuildable"] == s["requests"] > 0
    assert set(frame["built"]) == {False}
    assert set(frame["held"].dropna()) == {"missing"}
    assert "unbuildable=" in summary_line(frame)


@needs_shared
def test_combine_sums_runs_and_the_command_prints_the_last_line(runs, capsys):
    frames = [hk.sufficiency(airline.replay_run(r), shapes=airline.VALUE_SHAPES) for r in runs[:2]]
    both = combine(frames)
    assert both.attrs["summary"]["calls"] == sum(f.attrs["summary"]["calls"] for f in frames)
    assert main(["sufficiency", str(RECORDED), "--limit", "2", "--policy", "window"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("policy=window calls_complete=")
    for key in ("values_present=", "values_bindable=", "unbuildable=", "history_token_ratio="):
        assert key in last


@needs_shared
def test_default_holds_the_certificate_past_the_old_400_char_cap(first_run):
    """Run t00-r0: book_reservation needs certificate_7504069, char 476 of the profile."""
    frame = hk.sufficiency(first_run, "default", shapes=airline.VALUE_SHAPES)
    cert = frame[(frame["value"] == "certificate_7504069") & (frame["tool"] == "book_reservation")]
    assert len(cert) >= 1
    assert set(cert["held"]) <= {"present", "bindable"}


@needs_shared
def test_counterfactual_reports_a_step_it_cannot_build_and_goes_on(first_run):
    tiny = {"name": "tiny", "limits": {"max_prompt_tokens": 5, "recent_turns": 1}}
    cf = hk.counterfactual(first_run.log, tiny)
    assert len(cf) == len(first_run.log.of_type("model.request"))
    assert cf["error"].str.contains("max_prompt_tokens=5").all()
    assert cf["messages"].isna().all()
    ok = hk.counterfactual(first_run.log, "default")
    assert ok["error"].isna().all() and len(ok) == len(cf)


@needs_shared
def test_default_builds_every_request_of_a_run_with_many_user_turns(runs):
    """A run with 11+ user turns made default raise ContextError before issue 16."""
    run = max(runs, key=lambda r: len(r.user_texts))
    assert len(run.user_texts) >= 11
    replayed = airline.replay_run(run)
    for name in ("default", "summary"):
        s = hk.sufficiency(replayed, name, shapes=airline.VALUE_SHAPES).attrs["summary"]
        assert s["unbuildable"] == 0 and s["calls_complete"] == 1.0, (name, s)


def _refund_run(reservation_id: str, amount: float, prompt: str) -> hk.Run:
    from harnesskit.testing import reply

    @hk.tool(risk="write")
    def refund(reservation_id: str, amount: float) -> dict:
        """Refund an amount.

        Use this to refund. Do not use it to charge.

        Args:
            reservation_id: the reservation.
            amount: dollars.

        Returns:
            The refund receipt.
        """
        return {"ok": True}

    model = hk.ScriptedModel(
        [reply.tool_call("refund", reservation_id=reservation_id, amount=amount), reply.text("ok")]
    )
    return hk.Harness([refund], model).run(prompt)


def test_a_cut_id_and_a_part_of_a_larger_amount_are_not_held_by_the_prompt():
    run = _refund_run("ABC12", 150, "Reservation ABC123 was charged $1500 in 2015. Refund it.")

    frame = hk.sufficiency(run)

    held = dict(zip(frame["arg"], frame["held"], strict=True))
    assert held == {"/reservation_id": "missing", "/amount": "missing"}
    # the transport audit says the same of the id: altered, not found
    (row,) = [r for r in hk.transport_audit(run).rows if r["value"] == "ABC12"]
    assert row["status"] == "altered"


def test_whole_values_are_held_however_the_amount_is_written():
    run = _refund_run("ABC123", 150, "Reservation (ABC123) was charged $150.00. Refund it.")

    frame = hk.sufficiency(run)

    assert set(frame["held"]) == {"present"}
