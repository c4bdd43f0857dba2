"""A real MCP server written with the official SDK, for the MCP tool tests.

`python tests/support/mcp_server.py` serves over stdio; `--http PORT` serves streamable HTTP on
127.0.0.1:PORT at `/mcp`. Its tools cover the three risk annotations, a tool error, and a pid
tool so a test can kill the process mid-run.
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("orders")
ORDERS = {"A1": {"id": "A1", "status": "open", "total": 12.5}}


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def get_order(order_id: str) -> dict[str, object]:
    """Look up one order by its id. Returns the order as an object."""
    if order_id == "CRASH":  # an unexpected exception: the SDK hides its text and logs it
        raise ValueError("the order store is corrupt")
    if order_id not in ORDERS:  # a deliberate tool error: its text reaches the client
        raise ToolError(f"no order {order_id}")
    return ORDERS[order_id]


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
def add_note(order_id: str, note: str) -> str:
    """Add a note to an order. Returns a confirmation text."""
    return f"noted on {order_id}: {note}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def delete_order(order_id: str) -> str:
    """Delete an order for good. Returns a confirmation text."""
    ORDERS.pop(order_id, None)
    return f"deleted {order_id}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def server_pid() -> int:
    """The server's process id (tests kill it to simulate a crash)."""
    return os.getpid()


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def list_items(n: int) -> list[dict[str, object]]:
    """List n items (a large result, for externalization)."""
    return [{"id": f"item-{i:04d}", "price": i} for i in range(n)]


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def wait(seconds: float) -> str:
    """Sleep for some seconds, then answer (for timeouts)."""
    time.sleep(seconds)
    return "woke"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
