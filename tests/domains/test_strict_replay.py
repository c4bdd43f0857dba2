"""Strict replay of the recorded GPT-4o runs: a missing `reason` derived per call, per rule."""

from pathlib import Path

import pytest

from harnesskit.cli import main
from harnesskit.domains import airline

RECORDED = (
    Path(__file__).parents[2]
    / "../shared/datasets/sierra-research__tau-bench/historical_trajectories/gpt-4o-airline.json"
)
needs_shared = pytest.mark.skipif(
    not RECORDED.is_file(), reason=f"recorded τ-bench runs not at {RECORDED} (dev setup only)"
)


def test_reason_rules_name_the_reason_and_say_which_words():
    assert airline.derive_reason(["hi", "I got sick, please cancel"]) == (
        "health",
        "health",
        "sick",
    )
    assert airline.derive_reason(["My plans changed."])[:2] == ("change_of_plan", "change_of_plan")
    assert (
        airline.derive_reason(["the airline cancelled my flight"])[0] == "airline_cancelled_flight"
    )
    assert airline.derive_reason(["just cancel it"]) == ("other", "default", None)


@needs_shared
def test_strict_replay_derives_the_reason_and_records_the_deciding_rule():
    runs = {(r.task_id, r.trial): r for r in airline.load_recorded_runs(RECORDED)}
    result = airline.replay_run(runs[(15, 0)], mode="strict")
    assert result.mode == "strict"
    (d,) = result.derived
    assert (d.tool, d.field, d.value, d.rule) == (
        "cancel_reservation",
        "reason",
        "change_of_plan",
        "change_of_plan",
    )
    assert d.words and "plan" in d.words.lower()
    assert len(result.cancellations) == 1
    rule, allowed = result.cancellations[0]
    failed = [
        e
        for e in result.log.of_type("tool.result")
        if e.payload["tool"] == "cancel_reservation" and e.payload["ok"] is False
    ]
    assert allowed == (not failed)  # the recorded call is no longer refused on schema grounds
    assert all(e.payload["error_type"] != "invalid_argument" for e in failed)
    assert rule in {"business_class", "no_rule_allows", "segment_flown", "within_24h_of_booking",
                    "airline_cancelled_flight", "insurance_covers_reason", "already_cancelled"}  # fmt: skip


@needs_shared
def test_replay_mode_strict_prints_the_per_rule_table(capsys):
    assert main(["replay", str(RECORDED), "--limit", "70", "--mode", "strict", "--summary"]) == 0
    out = capsys.readouterr().out
    assert "derived task 15 trial 0 call 2: cancel_reservation.reason = change_of_plan" in out
    assert "deciding rule" in out and "allowed" in out and "refused" in out
    assert "total cancellations" in out
    assert "reason derivations by rule:" in out
