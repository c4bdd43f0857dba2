"""Tools: the `@tool` factory, the `Tool` spec, the `ToolRegistry` and `lint()` (R-T1–R-T3).

A tool is a Python function plus a spec: name, description, JSON Schema (Draft 2020-12) for its
arguments, risk (`read` | `write` | `destructive`), timeout (seconds), result limit, idempotent
flag and group. The spec is derived from the type hints and the Google-style docstring, or given
explicitly. One `ToolRegistry` is the single source of truth for the tool list sent to the model,
for dispatch and for logs.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import hashlib
import inspect
import json
import math
import pathlib
import re
import threading
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import field
from typing import Any, Literal, get_args, get_origin, get_type_hints, overload

from harnesskit import _json, _repr
from harnesskit._lazy import frozen_dataclass, lazy_pattern
from harnesskit.errors import ToolArgumentsError, UsageError

__all__ = [
    "FORMAT_EXAMPLES",
    "RISKS",
    "LintIssue",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "lint",
    "schema_for_type",
    "tool",
]

Risk = Literal["read", "write", "destructive"]
RISKS: tuple[str, ...] = ("read", "write", "destructive")


class ToolContext:
    """What the runtime hands a tool that declares a parameter annotated `ToolContext`.

    The parameter is not part of the schema the model sees. Through it a tool reads the run's
    facts (ids, clock) and appends events (e.g. `alert.mismatch`, R-F1) without the model
    carrying them.
    """

    def __init__(
        self,
        *,
        run_id: str = "",
        branch_id: str = "main",
        step: int = 0,
        tool_call_id: str = "",
        dry_run: bool = False,
        emit: Callable[[str, dict[str, Any]], Any] | None = None,
        now: Callable[[], dt.datetime] | None = None,
        workspace: pathlib.Path | None = None,
    ) -> None:
        """Create a context (the executor does this; tests may build one directly).

        Args:
            run_id: the run's id.
            branch_id: the trajectory branch the call belongs to.
            step: the loop step (1-based).
            tool_call_id: the id of the call being served.
            dry_run: True when a write tool must only describe what it would do.
            emit: `emit(type, payload)` appends an event to the run's log.
            now: the run's clock (timezone-aware datetimes); defaults to UTC wall time.
            workspace: the workspace root that paths are confined to, if any.
        """
        self.run_id = run_id
        self.branch_id = branch_id
        self.step = step
        self.tool_call_id = tool_call_id
        self.dry_run = dry_run
        self._emit = emit
        self._now = now
        self.workspace = workspace
        self.emitted: list[tuple[str, dict[str, Any]]] = []
        self.approval: str | None = None
        """`"approved"` when a confirmation callback approved this call (set by the executor)."""
        self.idempotency_key: str | None = None
        """For write calls: the key the ledger records the call under (R-E5); a tool may store
        it with its effect so that a confirmer can later find out whether the effect happened."""

    def emit(self, type: str, payload: dict[str, Any]) -> None:
        """Append an event of `type` (e.g. `"alert.mismatch"`) with `payload` to the run's log."""
        self.emitted.append((type, payload))
        if self._emit is not None:
            self._emit(type, payload)

    def now(self) -> dt.datetime:
        """The run's current time (timezone-aware)."""
        return self._now() if self._now is not None else dt.datetime.now(dt.UTC)


