"""Less common public calls with wrong-typed arguments raise `UsageError`, not raw errors."""

from __future__ import annotations

from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.errors import BrakeTripped
from harnesskit.testing import reply


def _run():
    return hk.Harness([], hk.ScriptedModel([reply.text("a")])).run("hi")


@pytest.mark.parametrize(
    ("patterns", "said"),
    [
        ({"x": "("}, "is not a valid regex"),
        ({"x": 5}, "takes \\(kind, regex\\) pairs"),
        (5, "takes \\(kind, regex\\) pairs"),
        ([("x",)], "takes \\(kind, regex\\) pairs"),
    ],
)
def test_transport_audit_patterns_are_checked(patterns, said):
    with pytest.raises(hk.UsageError, match=said):
        hk.transport_audit(_run(), patterns=patterns)


def test_transport_audit_with_good_patterns_still_works():
    assert hk.transport_audit(_run(), patterns={"order": r"ORD-\d+"}) is not None


@pytest.mark.parametrize("harness", [None, 5, "h"])
def test_replay_needs_a_harness(harness):
    with pytest.raises(hk.UsageError, match=r"replay\(log, harness\) needs the Harness"):
        hk.replay(_run().log, harness)


def test_register_domain_needs_a_domain():
    with pytest.raises(hk.UsageError, match="register_domain takes a Domain"):
        hk.register_domain(5)


def test_brake_tripped_needs_a_number():
    with pytest.raises(hk.UsageError, match="BrakeTripped value must be a number"):
        BrakeTripped("max_steps", value="a", limit=3, unit="steps")
    assert BrakeTripped("max_steps", value=3, limit=3, unit="steps").value == 3


@pytest.mark.parametrize("dry_run", ["yes", "no", 1, None])
def test_gate_dry_run_must_be_a_bool(dry_run):
    with pytest.raises(hk.UsageError, match=r"Gate\(dry_run=\.\.\.\) takes True or False"):
        hk.Gate(dry_run=dry_run)


@pytest.mark.parametrize(
    ("trials", "k", "said"),
    [
        (5, 1, "one \\(n, c\\) pair per task"),
        ([(4, 2)], "1", "needs an int k"),
        ([(4.0, 2)], 1, "trial count n must be an int"),
        ([(4, 2, 1)], 1, "one \\(n, c\\) pair per task"),
        ([(4, True)], 1, "success count c must be an int"),
    ],
)
def test_pass_hat_k_arguments_are_checked(trials, k, said):
    with pytest.raises(hk.UsageError, match=said):
        hk.pass_hat_k(trials, k)


def test_pass_hat_k_takes_numpy_counts_as_pandas_gives_them():
    np = pytest.importorskip("numpy")
    pairs = [(np.int64(4), np.int64(2)), (4, 4)]
    assert hk.pass_hat_k(pairs, 2) == pytest.approx((1 / 6 + 1) / 2)


def test_load_cases_and_experiment_arguments_are_checked(tmp_path):
    with pytest.raises(hk.UsageError, match="load_cases takes a .jsonl path"):
        hk.load_cases(5)
    not_text = tmp_path / "cases.jsonl"
    not_text.write_bytes(b"\xff\xfe{}\n")
    with pytest.raises(hk.UsageError, match="cases.jsonl: not UTF-8 text"):
        hk.load_cases(not_text)
    with pytest.raises(hk.UsageError, match="Experiment takes a list of cases"):
        hk.Experiment(5)
    cases = hk.load_cases(Path(__file__).parents[1] / "datasets" / "cases" / "shop.jsonl")
    for bad in ("x", 0, 1.5, True):
        with pytest.raises(hk.UsageError, match="repeats must be an int >= 1"):
            hk.Experiment(cases, repeats=bad)
