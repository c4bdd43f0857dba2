import json
import os
import time
from pathlib import Path

import pytest

import harnesskit as hk


def _exec(executor, *calls):
    return executor.execute(calls, lambda c: hk.ToolContext(tool_call_id=c.id))


@hk.tool
def get_user(user_id: str, limit: int = 3) -> dict:
    """Get a user."""
    if user_id == "missing":
        raise hk.ToolNotFoundError("no user 'missing'", hint="ask the user for their id")
    return {"user_id": user_id, "limit": limit}


def test_invalid_argument_names_path_expected_and_received():
    ex = hk.tools.Executor(hk.ToolRegistry([get_user]))
    (r,) = _exec(
        ex, hk.ToolCall(id="c1", name="get_user", arguments={"user_id": "u", "limit": "many"})
    )
    body = json.loads(r.result.content)
    assert body["ok"] is False and body["error_type"] == "invalid_argument"
    assert (
        "$.limit" in body["message"]
        and "type integer" in body["message"]
        and '"many"' in body["message"]
    )
    assert body["hint"]


def test_unknown_tool_lists_valid_names_closest_first():
    @hk.tool
    def get_reservation(rid: str) -> str:
        """R."""
        return rid

    ex = hk.tools.Executor(hk.ToolRegistry([get_reservation, get_user]))
    (r,) = _exec(ex, hk.ToolCall(id="c", name="get_usr", arguments={}))
    assert r.result.error_type == "unknown_tool"
    assert r.result.meta["valid_names"] == ["get_user", "get_reservation"]


def test_tool_errors_become_structured_results():
    @hk.tool
    def boom() -> str:
        """B."""
        raise RuntimeError("disk on fire")

    ex = hk.tools.Executor(hk.ToolRegistry([get_user, boom]))
    a, b = _exec(
        ex,
        hk.ToolCall(id="a", name="get_user", arguments={"user_id": "missing"}),
        hk.ToolCall(id="b", name="boom", arguments={}),
    )
    assert (a.result.error_type, a.result.hint) == ("not_found", "ask the user for their id")
    assert b.result.error_type == "tool_error" and "RuntimeError: disk on fire" in b.result.message


def test_unparseable_and_truncated_arguments():
    ex = hk.tools.Executor(hk.ToolRegistry([get_user]))
    bad = hk.ToolCall.from_openai(
        {"id": "x", "function": {"name": "get_user", "arguments": "{oops"}}
    )
    cut = hk.ToolCall(
        id="y", name="get_user", raw_arguments='{"user_id": "ab', parse_error="truncated"
    )
    r1, r2 = _exec(ex, bad, cut)
    assert r1.result.error_type == "invalid_argument"
    assert r2.result.error_type == "truncated_call" and "max_tokens" in r2.result.hint


def test_timeout_is_structured_and_reports_unknown_outcome_for_writes():
    @hk.tool(timeout_seconds=0.05, risk="write")
    def slow() -> str:
        """S."""
        time.sleep(0.5)
        return "done"

    ex = hk.tools.Executor(hk.ToolRegistry([slow]))
    (r,) = _exec(ex, hk.ToolCall(id="s", name="slow", arguments={}))
    assert r.result.error_type == "timeout" and r.result.meta["outcome_unknown"] is True
    ex.close()


def test_parallel_calls_finishing_out_of_order_map_to_their_ids():
    order = []

    @hk.tool
    def wait(seconds: float, tag: str) -> str:
        """W."""
        time.sleep(seconds)
        order.append(tag)
        return tag

    ex = hk.tools.Executor(hk.ToolRegistry([wait]))
    calls = [
        hk.ToolCall(id=f"id-{t}", name="wait", arguments={"seconds": s, "tag": t})
        for t, s in (("slow", 0.3), ("mid", 0.15), ("fast", 0.0))
    ]
    results = _exec(ex, *calls)
    assert order == ["fast", "mid", "slow"]  # they really finished out of order
    assert [(r.result.tool_call_id, r.result.value) for r in results] == [
        ("id-slow", "slow"),
        ("id-mid", "mid"),
        ("id-fast", "fast"),
    ]
    ex.close()


