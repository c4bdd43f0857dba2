"""MCP tools from a real MCP server (tests/support/mcp_server.py), over stdio and loopback HTTP."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the [mcp] extra (the official MCP SDK) is not installed")

import harnesskit as hk
from harnesskit.errors import ToolServerError
from harnesskit.log import ToolResultEvent
from harnesskit.testing import reply
from harnesskit.tools import MCPConnection, mcp_tools

SERVER = Path(__file__).parents[1] / "support" / "mcp_server.py"
COMMAND = [sys.executable, str(SERVER)]


@pytest.fixture(scope="module")
def conn():
    with MCPConnection(COMMAND) as c:
        yield c


def _results(run):
    return [e for e in run.log.events if isinstance(e, ToolResultEvent)]


def test_tools_carry_the_servers_schemas_and_risk_from_annotations(conn):
    tools = {t.name: t for t in conn.tools()}
    assert list(tools) == [
        "get_order",
        "add_note",
        "delete_order",
        "server_pid",
        "list_items",
        "wait",
    ]
    assert tools["get_order"].parameters["properties"]["order_id"]["type"] == "string"
    assert tools["get_order"].parameters["required"] == ["order_id"]
    assert {n: t.risk for n, t in tools.items()} == {
        "get_order": "read",
        "add_note": "write",
        "delete_order": "destructive",
        "server_pid": "read",
        "list_items": "read",
        "wait": "read",
    }
    assert tools["get_order"].description.startswith("Look up one order")
    overridden = {t.name: t.risk for t in conn.tools(risk={"delete_order": "write"})}
    assert overridden["delete_order"] == "write"
    with pytest.raises(hk.UsageError, match="no tool 'nope'"):
        conn.tools(risk={"nope": "read"})


def test_a_run_calls_mcp_tools_through_the_gate(conn):
    asked = []

    def confirm(request):
        asked.append((request.tool, request.risk, dict(request.arguments)))
        return False

    model = hk.ScriptedModel(
        [
            reply.tool_call("get_order", order_id="A1"),
            reply.tool_call("delete_order", order_id="A1"),
            reply.tool_call("get_order", order_id="A1"),
            reply.text("kept it"),
        ]
    )
    h = hk.Harness(tools=conn.tools(), model=model, gate=hk.Gate(confirm=confirm))
    run = h.run("delete A1")
    assert run.finish_reason == "stop"
    assert asked == [("delete_order", "destructive", {"order_id": "A1"})]
    first, denied, again = _results(run)
    assert first.ok and '"status": "open"' in first.content
    assert not denied.ok and denied.error_type == "permission_denied"
    assert again.ok  # the destructive call never reached the server


def test_invalid_arguments_are_checked_against_the_mcp_schema_before_the_server(conn):
    model = hk.ScriptedModel([reply.tool_call("get_order", order="A1"), reply.text("ok")])
    run = hk.Harness(tools=conn.tools(), model=model).run("x")
    (result,) = _results(run)
    assert result.error_type == "invalid_argument"
    assert "order_id" in result.content


def test_a_tool_error_on_the_server_is_a_structured_result(conn):
    model = hk.ScriptedModel([reply.tool_call("get_order", order_id="ZZ"), reply.text("ok")])
    run = hk.Harness(tools=conn.tools(), model=model).run("x")
    (result,) = _results(run)
    assert result.error_type == "tool_error"
    assert "get_order reported an error" in result.content
    assert "no order ZZ" in result.content  # the server's own words reach the model
    assert conn.alive


def test_a_crash_on_the_server_is_a_structured_result_without_its_text(conn):
    model = hk.ScriptedModel([reply.tool_call("get_order", order_id="CRASH"), reply.text("ok")])
    run = hk.Harness(tools=conn.tools(), model=model).run("x")
    (result,) = _results(run)
    assert result.error_type == "tool_error"
    assert "get_order reported an error" in result.content
    assert "corrupt" not in result.content  # the SDK keeps a crash's text on the server
    assert conn.alive


def test_mcp_results_are_externalized_timed_out_and_circuit_broken_like_python_tools(conn):
    tools = conn.tools(timeout_seconds=0.5)
    model = hk.ScriptedModel(
        [
            reply.tool_call("list_items", n=40),
            reply.tool_call("wait", seconds=5),
            *[reply.tool_call("get_order", order_id="ZZ") for _ in range(4)],
            reply.text("ok"),
        ]
    )
    run = hk.Harness(tools=tools, model=model).run("x")
    big, slow, *fails = _results(run)
    assert big.ok and big.artifact is not None  # 40 items: stored as an artifact (R-A1)
    assert '"item-0000"' not in big.content
    assert (slow.ok, slow.error_type) == (False, "timeout")
    assert [f.error_type for f in fails] == ["tool_error"] * 3 + ["circuit_open"]
    assert conn.alive  # a timed-out call does not break the connection


def test_a_server_killed_mid_run_gives_structured_errors_and_the_run_finishes():
    with MCPConnection(COMMAND) as c:
        pid = c.call("server_pid", {})["result"]  # the SDK wraps a non-object return
        state = {"n": 0}

        def script(messages, info):
            state["n"] += 1
            if state["n"] == 1:
                return reply.tool_call("get_order", order_id="A1")
            if state["n"] == 2:
                os.kill(pid, signal.SIGKILL)
                return reply.tool_call("get_order", order_id="A1")
            if state["n"] == 3:
                return reply.tool_call("add_note", order_id="A1", note="n")
            return reply.text("the order service is down")

        run = hk.Harness(tools=c.tools(), model=hk.FunctionModel(script)).run("x")
        assert run.finish_reason == "stop"
        ok, dead, after = _results(run)
        assert ok.ok
        assert (dead.ok, dead.error_type) == (False, "tool_error")
        assert (after.ok, after.error_type) == (False, "tool_error")
        assert "Connection closed" in dead.content
        assert "is not running" in after.content  # known dead: the call is not even tried
        assert not c.alive


def test_a_server_that_cannot_start_raises_a_clear_error():
    with pytest.raises(ToolServerError, match="could not be started") as info:
        mcp_tools(
            [sys.executable, "-c", "import sys; sys.stderr.write('boom at start'); sys.exit(3)"]
        )
    assert "boom at start" in info.value.stderr
    with pytest.raises(ToolServerError, match="could not be started"):
        mcp_tools(["/nonexistent/mcp-server-binary"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def http_url():
    port = _free_port()
    proc = subprocess.Popen(
        [*COMMAND, "--http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        for _ in range(300):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None:
                pytest.fail("the HTTP MCP server exited at start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def test_streamable_http_on_loopback(http_url):
    tools = mcp_tools(http_url, prefix="shop_", group="orders")
    assert [t.name for t in tools][:2] == ["shop_get_order", "shop_add_note"]
    assert {t.group for t in tools} == {"orders"}
    model = hk.ScriptedModel(
        [reply.tool_call("shop_add_note", order_id="A1", note="late"), reply.text("done")]
    )
    run = hk.Harness(tools=tools, model=model).run("note it")
    (result,) = _results(run)
    assert result.ok and "noted on A1: late" in result.content
    tools[0].fn.connection.close()
