"""MCP tools: the tools of a Model Context Protocol server as registry `Tool`s (extra `[mcp]`).

```python
tools = hk.tools.mcp_tools(["python", "server.py"])         # stdio: a command line
tools = hk.tools.mcp_tools("http://127.0.0.1:8000/mcp")     # streamable HTTP: a URL
h = hk.Harness(tools=[*tools, my_python_tool], model=...)
```

Each MCP tool becomes a `Tool` whose parameters are the server's JSON Schema and whose function
forwards the call to the server, so a call goes through the same gate, executor, timeout,
circuit breaker, externalization and log as a Python tool. Risk comes from the tool's
annotations (`readOnlyHint` → `read`, `destructiveHint` → `destructive`, otherwise `write`),
overridable per tool with `risk={"name": "read"}`.

The connection lives on a background thread with its own event loop. A server that fails to
start raises `ToolServerError`; a server that dies mid-run, and a tool that reports an error,
become `tool_error` results the model reads, and the run goes on.
"""

from __future__ import annotations

import atexit
import contextlib
import re
import shlex
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, TextIO, cast

from harnesskit.errors import ToolError, ToolServerError, UsageError
from harnesskit.tools.spec import RISKS, Risk, Tool

if TYPE_CHECKING:
    import asyncio

__all__ = ["MCPConnection", "mcp_tools", "risk_from_annotations"]

_LIVE: weakref.WeakSet[MCPConnection] = weakref.WeakSet()


def risk_from_annotations(annotations: Any) -> Risk:
    """The harnesskit risk of an MCP tool from its `ToolAnnotations` (or `None`).

    Args:
        annotations: the tool's annotations object (attributes `read_only_hint`,
            `destructive_hint`) or `None`.

    Returns:
        `"read"` when `readOnlyHint` is true, `"destructive"` when `destructiveHint` is true,
        otherwise `"write"` (an unannotated tool may change things).
    """
    if annotations is None:
        return "write"
    if getattr(annotations, "read_only_hint", None):
        return "read"
    if getattr(annotations, "destructive_hint", None):
        return "destructive"
    return "write"