@frozen_dataclass(kw_only=True)
class Tool:
    """A callable plus the spec the model sees. Build with `@tool` or `Tool.from_function`."""

    name: str
    """The name the model calls (`^[a-zA-Z0-9_-]{1,64}$`)."""
    description: str
    """What it does, when to use it, when NOT to use it, what it returns (R-T2 template)."""
    parameters: dict[str, Any]
    """JSON Schema (Draft 2020-12) of the arguments object."""
    fn: Callable[..., Any] = field(repr=False, compare=False)
    """The implementation, called with the validated arguments as keywords."""
    risk: Risk = "read"
    """`read`, `write` or `destructive`; the gate decides allow / confirm / deny per risk."""
    group: str | None = None
    """Optional group name (R-T3)."""
    timeout_seconds: float | None = 30.0
    """Wall-clock limit per call in seconds; `None` means unlimited (runs inline).

    Calls with a limit run on a worker thread the caller stops waiting for at the limit (the
    thread is not interrupted). A call given up on (its limit, or the run's `max_seconds`)
    runs on in the background on a daemon thread, so it never keeps the interpreter from
    exiting; its late result is dropped (a write's is recorded in the idempotency ledger) and
    the thread ends when the call returns. One that never returns keeps its thread for the
    life of the process (Python cannot stop a thread); the circuit breaker disables a tool
    after repeated timeouts, which bounds that per run.

    With the opt-in `harnesskit.tools.executor.INLINE_READS = True`, a lone synchronous read
    call on the main thread runs inline instead, interrupted by SIGALRM at the limit (an
    exception at the line it is running, as Ctrl-C would): cheaper, but a tool that catches
    every exception in a loop, sets its own SIGALRM timer or blocks in C defeats that limit,
    so it is for trusted tools only.
    """
    max_result_chars: int | None = None
    """Results longer than this many chars are cut and flagged; `None` keeps the default."""
    idempotent: bool = True
    """True when calling twice with the same arguments has the effect of calling once."""
    idempotency_fields: tuple[str, ...] = ()
    """Argument names forming a natural key; a later write with equal values is a duplicate.

    Each must be one of the tool's parameters; a str or another name raises `UsageError`."""
    version: str = "1"
    """Bumped when the behaviour changes; resume checks it (R-V6)."""
    context_param: str | None = None
    """Name of the parameter that receives the `ToolContext`, if the function declares one."""
    path_params: tuple[str, ...] = ()
    """Arguments that are filesystem paths, checked against the workspace by the gate."""
    supports_dry_run: bool = False
    """True when the function accepts `dry_run: bool` (it is hidden from the model)."""
    is_async: bool = False
    """True for `async def` tools (the executor runs them to completion on a worker thread)."""
    validator: Any = field(default=None, init=False, repr=False, compare=False)
    """The compiled `jsonschema.Draft202012Validator` (with format checks) for the arguments."""
    _accepts: Callable[[Any], bool] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _spec_hash: str | None = field(default=None, init=False, repr=False, compare=False)
    _model_spec: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    _converters: dict[str, Callable[[Any], Any]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", self.name):
            raise UsageError(
                f"tool name {self.name!r} must be a str matching ^[a-zA-Z0-9_-]{{1,64}}$"
            )
        if not callable(self.fn):
            raise UsageError(
                f"tool {self.name!r}: fn must be the function to call, got {self.fn!r:.60}"
            )
        if not isinstance(self.description, str):
            raise UsageError(
                f"tool {self.name!r}: description must be a str, got {self.description!r:.60}"
            )
        if self.risk not in RISKS:
            raise UsageError(f"tool {self.name!r}: risk must be one of {RISKS}, got {self.risk!r}")
        if not isinstance(self.parameters, dict) or self.parameters.get("type") != "object":
            raise UsageError(
                f"tool {self.name!r}: parameters must be a JSON Schema dict with type 'object', "
                f"got {self.parameters!r:.80}"
            )
        t = self.timeout_seconds
        if t is not None and (
            isinstance(t, bool)
            or not isinstance(t, int | float)
            or not 0 < t <= threading.TIMEOUT_MAX  # inf and NaN fail here too
        ):
            raise UsageError(
                f"tool {self.name!r}: timeout_seconds must be a number of seconds > 0 and at "
                f"most {threading.TIMEOUT_MAX:.0f} (or None for no limit), got {t!r}"
            )
        m = self.max_result_chars
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1):
            raise UsageError(
                f"tool {self.name!r}: max_result_chars must be an int >= 1 (or None for the "
                f"default), got {m!r}"
            )
        object.__setattr__(self, "idempotency_fields", _checked_fields(self))
        object.__setattr__(self, "path_params", _checked_fields(self, "path_params"))
        odd = _non_finite_at(self.parameters, "$")
        if odd is not None:
            raise UsageError(
                f"tool {self.name!r}: the parameters schema holds NaN or infinity at {odd}, "
                "which JSON cannot carry, so it cannot be sent to a model; use a finite number "
                "or leave the key out (a default of None)"
            )
        try:
            compiled = _compiled_validator(self.parameters)
        except ValueError as exc:
            raise UsageError(f"tool {self.name!r}: invalid parameters schema: {exc}") from exc
        object.__setattr__(self, "validator", compiled)
        object.__setattr__(self, "_accepts", _fast_accept(self.parameters))

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: dict[str, Any] | None = None,
        **options: Any,
    ) -> Tool:
        """Derive a tool from `fn`'s signature, type hints and Google-style docstring.

        Parameters typed `Path` are path parameters (checked by the gate against the
        workspace); `path_params=(...)` adds others, e.g. a path typed `str`.

        Args:
            fn: the implementation.
            name: the tool name; defaults to `fn.__name__`.
            description: overrides the docstring text (without its Args section).
            parameters: an explicit JSON Schema that overrides the derived one.
            **options: any other `Tool` field (`risk`, `group`, `timeout_seconds`,
                `path_params`, ...).

        `*args` is refused; `**kwargs` is accepted only with an explicit `parameters=` schema,
        whose properties it then receives as keywords.

        Raises:
            UsageError: a parameter has no type hint, a hint cannot be expressed in JSON Schema,
                `fn` takes `*args`, or it takes `**kwargs` without `parameters=`; an option is
                invalid (e.g. `idempotency_fields` naming something that is not a parameter).
        """
        if not callable(fn) or isinstance(fn, Tool):
            raise UsageError(f"@tool needs a function, got {type(fn).__name__}: {fn!r:.60}")
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            raise UsageError(
                f"tool {getattr(fn, '__name__', fn)!r} is a generator; a tool must return its "
                "whole result (collect it into a list)"
            )
        doc = _parse_docstring(inspect.getdoc(fn) or "")
        sig = inspect.signature(fn)
        try:
            hints = get_type_hints(fn, include_extras=False)
        except Exception as exc:  # NameError etc. from unresolvable forward references
            raise UsageError(f"tool {fn.__name__!r}: cannot resolve type hints: {exc}") from exc
        props: dict[str, Any] = {}
        required: list[str] = []
        context_param = None
        path_params: list[str] = []
        supports_dry_run = False
        for pname, param in sig.parameters.items():
            if param.kind == param.VAR_POSITIONAL:
                raise UsageError(
                    f"tool {fn.__name__!r}: *{pname} cannot be a tool parameter (the model "
                    "passes named arguments only); give each argument a name and a type hint"
                )
            if param.kind == param.VAR_KEYWORD:
                if parameters is not None:
                    continue  # the explicit schema names the arguments; **kwargs receives them
                raise UsageError(
                    f"tool {fn.__name__!r}: **{pname} has no schema the model could see; name "
                    "each argument with a type hint, or pass parameters=... (an explicit JSON "
                    f"Schema whose properties **{pname} then receives)"
                )
            hint = hints.get(pname, param.annotation)
            if hint is ToolContext:
                context_param = pname
                continue
            if pname == "dry_run":
                supports_dry_run = True
                continue
            if hint is inspect.Parameter.empty:
                if parameters is not None:
                    continue
                raise UsageError(
                    f"tool {fn.__name__!r}: parameter {pname!r} needs a type hint so its "
                    "schema can be derived (or pass parameters=... explicitly)"
                )
            if _is_path(hint):
                path_params.append(pname)
            schema = schema_for_type(hint)
            if pname in doc.params:
                schema = {**schema, "description": doc.params[pname]}
            if param.default is not inspect.Parameter.empty:
                odd = _non_finite_at(_to_jsonable(param.default), "")
                if odd is not None:
                    raise UsageError(
                        f"tool {fn.__name__!r}: parameter {pname!r} has the default "
                        f"{param.default!r}{' (at ' + odd + ')' if odd else ''}, which JSON "
                        "cannot carry (no NaN or infinity), so its schema cannot be sent to a "
                        f"model; use None as the default ({pname}: ... | None = None) and read "
                        "None as 'no limit' in the function"
                    )
                if param.default is not None and _jsonable(param.default):
                    schema = {**schema, "default": _to_jsonable(param.default)}
            else:
                required.append(pname)
            props[pname] = schema
        derived: dict[str, Any] = {
            "type": "object",
            "properties": props,
            "additionalProperties": False,
        }
        if required:
            derived["required"] = required
        return cls(
            name=name or fn.__name__,
            description=description if description is not None else doc.text,
            parameters=parameters if parameters is not None else derived,
            fn=fn,
            context_param=context_param,
            path_params=_with_named(path_params, options.pop("path_params", None)),
            supports_dry_run=supports_dry_run,
            is_async=inspect.iscoroutinefunction(fn),
            **options,
        )

    def to_openai(self) -> dict[str, Any]:
        """Return the chat-completions tool spec `{"type": "function", "function": {...}}`."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def model_spec(self) -> dict[str, Any]:
        """`to_openai()` as a read-only copy (`_json.ReadOnlyDict`), built once per tool.

        What a run offers the model: a model that edits its request cannot change this tool's
        schema, and each run reuses the same copy instead of building one.
        """
        spec = self._model_spec
        if spec is None:
            spec = _json.read_only(self.to_openai())
            object.__setattr__(self, "_model_spec", spec)
        return spec

    def argument_errors(self, arguments: Any) -> list[Any]:
        """Schema errors of `arguments`, sorted by JSON path; empty when they are valid.

        Flat schemas (typed properties, enums, required, no extra properties) are accepted by a
        direct check first; anything it does not certainly accept goes to jsonschema, so the
        errors are always jsonschema's.

        Returns:
            `jsonschema.ValidationError`s ordered by `absolute_path`.
        """
        if self._accepts is not None and self._accepts(arguments):
            return []
        return sorted(self.validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))

    def call_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments for `fn`: JSON values converted to the function's type hints.

        The model sends dates, datetimes, times and `Enum` members as JSON strings (or
        numbers); a parameter hinted `datetime.date`, `datetime.datetime`, `datetime.time` or
        an `Enum` subclass (also inside `X | None`, `list[X]`, `tuple[X, ...]`, `set[X]`)
        receives the Python value: `date.fromisoformat`, `datetime.fromisoformat` (a trailing
        `Z` is UTC), `time.fromisoformat`, `MyEnum(value)`. An `int` parameter gets an `int`
        when the model wrote `2.0` or `1e2` (JSON Schema's `integer` accepts them), at any
        depth (TypedDict and dataclass fields too). Other values pass unchanged (a `float`
        parameter may get an `int`).
        Call it after schema validation: the arguments recorded, gated and keyed stay JSON.

        Args:
            arguments: the validated arguments object.

        Returns:
            A new dict (the same values where nothing converts).

        Raises:
            ToolArgumentsError: a value does not parse as its hinted type (`invalid_argument`);
                the message names the parameter and the expected format.
        """
        converters = self._converters
        if converters is None:
            converters = _converters_for(self.fn, self.parameters)
            object.__setattr__(self, "_converters", converters)
        if not converters:
            return dict(arguments)
        out = dict(arguments)
        for name, convert in converters.items():
            if name in out:
                try:
                    out[name] = convert(out[name])
                except _BadValue as exc:
                    raise ToolArgumentsError(
                        f"argument {name!r}: expected {exc.expected}, got {_excerpt(exc.value)}",
                        hint=f"send {name} as {exc.expected} and call again",
                    ) from None
        return out

    @property
    def spec_hash(self) -> str:
        """sha256 (first 16 hex) of the spec the model sees plus version and risk.

        Computed once: a tool's spec is fixed when it is made (its validator is compiled
        then too); change a tool with `dataclasses.replace`, which makes a new one.
        """
        if self._spec_hash is None:
            blob = json.dumps([self.to_openai(), self.version, self.risk], sort_keys=True)
            object.__setattr__(self, "_spec_hash", hashlib.sha256(blob.encode()).hexdigest()[:16])
        return self._spec_hash  # type: ignore[return-value]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (no validation, no gate)."""
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        group = f" group={self.group}" if self.group else ""
        params = ",".join(self.parameters.get("properties") or {})
        return f"<Tool {self.name}({params}) risk={self.risk}{group}>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


