"""Cases converted from the tau2-bench airline tasks (scripts/convert_tau2_cases.py)."""

import importlib.util
import json
import pathlib

import pytest

import harnesskit as hk

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = ROOT / "datasets" / "cases"


def converter():
    spec = importlib.util.spec_from_file_location(
        "convert_tau2_cases", ROOT / "scripts" / "convert_tau2_cases.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tasks_json(shared_datasets):
    path = shared_datasets / "sierra-research__tau2-bench/data/tau2/domains/airline/tasks.json"
    if not path.is_file():
        pytest.skip(f"tau2 airline tasks not found at {path}")
    return path


def test_the_shipped_airline_cases_are_the_converter_output(tasks_json, tmp_path):
    assert converter().main([str(tasks_json), "--out", str(tmp_path)]) == 0
    for name in ("airline_tau2.jsonl", "airline_do_not_act.jsonl"):
        assert (tmp_path / name).read_text() == (CASES / name).read_text(), (
            f"rerun the converter: {name}"
        )


def test_every_task_becomes_a_valid_case_with_its_write_actions(tasks_json):
    tasks = {t["id"]: t for t in json.loads(tasks_json.read_text())}
    cases = {c.id: c for c in hk.load_cases(CASES / "airline_tau2.jsonl")}
    assert len(cases) == len(tasks) == 50
    writes = {"book_reservation", "cancel_reservation", "update_reservation_flights",
              "update_reservation_baggages", "update_reservation_passengers", "send_certificate"}  # fmt: skip
    for tid, task in tasks.items():
        case = cases[f"tau2-airline/{tid}"]
        expected = [a for a in task["evaluation_criteria"]["actions"] or []
                    if a["name"] in writes or a["name"] == "transfer_to_human_agents"]  # fmt: skip
        assert [c.tool for c in case.calls] == [a["name"] for a in expected]
        for spec, action in zip(case.calls, expected, strict=True):
            args = {k: v for k, v in action["arguments"].items() if k != "summary"}
            assert spec.mismatches(action["name"], action["arguments"]) == [] and spec.args == args
        assert case.forbid_write_without_confirmation and case.domain == "airline"
        assert [a["tool"] for a in case.setup["db_actions"]] == [
            a["name"] for a in task["evaluation_criteria"]["actions"] or []
        ]
        read_names = [a["tool"] for a in case.setup["read_actions"]]
        assert len(read_names) + len(case.calls) == len(
            task["evaluation_criteria"]["actions"] or []
        )


def test_assertions_become_forbidden_calls_and_user_turns_are_first_person():
    cases = {c.id: c for c in hk.load_cases(CASES)}
    c43 = cases["tau2-airline/43"]  # "Agent should not cancel reservation 9HBUV8 ..."
    cancels = [s for s in c43.forbid_calls if s.tool == "cancel_reservation"]
    assert {s.args["reservation_id"] for s in cancels} == {"9HBUV8", "D1EW9B"}
    c19 = cases["tau2-airline/19"]
    assert [c.describe() for c in c19.calls] == ['cancel_reservation(reservation_id="Z7GOZK")']
    assert c19.input[1] == "Yes, please go ahead."
    assert c19.input[0].startswith("My ") or c19.input[0].startswith("I ")
    assert "You " not in c19.input[0] and " your " not in c19.input[0]
    dna = cases["tau2-airline/19/ask-first"]
    assert (
        dna.asks_confirmation
        and dna.forbid_risks == ("write", "destructive")
        and len(dna.input) == 1
    )
    assert (
        len([c for c in cases.values() if "do-not-act" in c.tags and c.domain == "airline"]) == 26
    )


def test_nin_operator_forbids_other_reservations():
    spec = hk.analysis.evals.CallSpec(
        tool="cancel_reservation", args={"reservation_id": {"$nin": ["Z7GOZK"]}}, ok=None
    )
    assert spec.mismatches("cancel_reservation", {"reservation_id": "Z7GOZK"}) != []
    assert spec.mismatches("cancel_reservation", {"reservation_id": "ABC123"}) == []
