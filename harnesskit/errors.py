"""The whole harnesskit exception tree.

```
HarnessError
├── UsageError            you called the API wrong; the message says how to call it
│   └── UnknownArgumentError  a value class got a keyword it has no field for (also a TypeError)
├── ModelError            a provider failed: .model, .status_code, .body
│   ├── ModelOutputError  the model's output could not be used
│   └── RateLimitError    429 until the retries or the time ran out
├── ToolError             raised inside a tool: shown to the model, the run continues
│   ├── ToolNotFoundError
│   ├── ToolArgumentsError
│   └── ToolTimeoutError
├── ToolServerError       an external tool server (MCP) could not start or stopped answering
├── BrakeTripped          .brake .value .limit .unit
├── ContextError          a prompt could not be assembled under its policy
│   └── RepresentationError  one source in two forms in one prompt (R-A5)
├── ArtifactError
│   ├── ArtifactNotFoundError
│   └── ArtifactIntegrityError
├── EventLogError
│   ├── SchemaVersionError
│   └── CorruptLogError
├── ResumeError           a resume check failed: .failed names it, .options offers restart/fork
└── ExperimentInterrupted Ctrl-C or a failed write stopped an experiment: .path .finished .total
StopRun(Exception)        control-flow signal, deliberately not a HarnessError
```

Errors carry structured attributes rather than strings to parse, and they stay picklable
so that experiments run in worker processes can send them back.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import pathlib
import stat
import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "ArtifactError",
    "ArtifactIntegrityError",
    "ArtifactNotFoundError",
    "BrakeTripped",
    "ContextError",
    "CorruptLogError",
    "EventLogError",
    "ExperimentInterrupted",
    "HarnessError",
    "ModelError",
    "ModelOutputError",
    "RateLimitError",
    "RepresentationError",
    "ResumeError",
    "SchemaVersionError",
    "StopRun",
    "ToolArgumentsError",
    "ToolError",
    "ToolNotFoundError",
    "ToolServerError",
    "ToolTimeoutError",
    "UnknownArgumentError",
    "UsageError",
    "checked_call",
    "checked_path",
    "json_problem",
    "load_file_json",
    "refuse_type",
]


class HarnessError(Exception):
    """Base class of every error harnesskit raises on purpose."""


class UsageError(HarnessError):
    """The API was called wrong; the message names what was wrong and what to do instead."""


class UnknownArgumentError(UsageError, TypeError):
    """A value class was given a keyword that names none of its fields.

    Also a `TypeError`, which Python raises for an unexpected keyword, so code that caught
    that still does. The message is Python's words plus a did-you-mean of the field names.
    """


class ModelError(HarnessError):
    """A model provider failed to answer.

    Attributes:
        model: the model name as given to `get_model`, e.g. `"openai-compat:gpt-4o"`.
        status_code: the HTTP status, or `None` for transport failures and offline models.
        body: the provider's response body (text, possibly truncated), or `None`.
    """

    def __init__(
        self,
        message: str,
        *,
        model: str | None = None,
        status_code: int | None = None,
        body: str | None = None,
    ) -> None:
        super().__init__(message)
        self.model = model
        self.status_code = status_code
        self.body = body

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.args, self.__dict__))


class ModelOutputError(ModelError):
    """The model answered, but its output could not be used (malformed, truncated, empty)."""


class RateLimitError(ModelError):
    """The provider kept answering 429 (rate limited) until the retries or the time ran out.

    Attributes:
        attempts: requests made for the one logical call.
        retry_after_seconds: the server's last `Retry-After` (seconds), or `None` if it sent none.
        elapsed_seconds: time spent on the call, waits included (seconds, on the client's clock).
    """

    def __init__(
        self,
        message: str,
        *,
        model: str | None = None,
        status_code: int | None = 429,
        body: str | None = None,
        attempts: int = 0,
        retry_after_seconds: float | None = None,
        elapsed_seconds: float = 0.0,
    ) -> None:
        super().__init__(message, model=model, status_code=status_code, body=body)
        self.attempts = attempts
        self.retry_after_seconds = retry_after_seconds
        self.elapsed_seconds = elapsed_seconds


class ToolError(HarnessError):
    """Raise inside a tool to send `message` (and `hint`) back to the model; the run continues.

    Attributes:
        error_type: one of the R-E1 error types; `tool_error` unless a subclass says otherwise.
        hint: what the model should do next, or `None`.
    """

    error_type = "tool_error"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.args, self.__dict__))


class ToolNotFoundError(ToolError):
    """A tool raised this because a thing it looked up (a reservation, a user) does not exist."""

    error_type = "not_found"


class ToolPermissionError(ToolError):
    """A tool raised this because the caller may not do this (e.g. act for another customer)."""

    error_type = "permission_denied"


class ToolArgumentsError(ToolError):
    """A tool raised this because its arguments are valid JSON but make no sense together."""

    error_type = "invalid_argument"


class ToolTimeoutError(ToolError):
    """A tool ran longer than its `timeout_seconds`."""

    error_type = "timeout"


class ToolServerError(HarnessError):
    """An external tool server (an MCP server) could not be started or listed, or is gone.

    Raised by `harnesskit.tools.mcp_tools` and `MCPConnection` when connecting fails; a call to
    a server that died mid-run is not raised into the loop but becomes a `tool_error` result.

    Attributes:
        server: how the server was addressed (its command line or URL).
        stderr: the tail of the server's standard error (stdio servers), or `""`.
    """

    def __init__(self, message: str, *, server: str = "", stderr: str = "") -> None:
        super().__init__(message)
        self.server = server
        self.stderr = stderr

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.args, self.__dict__))


class BrakeTripped(HarnessError):
    """A run was stopped by a brake; raised only by `RunResult.raise_for_stop()`.

    Attributes:
        brake: the brake's name, equal to the run's `finish_reason` (e.g. `"max_steps"`).
        value: the measured value when it tripped.
        limit: the configured limit.
        unit: the unit of `value` and `limit` (`"steps"`, `"tokens"`, `"seconds"`).
    """

    def __init__(self, brake: str, *, value: float, limit: float | None, unit: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise UsageError(f"BrakeTripped value must be a number, got {value!r:.60}")
        super().__init__(
            f"brake {brake!r} tripped: {value:g} {unit} reached the limit of {limit} {unit}; "
            f"raise the limit in hk.Limits({brake}=...) to let the run go further"
        )
        self.brake = brake
        self.value = value
        self.limit = limit
        self.unit = unit

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.args, self.__dict__))


class ContextError(HarnessError):
    """A prompt could not be assembled: the core does not fit, or a source is in two forms."""


class RepresentationError(ContextError):
    """One source appears in two forms in an assembled prompt (R-A5); the model was not called.

    Attributes:
        ref: the source: an artifact id, or `call:<tool_call_id>` for an inline tool result.
        forms: the two forms, each as `"<form> (message <i>, <role>)"`.
        violations: every violation found in that prompt (JSON-ready dicts).
    """

    def __init__(
        self,
        message: str,
        *,
        ref: str = "",
        forms: tuple[str, ...] = (),
        violations: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message)
        self.ref = ref
        self.forms = forms
        self.violations = violations or []

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.args, self.__dict__))


class ArtifactError(HarnessError):
    """Base class of artifact store errors."""


class ArtifactNotFoundError(ArtifactError):
    """No artifact with that id, or it expired or was deleted (the message says which)."""


class ArtifactIntegrityError(ArtifactError):
    """Stored bytes do not match their recorded sha256, or a preview is not byte-exact."""


class EventLogError(HarnessError):
    """Base class of event log errors."""


class SchemaVersionError(EventLogError):
    """A log line has a schema version this harnesskit cannot read or migrate."""


class CorruptLogError(EventLogError):
    """A log line is not valid JSON or lacks required fields (not the last, in-flight line).

    Also raised for the other records a run or experiment keeps on disk: a write-ledger line
    (`<run>.jsonl.idem`), a `results.jsonl` line or the `experiment.json` of an experiment.
    """


class ResumeError(HarnessError):
    """A run could not be resumed because one or more resume checks failed (R-V6).

    Attributes:
        failed: the names of the failed checks, e.g. `("workspace_revision",)`.
        options: what to do instead: `("restart", "fork")`.
        report: the full `ResumeReport` (every check with its detail), or `None`.
    """

    def __init__(
        self,
        message: str,
        *,
        failed: tuple[str, ...] = (),
        options: tuple[str, ...] = ("restart", "fork"),
        report: Any = None,
    ) -> None:
        super().__init__(message)
        self.failed = failed
        self.options = options
        self.report = report

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.args, self.__dict__))


class ExperimentInterrupted(HarnessError):
    """Ctrl-C or a failed write stopped an experiment; `resume` runs the trials not saved.

    Attributes:
        path: the run directory (`results.jsonl` holds the finished trials), as a string.
        finished: trials saved.
        total: trials in the experiment.
    """

    def __init__(self, message: str, *, path: str, finished: int, total: int) -> None:
        super().__init__(message)
        self.path = path
        self.finished = finished
        self.total = total

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.args, self.__dict__))


class StopRun(Exception):
    """Raised by a tool or callback to end the run now; carries the `finish_reason` to record."""

    def __init__(self, finish_reason: str = "stopped", message: str = "") -> None:
        super().__init__(message or finish_reason)
        self.finish_reason = finish_reason


def _rebuild(cls: type[Exception], args: tuple[Any, ...], state: dict[str, Any]) -> Exception:
    err = cls.__new__(cls)
    err.args = args
    err.__dict__.update(state)
    return err


_Callable = TypeVar("_Callable", bound=Callable[..., Any])


def checked_call(hint: str) -> Callable[[_Callable], _Callable]:
    """Decorator: a call that does not fit the signature is a `UsageError`, not a `TypeError`.

    Python's own message (which names the argument: "takes no positional arguments", "missing
    1 required positional argument: 'path'", "got an unexpected keyword argument 'x'") is
    kept and `hint` (how to call it) added. Only the binding of the arguments is caught: a
    `TypeError` raised inside the call goes through as it is. Costs nothing on a good call
    beyond the wrapper's own frame.

    Args:
        hint: how to call it right, e.g. `"call it as check_resume(harness, path)"`.

    Returns:
        The decorator (for a function, a method, or a class: its `__init__` is wrapped).
    """

    def wrap(fn: _Callable) -> _Callable:
        if isinstance(fn, type):
            fn.__init__ = wrap(fn.__init__)  # type: ignore[misc]
            return fn

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except TypeError as exc:
                tb = exc.__traceback__
                if tb is None or tb.tb_next is not None:  # raised inside `fn`: not ours
                    raise
                raise UsageError(f"{exc}; {hint}") from None

        return call  # type: ignore[return-value]

    return wrap


def refuse_type(value: Any, kinds: type | tuple[type, ...], where: str, takes: str) -> None:
    """Raise `UsageError` unless `value` is one of `kinds` (a bool never passes as an int).

    Args:
        value: the argument given.
        kinds: the classes it may be.
        where: the call and the argument, e.g. `"EventLog(path)"`.
        takes: what it takes, e.g. `"the path of a .jsonl file (str or Path), or None"`.

    Raises:
        UsageError: `"<where> takes <takes>, got <type> <value>"`.
    """
    if isinstance(value, kinds) and not (value.__class__ is bool and bool not in _tuple(kinds)):
        return
    raise UsageError(f"{where} takes {takes}, got {type(value).__name__} {value!r:.60}")


def _tuple(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


#: Path kinds `checked_path` knows: what the path must be when it exists.
_PATH_KINDS = ("file", "folder", "any")


def checked_path(
    value: Any, where: str, *, kind: str = "any", fix: str = "", takes: str = ""
) -> pathlib.Path:
    r"""The one check of a path given to a public entry point: usable by the OS, or `UsageError`.

    Refused, each with a sentence naming `where`, the path and what to do: a value that is
    not a `str`/`os.PathLike` (or an empty one), a NUL byte (shown as `\x00`), a name or a
    whole path too long for the file system, a part of the path that is a file where a folder
    is needed, a symlink loop, and an existing path of the wrong kind (`kind="folder"` but a
    file, `kind="file"` but a folder). A path that does not exist yet passes: the caller says
    what a missing path means (create it, or "no such log").

    Args:
        value: the argument as given.
        where: the call and the argument, e.g. `"Harness(log_dir=...)"`.
        kind: `"file"`, `"folder"` or `"any"`: what the path must be when it exists.
        fix: what to do instead, e.g. `"pass a writable folder path, or None"`; a default
            sentence is used when empty.
        takes: what the argument takes, for a value that is no path (not text, or empty),
            e.g. `"a folder path (str or Path) or None"`; default from `kind`.

    Returns:
        The path as a `pathlib.Path` (not resolved, not created).

    Raises:
        UsageError: the path is unusable as above (the message names `where` and the path).
    """
    if kind not in _PATH_KINDS:
        raise UsageError(f"checked_path(kind=...) takes one of {_PATH_KINDS}, got {kind!r}")
    plain = {"file": "a file path", "folder": "a folder path", "any": "a path"}[kind]
    takes = takes or f"{plain} (str or Path)"
    text = os.fspath(value) if isinstance(value, str | os.PathLike) else None
    if not isinstance(text, str) or text == "":  # not a path, a PathLike of bytes, or empty
        raise UsageError(f"{where} takes {takes}, got {type(value).__name__} {value!r:.60}")
    todo = fix or f"pass {plain} that exists or can be created"
    shown = _shown_path(text)
    if "\x00" in text:
        raise UsageError(
            f"{where}: the path {shown} holds a NUL byte (\\x00), which no path can hold; {todo}"
        )
    try:
        st = os.stat(text)
    except OSError as exc:
        problem = _path_problem(text, exc)
        if problem is None:
            return pathlib.Path(text)
        raise UsageError(f"{where}: the path {shown} {problem}; {todo}") from None
    if kind == "folder" and not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{where}: {shown} is a file, not a folder; {todo}")
    if kind == "file" and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{where}: {shown} is a folder, not a file; {todo}")
    return pathlib.Path(text)


def json_problem(exc: BaseException) -> str | None:
    """What is wrong with the JSON text of a user's file that `json.loads` refused.

    Args:
        exc: what decoding raised.

    Returns:
        A clause naming the problem and what to fix, such as `not valid JSON (Expecting
        value at line 3 column 7)`; `None` for an exception that is no refusal of the text.
    """
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8"
    if isinstance(exc, json.JSONDecodeError):
        msg = exc.msg.removesuffix(" at")  # "Unterminated string starting at"
        at = f"line {exc.lineno} column {exc.colno}" if "\n" in exc.doc else f"char {exc.pos}"
        return f"not valid JSON ({msg} at {at})"
    if isinstance(exc, RecursionError):
        return (
            "JSON nested too deeply to read (arrays or objects inside each other thousands of "
            "levels deep, which no harnesskit file holds): the file is damaged or not the kind "
            "expected; write it again with fewer levels"
        )
    if isinstance(exc, ValueError) and "digits" in str(exc):  # CPython's int conversion limit
        return (
            "holds an integer too long to read (more than "
            f"{sys.get_int_max_str_digits()} digits, longer "
            "than any count, id or amount): shorten it, or write it as a string (in quotes)"
        )
    if isinstance(exc, ValueError):
        return f"not valid JSON ({str(exc)[:200]})"
    return None


def load_file_json(
    text: str | bytes, where: str, *, fix: str = "", error: type[HarnessError] = UsageError
) -> Any:
    """Decode the JSON text of a user's file (a whole file, or one line of a JSONL file).

    The one decoder for files a user hands over (cases, recorded runs, manifests, ...): no
    text, however malformed (cut off, nested 200,000 levels deep, a 5,000-digit integer, not
    UTF-8), escapes as a traceback or as Python's own advice.

    Args:
        text: the text (bytes are decoded as UTF-8).
        where: the file, with `:LINE` for one line of a JSONL file; starts the message.
        fix: what the file should be, appended to the message (e.g. "a cases file is JSON
            lines, one case per line").
        error: the harnesskit error class to raise (`UsageError`; `CorruptLogError` for a
            file harnesskit wrote).

    Returns:
        The decoded value.

    Raises:
        UsageError: (or `error`) the text is not UTF-8, not valid JSON, nested too deeply
            to decode, or holds an integer too long to convert; the message names `where`,
            what was wrong and what to do.
    """
    try:
        if isinstance(text, bytes | bytearray):
            text = bytes(text).decode("utf-8")
        return json.loads(text)
    except (RecursionError, ValueError) as exc:  # JSONDecodeError, UnicodeDecodeError too
        problem = json_problem(exc)
        if problem is None:  # pragma: no cover - every ValueError gets a clause
            raise
        raise error(f"{where}: {problem}" + (f"; {fix}" if fix else "")) from None


def _shown_path(text: str) -> str:
    """`text` as is when printable, else quoted and escaped (`repr`); a long one cut mid-way."""
    if len(text) > 120:
        return f"{text[:60]!r}…{text[-40:]!r} ({len(text)} characters)"
    return text if text.isprintable() else repr(text)


def _path_problem(text: str, exc: OSError) -> str | None:
    """What is wrong with `text` given the `os.stat` failure, or `None` when it is no misuse."""
    if exc.errno == errno.ENAMETOOLONG:
        longest = max((len(part.encode()) for part in text.split(os.sep)), default=0)
        return (
            f"is too long for the file system (its longest name is {longest} bytes, the whole "
            f"path {len(text.encode())} bytes; names are at most 255 bytes on most systems)"
        )
    if exc.errno == errno.ENOTDIR:
        blocker = _file_ancestor(pathlib.Path(text))
        where = f" ({blocker} is a file)" if blocker is not None else ""
        return f"goes through a file as if it were a folder{where}"
    if exc.errno == errno.ELOOP:
        return "goes through a symlink loop"
    return None  # missing (the caller decides), or a permission the caller reports


def _file_ancestor(path: pathlib.Path) -> pathlib.Path | None:
    """The first ancestor of `path` that exists and is not a folder, if any."""
    for parent in reversed(path.parents):
        try:
            if not stat.S_ISDIR(os.stat(parent).st_mode):
                return parent
        except OSError:
            return None
    return None
