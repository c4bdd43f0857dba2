"""Experiments: cases × policies × models × repeats, parallel runs, run directories (R-P3)."""

import json
import pathlib
import threading
import time

import pandas as pd
import pytest

import harnesskit as hk
from harnesskit.analysis.evals import RESULT_COLUMNS
from harnesskit.cli import main
from harnesskit.testing import reply

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHOP_CASES = ROOT / "datasets" / "cases" / "shop.jsonl"
POLICIES = ["full-history", {"name": "default"}]


@pytest.fixture(scope="module")
def cases():
    return hk.load_cases(SHOP_CASES)


def test_two_policies_give_a_readable_frame_summary_and_chart(cases, tmp_path):
    exp = hk.Experiment(cases, POLICIES, ["shop:careful", "shop:hasty"], repeats=3, seed=1)
    result = exp.run(tmp_path / "run", progress=False)
    df = result.frame
    assert list(df.columns) == list(RESULT_COLUMNS)
    assert len(df) == len(cases) * 2 * 2 * 3
    assert set(df["policy"]) == {"full-history", "default"}
    careful = df[df["model"] == "shop:careful"]
    assert careful["pass"].all() and (careful["finish_reason"] == "stop").all()
    hasty_failures = df[(df["model"] == "shop:hasty") & ~df["pass"]]
    assert len(hasty_failures) > 0 and all(len(f) > 0 for f in hasty_failures["failed_checks"])

    summary = result.summary()
    assert list(summary.index.names) == ["policy", "model"]
    assert list(summary.columns) == [
        "cases", "trials", "pass_rate", "pass^1", "pass^2", "pass^3", "mean_steps",
        "mean_prompt_tokens", "tokens_per_pass", "errors",
    ]  # fmt: skip
    assert summary.loc[("full-history", "shop:careful"), "pass_rate"] == 1.0
    assert (
        summary.loc[("full-history", "shop:hasty"), "pass^3"]
        <= summary.loc[("full-history", "shop:hasty"), "pass^1"]
    )
    tokens = df[df["model"] == "shop:careful"]
    per_pass = (
        (tokens["prompt_tokens"].sum() + tokens["completion_tokens"].sum())
        / 2
        / tokens["pass"].sum()
        * 2
    )
    assert summary.loc[
        [("full-history", "shop:careful"), ("default", "shop:careful")], "tokens_per_pass"
    ].mean() == pytest.approx(per_pass)

    fig = result.chart()
    assert [ax.get_title() for ax in fig.axes] == [
        "pass rate",
        "tokens per pass (prompt + completion)",
    ]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["full-history", "default"]
    assert len(fig.axes[0].patches) == 4  # 2 policies × 2 models
    html = result._repr_html_()
    assert "pass^3" in html and "shop:hasty" in html


def test_pass_hat_k_of_an_experiment_agrees_with_a_hand_computation(tmp_path):
    """Case A passes on 3 of 4 repeats, case B on 1 of 4 (the model is built from the trial)."""
    cases = [
        hk.analysis.evals.Case.from_dict({"id": cid, "domain": "shop", "input": f"Where is order {oid}?",
                           "expect": {"calls": [{"tool": "get_order", "args": {"order_id": oid}}]}})
        for cid, oid in (("A", "A1001"), ("B", "A1004"))
    ]  # fmt: skip
    passing = {"A": {0, 1, 2}, "B": {3}}

    def factory(trial):
        oid = "A1001" if trial.case.id == "A" else "A1004"
        typed = oid if trial.repeat in passing[trial.case.id] else "Z0000"
        return hk.ScriptedModel([reply.tool_call("get_order", order_id=typed), reply.text("ok")])

    result = hk.Experiment(cases, ["full-history"], {"fixed": factory}, repeats=4).run(
        tmp_path / "r", progress=False
    )
    by_hand = {1: (3 / 4 + 1 / 4) / 2, 2: (3 / 6 + 0) / 2, 3: (1 / 4 + 0) / 2, 4: 0.0}
    for k, expected in by_hand.items():
        assert result.pass_hat_k(k).loc[("full-history", "fixed")] == pytest.approx(expected)
    assert result.summary()["pass^2"].iloc[0] == pytest.approx(0.25)


def normalized_log(path):
    """A log's events without wall-clock fields (timestamps, seconds)."""
    out = []
    for e in hk.EventLog.read(path):
        d = e.to_dict()
        d.pop("created_at")
        d["payload"] = {k: v for k, v in d["payload"].items() if k != "seconds"}
        out.append(d)
    return out


def test_parallel_and_serial_give_identical_results_for_the_same_seed(cases, tmp_path):
    exp = hk.Experiment(
        cases, POLICIES, ["shop:hasty", "shop:careful"], repeats=3, seed=7, max_workers=6
    )
    par = exp.run(tmp_path / "par", progress=False)
    ser = exp.run(tmp_path / "ser", parallel=False, progress=False)
    pd.testing.assert_frame_equal(par.frame, ser.frame)
    assert par.checks().equals(ser.checks())
    assert not par.frame["pass"].all()  # the hasty agent's seeded slips are in there
    for run_id in par.frame["run_id"]:
        assert normalized_log(par.path / "logs" / f"{run_id}.jsonl") == normalized_log(
            ser.path / "logs" / f"{run_id}.jsonl"
        )
    other = hk.Experiment(cases, POLICIES, ["shop:hasty", "shop:careful"], repeats=3, seed=8)
    assert list(other.trials()[0:3]) != list(
        exp.trials()[0:3]
    )  # seeds differ with the experiment seed