class MCPConnection:
    """One open connection to an MCP server, over stdio (a command) or streamable HTTP (a URL).

    A service object: use it as a context manager, or call `close()`; connections still open
    at interpreter exit are closed then. `tools()` lists the server's tools as `Tool`s.

    Args:
        server: a URL (`http://...` or `https://...`) for streamable HTTP; otherwise a command
            line, as one string (split like a shell does) or a sequence of arguments, started as
            a subprocess that speaks MCP on stdin/stdout.
        env: extra environment variables for a stdio server.
        cwd: working directory of a stdio server; `None` keeps the current one.
        startup_timeout_seconds: how long (seconds) to wait for the server to start, answer
            the handshake and list its tools.

    Raises:
        UsageError: `server` is empty, or the `mcp` package is not installed.
        ToolServerError: the server could not be started, did not answer in time, or failed
            to list its tools (the message carries the tail of its stderr).
    """

    def __init__(
        self,
        server: str | Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        startup_timeout_seconds: float = 30.0,
    ) -> None:
        try:
            import mcp
        except ImportError as exc:
            raise UsageError(
                "MCP tools need the official MCP SDK: pip install 'harnesskit[mcp]'"
            ) from exc
        self._mcp = mcp
        self._is_url = isinstance(server, str) and server.startswith(("http://", "https://"))
        argv = [] if self._is_url else _argv(server)
        if not self._is_url and not argv:
            raise UsageError("mcp server: give a command line or an http(s):// URL, got nothing")
        self.server = str(server) if self._is_url else shlex.join(argv)
        """How the server is addressed: its URL or its command line."""
        self._argv, self._env, self._cwd = argv, dict(env or {}), cwd
        import asyncio  # here, not at module level: `import harnesskit` stays fast
        import tempfile

        self._stderr: IO[str] | None = None if self._is_url else tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed in close())
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._client: Any = None
        self._listing: list[Any] = []
        self._failure: BaseException | None = None
        self._gone: str | None = None
        self._thread = threading.Thread(target=self._serve, name="hk-mcp", daemon=True)
        self._thread.start()
        started = self._ready.wait(startup_timeout_seconds)
        if not started or self._failure is not None:
            failure, note, tail = self._failure, self._stderr_note(), self.stderr_tail()
            self.close()
            what = (
                f"did not start and list its tools within {startup_timeout_seconds:g} s"
                if failure is None
                else f"could not be started: {_describe(failure)}"
            )
            raise ToolServerError(
                f"MCP server {self.server} {what}{note}", server=self.server, stderr=tail
            ) from failure
        _LIVE.add(self)

    def _serve(self) -> None:
        import asyncio

        asyncio.set_event_loop(self._loop)
        try:
            self._task = self._loop.create_task(self._main())
            self._loop.run_until_complete(self._task)
        finally:
            self._loop.close()

    async def _main(self) -> None:
        import asyncio

        mcp = self._mcp
        self._stop = asyncio.Event()
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self._is_url:
                    target: Any = self.server
                else:
                    from mcp.client.stdio import stdio_client

                    params = mcp.StdioServerParameters(
                        command=self._argv[0], args=self._argv[1:], env=self._env, cwd=self._cwd
                    )
                    target = stdio_client(params, errlog=cast(TextIO, self._stderr))
                client = await stack.enter_async_context(mcp.Client(target))
                listing, cursor = [], None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    listing.extend(page.tools)
                    cursor = getattr(page, "next_cursor", None)
                    if not cursor:
                        break
                self._client, self._listing = client, listing
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:  # reported to the constructor or to later calls
            if not self._ready.is_set():
                self._failure = exc
            self._gone = self._gone or _describe(exc)
        finally:
            self._gone = self._gone or "the connection was closed"
            self._ready.set()

    def tools(
        self,
        *,
        risk: Mapping[str, Risk] | None = None,
        group: str | None = None,
        groups: Mapping[str, str] | None = None,
        timeout_seconds: float | None = 30.0,
        prefix: str = "",
        include: Sequence[str] | None = None,
    ) -> list[Tool]:
        """The server's tools as `Tool`s, in the server's order.

        Args:
            risk: `{mcp_tool_name: risk}` overriding the risk read from the annotations.
            group: the tool group (R-T3) of every tool; `None` for none.
            groups: `{mcp_tool_name: group}` overriding `group` per tool.
            timeout_seconds: per-call limit (seconds) enforced by the executor and sent to the
                server as the request's read timeout; `None` means unlimited.
            prefix: prepended to every tool name (e.g. `"orders_"`) to keep names unique across
                servers; names are then cut to the 64 characters a tool name may have.
            include: only these MCP tool names (in the server's order); `None` means all.

        Returns:
            One `Tool` per MCP tool; its `fn` forwards the call to this connection.

        Raises:
            UsageError: a `risk` value is not a risk level, or `risk`/`groups`/`include` name a
                tool the server does not have.
        """
        names = [t.name for t in self._listing]
        for label, keys in (("risk", risk or {}), ("groups", groups or {}), ("include", include)):
            unknown = sorted(set(keys or ()) - set(names))
            if unknown:
                raise UsageError(
                    f"mcp_tools({label}=...): the server has no tool {unknown[0]!r}; "
                    f"its tools are {', '.join(names)}"
                )
        out = []
        for spec in self._listing:
            if include is not None and spec.name not in include:
                continue
            level = (risk or {}).get(spec.name) or risk_from_annotations(spec.annotations)
            if level not in RISKS:
                raise UsageError(f"mcp_tools(risk=...): {level!r} is not one of {RISKS}")
            hint = getattr(spec.annotations, "idempotent_hint", None)
            schema = dict(spec.input_schema or {})
            schema.setdefault("type", "object")
            out.append(
                Tool(
                    name=_tool_name(prefix + spec.name),
                    description=spec.description or spec.title or spec.name,
                    parameters=schema,
                    fn=_Forward(self, spec.name, timeout_seconds),
                    risk=level,
                    group=(groups or {}).get(spec.name, group),
                    timeout_seconds=timeout_seconds,
                    idempotent=bool(hint) if hint is not None else level == "read",
                )
            )
        return out

    def call(
        self, name: str, arguments: Mapping[str, Any], *, timeout_seconds: float | None = None
    ) -> Any:
        """Call the MCP tool `name` and return its result as JSON-ready data.

        Args:
            name: the tool's name on the server.
            arguments: the arguments object.
            timeout_seconds: how long (seconds) to wait for the answer; `None` waits as long as
                the server keeps the connection open.

        Returns:
            The tool's structured content when it has some; else its text (one string, the
            text blocks joined by newlines); else its content blocks as dicts.

        Raises:
            ToolError: the tool reported an error (`isError`), the server is gone, or the
                connection failed during the call; the executor turns it into a `tool_error`
                result.
            ToolTimeoutError: no answer within `timeout_seconds`.
        """
        if self._gone is not None or self._client is None:
            raise ToolError(
                f"MCP server {self.server} is not running ({self._gone}){self._stderr_note()}",
                hint="this server's tools are unavailable for the rest of the run; use others",
            )
        coro = self._client.call_tool(name, dict(arguments), read_timeout_seconds=timeout_seconds)
        import asyncio

        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            result = future.result()
        except Exception as exc:
            from harnesskit.errors import ToolTimeoutError

            if _is_timeout(exc):
                raise ToolTimeoutError(
                    f"MCP tool {name} did not answer within {timeout_seconds:g} s",
                    hint="the call may still complete on the server; do not repeat writes",
                ) from exc
            if self._gone is None and (_is_disconnect(exc) or not self._thread.is_alive()):
                self._gone = _describe(exc)
            raise ToolError(
                f"MCP server {self.server} failed during {name}: {_describe(exc)}"
                f"{self._stderr_note()}",
                hint="the server may have stopped; try another tool or tell the user",
            ) from exc
        return _result_value(name, result)

    @property
    def alive(self) -> bool:
        """True while the connection is open and the server has not gone away."""
        return self._gone is None and self._thread.is_alive()

    def stderr_tail(self, chars: int = 2000) -> str:
        """The last `chars` characters the (stdio) server wrote to stderr; `""` for HTTP."""
        if self._stderr is None or self._stderr.closed:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._stderr.flush()
            self._stderr.seek(0)
            return self._stderr.read()[-chars:]
        return ""

    def _stderr_note(self) -> str:
        tail = self.stderr_tail(600).strip()
        return f"; its stderr ends with: {tail}" if tail else ""

    def close(self) -> None:
        """Close the connection (a stdio server is stopped); idempotent."""
        if self._thread.is_alive():
            with contextlib.suppress(RuntimeError):  # the loop closed in between
                if self._client is None and self._task is not None:
                    # still starting (a hung handshake): cancel it, so the stdio client's exit
                    # stops the server process instead of leaving it behind
                    self._loop.call_soon_threadsafe(self._task.cancel)
                elif self._stop is not None:
                    self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10.0)
        self._gone = self._gone or "the connection was closed"
        if self._stderr is not None and not self._thread.is_alive():
            self._stderr.close()
        _LIVE.discard(self)

    def __enter__(self) -> MCPConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "open" if self.alive else f"closed: {self._gone}"
        return f"<MCPConnection {self.server} tools={len(self._listing)} {state}>"


