"""A bad experiment configuration is refused before any trial runs; a write failure mid-run
stops the experiment with a clear error, leaves no half-written line, and resume finishes it."""

from __future__ import annotations

import errno
import json
import os
import pathlib

import pytest

import harnesskit as hk
from harnesskit.analysis.evals import experiment as experiment_module
from harnesskit.analysis.evals.results import read_rows
from harnesskit.errors import ExperimentInterrupted

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHOP_CASES = ROOT / "datasets" / "cases" / "shop.jsonl"
needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")


@pytest.fixture(scope="module")
def cases():
    return hk.load_cases(SHOP_CASES)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"policies": ["ful-history"]}, r"policies=.*did you mean 'full-history'"),
        ({"policies": 5}, "policies="),
        ({"policies": {5: "default"}}, "policies="),
        ({"policies": [{"name": "x", "limits": {"max_events": "a"}}]}, "policies="),
        ({"models": 5}, "models="),
        ({"models": [5]}, "models="),
        ({"models": {"": "shop:careful"}}, "models="),
        ({"repeats": "3"}, "repeats"),
        ({"seed": "3"}, "seed="),
        ({"seed": True}, "seed="),
        ({"name": 3}, "name="),
        ({"name": ""}, "name="),
        ({"limits": {"max_steps": 3}}, "limits="),
        ({"gate": "deny"}, "gate="),
        ({"per_endpoint": -1}, "per_endpoint="),
        ({"per_endpoint": "x"}, "per_endpoint="),
        ({"per_endpoint": {"a": 0}}, "per_endpoint="),
        ({"settings": [1]}, "settings="),
        ({"settings": {"temperature": -1}}, r"settings=.*temperature"),
        ({"domains": [1]}, "domains="),
    ],
)
def test_a_bad_configuration_is_refused_naming_the_field(cases, kwargs, field):
    with pytest.raises(hk.UsageError, match=field):
        hk.Experiment(cases, **kwargs)


def _counting_factory(built):
    def factory(trial):
        built.append(trial.index)
        return hk.get_domain("shop").agents["careful"](seed=trial.seed)

    return factory


@pytest.mark.parametrize("where", ["file", "under_file", "not_a_path"])
def test_an_unwritable_out_dir_is_refused_before_any_trial(cases, tmp_path, where):
    built: list[int] = []
    exp = hk.Experiment(cases[:2], models={"m": _counting_factory(built)})
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = {"file": blocker, "under_file": blocker / "sub", "not_a_path": 5}[where]
    with pytest.raises(hk.UsageError, match="out_dir"):
        exp.run(out, progress=False)
    assert built == []
    assert blocker.read_text() == "x"


class _HalfThenFull:
    """A file whose write puts half the bytes on disk, then fails as a full disk does."""

    def __init__(self, path, mode):
        self._fh = open(path, mode)  # noqa: SIM115

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()

    def write(self, data):
        self._fh.write(data[: len(data) // 2])
        self._fh.flush()
        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_results_write_failure_stops_cleanly_and_resume_finishes(cases, tmp_path, monkeypatch):
    exp = hk.Experiment(cases[:3], repeats=2)
    out = tmp_path / "run"
    calls = []

    def failing_open(path, mode="r", *args, **kwargs):
        if pathlib.Path(path).name == "results.jsonl" and "a" in mode:
            calls.append(path)
            if len(calls) == 3:
                return _HalfThenFull(path, mode)
        return open(path, mode, *args, **kwargs)

    monkeypatch.setattr(experiment_module, "open", failing_open, raising=False)
    with pytest.raises(ExperimentInterrupted, match="No space left on device") as info:
        exp.run(out, parallel=False, progress=False)
    assert "resume" in str(info.value) and info.value.finished == 2 and info.value.total == 6
    text = (out / "results.jsonl").read_text()
    assert text.endswith("\n") and len(text.splitlines()) == 2  # two whole lines, no half one
    assert len(read_rows(out / "results.jsonl")) == 2
    assert json.loads((out / "experiment.json").read_text())["finished"] is False

    monkeypatch.undo()
    result = exp.resume(out, parallel=False, progress=False)
    assert len(result) == 6 and result.frame["error"].isna().all()
    fresh = hk.Experiment(cases[:3], repeats=2).run(tmp_path / "fresh", progress=False)
    cols = ["run_id", "pass", "steps", "prompt_tokens"]
    assert result.frame[cols].equals(fresh.frame[cols])


@needs_dev_full
def test_a_trial_log_on_a_full_disk_stops_the_experiment_and_resume_reruns_it(
    cases, tmp_path, monkeypatch
):
    from harnesskit.log import events as events_module

    real_open = events_module._open_append

    def full_disk(path, expected_size):
        if path.name.startswith("t0002-"):
            return open("/dev/full", "a", encoding="utf-8")  # the disk is full
        return real_open(path, expected_size)

    monkeypatch.setattr(events_module, "_open_append", full_disk)
    exp = hk.Experiment(cases[:3], repeats=2)
    out = tmp_path / "run"
    with pytest.raises(ExperimentInterrupted, match="No space left on device") as info:
        exp.run(out, parallel=False, progress=False)
    assert info.value.finished == 2  # the trials before it; none started after it
    rows = read_rows(out / "results.jsonl")
    assert [r["run_id"][:5] for r in rows] == ["t0000", "t0001"]

    monkeypatch.undo()
    result = exp.resume(out, parallel=False, progress=False)
    assert len(result) == 6 and result.frame["error"].isna().all()
