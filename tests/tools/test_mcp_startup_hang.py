"""An MCP server that never answers its handshake is stopped, not left behind."""

import subprocess
import sys
import uuid

import pytest

import harnesskit as hk

pytest.importorskip("mcp", reason="the [mcp] extra is not installed (make test-extras)")


def test_a_server_that_never_answers_is_killed_when_the_start_times_out():
    marker = f"hk-hang-{uuid.uuid4().hex}"
    code = f"import time  # {marker}\ntime.sleep(120)"
    with pytest.raises(hk.errors.ToolServerError, match="did not start"):
        hk.tools.mcp_tools([sys.executable, "-c", code], startup_timeout_seconds=2)
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert left == [], f"server processes left running: {left}"