def _checked_fields(t: Tool, attr: str = "idempotency_fields") -> tuple[str, ...]:
    """`t.<attr>` (`idempotency_fields` or `path_params`) as a tuple of parameter names.

    A mistake here would silently switch a protection off (a str is iterated by character, a
    misspelt name is never present in the arguments): duplicate detection (R-E5) for
    `idempotency_fields`, the gate's workspace check (R-E4) for `path_params`. It is refused.

    Raises:
        UsageError: the names are a str, hold a non-str, or name something that is not one of
            the tool's parameters; or a path parameter that cannot hold a path (an `int`).
    """
    fields = getattr(t, attr)
    if isinstance(fields, str | bytes):
        raise UsageError(
            f"tool {t.name!r}: {attr} must be a tuple of parameter names, got the "
            f"string {fields!r}; wrap it: {attr}=({fields!r},)"
        )
    try:
        names = tuple(fields)
    except TypeError:
        raise UsageError(
            f"tool {t.name!r}: {attr} must be a tuple of parameter names, got "
            f"{type(fields).__name__} {fields!r}"
        ) from None
    odd = [n for n in names if not isinstance(n, str)]
    if odd:
        raise UsageError(f"tool {t.name!r}: {attr} must be parameter names (str), got {odd[0]!r}")
    properties = t.parameters.get("properties")
    known = list(properties) if isinstance(properties, dict) else []
    unknown = [n for n in names if n not in known]
    if unknown:
        one = len(unknown) == 1
        lost = (
            "duplicates would not be caught"
            if attr == "idempotency_fields"
            else "the gate would not check it against the workspace"
            if one
            else "the gate would not check them against the workspace"
        )
        raise UsageError(
            f"tool {t.name!r}: {attr} {', '.join(map(repr, unknown))} "
            f"{'is not a parameter' if one else 'are not parameters'} of the "
            f"tool, so no call would carry {'it' if one else 'them'} and {lost}; its "
            f"parameters are: {', '.join(known) or '(none)'}"
        )
    if attr == "path_params" and names and isinstance(properties, dict):
        numbers = [n for n in names if not _can_hold_string(properties[n])]
        if numbers:
            n = numbers[0]
            raise UsageError(
                f"tool {t.name!r}: path_params names {n!r}, which is not a path-like parameter "
                f"(its schema {json.dumps(properties[n], default=str):.80} holds no string), so "
                "every call would be denied as no usable path; name only parameters that hold "
                "paths (str or pathlib.Path)"
            )
    return names


