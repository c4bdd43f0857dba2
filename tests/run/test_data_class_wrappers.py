"""R-S2 through model wrappers: every object that stands between a run and a model (the
experiment's throttle, a local server's client) exposes the wrapped model's `max_data_class`,
so a wrapped model is never sent more than it is approved for."""

from __future__ import annotations

import stat
import sys
import threading
from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.analysis.evals.experiment import _Throttled
from harnesskit.errors import UsageError
from harnesskit.models.fallback import FallbackModel
from harnesskit.models.local import LocalModel
from harnesskit.testing import reply

ROOT = Path(__file__).resolve().parents[2]
SHOP = ROOT / "datasets" / "cases" / "shop.jsonl"
FAKE = ROOT / "tests" / "support" / "fake_llama_server.py"


class Guarded:
    """A custom model object approved for public data only, recording what it is sent."""

    def __init__(self, limit: str | None = "public") -> None:
        self.name = "guarded"
        self.max_data_class = limit
        self.requests: list[hk.ModelRequest] = []

    def request(self, request):
        self.requests.append(request)
        return reply.text("ok")


@pytest.fixture
def local_files(tmp_path):
    binary = tmp_path / "llama-server"
    binary.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF-not-really")
    return {"server": binary, "model": str(gguf)}


@pytest.mark.parametrize("limit", ["public", "restricted", None])
@pytest.mark.parametrize("semaphore", [None, threading.Semaphore(2)])
def test_the_experiment_throttle_exposes_the_wrapped_limit(limit, semaphore):
    inner = Guarded(limit)
    assert _Throttled(inner, semaphore).max_data_class == limit
    inner.max_data_class = "secret"  # read through, never copied stale
    assert _Throttled(inner, semaphore).max_data_class == "secret"


@pytest.mark.parametrize("limit", ["internal", None])
def test_a_local_model_exposes_the_limit_its_client_enforces(local_files, limit):
    options = {} if limit is None else {"max_data_class": limit}
    model = LocalModel(local_files["model"], server=local_files["server"], **options)
    assert model.max_data_class == limit
    assert FallbackModel([model]).nodes[0].limit == limit  # a chain can skip it unstarted


def test_a_local_model_refuses_a_misspelt_limit(local_files):
    with pytest.raises(UsageError, match="'Public'"):
        LocalModel(local_files["model"], server=local_files["server"], max_data_class="Public")


def test_an_experiment_never_sends_restricted_requests_to_a_public_only_model(tmp_path):
    cases = hk.load_cases(SHOP)[:1]
    guarded = Guarded("public")
    exp = hk.Experiment(cases, models={"guarded": guarded}, settings={"data_class": "restricted"})

    result = exp.run(tmp_path / "exp", parallel=False, progress=False)

    assert guarded.requests == []  # refused before anything was sent
    (row,) = result.rows
    assert row["finish_reason"] == "error" and "approved up to 'public'" in row["error"]
