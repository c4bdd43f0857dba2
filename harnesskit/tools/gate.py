"""The permission gate: policy only (R-E4). The executor asks; the gate answers.

Per risk level a decision: `allow`, `confirm` (ask a callback) or `deny`. Path arguments are
resolved with `Path.resolve()` and must stay inside the workspace root: `..`, absolute paths
elsewhere and symlinks that escape are denied. A relative path is taken from the workspace
root, so the tool is called with the resolved absolute path that was checked
(`resolve_paths`), never the text it would open from the process's current folder; the
`tool.call` event keeps what the model sent and the `tool.result` notes `resolved_paths`.
Confirmation goes through a callback — a widget in a notebook, a prompt in a terminal,
`deny_all` in batch runs (the default).

A call recovered from the message text (`ToolCall.recovered`: JSON the model wrote in its
answer, in a sentence or a fence, instead of a real tool call) may be a quotation, an example
or a question ("shall I run {...}?"), so a write or destructive tool called that way always
needs confirmation, whatever the policy says; a `deny` stays a `deny`, and read tools run.
"""

from __future__ import annotations

import inspect
import os
import pathlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from harnesskit import _repr
from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import StopRun, UsageError, checked_call, checked_path
from harnesskit.tools import _paths
from harnesskit.tools.spec import RISKS, Tool

__all__ = [
    "ApprovalRequest",
    "Gate",
    "GateDecision",
    "allow_all",
    "deny_all",
    "terminal_prompt",
]

Decision = Literal["allow", "confirm", "deny"]
_DECISIONS = ("allow", "confirm", "deny")


@frozen_dataclass(kw_only=True)
class ApprovalRequest:
    """What a confirmation callback is shown for one confirm-level call."""

    tool: str
    """The tool's name."""
    risk: str
    """Its risk level."""
    arguments: dict[str, Any]
    """The validated arguments."""
    tool_call_id: str
    """The call's id."""
    preview: Any = None
    """The tool's dry-run result (what it would do), when it supports `dry_run`."""
    recovered: bool = False
    """True when the call was read from the model's message text (JSON in prose or a fence),
    not made through the tool-calling interface: the model may only have been describing it."""

    def __repr__(self) -> str:
        return f"<ApprovalRequest {self.tool} ({self.risk}) call={self.tool_call_id}>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


@frozen_dataclass(kw_only=True)
class GateDecision:
    """The gate's answer for one call."""

    allowed: bool
    """True when the call may run."""
    decision: Decision
    """The policy decision for the tool's risk (`allow`, `confirm`, `deny`)."""
    reason: str = ""
    """Why a call was denied (names the rule), or who approved it."""
    approved_by: str | None = None
    """`"policy"` or `"callback"` when allowed."""


_ALLOWED_BY_POLICY = GateDecision(allowed=True, decision="allow", approved_by="policy")

ApprovalCallback = Callable[[ApprovalRequest], bool]


def deny_all(request: ApprovalRequest) -> bool:
    """Batch default: refuse every confirm-level call."""
    return False


def allow_all(request: ApprovalRequest) -> bool:
    """Approve every confirm-level call (tests, trusted sandboxes)."""
    return True