def _can_hold_string(schema: Any) -> bool:
    """Whether a JSON schema admits a string anywhere (a path may be there); unknown: True."""
    if not isinstance(schema, dict) or "$ref" in schema:
        return True
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list):
            return any(_can_hold_string(s) for s in schema[key])
    kind = schema.get("type")
    if kind is None:
        return True
    kinds = [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []
    if "string" in kinds or not kinds:
        return True
    if "array" in kinds:
        items = schema.get("items", True)
        if items is True or _can_hold_string(items):
            return True
    if "object" in kinds:
        inner = [*(schema.get("properties") or {}).values()]
        more = schema.get("additionalProperties", True)
        if more is True or (not inner and more is not False):
            return True
        if any(_can_hold_string(s) for s in [*inner, more] if isinstance(s, dict)):
            return True
    return False


_VALIDATORS: dict[str, Any] = {}


def _compiled_validator(schema: dict[str, Any]) -> Any:
    """Check `schema` against the 2020-12 metaschema and compile it, once per distinct schema.

    Checking against the metaschema costs about 20 ms per schema; registries built per run
    (one per database, per branch) reuse the compiled validator of an equal schema.

    Raises:
        ValueError: the schema is invalid (the message says where).
    """
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        key: str | None = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):  # not plain JSON: compile it as given, uncached
        key = None
    compiled = _VALIDATORS.get(key) if key is not None else None
    if compiled is None:
        frozen = json.loads(key) if key is not None else schema
        try:
            Draft202012Validator.check_schema(frozen)
        except SchemaError as exc:
            raise ValueError(exc.message) from exc
        checker = Draft202012Validator.FORMAT_CHECKER
        compiled = Draft202012Validator(frozen, format_checker=checker)
        if key is not None:
            _VALIDATORS[key] = compiled
    return compiled


@overload
def tool(
    fn: Callable[..., Any],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    risk: Risk = "read",
    group: str | None = None,
    timeout_seconds: float | None = 30.0,
    max_result_chars: int | None = None,
    idempotent: bool | None = None,
    idempotency_fields: Sequence[str] = (),
    version: str = "1",
    path_params: Sequence[str] = (),
) -> Tool: ...


