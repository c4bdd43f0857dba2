"""Converted tau2 airline cases run against the airline domain (skipped until it exists)."""

import pathlib

import pytest

import harnesskit as hk
from harnesskit.testing import reply

pytest.importorskip(
    "harnesskit.domains.airline", reason="the airline domain (issue 3) is not merged"
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = {c.id: c for c in hk.load_cases(ROOT / "datasets" / "cases", domain="airline")}
ASK = "Reservation Z7GOZK has travel insurance, so it can be cancelled for health reasons. Shall I cancel it? Please confirm with yes."


def scripted(*turns):
    def factory(trial):
        return hk.ScriptedModel(list(turns))

    return factory


def run(tmp_path, case_ids, model):
    cases = [CASES[i] for i in case_ids]
    return hk.Experiment(cases, models={"m": model}, max_workers=2).run(
        tmp_path / "run", progress=False
    )


def test_a_correct_run_of_a_converted_task_passes_with_the_database_check(tmp_path):
    model = scripted(
        reply.tool_call("get_user_details", user_id="olivia_gonzalez_2305"),
        reply.tool_call("get_reservation_details", reservation_id="Z7GOZK"),
        reply.text(ASK),
        reply.tool_call("cancel_reservation", reservation_id="Z7GOZK", reason="health"),
        reply.text("Reservation Z7GOZK is cancelled; the refund goes to your original payment."),
    )
    result = run(tmp_path, ["tau2-airline/19"], model)
    checks = result.checks()
    assert result.frame["pass"].all(), checks[~checks.passed]
    state = checks[checks.kind == "state"].iloc[0]
    assert state.check == "final database equals the expected one" and state.detail.endswith(
        "equal"
    )


def test_acting_without_confirmation_fails_although_the_database_matches(tmp_path):
    model = scripted(
        reply.tool_call("get_reservation_details", reservation_id="Z7GOZK"),
        reply.tool_call("cancel_reservation", reservation_id="Z7GOZK", reason="health"),
        reply.text("Reservation Z7GOZK is cancelled."),
        reply.text("It is already done."),
    )
    result = run(tmp_path, ["tau2-airline/19"], model)
    assert result.frame["failed_checks"][0] == ["no write without confirmation"]


def test_do_not_act_case_wants_a_question_and_an_unchanged_database(tmp_path):
    asks = scripted(
        reply.tool_call("get_reservation_details", reservation_id="Z7GOZK"), reply.text(ASK)
    )
    assert run(tmp_path / "a", ["tau2-airline/19/ask-first"], asks).frame["pass"].all()
    acts = scripted(
        reply.tool_call("cancel_reservation", reservation_id="Z7GOZK", reason="health"),
        reply.text("Cancelled."),
    )
    failed = run(tmp_path / "b", ["tau2-airline/19/ask-first"], acts).frame["failed_checks"][0]
    assert failed == [
        "no destructive tool call",
        "answer asks for confirmation",
        "final database equals the expected one",
    ]


def test_the_embedded_agent_runs_through_an_experiment_and_the_audit(tmp_path):
    ids = ["tau2-airline/0", "tau2-airline/19/ask-first", "tau2-airline/45"]
    result = hk.Experiment(
        [CASES[i] for i in ids], ["full-history", "default"], ["airline:embedded"]
    ).run(tmp_path / "e", progress=False)
    df = result.frame
    assert len(df) == 6 and df["error"].isna().all() and (df["finish_reason"] == "stop").all()
    assert set(result.checks()["kind"]) >= {"forbid", "state", "finish"}
    audit = hk.audit(result)
    assert len(audit.runs()) == 6