def test_seeds_are_shared_across_policies_and_models(cases):
    trials = hk.Experiment(
        cases[:1], POLICIES, ["shop:careful", "shop:hasty"], repeats=2, seed=3
    ).trials()
    by_repeat = {}
    for t in trials:
        by_repeat.setdefault(t.repeat, set()).add(t.seed)
    assert [len(s) for s in by_repeat.values()] == [1, 1]
    assert by_repeat[0] != by_repeat[1]
    assert len({t.run_id for t in trials}) == len(trials)


def test_the_run_directory_reloads_into_the_same_frame(cases, tmp_path):
    result = hk.Experiment(cases[:3], ["full-history"], ["shop:hasty"], repeats=2, seed=2).run(
        tmp_path / "exp", progress=False
    )
    files = sorted(p.name for p in (tmp_path / "exp").iterdir())
    assert files == ["cases.jsonl", "experiment.json", "logs", "results.jsonl"]
    manifest = json.loads((tmp_path / "exp" / "experiment.json").read_text())
    assert manifest["finished"] and manifest["trials"] == 6 and manifest["seed"] == 2
    again = hk.ExperimentResult.load(tmp_path / "exp")
    pd.testing.assert_frame_equal(again.frame, result.frame)
    pd.testing.assert_frame_equal(again.summary(), result.summary())
    assert hk.load_cases(tmp_path / "exp" / "cases.jsonl") == cases[:3]
    log = again.log(result.frame["run_id"][0])
    assert log.events[0].payload["task"]["case"] == cases[0].id
    with pytest.raises(hk.UsageError, match="is not empty"):
        hk.Experiment(cases[:1]).run(tmp_path / "exp", progress=False)


def test_a_crashing_trial_is_a_failed_row_not_a_dead_experiment(cases, tmp_path):
    def broken(trial):
        return hk.ScriptedModel([])  # runs out of turns at once: UsageError inside the run

    result = hk.Experiment(cases[:2], models={"broken": broken}).run(tmp_path / "x", progress=False)
    df = result.frame
    assert not df["pass"].any() and (df["finish_reason"] == "error").all()
    assert df["failed_checks"][0][-1] == "run completes"
    assert df["error"][0].startswith("UsageError: ScriptedModel ran out of turns")
    assert result.summary()["errors"].iloc[0] == 2


def test_requests_in_flight_per_endpoint_are_bounded(cases, tmp_path):
    lock, state = threading.Lock(), {"now": 0, "max": 0}

    class Slow:
        name = "slow"
        endpoint = "http://one-endpoint"

        def __init__(self, inner):
            self.inner = inner

        def request(self, request):
            with lock:
                state["now"] += 1
                state["max"] = max(state["max"], state["now"])
            time.sleep(0.002)
            with lock:
                state["now"] -= 1
            return self.inner.request(request)

    def factory(trial):
        return Slow(hk.analysis.evals.get_domain("shop").agents["careful"](seed=trial.seed))

    exp = hk.Experiment(cases, models={"slow": factory}, repeats=2, max_workers=6, per_endpoint=2)
    result = exp.run(tmp_path / "t", progress=False)
    assert result.frame["pass"].all()
    assert 1 <= state["max"] <= 2


def test_shared_stateful_models_and_bad_specs_are_refused(cases):
    with pytest.raises(hk.UsageError, match="pass a factory"):
        hk.Experiment(cases, models=[hk.ScriptedModel([])])
    with pytest.raises(hk.UsageError, match="unknown context policy"):
        hk.Experiment(cases, policies=["no-such-policy"])
    with pytest.raises(hk.UsageError, match="share the label"):
        hk.Experiment(cases, policies=["full-history", "full-history"])
    with pytest.raises(hk.UsageError, match="no agent 'reckless'"):  # before any trial runs
        hk.Experiment(cases[:1], models=["shop:reckless"])
    with pytest.raises(hk.UsageError, match="unknown eval domain 'mars'"):
        hk.analysis.evals.get_domain("mars")


def test_cli_eval_prints_the_summary_table(tmp_path, capsys):
    code = main(
        ["eval", str(SHOP_CASES), "--model", "shop:careful", "--model", "shop:hasty", "--repeats", "2",
         "--seed", "5", "--out", str(tmp_path / "cli"), "--no-progress", "--audit"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    header = out.splitlines()[0].split()
    assert header[:5] == ["cases", "trials", "pass_rate", "pass^1", "pass^2"]
    assert "full-history shop:careful" in out and "shop:hasty" in out
    assert "failed trials; failed checks:" in out
    assert "audit (flagged findings per point):" in out
    assert f"run directory: {tmp_path / 'cli'}" in out
    assert len(hk.ExperimentResult.load(tmp_path / "cli")) == 8 * 2 * 2


def test_notebook_06_has_a_papermill_parameters_cell():
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    nb = load_notebook_node(str(ROOT / "notebooks" / "06_experiments.ipynb"))
    [params] = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert "REPEATS = 4" in params.source and "POLICIES = " in params.source
    injected = parameterize_notebook(nb, {"REPEATS": 2, "MODELS": ["shop:careful"]})
    [new] = [c for c in injected.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert "REPEATS = 2" in new.source and 'MODELS = ["shop:careful"]' in new.source