def test_circuit_opens_after_three_equal_failures():
    ex = hk.tools.Executor(hk.ToolRegistry([get_user]))
    for i in range(3):
        (r,) = _exec(ex, hk.ToolCall(id=f"c{i}", name="get_user", arguments={"user_id": "missing"}))
    assert r.result.meta.get("circuit_opened") is True
    assert "disabled" in json.loads(r.result.content)
    (r,) = _exec(ex, hk.ToolCall(id="c9", name="get_user", arguments={"user_id": "u"}))
    assert r.result.error_type == "circuit_open"


def test_circuit_streak_resets_on_success_or_different_error():
    ex = hk.tools.Executor(hk.ToolRegistry([get_user]))
    seq = [
        {"user_id": "missing"},
        {"user_id": "missing"},
        {"user_id": "u"},
        {"user_id": "missing"},
        {"user_id": "missing"},
        {"user_id": 5},
    ]
    for i, args in enumerate(seq):
        _exec(ex, hk.ToolCall(id=str(i), name="get_user", arguments=args))
    assert ex.disabled == {}


# --- gate ---------------------------------------------------------------------------------


@hk.tool(risk="write")
def write_file(path: Path, text: str) -> str:
    """Write a file in the workspace."""
    return "ok"


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "inside.txt").write_text("x")
    outside = tmp_path / "secret.txt"
    outside.write_text("s")
    os.symlink(outside, ws / "link.txt")
    os.symlink(ws / "inside.txt", ws / "ok_link.txt")
    return ws


@pytest.mark.parametrize("path", ["../secret.txt", "/etc/passwd", "link.txt", "a/../../secret.txt"])
def test_paths_escaping_the_workspace_are_denied(workspace, path):
    ex = hk.tools.Executor(hk.ToolRegistry([write_file]), hk.Gate(workspace=workspace))
    (r,) = _exec(ex, hk.ToolCall(id="w", name="write_file", arguments={"path": path, "text": "t"}))
    assert r.result.error_type == "permission_denied"
    assert "outside the workspace" in r.result.message


@pytest.mark.parametrize("path", ["inside.txt", "sub/new.txt", "ok_link.txt"])
def test_paths_inside_the_workspace_pass(workspace, path):
    ex = hk.tools.Executor(hk.ToolRegistry([write_file]), hk.Gate(workspace=workspace))
    (r,) = _exec(ex, hk.ToolCall(id="w", name="write_file", arguments={"path": path, "text": "t"}))
    assert r.result.ok, r.result.content


def test_confirm_goes_through_callback_with_dry_run_preview():
    effects = []

    @hk.tool(risk="destructive")
    def delete_all(scope: str, dry_run: bool = False) -> str:
        """Delete."""
        if dry_run:
            return f"would delete {scope}"
        effects.append(scope)
        return "deleted"

    seen = []

    def approve(req: hk.tools.ApprovalRequest) -> bool:
        seen.append(req)
        return req.arguments["scope"] == "tmp"

    ex = hk.tools.Executor(hk.ToolRegistry([delete_all]), hk.Gate(confirm=approve))
    a, b = _exec(
        ex,
        hk.ToolCall(id="1", name="delete_all", arguments={"scope": "tmp"}),
        hk.ToolCall(id="2", name="delete_all", arguments={"scope": "home"}),
    )
    assert a.result.ok and b.result.error_type == "permission_denied"
    assert [r.preview for r in seen] == ["would delete tmp", "would delete home"]
    assert a.result.meta["approval"] == "approved"
    assert b.result.meta["approval"] == "denied"
    assert effects == ["tmp"]
    assert "dry_run" not in delete_all.parameters["properties"]


