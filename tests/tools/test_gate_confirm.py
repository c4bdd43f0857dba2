"""A bad confirmation callback or workspace is refused when the Gate is built; a crashing
callback refuses the call instead of crashing the run."""

import pytest

import harnesskit as hk
from harnesskit.testing import reply


@hk.tool(risk="destructive")
def delete_account(user_id: str) -> dict:
    """Delete an account."""
    return {"deleted": user_id}


def _harness(confirm):
    model = hk.ScriptedModel([reply.tool_call("delete_account", user_id="u1"), reply.text("ok")])
    return hk.Harness([delete_account], model, gate=hk.Gate(confirm=confirm))


@pytest.mark.parametrize(
    "confirm",
    [lambda: True, lambda request, extra: True, lambda *, request: True],
    ids=["no-argument", "two-arguments", "keyword-only"],
)
def test_confirm_that_cannot_take_the_request_is_refused_at_construction(confirm):
    with pytest.raises(hk.UsageError, match=r"Gate\(confirm=...\).*one argument.*lambda request"):
        hk.Gate(confirm=confirm)


@pytest.mark.parametrize(
    "confirm",
    [lambda request: True, lambda *args: True, lambda request, note="": True, hk.allow_all],
)
def test_confirm_taking_one_positional_argument_is_accepted(confirm):
    run = _harness(confirm).start("delete it").run()
    assert run.finish_reason == "stop"
    [result] = run.log.of_type(hk.log.ToolResultEvent)
    assert result.ok


def test_a_confirm_callback_that_raises_refuses_the_call():
    def confirm(request):
        raise RuntimeError("prompt widget died")

    run = _harness(confirm).start("delete it").run()
    assert run.finish_reason == "stop"  # the run goes on; the model sees a refusal
    [result] = run.log.of_type(hk.log.ToolResultEvent)
    assert not result.ok
    assert "RuntimeError" in result.content and "prompt widget died" in result.content


def test_a_raising_callback_is_a_gate_refusal():
    def confirm(request):
        raise KeyError("who")

    gate = hk.Gate(confirm=confirm)
    decision = gate.check(delete_account, {"user_id": "u1"}, tool_call_id="c1")
    assert not decision.allowed
    assert decision.decision == "confirm"
    assert "KeyError" in decision.reason


@pytest.mark.parametrize("workspace", [5, 2.5, ["/tmp"], b"/tmp"])
def test_workspace_must_be_a_path(workspace):
    with pytest.raises(hk.UsageError, match=r"Gate\(workspace=...\).*str or Path"):
        hk.Gate(workspace=workspace)


def test_workspace_path_still_works(tmp_path):
    assert hk.Gate(workspace=str(tmp_path)).workspace == tmp_path.resolve()
    assert hk.Gate(workspace=tmp_path).workspace == tmp_path.resolve()
