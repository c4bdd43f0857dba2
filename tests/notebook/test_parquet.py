"""Parquet: every frame kind writes and reads back equal; a dataset of many runs (R-O5)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import harnesskit as hk
from harnesskit.notebook import export_parquet, read_parquet, typed_frame
from tests.notebook.test_frames import braked_run

pq = pytest.importorskip("pyarrow.parquet", reason="the [parquet] extra (pyarrow) is not installed")


def _equal(a, b):
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


@pytest.mark.parametrize("kind", ["events", "budget", "composition"])
def test_every_frame_kind_round_trips_through_parquet(tmp_path, kind):
    run, _ = braked_run()
    df = hk.frame(run, kind=kind)
    df.to_parquet(tmp_path / "f.parquet")
    back = pd.read_parquet(tmp_path / "f.parquet")
    _equal(back, df)
    types = pq.read_schema(tmp_path / "f.parquet")
    assert "null" not in {str(t) for t in types.types}


def test_comparison_lint_and_report_frames_round_trip(tmp_path):
    run, _ = braked_run()
    other, _ = braked_run()

    @hk.tool
    def vague(status: str) -> str:
        """Does stuff."""
        return ""

    frames = {
        "comparison": hk.frame({"a": run, "b": other}, kind="comparison"),
        "lint": hk.frame(hk.lint(vague)),
        "audit": hk.frame(hk.audit(run)),
    }
    for name, df in frames.items():
        assert "object" not in {str(t) for t in df.dtypes}, name
        df.to_parquet(tmp_path / f"{name}.parquet")
        back = pd.read_parquet(tmp_path / f"{name}.parquet")
        pd.testing.assert_frame_equal(back, df)


def test_the_events_payload_is_json_text_with_the_exact_payload():
    run, _ = braked_run()
    df = hk.frame(run)
    assert str(df["payload"].dtype) == "string"
    assert [json.loads(p) for p in df["payload"]] == [e.payload for e in run.log.events]
    assert str(df["ok"].dtype) == "boolean" and str(df["step"].dtype) == "Int64"


def test_typed_frame_types_object_columns():
    df = pd.DataFrame(
        {
            "flag": [True, None],
            "n": [1, None],
            "x": [1.5, 2],
            "text": ["a", None],
            "nested": [{"a": [1]}, None],
            "mixed": [1, "one"],
        },
        dtype=object,
    )
    t = typed_frame(df)
    assert {c: str(t[c].dtype) for c in t} == {
        "flag": "boolean",
        "n": "Int64",
        "x": "Float64",
        "text": "string",
        "nested": "string",
        "mixed": "string",
    }
    assert t["nested"][0] == '{"a": [1]}' and pd.isna(t["nested"][1])
    assert t["mixed"].tolist() == ["1", '"one"']


def test_export_parquet_writes_a_dataset_of_many_runs(tmp_path):
    logs = {}
    for i in range(3):
        run, _ = braked_run(tmp_path / f"logs{i}")
        logs[f"run-{i}"] = run
    written = export_parquet(logs, tmp_path / "ds")
    assert sorted(p.name for p in written.values()) == ["budget.parquet", "events.parquet"]
    events = read_parquet(tmp_path / "ds")
    assert events["run_id"].tolist() == [r for r, run in logs.items() for _ in run.log.events]
    for run_id, run in logs.items():
        mine = events[events["run_id"] == run_id].drop(columns="run_id")
        _equal(mine, hk.frame(run))
    budget = read_parquet(tmp_path / "ds", "budget")
    assert budget.groupby("run_id")["total_tokens"].sum().to_dict() == {
        r: int(hk.frame(run, kind="budget")["total_tokens"].sum()) for r, run in logs.items()
    }
    # the logs on disk read back as the same dataset
    reread = {r: hk.EventLog.read(run.log.path) for r, run in logs.items()}
    again = export_parquet(reread, tmp_path / "d2")
    assert len(read_parquet(again["events"])) == len(events)


def test_export_parquet_refuses_what_is_not_a_run_and_shared_run_ids(tmp_path):
    with pytest.raises(hk.UsageError, match="runs or event logs"):
        export_parquet([42], tmp_path)
    run, _ = braked_run()
    with pytest.raises(hk.UsageError, match="share a run id"):
        export_parquet([run, run.log], tmp_path)
