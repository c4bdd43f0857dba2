import pytest

import harnesskit as hk
from harnesskit.analysis.probes import (
    PROBE_KINDS,
    compare_policies,
    run_probe,
    run_probes,
)


def sent_after(result):
    """The exact bytes of every request sent after the canary went stale."""
    log = result.log
    return [
        log.request_text(e.event_id)
        for e in log.of_type("model.request")
        if e.event_id > result.armed_after
    ]


@pytest.mark.parametrize("kind", PROBE_KINDS)
def test_default_blocks_every_probe_kind_in_the_bytes_sent(kind):
    result = run_probe("default", kind, seed=3)
    texts = sent_after(result)
    assert texts and result.requests_checked == len(texts)
    assert not any(result.canary in t for t in texts) and not result.leaked
    # the planted event really is in the log: the probe did plant it
    assert any(result.canary in hk.context.event_text(e) for e in result.log)


@pytest.mark.parametrize("kind", PROBE_KINDS)
def test_naive_leaks_every_probe_kind_so_the_probes_can_fail(kind):
    result = run_probe("naive", kind, seed=3)
    texts = sent_after(result)
    assert result.leaked and any(result.canary in t for t in texts)
    assert len(result.leaked_in) == sum(result.canary in t for t in texts)


@pytest.mark.parametrize("kind", [k for k in PROBE_KINDS if k != "other_branch"])
def test_full_history_leaks_every_stale_kind(kind):
    result = run_probe("full-history", kind, seed=3)
    assert result.leaked


def test_full_history_still_keeps_sibling_branches_apart():
    # branch isolation (R-V5) is a runtime invariant: only `branches: all` (naive) drops it
    result = run_probe("full-history", "other_branch", seed=3)
    assert not result.leaked
    assert not any(result.canary in t for t in sent_after(result))


def test_canaries_sent_before_they_went_stale_do_not_count():
    result = run_probe("default", "superseded_fact", seed=0)
    log = result.log
    before = [e for e in log.of_type("model.request") if e.event_id < result.armed_after]
    assert any(result.canary in log.request_text(e.event_id) for e in before)
    assert not result.leaked


def test_probe_matrix_is_parameterized_like_an_experiment():
    matrix = run_probes(
        ["default", "naive", "window"],
        kinds=["other_branch", "untrusted_instruction"],
        repeats=2,
        seed=7,
    )
    assert matrix.index.tolist() == ["default", "naive", "window"]
    assert matrix.columns.tolist() == ["other_branch", "untrusted_instruction"]
    assert set(matrix.loc["default"]) == {"blocked"}
    assert set(matrix.loc["naive"]) == {"leaked"}
    runs = matrix.attrs["runs"]
    assert len(runs) == 12 and sorted(set(runs["seed"])) == [7, 8]
    # one canary per kind and seed, shared by the policies so they face the same run
    per_run = runs.groupby(["kind", "seed"])["canary"].nunique()
    assert (per_run == 1).all() and runs["canary"].nunique() == 4
    fig = hk.plot_probes(matrix)
    assert fig.axes[0].get_title().startswith("contamination probes")
    # window keeps sibling branches apart too (R-V5): 2 blocked for default + 1 for window
    assert [t.get_text() for t in fig.axes[0].texts].count("blocked") == 3


def test_run_probes_rejects_bad_parameters():
    with pytest.raises(hk.UsageError, match="repeats must be a whole number >= 1"):
        run_probes(["default"], repeats=0)
    with pytest.raises(hk.UsageError, match="unknown probe kind"):
        run_probe("default", "nope")


def test_default_sends_a_fifth_of_full_history_and_stays_flat():
    runs = {}
    frame = compare_policies(["full-history", "default", "summary"], turns=40, seed=0, runs=runs)
    assert frame.shape == (40, 3) and frame.index[0] == 1
    totals = frame.sum()
    assert totals["default"] * 5 <= totals["full-history"]
    assert totals["summary"] * 5 <= totals["full-history"]
    # flat: over the last 30 steps default barely moves while full-history climbs
    tail = frame.loc[11:]
    slope = {name: _slope(tail.index, tail[name]) for name in frame.columns}
    assert slope["full-history"] > 500 and abs(slope["default"]) < 0.03 * slope["full-history"]
    assert tail["default"].max() < 2 * tail["default"].min()
    # the same session ran under every policy: same tools called in the same order
    calls = {n: [e.payload["tool"] for e in r.log.of_type("tool.call")] for n, r in runs.items()}
    assert calls["default"] == calls["full-history"] == calls["summary"]
    fig = hk.plot_policy_tokens(frame)
    assert f"default (total {totals['default']:,})" in [
        t.get_text() for t in fig.axes[0].get_legend().get_texts()
    ]


def _slope(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda: run_probes(policies=5),
        lambda: run_probes(kinds=5),
        lambda: compare_policies(5),
    ],
    ids=["run_probes-policies", "run_probes-kinds", "compare_policies"],
)
def test_a_non_list_argument_is_a_usage_error_naming_it_and_what_to_pass(call):
    with pytest.raises(hk.UsageError, match=r"(policies|kinds)=\.\.\.\) takes .*got int 5"):
        call()