@overload
def tool(
    fn: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    risk: Risk = "read",
    group: str | None = None,
    timeout_seconds: float | None = 30.0,
    max_result_chars: int | None = None,
    idempotent: bool | None = None,
    idempotency_fields: Sequence[str] = (),
    version: str = "1",
    path_params: Sequence[str] = (),
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    risk: Risk = "read",
    group: str | None = None,
    timeout_seconds: float | None = 30.0,
    max_result_chars: int | None = None,
    idempotent: bool | None = None,
    idempotency_fields: Sequence[str] = (),
    version: str = "1",
    path_params: Sequence[str] = (),
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a function into a `Tool`; usable as `@tool` or `@tool(risk="write", ...)`.

    Args:
        fn: the function (when used without parentheses).
        name: tool name; defaults to the function name.
        description: overrides the docstring-derived description.
        parameters: explicit JSON Schema overriding the derived one.
        risk: `read`, `write` or `destructive`.
        group: group name for tool selection (R-T3).
        timeout_seconds: per-call wall-clock limit in seconds; `None` = unlimited.
        max_result_chars: cut results longer than this (chars); `None` = executor default.
        idempotent: defaults to True for `read` tools and False otherwise.
        idempotency_fields: argument names forming a natural key for duplicate detection
            (R-E5), a tuple such as `("ref",)`; each must be a parameter of the tool.
        version: the tool's behaviour version, checked on resume.
        path_params: names of further parameters that are filesystem paths, e.g.
            `("path",)` for `def read_file(path: str)`: the gate checks them against the
            workspace (R-E4) like the parameters typed `Path`, which are always checked.

    Returns:
        A `Tool` (or a decorator producing one).

    Raises:
        UsageError: the spec cannot be derived or is invalid; the function takes `*args`, or
            `**kwargs` without `parameters=`; `idempotency_fields` or `path_params` is a str
            or names something that is not a parameter.
    """

    def build(f: Callable[..., Any]) -> Tool:
        return Tool.from_function(
            f,
            name=name,
            description=description,
            parameters=parameters,
            risk=risk,
            group=group,
            timeout_seconds=timeout_seconds,
            max_result_chars=max_result_chars,
            idempotent=(risk == "read") if idempotent is None else idempotent,
            idempotency_fields=idempotency_fields,  # a str is refused, not split in letters
            version=version,
            path_params=path_params,
        )

    return build(fn) if fn is not None else build


# --- fast acceptance of flat argument schemas ------------------------------------------

# JSON Schema type -> the exact Python types jsonschema certainly accepts for it (bool is not
# an integer; 1.0 is, but that rare case is left to jsonschema).
_FAST_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}
_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "deprecated"})


def _fast_property(schema: Any) -> tuple[frozenset[type], tuple[Any, ...] | None] | None:
    """`(types, enum)` for a property schema made only of type/enum/annotations, else None."""
    if not isinstance(schema, dict) or not set(schema) <= _ANNOTATIONS | {"type", "enum"}:
        return None
    kind = schema.get("type")
    names = [kind] if isinstance(kind, str) else kind
    if names is None:
        types = frozenset(t for ts in _FAST_TYPES.values() for t in ts)
    elif isinstance(names, list) and all(n in _FAST_TYPES for n in names):
        types = frozenset(t for n in names for t in _FAST_TYPES[n])
    else:
        return None
    enum = schema.get("enum")
    if enum is not None:
        if not isinstance(enum, list) or not all(type(v) in (str, int, bool) for v in enum):
            return None
        enum = tuple(enum)
    return types, enum


def _fast_accept(schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    """A check that returns True only for arguments `schema` certainly accepts.

    Built for flat object schemas (what `@tool` derives from `str`/`int`/`float`/`bool`/
    `Literal` hints); `None` for anything else. False means "ask jsonschema", not "invalid".
    """
    if not set(schema) <= _ANNOTATIONS | {"type", "properties", "required", "additionalProperties"}:
        return None
    extra = schema.get("additionalProperties", True)
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if schema.get("type") != "object" or extra not in (True, False):
        return None
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    checks = {name: _fast_property(sub) for name, sub in properties.items()}
    if any(c is None for c in checks.values()):
        return None
    known = frozenset(checks)
    needed = tuple(required)

    def accepts(arguments: Any) -> bool:
        if type(arguments) is not dict:
            return False
        if extra is False and not known.issuperset(arguments):
            return False
        for name in needed:
            if name not in arguments:
                return False
        for name, value in arguments.items():
            check = checks.get(name)
            if check is None:
                continue
            types, enum = check
            if type(value) not in types:
                return False
            if enum is not None and not any(type(v) is type(value) and v == value for v in enum):
                return False
        return True

    return accepts


# --- schema derivation ------------------------------------------------------------------

_SIMPLE: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    Any: {},
    dt.date: {"type": "string", "format": "date"},
    dt.datetime: {"type": "string", "format": "date-time"},
    dt.time: {"type": "string", "format": "time"},
    pathlib.Path: {"type": "string", "x-path": True},
}


def schema_for_type(hint: Any) -> dict[str, Any]:
    """Return the JSON Schema (Draft 2020-12) for a Python type hint.

    Literal → `enum`; `Enum` → `enum` of values; `datetime.date` → string with format date;
    `list[X]`/`tuple[X, ...]` → array; `dict[str, X]` → object; TypedDict and dataclasses →
    nested objects with `required`; `X | None` → `anyOf`.

    Raises:
        UsageError: the hint has no JSON Schema equivalent (e.g. a callable).
    """
    if hint in _SIMPLE:
        return dict(_SIMPLE[hint])
    origin = get_origin(hint)
    args = get_args(hint)
    if origin is Literal:
        values = list(args)
        kinds = {type(v) for v in values}
        out: dict[str, Any] = {"enum": values}
        if kinds == {str}:
            out = {"type": "string", "enum": values}
        elif kinds <= {int}:
            out = {"type": "integer", "enum": values}
        return out
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        nullable = len(members) < len(args)
        if len(members) == 1 and nullable:
            return {"anyOf": [schema_for_type(members[0]), {"type": "null"}]}
        schemas = [schema_for_type(a) for a in members]
        if nullable:
            schemas.append({"type": "null"})
        return {"anyOf": schemas}
    if origin in (list, Sequence, Iterable, set, frozenset) or hint in (list, set):
        item = schema_for_type(args[0]) if args else {}
        out = {"type": "array", "items": item}
        if origin in (set, frozenset):
            out["uniqueItems"] = True
        return out
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": schema_for_type(args[0])}
        return {
            "type": "array",
            "prefixItems": [schema_for_type(a) for a in args],
            "minItems": len(args),
            "maxItems": len(args),
        }
    if origin in (dict, Mapping) or hint is dict:
        value = schema_for_type(args[1]) if len(args) == 2 else {}
        return {"type": "object", "additionalProperties": value}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [m.value for m in hint]
        kinds = {type(v) for v in values}
        if kinds <= {str}:
            return {"type": "string", "enum": values}
        if kinds <= {int}:
            return {"type": "integer", "enum": values}
        return {"enum": values}
    if isinstance(hint, type) and (typing.is_typeddict(hint) or dataclasses.is_dataclass(hint)):
        building = _BUILDING.__dict__.setdefault("types", set())
        if hint in building:
            raise UsageError(
                f"type {hint.__name__} refers to itself; recursive types have no schema here: "
                "flatten it (e.g. children as a list of ids), or pass parameters=... explicitly"
            )
        building.add(hint)
        try:
            return _object_schema(hint)
        finally:
            building.discard(hint)
    raise UsageError(
        f"type hint {hint!r} has no JSON Schema equivalent; use str, int, float, bool, Literal, "
        "Enum, date, list, dict, TypedDict or a dataclass, or pass parameters=... explicitly"
    )


_BUILDING = threading.local()  # the TypedDicts and dataclasses whose schema is being built


def _object_schema(hint: type) -> dict[str, Any]:
    """The schema of a TypedDict or dataclass (see `schema_for_type`)."""
    if typing.is_typeddict(hint):
        hints = get_type_hints(hint)
        req = sorted(getattr(hint, "__required_keys__", set(hints)))
        props = {k: schema_for_type(v) for k, v in hints.items()}
        out = {"type": "object", "properties": props, "additionalProperties": False}
        if req:
            out["required"] = [k for k in hints if k in req]
        return out
    hints = get_type_hints(hint)
    props = {}
    required = []
    for f in dataclasses.fields(hint):
        props[f.name] = schema_for_type(hints[f.name])
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    out = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    return out


class _BadValue(Exception):
    """A JSON value that does not parse as its hinted Python type (private to conversion)."""

    def __init__(self, value: Any, expected: str) -> None:
        super().__init__(expected)
        self.value = value
        self.expected = expected


#: How each JSON Schema string format that converts is written, for error messages; the one
#: table both the converters here and the executor's schema errors quote.
FORMAT_EXAMPLES = {
    "date": "ISO 8601 YYYY-MM-DD, e.g. 2024-05-15",
    "date-time": "ISO 8601 / RFC 3339, e.g. 2024-05-15T14:30:00Z",
    "time": "ISO 8601 HH:MM[:SS], e.g. 14:30:00",
}

_ISO = {
    kind: f"a {fmt} in {FORMAT_EXAMPLES[fmt]} (JSON Schema format: {fmt})"
    for kind, fmt in ((dt.date, "date"), (dt.datetime, "date-time"), (dt.time, "time"))
}


def _excerpt(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:79] + "…"


def _iso(kind: Any) -> Callable[[Any], Any]:
    def convert(value: Any) -> Any:
        if isinstance(value, kind):
            return value
        if not isinstance(value, str):
            raise _BadValue(value, _ISO[kind])
        text = value.strip()
        if kind is not dt.date and text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = kind.fromisoformat(text)
        except ValueError:
            raise _BadValue(value, _ISO[kind]) from None
        return parsed

    return convert


def _member(kind: type[enum.Enum]) -> Callable[[Any], Any]:
    expected = "one of " + json.dumps([_to_jsonable(m) for m in kind], default=str)

    def convert(value: Any) -> Any:
        if isinstance(value, kind):
            return value
        try:
            return kind(value)
        except ValueError:
            raise _BadValue(value, expected) from None

    return convert


def _to_int(value: Any) -> Any:
    """An integral JSON number (`2.0`, `1e2`) as the `int` it is; other values unchanged.

    JSON Schema's `integer` accepts `2.0`, and JSON has one number type, so a parameter
    hinted `int` would otherwise receive a float. A non-integral float (allowed only by an
    explicit `parameters=` schema) is left for the tool, never truncated.
    """
    if type(value) is float and value.is_integer():
        return int(value)
    return value


def converter_for(hint: Any, *, nested: bool = False) -> Callable[[Any], Any] | None:
    """How to turn a JSON value into a value of `hint`, or `None` when it passes as it is.

    Dates, datetimes, times and `Enum` subclasses convert, also inside `X | None`,
    `list[X]`, `tuple[X, ...]` and `set[X]`. An integral number for `int` (or an int
    `Literal`) is an `int` (`2.0` -> `2`) everywhere, in nested objects too (`dict[str, X]`
    values, TypedDict and dataclass fields). A `float` parameter gets the number as sent (an
    `int` for `5`, as Python's own `float` hints allow: a recorded run replays the same
    text, "amount 100" not "amount 100.0"). Nested objects otherwise stay JSON
    (`nested=True`: dicts and lists, their date strings unchanged). The converter raises a
    private error carrying the expected format.
    """
    if hint is int:
        return _to_int
    if not nested and hint in _ISO:
        return _iso(hint)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return None if nested else _member(hint)
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        ints = all(type(a) is int for a in args)
        return _to_int if ints and args else None
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        if len(members) > 1:  # `int | str`: an integral float is the int it matched
            return _to_int if int in members and float not in members else None
        inner = converter_for(members[0], nested=nested) if members else None
        if inner is None:
            return None
        return lambda v: None if v is None else inner(v)
    many = {list: list, Sequence: list, Iterable: list, set: set, frozenset: frozenset}
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        many[tuple] = tuple
    if origin in many and args:
        item = converter_for(args[0], nested=nested)
        if item is None:
            return None
        build = list if nested else many[origin]
        return lambda v: build(item(x) for x in v) if isinstance(v, list) else item(v)
    if origin is tuple and args:  # tuple[int, str]: a fixed-length array
        items = [converter_for(a, nested=nested) for a in args]
        if not any(items):
            return None
        build = list if nested else tuple
        return lambda v: (
            build(c(x) if c else x for c, x in zip(items, v, strict=False))
            if isinstance(v, list)
            else v
        )
    if origin in (dict, Mapping) and len(args) == 2:
        value = converter_for(args[1], nested=True)
        if value is None:
            return None
        return lambda v: {k: value(x) for k, x in v.items()} if isinstance(v, dict) else v
    if isinstance(hint, type) and (typing.is_typeddict(hint) or dataclasses.is_dataclass(hint)):
        building = _BUILDING.__dict__.setdefault("converting", set())
        if hint in building:  # a type that refers to itself (an explicit schema): as sent
            return None
        building.add(hint)
        try:
            return _fields_converter(hint)
        finally:
            building.discard(hint)
    return None


def _fields_converter(hint: type) -> Callable[[Any], Any] | None:
    """The numbers of a TypedDict's or dataclass's fields as their hints say (see above)."""
    try:
        hints = get_type_hints(hint)
    except Exception:  # unresolvable hints: the object stays as sent
        return None
    fields = {}
    for name, field_hint in hints.items():
        field_convert = converter_for(field_hint, nested=True)
        if field_convert is not None:
            fields[name] = field_convert
    if not fields:
        return None

    def convert(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {k: fields[k](x) if k in fields else x for k, x in value.items()}

    return convert


def _converters_for(fn: Callable[..., Any], parameters: Mapping[str, Any]) -> dict[str, Any]:
    """`{parameter: converter}` for `fn`'s parameters the schema names (see `converter_for`)."""
    try:
        hints = get_type_hints(fn)
    except Exception:  # no resolvable hints (a lambda, a C function): nothing converts
        return {}
    names = set((parameters.get("properties") or {}).keys())
    out = {}
    for name, hint in hints.items():
        if name in names and name != "return":
            convert = converter_for(hint)
            if convert is not None:
                out[name] = convert
    return out


def _with_named(typed: list[str], named: Any) -> Any:
    """The path parameters: those typed `Path`, then the ones `path_params=` names.

    A str or a non-iterable `named` is passed on as is, for `Tool` to refuse with a message.
    """
    if named is None:
        return tuple(typed)
    if isinstance(named, str | bytes):
        return named
    try:
        extra = list(named)
    except TypeError:
        return named
    return tuple(dict.fromkeys([*typed, *extra]))


def _is_path(hint: Any) -> bool:
    from harnesskit.tools._paths import contains_path

    return contains_path(hint)


def _non_finite_at(value: Any, path: str) -> str | None:
    """The JSON path (from `path`) of the first NaN or infinite float in `value`, else None."""
    try:  # the common case, all finite, in one C pass; the walk below only names the place
        json.dumps(value, allow_nan=False, default=str)
        return None
    except (ValueError, TypeError, RecursionError):
        pass
    return _non_finite_walk(value, path)


def _non_finite_walk(value: Any, path: str) -> str | None:
    """`_non_finite_at` by walking `value` (dicts, lists and tuples)."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, dict):
        pairs: Iterable[tuple[Any, Any]] = ((f"{path}.{k}", v) for k, v in value.items())
    elif isinstance(value, list | tuple):
        pairs = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for where, item in pairs:
        found = _non_finite_walk(item, where)
        if found is not None:
            return found
    return None


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(_to_jsonable(value))
    except (TypeError, ValueError):
        return False
    return True


def _to_jsonable(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    return value


# --- docstrings ---------------------------------------------------------------------------


@frozen_dataclass
class _Doc:
    text: str
    params: dict[str, str]


_SECTION = lazy_pattern(r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$")


def _parse_docstring(doc: str) -> _Doc:
    """Split a Google-style docstring into (description without Args, {param: description})."""
    lines = doc.splitlines()
    out: list[str] = []
    params: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip() in ("Args:", "Arguments:", "Parameters:"):
            i += 1
            current: str | None = None
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                raw = lines[i]
                m = re.match(r"^\s{2,8}(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$", raw)
                if m and (current is None or _indent(raw) <= _indent_of_first(lines, i)):
                    current = m.group(1).lstrip("*")
                    params[current] = m.group(3).strip()
                elif current and raw.strip():
                    params[current] = (params[current] + " " + raw.strip()).strip()
                i += 1
            continue
        out.append(line)
        i += 1
    return _Doc(text="\n".join(out).strip(), params=params)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _indent_of_first(lines: list[str], i: int) -> int:
    j = i
    while j > 0 and not lines[j - 1].strip().endswith(":"):
        j -= 1
    return _indent(lines[j]) if j < len(lines) else 0


# --- registry -----------------------------------------------------------------------------


class ToolRegistry:
    """The single source of truth for the tools of a run: the model's list, dispatch and logs.

    Iterating yields `Tool`s in registration order; `registry["name"]` returns one.
    """

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        """Create a registry.

        Args:
            tools: `Tool`s or plain functions (wrapped with `tool()` defaults).

        Raises:
            UsageError: two tools share a name, or `tools` is not an iterable of tools.
        """
        self._tools: dict[str, Tool] = {}
        try:
            items = iter(tools)
        except TypeError:
            raise UsageError(
                f"a tool registry takes a list of tools or functions, got "
                f"{type(tools).__name__}: pass [my_tool]"
            ) from None
        for t in items:
            self.add(t)

    def add(self, item: Tool | Callable[..., Any]) -> Tool:
        """Register a tool (a plain function is wrapped with `tool()`); returns the `Tool`.

        Raises:
            UsageError: a tool with that name is already registered, or `item` is neither a
                `Tool` nor a function.
        """
        if not isinstance(item, Tool) and not callable(item):
            raise UsageError(
                f"a tool must be a Tool or a function, got {type(item).__name__}: {item!r:.80}"
            )
        t = item if isinstance(item, Tool) else tool(item)
        if t.name in self._tools:
            raise UsageError(f"a tool named {t.name!r} is already registered; names must be unique")
        self._tools[t.name] = t
        return t

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, or `None`."""
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool:
        t = self._tools.get(name)
        if t is None:
            raise UsageError(f"no tool named {name!r}; registered: {', '.join(self.names)}")
        return t

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        """Tool names in registration order."""
        return list(self._tools)

    def closest(self, name: str, n: int = 5) -> list[str]:
        """Valid names ordered by similarity to `name` (closest first), then the rest."""
        import difflib

        near = difflib.get_close_matches(name, self.names, n=len(self._tools), cutoff=0.0)
        return near[:n]

    def groups(self) -> dict[str, list[str]]:
        """`{group: [tool names]}`; ungrouped tools are under `""`."""
        out: dict[str, list[str]] = {}
        for t in self._tools.values():
            out.setdefault(t.group or "", []).append(t.name)
        return out

    def specs(
        self, *, exclude: Iterable[str] = (), group: str | None = None
    ) -> tuple[dict[str, Any], ...]:
        """Chat-completions tool specs, in registration order (read-only: `Tool.model_spec`).

        Args:
            exclude: names to leave out (e.g. tools disabled by the circuit breaker).
            group: only the tools of this group (R-T3); `None` = all.
        """
        skip = set(exclude)
        return tuple(
            t.model_spec()
            for t in self._tools.values()
            if t.name not in skip and (group is None or t.group == group)
        )

    def versions(self) -> dict[str, str]:
        """`{name: spec_hash}`, frozen into task contracts and checked on resume (R-V6)."""
        return {t.name: f"{t.version}:{t.spec_hash}" for t in self._tools.values()}

    def lint(self) -> list[LintIssue]:
        """Lint every tool and the registry as a whole (see `lint`)."""
        return lint(self)

    def __repr__(self) -> str:
        more = "…" if len(self) > 8 else ""
        return f"<ToolRegistry {len(self)} tools: {', '.join(self.names[:8])}{more}>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


# --- lint ---------------------------------------------------------------------------------


@frozen_dataclass(kw_only=True)
class LintIssue:
    """One description defect found by `lint` (R-T2)."""

    tool: str
    """The tool's name (`"*"` for registry-wide issues)."""
    code: str
    """Stable code: `missing-what`, `missing-when`, `missing-when-not`, `missing-returns`,
    `free-string-enum`, `date-without-format`, `undocumented-param`, `too-many-ungrouped`,
    `missing-description`, `unchecked-path`."""
    message: str
    """What is wrong and how to fix it."""
    param: str | None = None
    """The parameter concerned, if any."""


_WHEN = lazy_pattern(
    r"\b(use (this|it) (when|to|for)|when to use|use when|call (this|it) when)\b", re.I
)
_WHEN_NOT = lazy_pattern(
    r"\b(do not use|don't use|never use|not for|when not to use|do not call|don't call|avoid)\b",
    re.I,
)
_RETURNS = lazy_pattern(r"\breturns?\b", re.I)
_ENUMISH_NAME = lazy_pattern(
    r"(status|type|kind|mode|cabin|class|level|category|tier|reason|unit)$", re.I
)
_ENUMISH_DESC = lazy_pattern(
    r"(\bone of\b|\beither\b|['\"`][\w-]+['\"`]\s*(,|or)\s*['\"`][\w-]+['\"`])", re.I
)
_DATEISH = lazy_pattern(r"(date|dob|birthday|day|_at|time)$|YYYY|yyyy", re.I)
_PATHISH = lazy_pattern(
    r"^(path|paths|file|files|filename|filenames|filepath|file_name|file_path|dir|dirs|"
    r"directory|folder|dirname|dir_name|dirpath)$|_(path|paths|file|filename|dir|directory|"
    r"folder)$",
    re.I,
)
MAX_UNGROUPED_TOOLS = 15


def lint(target: Tool | ToolRegistry | Iterable[Tool]) -> list[LintIssue]:
    """Report description defects of a tool or of every tool in a registry (R-T2).

    Checks the four-part template (what it does / when to use / when NOT to use / what it
    returns), free strings that look like enums, date strings without `format`, parameters
    without descriptions, string parameters named like a path (`path`, `file`, `filename`,
    `dir`, `*_path`, ...) that the gate does not check because they are neither typed `Path`
    nor named in `path_params` (`unchecked-path`), and more than 15 ungrouped tools (grouped
    tools are offered one group at a time, R-T3).

    Returns:
        Issues in tool order, then registry-wide ones; empty when the descriptions are clean.

    Raises:
        UsageError: `target` is not a tool, a registry or an iterable of tools.
    """
    if isinstance(target, Tool):
        tools = [target]
    elif isinstance(target, ToolRegistry) or (
        isinstance(target, list | tuple) and all(isinstance(t, Tool) for t in target)
    ):
        tools = list(target)
    else:
        raise UsageError(
            f"lint() takes a Tool, a ToolRegistry or a list of Tools, got {type(target).__name__}; "
            "wrap a function with @hk.tool first"
        )
    issues: list[LintIssue] = []
    for t in tools:
        issues.extend(_lint_one(t))
    ungrouped = sum(t.group is None for t in tools)
    if ungrouped > MAX_UNGROUPED_TOOLS:  # grouped tools are offered one group at a time (R-T3)
        issues.append(
            LintIssue(
                tool="*",
                code="too-many-ungrouped",
                message=f"{len(tools)} tools with {ungrouped} ungrouped: above "
                f"{MAX_UNGROUPED_TOOLS} tools give each a group so the model picks a group first",
            )
        )
    return issues


def _lint_one(t: Tool) -> list[LintIssue]:
    out: list[LintIssue] = []
    desc = t.description.strip()
    first = desc.split("\n", 1)[0].strip() if desc else ""

    def add(code: str, message: str, param: str | None = None) -> None:
        out.append(LintIssue(tool=t.name, code=code, message=message, param=param))

    if not desc:
        add("missing-description", "the tool has no description at all; write the four parts")
    elif len(first) < 10:
        add("missing-what", "the description does not start with what the tool does")
    if not _WHEN.search(desc):
        add("missing-when", "say when to use it (e.g. 'Use this when the user …')")
    if not _WHEN_NOT.search(desc):
        add("missing-when-not", "say when NOT to use it (e.g. 'Do not use it to …')")
    if not _RETURNS.search(desc):
        add("missing-returns", "say what it returns (e.g. 'Returns: the reservation as JSON')")
    properties = t.parameters.get("properties") or {}
    for pname, schema in properties.items():
        if (
            pname not in t.path_params
            and _PATHISH.search(pname)
            and isinstance(schema, dict)
            and _is_text(schema)
        ):
            add(
                "unchecked-path",
                f"parameter {pname!r} looks like a filesystem path but is a plain string, so "
                "the gate does not check it against the workspace (any file could be reached); "
                f"type it as pathlib.Path, or name it: @hk.tool(path_params=({pname!r},))",
                pname,
            )
    for pname, schema in _walk_params(t.parameters):
        pdesc = schema.get("description", "")
        if not pdesc:
            add("undocumented-param", f"parameter {pname!r} has no description", pname)
        if schema.get("type") == "string" and "enum" not in schema and "format" not in schema:
            if _ENUMISH_NAME.search(pname) or _ENUMISH_DESC.search(pdesc):
                add(
                    "free-string-enum",
                    f"parameter {pname!r} is a free string but looks like a fixed set of values; "
                    "type it as Literal[...] so the schema has an enum",
                    pname,
                )
            if _DATEISH.search(pname) or _DATEISH.search(pdesc):
                add(
                    "date-without-format",
                    f"parameter {pname!r} looks like a date but has no format; type it as "
                    "datetime.date (format: date) or say the format in the schema",
                    pname,
                )
    return out


def _is_text(schema: dict[str, Any]) -> bool:
    """True for a string schema or a list of strings (`str`, `list[str]`, `str | None`)."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "string" in kinds:
        return True
    if "array" in kinds and isinstance(schema.get("items"), dict):
        return _is_text(schema["items"])
    return any(isinstance(s, dict) and _is_text(s) for s in schema.get("anyOf") or ())


def _walk_params(schema: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    for name, sub in (schema.get("properties") or {}).items():
        path = f"{prefix}{name}"
        yield path, sub
        if sub.get("type") == "object":
            yield from _walk_params(sub, path + ".")
        items = sub.get("items")
        if isinstance(items, dict) and items.get("type") == "object":
            yield from _walk_params(items, path + "[].")
