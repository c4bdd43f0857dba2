"""Many writers on one store: unique temp names and atomic renames (issue 17, item 1)."""

import json
import pathlib
import subprocess
import sys
import threading

import harnesskit as hk

SUPPORT = pathlib.Path(__file__).parents[1] / "support"
sys.path.insert(0, str(SUPPORT))

import storage_worker  # noqa: E402


def test_fifty_harnesses_on_one_log_dir_in_threads(tmp_path):
    out = storage_worker.run_many(tmp_path, 50, "thr")
    assert out["errors"] == []
    assert out["ok"] == 50
    assert len(list(tmp_path.glob("thr-*.jsonl"))) == 50
    assert list(tmp_path.rglob("*.tmp")) == []  # no temp file left behind


def test_two_processes_on_one_log_dir(tmp_path):
    root = pathlib.Path(__file__).parents[2]
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}
    procs = [
        subprocess.Popen(
            [sys.executable, str(SUPPORT / "storage_worker.py"), str(tmp_path), "25", f"p{k}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for k in range(2)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert [r["errors"] for r in results] == [[], []]
    assert sum(r["ok"] for r in results) == 50
    assert len(list(tmp_path.glob("p*-*.jsonl"))) == 50


def test_same_bytes_by_two_stores_both_succeed(tmp_path):
    stores = [hk.ArtifactStore(tmp_path), hk.ArtifactStore(tmp_path)]
    barrier = threading.Barrier(16)
    refs, errors = [], []

    def put(k):
        barrier.wait()
        try:
            for n in range(20):
                refs.append(stores[k % 2].put({"n": n, "pad": "y" * 5000}).id)
        except Exception as exc:  # reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=put, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(set(refs)) == 20
    fresh = hk.ArtifactStore(tmp_path)
    assert all(json.loads(fresh.read(r))["pad"] == "y" * 5000 for r in set(refs))
    assert list(tmp_path.rglob("*.tmp")) == []