def test_batch_default_denies_confirm_level_and_policy_deny():
    @hk.tool(risk="destructive")
    def nuke() -> str:
        """N."""
        return "boom"

    ex = hk.tools.Executor(hk.ToolRegistry([nuke, write_file]), hk.Gate(policy={"write": "deny"}))
    a, b = _exec(
        ex,
        hk.ToolCall(id="1", name="nuke", arguments={}),
        hk.ToolCall(id="2", name="write_file", arguments={"path": "x", "text": "t"}),
    )
    assert a.result.error_type == b.result.error_type == "permission_denied"
    assert "policy denies write" in b.result.message


def test_gate_dry_run_mode_never_acts():
    acted = []

    @hk.tool(risk="write")
    def pay(amount: int, dry_run: bool = False) -> str:
        """P."""
        if not dry_run:
            acted.append(amount)
        return f"{'would pay' if dry_run else 'paid'} {amount}"

    ex = hk.tools.Executor(hk.ToolRegistry([pay, write_file]), hk.Gate(dry_run=True, workspace="."))
    a, b = _exec(
        ex,
        hk.ToolCall(id="1", name="pay", arguments={"amount": 5}),
        hk.ToolCall(id="2", name="write_file", arguments={"path": "x", "text": "t"}),
    )
    assert a.result.value == "would pay 5" and a.result.meta["dry_run"] and acted == []
    assert b.result.error_type == "permission_denied"


def test_gate_rejects_unknown_decisions():
    with pytest.raises(hk.UsageError, match="not one of"):
        hk.Gate(policy={"write": "maybe"})
    with pytest.raises(hk.UsageError, match="unknown risk"):
        hk.Gate(policy={"danger": "deny"})


def _strict_loads(text):
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_floats_in_a_result_are_sent_as_strict_json_nulls_and_noted():
    @hk.tool
    def stats(series: str) -> dict:
        """Summary statistics of a series."""
        return {"mean": float("nan"), "bounds": [float("-inf"), 1.5, float("inf")], "n": 0}

    ex = hk.tools.Executor(hk.ToolRegistry([stats]))
    (r,) = _exec(ex, hk.ToolCall(id="c1", name="stats", arguments={"series": "s"}))

    assert r.result.ok
    assert _strict_loads(r.result.content) == {"mean": None, "bounds": [None, 1.5, None], "n": 0}
    assert r.result.meta["non_finite_floats"] == "sent as null"


def test_finite_results_carry_no_non_finite_note():
    ex = hk.tools.Executor(hk.ToolRegistry([get_user]))
    (r,) = _exec(ex, hk.ToolCall(id="c1", name="get_user", arguments={"user_id": "u"}))
    assert "non_finite_floats" not in r.result.meta


class _UnsetCode(Exception):
    """An exception whose `__str__` reads an attribute its `__init__` never sets."""

    def __str__(self):
        return f"{self.code}: {self.args[0]}"


class _Unprintable(_UnsetCode):
    def __repr__(self):
        raise RuntimeError("no repr either")


@pytest.mark.parametrize("exc_class", [_UnsetCode, _Unprintable])
def test_an_exception_whose_str_raises_still_becomes_a_structured_result(exc_class):
    @hk.tool
    def fetch(url: str) -> str:
        """Fetch a URL."""
        raise exc_class("upstream said 503")

    ex = hk.tools.Executor(hk.ToolRegistry([fetch]))
    (r,) = _exec(ex, hk.ToolCall(id="c1", name="fetch", arguments={"url": "http://x"}))
    body = json.loads(r.result.content)
    assert body["ok"] is False and body["error_type"] == "tool_error"
    assert exc_class.__name__ in body["message"]
    if exc_class is _UnsetCode:
        assert "upstream said 503" in body["message"]  # the repr keeps the argument

    from harnesskit.testing import reply

    model = hk.ScriptedModel([reply.tool_call("fetch", url="http://x"), reply.text("ok")])
    run = hk.Harness([fetch], model).start("get it")
    run.run()
    assert run.finish_reason == "stop"
    assert run.log.last("tool.result").payload["ok"] is False
