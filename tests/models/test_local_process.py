"""`local:` models against a stand-in llama-server process: start, health, stop, no orphans."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.errors import ModelError, UsageError
from harnesskit.messages import Message
from harnesskit.models import _local_install as inst
from harnesskit.models import base
from harnesskit.models.base import ModelRequest
from harnesskit.models.local import LocalModel, server_timings

FAKE = Path(__file__).resolve().parents[1] / "support" / "fake_llama_server.py"
TOOLS = (
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); a reaped process does not exist
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split()[2] != "Z"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache folder holding a tiny 'GGUF' and a stand-in server binary."""
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)
    binary = tmp_path / "llama-server"
    binary.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF-not-really")
    return {"binary": binary, "gguf": gguf, "env": {"HARNESSKIT_CACHE_DIR": str(tmp_path)}}


def request() -> ModelRequest:
    return ModelRequest(messages=(Message(role="user", content="Weather in Oslo?"),), tools=TOOLS)


def test_the_server_starts_on_loopback_answers_and_is_gone_after_close(cache):
    model = hk.get_model(f"local:{cache['gguf']}", server=cache["binary"], env=cache["env"])
    assert model.pid is None  # nothing starts before it is needed

    response = model.request(request())
    pid = model.pid

    assert pid is not None and alive(pid)
    assert model.base_url == f"http://127.0.0.1:{model.port}/v1"
    assert response.model == f"local:{cache['gguf']}"
    assert response.message.tool_calls[0].name == "get_weather"
    assert response.usage.cached_tokens == 100
    timings = server_timings(response)
    assert (timings.prompt_evaluated, timings.prompt_cached, timings.cache_share) == (
        20,
        100,
        100 / 120,
    )
    assert timings.generated_tokens_per_second == pytest.approx(10.0)
    info = model.info
    assert info["server_version"] == "b0-fake" and info["pid"] == pid
    assert info["sha256"] == inst.verified_sha256(cache["gguf"])
    assert "--jinja" in info["args"] and info["args"][:2] == ["--host", "127.0.0.1"]
    assert info["args"][info["args"].index("--threads") :][:2] == ["--threads", "2"]

    model.close()

    assert not alive(pid) and model.pid is None and model.info["pid"] is None
    model.close()  # twice is fine


def test_a_with_block_stops_the_server_even_when_it_raises(cache):
    seen = []

    def use() -> None:
        with LocalModel(str(cache["gguf"]), server=cache["binary"]) as model:
            seen.append(model.pid)
            assert alive(model.pid)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        use()
    assert not alive(seen[0])


def test_a_dropped_model_does_not_leave_its_server_behind(cache):
    model = LocalModel(str(cache["gguf"]), server=cache["binary"]).start()
    pid = model.pid
    del model
    import gc

    gc.collect()
    assert not alive(pid)


def test_a_killed_server_is_a_model_error_with_its_exit_code(cache):
    model = LocalModel(str(cache["gguf"]), server=cache["binary"]).start()
    os.kill(model.pid, 9)
    model._proc.wait()

    with pytest.raises(ModelError, match="exited with code -9"):
        model.request(request())
    model.close()
    assert model.request(request()).message.tool_calls  # a new server after close()
    model.close()


def test_a_server_that_fails_to_start_reports_its_log(cache):
    model = LocalModel(
        str(cache["gguf"]), server=cache["binary"], extra_args=["--exit-at-start", "3"]
    )
    with pytest.raises(ModelError, match="(?s)exited with code 3 while starting.*failed to load"):
        model.start()
    assert model.pid is None


def test_missing_weights_or_runtime_say_how_to_install(cache, tmp_path):
    with pytest.raises(UsageError, match="make local"):
        hk.get_model("local:qwen2.5-coder-0.5b", env={"HARNESSKIT_CACHE_DIR": str(tmp_path / "e")})
    with pytest.raises(UsageError, match="llama-server not found.*make local"):
        LocalModel(str(cache["gguf"]), server=tmp_path / "nope")
    with pytest.raises(UsageError, match="known: qwen2.5-coder-0.5b"):
        hk.get_model("local:qwen9")
    with pytest.raises(UsageError, match="threads must be an int of at least 1"):
        LocalModel(str(cache["gguf"]), server=cache["binary"], threads=0)


def test_requests_stay_blocked_in_tests_by_default(cache, monkeypatch):
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", False)
    model = LocalModel(str(cache["gguf"]), server=cache["binary"])
    with pytest.raises(UsageError, match="blocked"):
        model.request(request())
    assert model.pid is None


