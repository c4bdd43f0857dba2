"""A large result holding a secret (R-S1, R-A1, R-A6): redacted on disk, exact for `$bind`.

The artifact store writes the result as the log holds it (redacted); the run keeps the exact
text in memory, so a `$bind` into it hands the tool the real value. A `$bind` that can only
reach the placeholder (the store read by a later process: a resume) is refused with a tool
error, never passed on as if it were the value.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.data.artifacts import ArtifactStore
from harnesskit.data.bindings import Binder
from harnesskit.errors import ToolArgumentsError
from harnesskit.messages import ToolCall
from harnesskit.testing import reply

KEY = "sk-proj-" + "Ab1Cd2" * 8
TOKEN = "ghp_" + "Zy9Xw8" * 6


def _config() -> dict:
    # ~13 KB: stored as an artifact (R-A1), secrets at two depths
    return {
        "creds": {"openai": KEY, "github": {"token": TOKEN}},
        "pad": [f"row {i} " + "x" * 90 for i in range(130)],
    }


def _run(tmp_path, pointer: str) -> tuple[hk.Run, list[str]]:
    got: list[str] = []

    @hk.tool
    def get_config() -> dict:
        """The service config."""
        return _config()

    @hk.tool
    def use(key: str) -> str:
        """Use a key."""
        got.append(key)
        return "ok"

    model = hk.ScriptedModel([
        reply.tool_call("get_config", id="c1"),
        reply.tool_call("use", id="c2", key={"$bind": f"c1#{pointer}"}),
        reply.text("done"),
    ])  # fmt: skip
    run = hk.Harness([get_config, use], model, log_dir=tmp_path).run("configure")
    return run, got


@pytest.mark.parametrize(
    ("pointer", "exact"), [("/creds/openai", KEY), ("/creds/github/token", TOKEN)]
)
def test_bind_into_a_stored_result_moves_the_exact_secret_and_disk_holds_none(
    tmp_path, pointer, exact
):
    run, got = _run(tmp_path, pointer)
    first = run.log.of_type("tool.result")[0]
    assert first.payload.get("artifact")  # the result went to the store
    assert got == [exact]
    objects = [p for p in (tmp_path / "artifacts").rglob("*") if p.is_file()]
    assert objects
    on_disk = "\n".join(p.read_text("utf-8") for p in tmp_path.rglob("*") if p.is_file())
    assert KEY not in on_disk and TOKEN not in on_disk
    assert "[REDACTED:api_key]" in on_disk


def test_bind_to_a_stored_placeholder_without_the_exact_value_is_refused(tmp_path):
    # what a later process sees: the store on disk, and no exact text in memory
    run, _ = _run(tmp_path / "first", "/creds/openai")
    ref_id = run.log.of_type("tool.result")[0].payload["artifact"]
    store = ArtifactStore(tmp_path / "first" / "artifacts")
    binder = Binder(store)
    call = ToolCall(id="c9", name="use", arguments={})
    with pytest.raises(ToolArgumentsError) as err:
        binder.bind({"key": {"$bind": f"{ref_id}#/creds/openai"}}, call)
    assert "[REDACTED:api_key]" in str(err.value) and "redacted" in str(err.value)
    assert KEY not in str(err.value)
    # a value of the same artifact that holds no placeholder still binds
    assert binder.bind({"row": {"$bind": f"{ref_id}#/pad/0"}}, call) == {"row": _config()["pad"][0]}
    # and with the exact text held (the run that stored it), the real value
    binder.exact[ref_id] = json.dumps(_config(), ensure_ascii=False)
    assert binder.bind({"key": {"$bind": f"{ref_id}#/creds/openai"}}, call) == {"key": KEY}


def test_the_refusal_reaches_the_model_as_a_tool_error(tmp_path):
    store = ArtifactStore(tmp_path / "store")
    ref = store.put({"creds": {"openai": "[REDACTED:api_key]"}})
    got: list[str] = []

    @hk.tool
    def use(key: str) -> str:
        """Use a key."""
        got.append(key)
        return "ok"

    model = hk.ScriptedModel([
        reply.tool_call("use", id="c1", key={"$bind": f"{ref.id}#/creds/openai"}),
        reply.text("done"),
    ])  # fmt: skip
    run = hk.Harness([use], model, log_dir=tmp_path / "logs", artifacts=store).run("go")
    assert got == []
    result = run.log.of_type("tool.result")[0]
    assert result.ok is False and "redacted" in (result.content or "")
