"""Redaction over the real recorded τ-bench runs and data (R-S1, R-S2; skipped when absent).

Phone numbers are marked without the word "phone" near them (any `+` number, a dashed North
American number), so the ids, dates, times, prices and counts of real airline data must not
look like one: every recorded run is replayed through the harness into real log files, and
every record of the airline database and the tau2 tasks is checked on its own.
"""

from __future__ import annotations

import json

import pytest

from harnesskit.domains import airline
from harnesskit.log import redact

TAU = "sierra-research__tau-bench"


@pytest.fixture(scope="module")
def recorded_runs():
    from tests.conftest import SHARED

    path = SHARED / "datasets" / TAU / "historical_trajectories/gpt-4o-airline.json"
    if not path.is_file():
        pytest.skip(f"recorded τ-bench runs not at {path} (../shared exists only in the dev setup)")
    return airline.load_recorded_runs(path)


def test_replaying_every_recorded_run_marks_no_phone_and_redacts_nothing(recorded_runs, tmp_path):
    for i, run in enumerate(recorded_runs):
        airline.replay_run(run, log_dir=tmp_path / str(i))
    marked: dict[str, int] = {}
    lines = [x for f in tmp_path.rglob("*.jsonl") for x in f.read_text("utf-8").splitlines()]
    for line in lines:
        for kind in json.loads(line)["payload"].get("personal_data", []):
            marked[kind] = marked.get(kind, 0) + 1
    assert len(lines) > 5000
    assert set(marked) == {"email"}  # the users' e-mails, and nothing else
    assert not [x for x in lines if "[REDACTED:" in x]


def test_no_airline_record_or_task_looks_like_a_phone_number(shared_datasets):
    r = redact.Redactor(kinds=(*redact.DEFAULT_KINDS, "phone"))
    texts: list[str] = []
    for name in ("users", "reservations", "flights"):
        path = shared_datasets / TAU / f"tau_bench/envs/airline/data/{name}.json"
        db = json.loads(path.read_text(encoding="utf-8"))
        texts += [json.dumps({k: v}) for k, v in db.items()]
    tasks = shared_datasets / "sierra-research__tau2-bench/data/tau2/domains/airline/tasks.json"
    texts += [json.dumps(t) for t in json.loads(tasks.read_text())]
    few_shot = shared_datasets / TAU / "few_shot_data/MockAirlineDomainEnv-few_shot.jsonl"
    texts += few_shot.read_text().splitlines()
    assert len(texts) > 2500
    # the phone pattern does run on some: arrival times on the next day (`"01:30:00+1"`)
    wake = redact._wake("phone")
    assert wake is not None and sum(wake(t.lower(), t) for t in texts) > 10
    assert not [t[:80] for t in texts if "phone" in r.personal(t)]
    assert not [t[:80] for t in texts if "[REDACTED:" in r.redact(t)[0]]


def test_agentdojo_suites_lose_their_passwords_and_keep_their_links():
    # the AgentDojo suites hold a few real-looking passwords (and reset tokens) among
    # thousands of lines of mail, calendar and banking text: those go, the links stay
    from tests.conftest import SHARED

    suites = SHARED / "datasets/ethz-spylab__agentdojo/src/agentdojo/data/suites"
    if not suites.is_dir():
        pytest.skip(f"AgentDojo suites not at {suites} (../shared exists only in the dev setup)")
    r = redact.Redactor()
    texts = {f.relative_to(suites).as_posix(): f.read_text("utf-8") for f in suites.rglob("*.yaml")}
    out = {name: r.redact(text)[0] for name, text in texts.items()}
    assert len(out) >= 8
    banking = out["banking/environment.yaml"]
    assert "password123" in texts["banking/environment.yaml"] and "password123" not in banking
    vectors = out["workspace/injection_vectors.yaml"]
    assert "reset your password: https://www.facebook.com/reset-password" in vectors
    changed = [n for n in out if out[n] != texts[n]]
    assert set(changed) <= {
        "banking/environment.yaml",
        "workspace/include/inbox.yaml",  # a password-reset link's token
    }
