"""Experiments on threads and on a real Dask LocalCluster give the serial results (issue 17)."""

import json
import pathlib
import sys

import pytest

import harnesskit as hk

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "support"))

import race_domain

distributed = pytest.importorskip("distributed", reason="the [distributed] extra is not installed")

COMPARED = ["case", "policy", "model", "repeat", "seed", "pass", "steps", "tool_calls",
            "finish_reason", "failed_checks", "error", "run_id"]  # fmt: skip


CLOCKS = {"seconds", "created", "created_at", "started_at", "elapsed_seconds", "ts"}


def _scrub(value):
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if k not in CLOCKS}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _events(run_dir, name):
    """A log without its clocks and its run folder: event types and payloads."""
    return [
        (e.type, json.dumps(_scrub(e.payload), sort_keys=True).replace(str(run_dir), "RUN"))
        for e in hk.EventLog.read(run_dir / "logs" / name)
    ]


def _same_logs(a, b):
    names = sorted(p.name for p in (a / "logs").glob("*.jsonl"))
    assert names == sorted(p.name for p in (b / "logs").glob("*.jsonl"))
    for name in names:
        assert _events(a, name) == _events(b, name), name


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    path = tmp_path_factory.mktemp("serial") / "run"
    return race_domain.experiment().run(path, parallel=False, progress=False)


def test_race_repro_passes_40_of_40_serially(serial):
    assert len(serial) == 40
    assert serial.frame["pass"].sum() == 40


def test_race_repro_passes_40_of_40_on_threads_like_serial(serial, tmp_path):
    result = race_domain.experiment(max_workers=8).run(tmp_path / "run", progress=False)
    assert result.frame["pass"].sum() == 40
    assert result.frame[COMPARED].equals(serial.frame[COMPARED])
    _same_logs(serial.path, result.path)


def test_race_repro_on_a_two_worker_local_cluster_like_serial(serial, tmp_path):
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",  # the dashboard server binds 8787 even with None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.run(sys.path.insert, 0, race_domain.__file__.rsplit("/", 1)[0])
        result = race_domain.experiment().run(tmp_path / "run", progress=False, executor=client)
        workers = set(client.run(lambda: __import__("os").getpid()).values())
    assert len(workers) == 2
    assert result.frame["pass"].sum() == 40
    assert result.frame[COMPARED].equals(serial.frame[COMPARED])
    _same_logs(serial.path, result.path)
    again = hk.ExperimentResult.load(result.path)
    assert again.frame[COMPARED].equals(serial.frame[COMPARED])