def mcp_tools(
    server: str | Sequence[str] | MCPConnection,
    *,
    risk: Mapping[str, Risk] | None = None,
    group: str | None = None,
    groups: Mapping[str, str] | None = None,
    timeout_seconds: float | None = 30.0,
    prefix: str = "",
    include: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    startup_timeout_seconds: float = 30.0,
) -> list[Tool]:
    """The tools of an MCP server as `Tool`s for a `Harness` or `ToolRegistry`.

    Opens an `MCPConnection` (closed at interpreter exit; pass an open one to control its
    lifetime) and lists its tools with the server's JSON Schemas.

    Args:
        server: an `http(s)://` URL (streamable HTTP), a command line (a string or a sequence
            of arguments, started as a stdio server), or an open `MCPConnection`.
        risk: `{mcp_tool_name: risk}` overriding the risk from the annotations.
        group: the tool group (R-T3) of every tool; `None` for none.
        groups: `{mcp_tool_name: group}` overriding `group` per tool.
        timeout_seconds: per-call limit in seconds; `None` means unlimited.
        prefix: prepended to every tool name.
        include: only these MCP tool names; `None` means all.
        env: extra environment variables for a stdio server.
        startup_timeout_seconds: how long (seconds) to wait for the server to start and list
            its tools.

    Returns:
        One `Tool` per MCP tool, in the server's order.

    Raises:
        UsageError: the `mcp` package is missing, or an override names an unknown tool.
        ToolServerError: the server could not be started or listed.
    """
    conn = (
        server
        if isinstance(server, MCPConnection)
        else MCPConnection(server, env=env, startup_timeout_seconds=startup_timeout_seconds)
    )
    return conn.tools(
        risk=risk,
        group=group,
        groups=groups,
        timeout_seconds=timeout_seconds,
        prefix=prefix,
        include=include,
    )


