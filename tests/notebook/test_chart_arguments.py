"""Notebook charts, widgets and probe/eval helpers refuse a wrong-typed first argument by name.

`hk.plot_probes(5)` and `hk.plot_policy_tokens(5)` raised `AttributeError: 'int' object has no
attribute 'attrs'`/`'columns'`, `hk.plot_comparison(5)` `... no attribute 'items'`,
`hk.StepControls(5)` / `hk.TraceExplorer(5)` `... no attribute 'harness'`/`'log'`,
`hk.ExperimentResult(5)` `'int' object is not iterable`, `hk.compare_policies(turns=None)` and
`hk.run_probes(seed=None)` raw `TypeError`s mid-run.
"""

from __future__ import annotations

import pytest

import harnesskit as hk


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda: hk.plot_probes(5), r"plot_probes\(matrix\) takes the DataFrame hk\.run_probes"),
        (lambda: hk.plot_policy_tokens([]), r"plot_policy_tokens\(frame\) takes the DataFrame"),
        (lambda: hk.plot_comparison(5), r"plot_comparison\(runs\) takes a dict \{label: Run"),
        (lambda: hk.ExperimentResult(5), r"ExperimentResult\(rows\) takes a list of result rows"),
        (lambda: hk.ExperimentResult("runs/x"), r"read a run directory with \.load\(path\)"),
        (lambda: hk.ExperimentResult([5]), r"a row takes a list of result rows"),
        (
            lambda: hk.compare_policies(turns=None),
            r"compare_policies\(turns=\.\.\.\) takes a whole",
        ),
        (lambda: hk.compare_policies(runs=5), r"compare_policies\(runs=\.\.\.\) takes a dict"),
        (lambda: hk.run_probes(seed=None), r"run_probes\(seed=\.\.\.\) takes a whole number"),
    ],
)
def test_a_wrong_typed_argument_is_a_usage_error_naming_it(call, said):
    with pytest.raises(hk.UsageError, match=said):
        call()


@pytest.mark.parametrize("run", [5, None, "run.jsonl"])
def test_widgets_need_a_run(run):
    pytest.importorskip("ipywidgets", reason="the [notebook] extra (ipywidgets) is not installed")
    with pytest.raises(hk.UsageError, match=r"StepControls\(run\) takes a Run"):
        hk.StepControls(run)
    with pytest.raises(hk.UsageError, match=r"TraceExplorer\(run\) takes a Run or an hk\.EventLog"):
        hk.TraceExplorer(run)
