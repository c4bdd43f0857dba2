"""End to end: a run's spans exported to a real Phoenix on 127.0.0.1 and read back from its API.

Phoenix (`arize-phoenix`) is heavy, so it lives in its own venv: `make test-extras` builds
`.venv-extras` and runs this test there. Elsewhere it runs when `HK_PHOENIX_PYTHON` names a
Python that has Phoenix installed, and skips with the reason otherwise.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip(
    "opentelemetry.sdk", reason="the [otel] extra (opentelemetry-sdk) is not installed"
)

import httpx

import harnesskit as hk
from harnesskit.log.otel import export_otlp, spans_of
from harnesskit.messages import Usage
from harnesskit.testing import reply


def _phoenix_python() -> str:
    given = os.environ.get("HK_PHOENIX_PYTHON")
    if given:
        return given
    if importlib.util.find_spec("phoenix") is not None:
        return sys.executable
    pytest.skip(
        "no Phoenix: the [otel] Phoenix test needs the extra arize-phoenix (make test-extras, or HK_PHOENIX_PYTHON=<python with phoenix>)"
    )


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    python = _phoenix_python()
    port, grpc = _port(), _port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_WORKING_DIR": str(tmp_path_factory.mktemp("phoenix")),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = tmp_path_factory.mktemp("phoenix-log") / "server.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [python, "-m", "phoenix.server.main", "serve"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):  # start-up runs migrations; poll, never assert a duration
            if proc.poll() is not None:
                pytest.fail(f"Phoenix exited at start:\n{log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            pytest.fail(f"Phoenix did not answer on {url}:\n{log.read_text()[-3000:]}")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


@hk.tool
def lookup(key: str) -> str:
    """Look a key up."""
    return key.upper()


def test_phoenix_shows_the_runs_spans_with_nesting_and_token_counts(phoenix):
    def usage(r, p, c):
        return dataclasses.replace(r, usage=Usage(prompt_tokens=p, completion_tokens=c))

    turns = [usage(reply.tool_call("lookup", key="a"), 120, 12), usage(reply.text("A"), 180, 4)]
    run = (
        hk.Harness([lookup], hk.ScriptedModel(turns, name="scripted-m"))
        .start("go", run_id="r-phoenix")
        .run()
    )
    assert export_otlp(run, endpoint=f"{phoenix}/v1/traces") == 4
    trace_id = format(spans_of(run)[0].context.trace_id, "032x")
    spans = []
    for _ in range(300):  # ingestion is asynchronous
        answer = httpx.get(
            f"{phoenix}/v1/projects/default/spans", params={"limit": 100, "trace_id": trace_id}
        )
        assert answer.status_code == 200, answer.text
        spans = answer.json()["data"]
        if len(spans) == 4:
            break
        time.sleep(0.1)
    assert len(spans) == 4
    by_name = {}
    for s in spans:
        by_name.setdefault(s["name"], []).append(s)
    (root,) = by_name["invoke_agent r-phoenix"]
    root_id = root["context"]["span_id"]
    assert root.get("parent_id") in (None, "")
    children = by_name["chat scripted-m"] + by_name["execute_tool lookup"]
    assert len(children) == 3 and {s["parent_id"] for s in children} == {root_id}
    tokens = sorted(
        (s["attributes"]["llm.token_count.prompt"], s["attributes"]["llm.token_count.completion"])
        for s in by_name["chat scripted-m"]
    )
    assert tokens == [(120, 12), (180, 4)]
    assert {s["span_kind"] for s in spans} == {"AGENT", "LLM", "TOOL"}
