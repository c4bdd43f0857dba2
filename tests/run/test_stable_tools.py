"""A stable tool list (for a provider's prompt cache): the same specs on every request of a run."""

import json

import pytest

import harnesskit as hk
from harnesskit.data.artifacts import INSPECTION_TOOLS
from harnesskit.testing import reply


@hk.tool
def lookup(key: str) -> dict:
    """Look a key up."""
    if key == "bad":
        raise hk.ToolNotFoundError(f"no key {key!r}")
    if key == "many":
        return {"items": [{"n": i, "text": "x" * 400} for i in range(30)]}
    return {"key": key, "value": len(key)}


INSPECTION = set(INSPECTION_TOOLS)


def names(request):
    return set(request.tool_names)


def test_a_disabled_tool_stays_listed_and_its_calls_are_still_refused():
    turns = [reply.tool_call("lookup", key="bad")] * 4 + [reply.text("giving up")]
    model = hk.ScriptedModel(turns)
    h = hk.Harness(
        [lookup], model, stable_tools=True, limits=hk.Limits(max_consecutive_errors=None)
    )
    run = h.start("x").run()

    assert all(r.tools == model.requests[0].tools for r in model.requests)
    assert "lookup" in names(model.requests[3])
    fourth = json.loads(model.requests[4].messages[-1].content)  # the call after the circuit opened
    assert fourth["ok"] is False and "disabled" in fourth["message"] + json.dumps(fourth)
    assert run.finish_reason == "stop"
    assert run.executor.disabled.keys() == {"lookup"}


def test_inspection_tools_are_listed_from_the_first_request():
    model = hk.ScriptedModel([reply.tool_call("lookup", key="many"), reply.text("30 items")])
    run = hk.Harness([lookup], model, stable_tools=True).start("x").run()

    assert names(model.requests[0]) >= INSPECTION
    assert model.requests[1].tools == model.requests[0].tools  # the artifact changed nothing
    assert run.log.of_type("artifact.created")


def test_without_it_the_list_follows_the_run_as_before():
    model = hk.ScriptedModel([reply.tool_call("lookup", key="many"), reply.text("30 items")])
    hk.Harness([lookup], model).start("x").run()

    assert not INSPECTION & names(model.requests[0])
    assert names(model.requests[1]) >= INSPECTION


class CachingModel(hk.ScriptedModel):
    caches_prompt_prefix = True


def test_it_is_on_by_default_for_a_model_whose_server_caches_prefixes():
    model = CachingModel([reply.text("hi")])
    assert hk.Harness([lookup], model).stable_tools is True
    assert hk.Harness([lookup], model, stable_tools=False).stable_tools is False
    assert hk.Harness([lookup], hk.ScriptedModel([])).stable_tools is False
    with pytest.raises(hk.UsageError, match="stable_tools"):
        hk.Harness([lookup], model, stable_tools="yes")
