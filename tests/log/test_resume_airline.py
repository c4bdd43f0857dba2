"""The crash test on the airline agent: SIGKILL anywhere, resume, same database, no double write."""

import collections
import os
import pathlib
import signal
import subprocess
import sys

import pytest

import harnesskit as hk

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "support"))
import airline_crash as ac

DRIVER = pathlib.Path(ac.__file__)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted sequence of the five demo tasks."""
    work = tmp_path_factory.mktemp("air-reference")
    runs = ac.run_all(work)
    store = ac.CommittedDB(work)
    return {
        "hash": store.db.state_hash(full=True),
        "texts": [r.final_text for r in runs],
        "commits": sorted((c["tool"], c["key"]) for c in store.commits),
        "events": sum(len(r.log) for r in runs),
        "finish_reasons": [r.finish_reason for r in runs],
    }


def kill_at(work, point):
    env = dict(os.environ, HK_KILL_AT=point, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), str(work)], stdout=subprocess.PIPE, text=True, env=env
    )
    line = proc.stdout.readline()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stdout.close()
    assert line.strip() == f"AT {point}", f"never reached {point}: {line!r}"


# 5 runs, about 100 events counted from each run's first step; points in every run and phase
EVENT_POINTS = [1, 3, 5, 8, 11, 14, 17, 20, 23, 25, 28, 31, 35, 40, 46, 52, 58, 63, 69, 74, 80]
TOOL_POINTS = [
    "tool:book_reservation:before",
    "tool:book_reservation:after",
    "tool:cancel_reservation:after",
]


def test_the_reference_run_writes(reference):
    tools = collections.Counter(tool for tool, _ in reference["commits"])
    assert tools == {"book_reservation": 1, "cancel_reservation": 2}
    assert reference["events"] > 80


@pytest.mark.parametrize("point", [f"event:{n}" for n in EVENT_POINTS] + TOOL_POINTS)
def test_airline_agent_killed_anywhere_resumes_to_the_same_database(tmp_path, point, reference):
    kill_at(tmp_path, point)
    runs = ac.run_all(tmp_path)
    store = ac.CommittedDB(tmp_path)
    assert store.db.state_hash(full=True) == reference["hash"]
    commits = sorted((c["tool"], c["key"]) for c in store.commits)
    assert commits == reference["commits"]  # every write acted exactly once, under the same key
    resumed = [hk.EventLog.read(tmp_path / "logs" / f"air-{i}.jsonl") for i in range(len(ac.TASKS))]
    assert sum(len(log.of_type("run.resume")) for log in resumed) == 1
    texts = [log.last("model.response").payload["message"]["content"] for log in resumed]
    assert texts == reference["texts"]
    # "stop", and "transferred" for the task handed to a human agent
    assert [r.finish_reason for r in runs] == reference["finish_reasons"][-len(runs) :]
