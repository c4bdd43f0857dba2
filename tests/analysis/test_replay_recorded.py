"""Recomputing the real recorded GPT-4o runs from ../shared (skipped when absent)."""

import collections
from pathlib import Path

import pytest

from harnesskit.domains import airline
from harnesskit.errors import UsageError

SHARED = Path(__file__).parents[2] / "../shared/datasets"
RECORDED = SHARED / "sierra-research__tau-bench/historical_trajectories/gpt-4o-airline.json"

needs_shared = pytest.mark.skipif(
    not RECORDED.is_file(),
    reason=f"recorded τ-bench runs not at {RECORDED} (../shared exists only in the dev setup)",
)


@pytest.fixture(scope="module")
def runs():
    return airline.load_recorded_runs(RECORDED)


def pick(runs, task_id, trial):
    return next(r for r in runs if (r.task_id, r.trial) == (task_id, trial))


@needs_shared
def test_loader_reads_all_runs_with_their_quirks(runs):
    assert len(runs) == 200
    assert collections.Counter(r.trial for r in runs) == {0: 50, 1: 50, 2: 50, 3: 50}
    assert sum(r.reward for r in runs) == 84
    assert sum(1 for r in runs if r.reused_call_ids) == 49
    unfinished = [r for r in runs if r.reward_info is None]
    assert len(unfinished) == 5
    assert all(r.reward == 0 for r in unfinished)
    first = runs[0]
    assert first.task.user_id == "mia_li_3668"
    assert first.task.actions[0].name == "book_reservation"
    assert first.calls[0].name == "get_user_details"
    assert first.calls[0].output.startswith("{")
    assert repr(first).startswith("RecordedRun(task_id=0, trial=0")
    assert len(airline.load_recorded_runs(RECORDED, limit=3)) == 3


# (task, trial): a pass, a fail on the database, an output task passing and failing, a run
# cut off by the step limit, a transfer, a run reusing tool-call ids
SAMPLE = [(0, 0), (0, 1), (2, 0), (8, 0), (9, 2), (33, 0), (44, 1), (12, 1), (28, 0)]


@needs_shared
@pytest.mark.parametrize(("task_id", "trial"), SAMPLE)
def test_recomputed_reward_equals_recorded(runs, task_id, trial):
    run = pick(runs, task_id, trial)
    result = airline.recompute_run(run)
    assert result.result.reward == run.reward, result.result.reason
    assert result.agrees
    for d in result.divergences:  # only the post-recording rename may differ
        assert d.tool == "get_user_details"
        assert d.cause.startswith("address field renamed")


@needs_shared
def test_recording_time_data_reproduces_outputs_and_ground_truth_hashes(runs):
    for task_id, trial in SAMPLE:
        run = pick(runs, task_id, trial)
        result = airline.recompute_run(run, address_key="province")
        assert result.divergences == ()
        gt = (run.reward_info or {}).get("info", {}).get("gt_data_hash")
        if gt:
            assert result.result.expected_hash == gt


@needs_shared
def test_sample_covers_the_interesting_cases(runs):
    sample = [pick(runs, *key) for key in SAMPLE]
    assert {r.reward for r in sample} == {0.0, 1.0}
    assert any(not r.completed for r in sample)
    assert any(r.task.outputs for r in sample)
    assert any(r.reused_call_ids for r in sample)
    assert any(c.name == "transfer_to_human_agents" for r in sample for c in r.calls)


@needs_shared
def test_shipped_database_unchanged_after_recomputing(runs):
    before = airline.shipped_files_digest()
    airline.recompute_all([pick(runs, 0, 0), pick(runs, 2, 0)])
    assert airline.shipped_files_digest() == before


def test_loader_errors(tmp_path):
    with pytest.raises(UsageError, match="not found"):
        airline.load_recorded_runs(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1}')
    with pytest.raises(UsageError, match="JSON list"):
        airline.load_recorded_runs(bad)
    bad.write_text('[{"task_id": 1}]')
    with pytest.raises(UsageError, match="record 0"):
        airline.load_recorded_runs(bad)


# ---------------------------------------------------------------- through the harness

HARNESS_SAMPLE = [(0, 0), (2, 2), (6, 0), (9, 2), (12, 1), (46, 3)]


@needs_shared
@pytest.mark.parametrize(("task_id", "trial"), HARNESS_SAMPLE)
def test_harness_replay_reward_equals_recorded(runs, task_id, trial):
    run = pick(runs, task_id, trial)
    result = airline.replay_run(run)
    assert result.result.reward == run.reward, result.result.reason
    assert result.tool_calls == len(run.calls)
    assert {d.cause for d in result.divergences} <= {
        "address field renamed (province -> state) after the recording"
    }
    assert result.log.of_type("run.finished")


@needs_shared
def test_harness_replay_reproduces_recorded_outputs_exactly_on_recording_time_data(runs):
    run = pick(runs, 0, 0)
    result = airline.replay_run(run, address_key="province")
    assert result.divergences == ()
    assert result.result.expected_hash == run.reward_info["info"]["gt_data_hash"]


@needs_shared
def test_reused_call_ids_are_replaced_and_kept(runs):
    run = next(r for r in runs if r.reused_call_ids)
    result = airline.replay_run(run)
    assert result.replaced_call_ids >= 1
    replaced = {
        original
        for e in result.log.of_type("model.response")
        for original in (e.payload.get("id_replacements") or {}).values()
    }
    assert replaced <= set(run.reused_call_ids)
    ids = [e.payload["tool_call_id"] for e in result.log.of_type("tool.call")]
    assert len(ids) == len(set(ids))


@needs_shared
def test_unfinished_recording_scores_zero_even_with_the_right_database(runs):
    run = pick(runs, 46, 3)  # cut off by the step limit after the right booking
    result = airline.replay_run(run)
    assert result.result.db_match and not result.result.completed
    assert result.result.reward == 0.0 == run.reward
    assert result.finish_reason == "cancelled"


@needs_shared
def test_run_replay_report_and_cli(tmp_path, capsys):
    from harnesskit import cli

    report = airline.run_replay(RECORDED, limit=4, log_dir=tmp_path, echo=None)
    assert report.agreement == 4 and len(report.results) == 4
    assert report.pass_hat == {1: report.mean_reward}
    assert len(list(tmp_path.glob("replay-*/*.jsonl"))) == 4
    assert "agreement with recorded reward: 4/4" in report.to_text()
    assert cli.main(["replay", str(RECORDED), "--limit", "2", "--summary"]) == 0
    assert "agreement with recorded reward: 2/2" in capsys.readouterr().out


@needs_shared
def test_a_process_pool_gives_the_same_results_in_the_same_order():
    serial = airline.run_replay(RECORDED, limit=6, echo=None, workers=1)
    pooled = airline.run_replay(RECORDED, limit=6, echo=None, workers=2)
    assert pooled.to_text().splitlines()[:-1] == serial.to_text().splitlines()[:-1]
    for a, b in zip(serial.results, pooled.results, strict=True):
        assert (a.task_id, a.trial, a.result, a.steps, a.divergences) == (
            b.task_id,
            b.trial,
            b.result,
            b.steps,
            b.divergences,
        )
        shape = [(e.event_id, e.parent_id, e.type, e.summary) for e in a.log.events]
        assert shape == [(e.event_id, e.parent_id, e.type, e.summary) for e in b.log.events]
        assert b.log.path is None
