"""`Experiment.resume`: runs only the trials a run directory lacks (issue 17, item 3)."""

import json
import pathlib
import pickle

import pytest

import harnesskit as hk
from harnesskit.errors import ExperimentInterrupted, UsageError

SHOP = pathlib.Path(__file__).resolve().parents[2] / "datasets" / "cases" / "shop.jsonl"


def _exp(**kw):
    cases = hk.load_cases(SHOP)[:3]
    return hk.Experiment(cases, models=["shop:careful", "shop:hasty"], repeats=2, **kw)


def test_resume_runs_missing_and_errored_trials_only(tmp_path):
    path = tmp_path / "run"
    full = _exp().run(path, parallel=False, progress=False)
    rows = [json.loads(x) for x in (path / "results.jsonl").read_text().splitlines()]
    # as if trial 1 never finished and trial 4 hit a dead server
    rows[4]["error"] = "ModelError: connection refused"
    kept = [r for i, r in enumerate(rows) if i != 1]
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
    untouched = {r["run_id"]: (path / "logs" / f"{r['run_id']}.jsonl").read_bytes() for r in kept}
    for rid in (rows[1]["run_id"], rows[4]["run_id"]):
        untouched.pop(rid, None)

    again = _exp().resume(path, progress=False)
    cols = ["case", "policy", "model", "repeat", "pass", "steps", "failed_checks", "error"]
    assert again.frame[cols].equals(full.frame[cols])
    for rid, data in untouched.items():
        assert (path / "logs" / f"{rid}.jsonl").read_bytes() == data, rid
    assert json.loads((path / "experiment.json").read_text())["finished"]


def test_resume_refuses_another_experiments_directory(tmp_path):
    _exp().run(tmp_path / "run", progress=False)
    with pytest.raises(UsageError, match="repeats"):
        hk.Experiment(
            hk.load_cases(SHOP)[:3],
            models=["shop:careful", "shop:hasty"],
            repeats=3,
        ).resume(tmp_path / "run")


def test_from_dir_rebuilds_the_experiment(tmp_path):
    _exp(seed=5).run(tmp_path / "run", progress=False)
    exp = hk.Experiment.from_dir(tmp_path / "run")
    assert exp.seed == 5 and exp.repeats == 2 and list(exp.models) == ["shop:careful", "shop:hasty"]
    assert len(exp.resume(tmp_path / "run", progress=False)) == 12


def test_experiment_interrupted_is_picklable():
    err = ExperimentInterrupted("interrupted: 3 of 8", path="/tmp/x", finished=3, total=8)
    back = pickle.loads(pickle.dumps(err))
    assert (str(back), back.path, back.finished, back.total) == (str(err), "/tmp/x", 3, 8)
