"""An experiment's run directory is redacted as its trial logs are (R-S1).

The trial logs were redacted, but `results.jsonl` (failed check names and details quote the
case) and the copy of the cases in `cases.jsonl` held a case's credentials in clear. The
trials still run with the exact cases (in memory), and the directory still resumes.
"""

from __future__ import annotations

import json

import harnesskit as hk
from harnesskit.analysis.evals import save_cases
from harnesskit.log import Redactor

SECRET = "hunter2hunter2XYZ"
KEY = "sk-proj-ABCDEFGHIJKLMNOPqrstuv"


def _case_file(tmp_path):
    case = {
        "schema_version": 1,
        "id": "shop/secret",
        "domain": "shop",
        "description": f"password={SECRET}",
        "tags": ["read"],
        "input": f"Where is my order A1001? my password is {SECRET} and token {KEY}",
        "expect": {
            "calls": [{"tool": "get_order", "args": {"order_id": "A1001"}}],
            "answer": {"contains": [f"password={SECRET}"]},
        },
        "forbid": {"risks": ["write"]},
        "limits": {"max_steps": 6},
    }
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(case) + "\n", encoding="utf-8")
    return path


def _leaks(directory):
    return sorted(
        str(p.relative_to(directory))
        for p in directory.rglob("*")
        if p.is_file() and (SECRET in (t := p.read_text(errors="replace")) or "ABCDEFGHIJ" in t)
    )


def test_no_file_of_the_run_directory_holds_a_case_credential(tmp_path):
    cases = hk.load_cases(_case_file(tmp_path))
    exp = hk.Experiment(cases, repeats=2)
    out = tmp_path / "out"
    result = exp.run(out, parallel=False, progress=False)
    assert _leaks(out) == []
    row = result.rows[0]
    assert not row["pass"] and any("[REDACTED" in name for name in row["failed_checks"])
    assert row["case"] == "shop/secret" and row["run_id"] in {r["run_id"] for r in result.rows}
    assert SECRET in exp.cases[0].input[0]  # the trials ran with the exact case
    saved = hk.load_cases(out / "cases.jsonl")[0]
    assert (
        saved.id == "shop/secret" and SECRET not in saved.input[0] and "REDACTED" in saved.input[0]
    )
    loaded = hk.ExperimentResult.load(out)
    assert loaded.rows == result.rows  # what is returned is what is on disk
    assert SECRET not in repr(loaded.frame.to_dict())


def test_a_redacted_run_directory_still_resumes(tmp_path):
    cases = hk.load_cases(_case_file(tmp_path))
    out = tmp_path / "out"
    hk.Experiment(cases, repeats=2).run(out, parallel=False, progress=False)
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    (out / "results.jsonl").write_text(lines[0] + "\n", encoding="utf-8")  # one trial lost
    again = hk.Experiment(cases, repeats=2).resume(out, parallel=False, progress=False)
    assert len(again) == 2 and json.loads(lines[0]) == again.rows[0]
    assert _leaks(out) == []


def test_save_cases_writes_exact_text_unless_given_a_redactor(tmp_path):
    cases = hk.load_cases(_case_file(tmp_path))
    plain = save_cases(cases, tmp_path / "plain.jsonl")
    assert SECRET in plain.read_text(encoding="utf-8")
    red = save_cases(cases, tmp_path / "red.jsonl", redactor=Redactor())
    assert SECRET not in red.read_text(encoding="utf-8")
    assert hk.load_cases(red)[0].id == cases[0].id