def terminal_prompt(request: ApprovalRequest) -> bool:
    """Ask on the terminal (`input()`): approve only on `y`/`yes`. Returns False on EOF."""
    print(f"Approve {request.risk} tool {request.tool}({request.arguments})?")
    if request.recovered:
        print("  (read from JSON in the model's message text, not a tool call it made)")
    if request.preview is not None:
        print(f"  dry run: {request.preview}")
    try:
        return input("[y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


@checked_call("name each setting, e.g. hk.Gate(policy={'destructive': 'deny'}, workspace=...)")
@dataclass(slots=True, kw_only=True)
class Gate:
    """Permission policy for a run.

    Args:
        policy: `{risk: "allow" | "confirm" | "deny"}`; missing risks take the defaults
            (read allow, write allow, destructive confirm).
        tools: per-tool overrides `{tool_name: decision}`, applied before the risk policy.
        workspace: root that path arguments must stay in; `None` denies every path argument.
        confirm: the callback asked for confirm-level calls; default `deny_all`.
        dry_run: when True, write and destructive tools are only ever called with
            `dry_run=True` (tools without dry-run support are denied).

    Raises:
        UsageError: a decision or risk name is not one of the known values, `confirm` is not a
            plain callable taking one argument, `workspace` is not a usable folder path (a
            NUL byte, a name too long, a file: `errors.checked_path`), `dry_run` is
            not a bool, or a setting is given by position (`Gate("deny")`) or unknown.
    """

    policy: dict[str, Decision] = field(default_factory=dict)
    tools: dict[str, Decision] = field(default_factory=dict)
    workspace: pathlib.Path | str | None = None
    confirm: ApprovalCallback = deny_all
    dry_run: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.policy, dict) or not isinstance(self.tools, dict):
            raise UsageError(
                "Gate(policy=..., tools=...) take dicts such as {'write': 'confirm'} and "
                "{'cancel_reservation': 'deny'}"
            )
        if not callable(self.confirm) or inspect.iscoroutinefunction(self.confirm):
            raise UsageError(
                "Gate(confirm=...) needs a plain function request -> bool (not async), such as "
                "hk.deny_all, hk.allow_all or hk.ApprovalPrompt()"
            )
        try:
            inspect.signature(self.confirm).bind(None)
        except TypeError:
            raise UsageError(
                f"Gate(confirm=...) is called with one argument (the ApprovalRequest), but "
                f"{_short(self.confirm)} does not take one; pass e.g. `lambda request: True`"
            ) from None
        except ValueError:  # no signature to read (some builtins): trust the callable
            pass
        if not isinstance(self.dry_run, bool):  # "yes" / "no" would both switch it on
            raise UsageError(f"Gate(dry_run=...) takes True or False, got {self.dry_run!r:.40}")
        if self.workspace is not None and not isinstance(self.workspace, str | os.PathLike):
            raise UsageError(
                f"Gate(workspace=...) takes a folder path (str or Path) or None, "
                f"got {self.workspace!r}"
            )
        merged: dict[str, Decision] = {"read": "allow", "write": "allow", "destructive": "confirm"}
        for risk, decision in self.policy.items():
            if risk not in RISKS:
                raise UsageError(f"gate policy: unknown risk {risk!r}; use one of {RISKS}")
            merged[risk] = decision
        for name, decision in [*merged.items(), *self.tools.items()]:
            if decision not in _DECISIONS:
                raise UsageError(
                    f"gate policy for {name!r}: {decision!r} is not one of {_DECISIONS}"
                )
        self.policy = merged
        if self.workspace is not None:
            root = checked_path(
                self.workspace,
                "Gate(workspace=...)",
                kind="folder",
                fix="pass the folder tools may touch, or None to deny every path argument",
            )
            self.workspace = root.resolve()

    def decision_for(self, tool: Tool, *, recovered: bool = False) -> Decision:
        """The decision for `tool` (per-tool override, else by risk).

        Args:
            tool: the tool called.
            recovered: the call was read from the message text (`ToolCall.recovered`); an
                `allow` for a write or destructive tool then becomes `confirm`.

        Returns:
            `"allow"`, `"confirm"` or `"deny"`.
        """
        decision = self.tools.get(tool.name) or self.policy[tool.risk]
        if recovered and decision == "allow" and tool.risk != "read":
            return "confirm"
        return decision

    def check_paths(self, tool: Tool, arguments: Mapping[str, Any]) -> str | None:
        """Why a path-typed value of the call is denied, or `None` when all are inside.

        Every path-typed value is checked, wherever it sits: in lists, tuples, dicts, nested
        TypedDict/dataclass fields typed `Path`, and values resolved from `$bind` (the executor
        binds before it asks the gate).

        Args:
            tool: the tool called (its `path_params` and its function's type hints).
            arguments: the call's arguments.

        Returns:
            The reason naming the argument and the location of the first bad value, or `None`.
        """
        if not tool.path_params:
            return None
        for name, plan in _paths.param_plans(tool.fn, tuple(tool.path_params)):
            value = arguments.get(name)
            if value is None:
                continue
            for where, raw in _paths.paths_in(plan, value, name):
                reason = self.path_violation(raw)
                if reason:
                    return f"argument {where!r}: {reason}"
        return None

    def resolve_paths(
        self, tool: Tool, arguments: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """The arguments the tool is called with: each path as the gate checks it (R-E4).

        A relative path is checked from the workspace root, not from the process's current
        folder, so the tool must not open it as given: every path-typed value (the places
        `check_paths` looks) that is inside the workspace is replaced by its resolved absolute
        path, the exact path that was checked. Values that escape or cannot be resolved are
        left as sent, for `check` to deny with its reason. A `str` stays a `str`.

        Args:
            tool: the tool called.
            arguments: the call's arguments after `$bind` (JSON data).

        Returns:
            `(arguments, resolved)`: the arguments to call with (the same dict when the tool
            takes no paths), and `{location: absolute path}` for each value that changed.
        """
        if not tool.path_params or self.workspace is None:
            return arguments, {}
        resolved: dict[str, str] = {}

        def swap(where: str, raw: Any) -> Any:
            reason, target = self._resolve(raw)
            if reason is not None or target is None:
                return raw
            text = str(target)
            if text == (str(raw) if isinstance(raw, pathlib.PurePath) else raw):
                return raw
            resolved[where] = text
            return type(raw)(text) if isinstance(raw, pathlib.PurePath) else text

        out = dict(arguments)
        for name, plan in _paths.param_plans(tool.fn, tuple(tool.path_params)):
            if out.get(name) is not None:
                out[name] = _paths.map_paths(plan, out[name], swap, name)
        return out, resolved

    def path_violation(self, raw: Any) -> str | None:
        """Why `raw` escapes the workspace (or is no usable path), or `None` when it is inside.

        Relative paths are taken from the workspace root; the path is resolved with
        `Path.resolve(strict=False)`, so `..` segments and symlinks are followed before the
        check. A value that is not a string or path, a NUL byte, a name that is not valid
        UTF-8 (a lone surrogate), a symlink loop or any other error while resolving is denied
        with its reason; this method never raises.

        Args:
            raw: the path value (a `str` or `os.PathLike`).

        Returns:
            The reason, or `None` when the resolved path is inside the workspace.
        """
        return self._resolve(raw)[0]

    def _resolve(self, raw: Any) -> tuple[str | None, pathlib.Path | None]:
        """`(reason, None)` when `raw` is denied, else `(None, resolved absolute path)`."""
        if self.workspace is None:
            return "no workspace is configured for this run, so no path is allowed", None
        if isinstance(raw, pathlib.PurePath):
            raw = str(raw)
        if not isinstance(raw, str):
            return f"a path must be a string, got {type(raw).__name__} {_short(raw)}", None
        if "\x00" in raw:
            return f"the path {_short(raw)} contains a NUL byte", None
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError:
            return (
                f"the path {_short(raw)} is not valid UTF-8 (a lone surrogate or undecodable)",
                None,
            )
        root = pathlib.Path(self.workspace)
        candidate = pathlib.Path(raw)
        try:
            if candidate.is_absolute():
                target = candidate.resolve()
                kind = "absolute path"
            else:
                target = (root / candidate).resolve()
                kind = "symlink or '..' path" if ".." in candidate.parts else "path via a symlink"
        except RuntimeError:  # Python 3.11 reports a symlink loop this way
            return f"the path {_short(raw)} is a symlink loop", None
        except (OSError, ValueError) as exc:
            return (
                f"the path {_short(raw)} cannot be resolved ({type(exc).__name__}: {exc})",
                None,
            )
        if _loops(target):
            return f"the path {_short(raw)} is a symlink loop", None
        if target == root or root in target.parents:
            return None, target
        return f"{kind} {raw!r} resolves to {target}, outside the workspace {root}", None

    def check(
        self,
        tool: Tool,
        arguments: Mapping[str, Any],
        *,
        tool_call_id: str = "",
        preview: Any = None,
        recovered: bool = False,
    ) -> GateDecision:
        """Decide whether a validated call may run.

        Args:
            tool: the tool called.
            arguments: its validated arguments.
            tool_call_id: the call's id (shown to the approval callback).
            preview: the dry-run result shown to the callback, if already computed.
            recovered: the call was read from the message text, not made as a tool call
                (`ToolCall.recovered`); a write or destructive tool then needs confirmation
                even where the policy allows it, and a refusal tells the model to make a
                real tool call if it meant one.

        Returns:
            A `GateDecision`; `allowed=False` carries the reason. A confirmation callback that
            raises refuses the call (the reason names the exception).

        Raises:
            UsageError: the confirmation callback returned something other than a bool.
        """
        decision = self.decision_for(tool, recovered=recovered)
        if decision == "deny":
            return GateDecision(
                allowed=False,
                decision=decision,
                reason=f"policy denies {tool.risk} tools ({tool.name})",
            )
        violation = self.check_paths(tool, arguments)
        if violation:
            return GateDecision(allowed=False, decision=decision, reason=violation)
        if decision == "allow":
            return _ALLOWED_BY_POLICY  # one shared value: decisions are frozen
        request = ApprovalRequest(
            tool=tool.name,
            risk=tool.risk,
            arguments=dict(arguments),
            tool_call_id=tool_call_id,
            preview=preview,
            recovered=recovered,
        )
        try:
            answer = self.confirm(request)
        except StopRun:  # the callback ends the run on purpose (e.g. a pause for approval)
            raise
        except Exception as exc:  # a crashing callback refuses the call; it never crashes the run
            return GateDecision(
                allowed=False,
                decision=decision,
                reason=(
                    f"{tool.risk} tool {tool.name} needs confirmation and the confirmation "
                    f"callback raised {type(exc).__name__}: {exc}"
                ),
            )
        if inspect.isawaitable(answer):
            close = getattr(answer, "close", None)
            if close is not None:
                close()
            raise UsageError(
                "the confirmation callback returned an awaitable; it must return a bool"
            )
        if not isinstance(answer, bool):
            raise UsageError(
                f"the confirmation callback returned {answer!r}; it must return True (approve) "
                "or False (refuse) — anything else could approve a call by accident"
            )
        if answer:
            return GateDecision(
                allowed=True,
                decision=decision,
                approved_by="callback",
                reason="approved by the confirmation callback",
            )
        if recovered:
            return GateDecision(allowed=False, decision=decision, reason=_recovered_refused(tool))
        return GateDecision(
            allowed=False,
            decision=decision,
            reason=f"{tool.risk} tool {tool.name} needs confirmation and it was refused",
        )

    def to_dict(self) -> dict[str, Any]:
        """The policy as plain data (frozen into task contracts; resume compares it)."""
        return {
            "policy": dict(self.policy),
            "tools": dict(self.tools),
            "workspace": str(self.workspace) if self.workspace else None,
            "dry_run": self.dry_run,
            "confirm": getattr(self.confirm, "__name__", type(self.confirm).__name__),
        }


def _recovered_refused(tool: Tool) -> str:
    """The refusal of a write read from the message text, telling the model what to do."""
    return (
        f"not run: this call to the {tool.risk} tool {tool.name} was read from JSON in your "
        "message text, not made as a tool call, and a write taken from text needs confirmation "
        "(it may be an example, a question or something you said you would not do); if you "
        f"mean to run {tool.name}, make a real tool call through the tool-calling interface; "
        "if you were only describing it, carry on without it"
    )


def _short(value: Any) -> str:
    """`repr(value)` cut to 80 characters (surrogates and NULs shown escaped)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _loops(target: pathlib.Path) -> bool:
    """True when `target` (already resolved, non-strict) is still a symlink: a loop."""
    try:
        return target.is_symlink()
    except (OSError, ValueError):
        return False
