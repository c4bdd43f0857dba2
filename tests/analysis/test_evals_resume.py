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


@pytest.mark.parametrize("repeats", [10**9, 5_001])
def test_an_absurd_number_of_trials_is_refused_naming_the_count_and_the_limit(repeats):
    with pytest.raises(UsageError) as info:
        hk.Experiment(
            hk.load_cases(SHOP)[:3], models=["shop:careful", "shop:hasty"], repeats=repeats
        )
    total = 6 * repeats
    assert f"holds {total:,} trials" in str(info.value)
    assert "max_trials=10,000" in str(info.value) and f"max_trials={total}" in str(info.value)


def test_max_trials_lets_a_large_experiment_through_and_is_kept_for_resume(tmp_path):
    cases = hk.load_cases(SHOP)[:3]
    with pytest.raises(UsageError, match="holds 12 trials"):
        hk.Experiment(cases, models=["shop:careful", "shop:hasty"], repeats=2, max_trials=10)
    for bad in (0, "5", True):
        with pytest.raises(UsageError, match="max_trials must be an int >= 1"):
            _exp(max_trials=bad)
    exp = hk.Experiment(cases, models=["shop:careful", "shop:hasty"], repeats=2, max_trials=12)
    exp.run(tmp_path / "run", parallel=False, progress=False)
    assert hk.Experiment.from_dir(tmp_path / "run").max_trials == 12


def test_a_manifest_with_an_absurd_repeats_is_refused_before_running(tmp_path):
    _exp().run(tmp_path / "run", parallel=False, progress=False)
    manifest = json.loads((tmp_path / "run" / "experiment.json").read_text())
    manifest["repeats"] = 10**9
    (tmp_path / "run" / "experiment.json").write_text(json.dumps(manifest))
    with pytest.raises(UsageError, match=r"holds 6,000,000,000 trials .* max_trials=10,000"):
        hk.Experiment.from_dir(tmp_path / "run")


def test_eval_cli_refuses_an_absurd_repeats_and_takes_max_trials(tmp_path, capsys):
    from harnesskit.cli import main

    args = ["eval", str(SHOP), "--repeats", "1000000", "--no-progress", "--out"]
    assert main([*args, str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "UsageError" in err and "over the limit of max_trials=10,000" in err
    assert "--max-trials" in err and "Traceback" not in err
    assert not (tmp_path / "a").exists()  # nothing started
    assert main(["eval", str(SHOP), "--max-trials", "1", "--out", str(tmp_path / "b")]) == 2
    assert "max_trials=1;" in capsys.readouterr().err