def test_the_cli_timeout_flag_sets_the_per_attempt_timeout(cache):
    from harnesskit import cli

    parser = cli.build_parser()
    args = parser.parse_args(
        [
            "demo",
            "--model",
            "openai-compat:m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--timeout",
            "12",
        ]
    )
    assert cli._model(args).timeout_seconds == 12
    args = parser.parse_args(["demo", "--model", f"local:{cache['gguf']}", "--timeout", "600"])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HARNESSKIT_LLAMA_SERVER", str(cache["binary"]))
        model = cli._model(args)
    assert model.timeout_seconds == 600 and model.pid is None


OWNER = """
import sys, threading, time
from harnesskit.models.local import LocalModel

def start():
    model = LocalModel(sys.argv[1], server=sys.argv[2]).start()
    print(model.pid, flush=True)
    return model

if sys.argv[3] == "thread":  # started from a worker thread that then ends
    box = []
    worker = threading.Thread(target=lambda: box.append(start()))
    worker.start(); worker.join()
    print(box[0].pid, flush=True)
else:
    model = start()
    print(model.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize(
    ("signum", "where"), [(15, "main"), (9, "main"), (15, "thread")], ids=["term", "kill", "thread"]
)
def test_a_signalled_owner_process_leaves_no_server_behind(cache, tmp_path, signum, where):
    """atexit and finalizers do not run on a signal: the kernel's parent-death signal stops it."""
    import subprocess
    import time

    script = tmp_path / "owner.py"
    script.write_text(OWNER)
    before = temp_files()
    owner = subprocess.Popen(
        [sys.executable, str(script), str(cache["gguf"]), str(cache["binary"]), where],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        pid = int(owner.stdout.readline())
        assert int(owner.stdout.readline()) == pid  # alive after its starting thread ended
        assert alive(pid)
        owner.send_signal(signum)
        owner.wait(timeout=30)
        deadline = time.monotonic() + 15
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid)
        assert temp_files() == before  # the server's log and template left nothing on disk
    finally:
        owner.kill()
        owner.wait()
        owner.stdout.close()


def temp_files() -> set[str]:
    import tempfile

    root = Path(tempfile.gettempdir())
    return {p.name for p in root.glob("hk-llama-server-*")} | {
        p.name for p in root.glob("hk-chat-template-*")
    }


def test_the_server_log_is_read_from_a_file_without_a_name(cache):
    model = LocalModel(str(cache["gguf"]), server=cache["binary"]).start()
    try:
        target = os.readlink(f"/proc/self/fd/{model._log.fileno()}")
        assert not Path(target).exists()  # unlinked (or O_TMPFILE): nothing to leak on a signal
    finally:
        model.close()
    assert model.log_tail() == ""


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"bogus_option": 1}, "option neither it nor OpenAICompatModel takes"),
        ({"base_url": "http://x"}, "sets base_url itself"),
        ({"ctx_size": "8192"}, "ctx_size must be an int of at least 1, got '8192'"),
        ({"ctx_size": 1.5}, "ctx_size must be an int"),
        ({"threads": True}, "threads must be an int"),
        ({"seed": None}, "seed must be an int"),
        ({"timeout_seconds": float("inf")}, "timeout_seconds must be a finite number"),
        ({"timeout_seconds": float("nan")}, "timeout_seconds must be a finite number"),
        ({"timeout_seconds": "10"}, "timeout_seconds must be a finite number"),
        ({"startup_timeout_seconds": 0}, "startup_timeout_seconds must be a finite number"),
        ({"temperature": "hot"}, "temperature must be None or a number"),
        ({"stream": "no"}, r"\(stream=\.\.\.\) takes True or False"),  # a client option's value
        ({"headers": "x"}, r"\(headers=\.\.\.\) takes a dict"),
    ],
)
def test_bad_options_are_refused_before_anything_starts(cache, kwargs, message):
    with pytest.raises(UsageError, match=message):
        LocalModel(str(cache["gguf"]), server=cache["binary"], **kwargs)
    with pytest.raises(UsageError, match="model must be a catalogue key"):
        LocalModel(42, server=cache["binary"])


def test_a_path_object_names_a_gguf(cache):
    model = LocalModel(cache["gguf"], server=cache["binary"])
    assert model.gguf == cache["gguf"].resolve() and model.pid is None
