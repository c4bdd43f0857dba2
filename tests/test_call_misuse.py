"""Calling a main entry point wrong is a `UsageError` naming what was wrong and how to call it.

A fresh user's `run.step(5)`, `run.run("x")`, `hk.ContextPolicy(5)`, `hk.check_resume(5)` and
`hk.EventLog(5)` raised Python's own `TypeError`/`AttributeError` (`Run.step() takes 1
positional argument but 2 were given`, `'int' object has no attribute 'revision'`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.analysis.evals import CheckResult
from harnesskit.errors import UsageError, checked_call

SHOP = Path(__file__).resolve().parents[1] / "datasets" / "cases" / "shop.jsonl"


def _harness(tmp_path=None):
    return hk.Harness([], hk.ScriptedModel(["one", "two", "three"]), log_dir=tmp_path)


def _logged(tmp_path):
    run = _harness(tmp_path).start("hi", run_id="r")
    run.run()
    return run, tmp_path / "r.jsonl"


def test_step_and_run_take_no_arguments_and_say_what_to_do_instead():
    run = _harness().start("hi")
    with pytest.raises(UsageError, match=r"run\.step\(\) takes no arguments: it advances one"):
        run.step(5)  # type: ignore[call-arg]
    with pytest.raises(UsageError, match=r"run\.run\(\) takes no arguments.*run\.send\('\.\.\.'\)"):
        run.run("x")  # type: ignore[call-arg]
    with pytest.raises(UsageError, match="unexpected keyword argument 'steps'"):
        run.run(steps=3)  # type: ignore[call-arg]
    assert run.step().run().finish_reason == "stop"  # nothing happened to the run


def test_fork_without_its_arguments_names_them():
    run = _harness().start("hi").run()
    with pytest.raises(UsageError, match=r"missing 1 required positional argument: 'name'.*fork"):
        run.fork(1)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda: hk.ContextPolicy(5), r"ContextPolicy takes keyword arguments only.*resolve"),
        (lambda: hk.ContextPolicy("window"), r"got 1 positional \('window'\)"),
        (lambda: hk.Limits(5), r"Limits takes keyword arguments only, got 1 positional \(5\)"),
        (lambda: hk.TransportPolicy(5), r"e\.g\. TransportPolicy\(\w+=\.\.\.\)"),
        (lambda: hk.Message("user", "hi"), r"got 2 positional \('user', \.\.\.\).*Message\(role="),
        (lambda: hk.ToolCall("c1", "lookup"), r"ToolCall takes keyword arguments only"),
        (lambda: CheckResult("x"), r"CheckResult takes keyword arguments only"),
        (lambda: hk.Gate("deny"), r"Gate\.__init__\(\) takes 1 positional argument.*hk\.Gate\("),
    ],
)
def test_value_classes_given_positional_arguments_say_to_name_them(make, said):
    with pytest.raises(UsageError, match=said):
        make()


def test_a_missing_keyword_of_a_value_class_is_still_pythons_own_type_error():
    # as `dataclass` words it (a keyword named wrong or left out: the message names it)
    with pytest.raises(TypeError, match=r"^Message\.__init__\(\) missing 1 required keyword-only"):
        hk.Message()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"missing 2 required keyword-only arguments: 'kind' and"):
        CheckResult(name="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'step'"):
        hk.Limits(step=3)  # type: ignore[call-arg]
    assert hk.Message(role="user", content="hi").content == "hi"
    assert hk.ContextPolicy.resolve("window").name == "window"


def test_check_resume_needs_the_harness_first_and_a_path(tmp_path):
    _, path = _logged(tmp_path)
    with pytest.raises(UsageError, match=r"missing 1 required positional argument: 'path'"):
        hk.check_resume(path)  # type: ignore[call-arg]
    for harness in (5, str(path), None):
        with pytest.raises(UsageError, match=r"takes the Harness that would go on first, got"):
            hk.check_resume(harness, path)
    assert hk.check_resume(_harness(tmp_path), path).ok


def test_harness_entry_points_name_a_misplaced_or_missing_argument(tmp_path):
    _, path = _logged(tmp_path)
    h = _harness(tmp_path)
    with pytest.raises(UsageError, match=r"h\.resume\('runs/<run_id>\.jsonl'"):
        h.resume()  # type: ignore[call-arg]
    with pytest.raises(UsageError, match=r"branch_id=\.\.\.\) takes a branch name, got list"):
        h.resume(path, branch_id=["main"])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"missing 1 required keyword-only argument: 'reason'"):
        h.restart(path)  # type: ignore[call-arg]
    with pytest.raises(UsageError, match=r"branch_id=\.\.\.\) takes a branch name, got int"):
        h.restart(path, reason="again", branch_id=5)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"h\.start\('the user request'"):
        h.start("hi", "r2")  # type: ignore[misc]
    with pytest.raises(UsageError, match=r"hk\.Harness\(tools, model"):
        hk.Harness([], "x", 5)  # type: ignore[misc]


@pytest.mark.parametrize("path", [5, ["r.jsonl"], b"r.jsonl"])
def test_event_log_entry_points_need_a_path(tmp_path, path):
    with pytest.raises(UsageError, match=r"EventLog\(path\) takes the path of a \.jsonl log"):
        hk.EventLog(path)
    with pytest.raises(UsageError, match=r"EventLog\.open_existing\(path\) takes the path"):
        hk.EventLog.open_existing(path)
    with pytest.raises(UsageError, match=r"hk\.EventLog\.read\('runs/<run_id>\.jsonl'\)"):
        hk.EventLog.read()  # type: ignore[call-arg]
    with pytest.raises(UsageError, match=r"hk\.EventLog\('runs/<run_id>\.jsonl', run_id="):
        hk.EventLog(tmp_path / "x.jsonl", "run-1")  # type: ignore[misc]
    assert not (tmp_path / "x.jsonl").exists()


def test_experiment_entry_points_name_a_misplaced_or_missing_argument(tmp_path):
    cases = hk.load_cases(SHOP)[:1]
    with pytest.raises(UsageError, match=r"hk\.Experiment\(cases, policies, models, repeats="):
        hk.Experiment(cases, ["full-history"], ["shop:careful"], 2)  # type: ignore[misc]
    exp = hk.Experiment(cases)
    with pytest.raises(UsageError, match=r"exp\.resume\(run_dir"):
        exp.resume()  # type: ignore[call-arg]
    with pytest.raises(UsageError, match=r"unexpected keyword argument 'workers'.*exp\.run\("):
        exp.run(tmp_path / "run", workers=2)  # type: ignore[call-arg]


def test_checked_call_converts_only_the_calls_own_argument_errors():
    @checked_call("call it as f(a)")
    def f(a):
        return a + 1  # a TypeError in here is the function's own

    assert f(1) == 2
    with pytest.raises(UsageError, match=r"takes 1 positional argument but 2 were given; call"):
        f(1, 2)
    with pytest.raises(TypeError, match="can only concatenate str"):
        f("x")