class _Forward:
    """A tool function that forwards its keyword arguments to one MCP tool."""

    #: The executor never runs it inline under SIGALRM: the call waits on the connection's
    #: event loop thread, which an alarm would leave with a call it still runs.
    _hk_needs_thread = True

    def __init__(self, connection: MCPConnection, name: str, timeout: float | None) -> None:
        self.connection, self.name, self.timeout = connection, name, timeout

    def __call__(self, **arguments: Any) -> Any:
        return self.connection.call(self.name, arguments, timeout_seconds=self.timeout)

    def __repr__(self) -> str:
        return f"<mcp tool {self.name} on {self.connection.server}>"


def _argv(server: str | Sequence[str]) -> list[str]:
    return shlex.split(server) if isinstance(server, str) else [str(a) for a in server]


def _tool_name(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "tool"


def _is_timeout(exc: BaseException) -> bool:
    text = f"{type(exc).__name__} {exc}".lower()
    return isinstance(exc, TimeoutError) or "timed out" in text or "timeout" in text


def _is_disconnect(exc: BaseException) -> bool:
    """True when `exc` says the connection itself is gone (not that one request failed)."""
    error = getattr(exc, "error", None)
    if getattr(error, "code", None) == -32000:  # JSON-RPC CONNECTION_CLOSED, as the SDK sends it
        return True
    import anyio

    return isinstance(
        exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream | OSError
    )


def _describe(exc: BaseException) -> str:
    """One line for an exception, unwrapping exception groups to their first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or "no message"
    return f"{type(exc).__name__}: {text}"


def _result_value(name: str, result: Any) -> Any:
    blocks = list(getattr(result, "content", None) or [])
    texts = [b.text for b in blocks if getattr(b, "type", None) == "text"]
    if getattr(result, "is_error", False):
        raise ToolError(
            f"MCP tool {name} reported an error: {' '.join(texts) or 'no message'}",
            hint="check the arguments against the schema, or try another approach",
        )
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        return structured
    if blocks and len(texts) == len(blocks):
        return "\n".join(texts)
    return [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in blocks]


@atexit.register
def _close_all() -> None:
    for conn in list(_LIVE):
        with contextlib.suppress(Exception):
            conn.close()
