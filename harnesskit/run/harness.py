"""`Harness`: the runtime around a model — tools, gate, context policy, limits, log folder.

A harness opens runs (`start`, `run`) and reopens logged ones (`resume`, `restart`); the
lifecycle itself lives in `run.lifecycle`, around the loop.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harnesskit import _json
from harnesskit.context.builder import ContextPolicy
from harnesskit.context.tokens import TokenEstimator
from harnesskit.data.artifacts import ArtifactStore
from harnesskit.data.transport import TransportPolicy
from harnesskit.errors import UsageError, checked_call, checked_path, refuse_type
from harnesskit.log.redact import Redactor
from harnesskit.messages import ModelRequest, StreamDelta
from harnesskit.models.base import Model, get_model, model_secrets
from harnesskit.run._classes import model_limit, run_data_class
from harnesskit.run.limits import Limits
from harnesskit.run.progress import Progress
from harnesskit.tools.gate import Gate
from harnesskit.tools.groups import ToolGroups
from harnesskit.tools.idempotency import Confirmer
from harnesskit.tools.spec import Tool, ToolRegistry

if TYPE_CHECKING:
    from harnesskit.run.loop import Run

__all__ = ["Harness"]


class _NoModel:
    """The model of a `Harness` built without one: every request says what to pass instead."""

    name = "none"

    def request(self, request: ModelRequest) -> Any:
        raise UsageError(
            f"this Harness has no model, so step {request.step} cannot ask one: pass it as "
            "Harness(tools, model), e.g. hk.ScriptedModel([...]) offline, "
            "'openai-compat:<model>' with base_url=..., 'ollama:qwen2.5' or "
            "'local:<model>' (hk.get_model lists the providers); without a model a Harness "
            "only opens, inspects and reads runs"
        )

    def __repr__(self) -> str:
        return "<no model: pass Harness(tools, model)>"


_NO_MODEL = _NoModel()


class Harness:
    """The runtime around a model: tools, gate, context policy, limits and the log folder.

    Args:
        tools: a `ToolRegistry` or an iterable of `Tool`s / functions.
        model: a `Model` or a `get_model` spec such as `"ollama:qwen2.5"`. Without one the
            harness can open, inspect and record runs (`start`, `artifacts`, reading logs),
            and the first model step raises `UsageError` saying what to pass. Who owns a
            server behind it: a `local:` spec given here makes a model this harness holds; its
            server starts on the first request, serves every run of the harness (one prompt
            cache) and stops when `h.model.close()` is called, the model is garbage collected,
            or the process exits (atexit). A model object passed in stays the caller's to
            close (`with`).
            A model with an `info` dict has it recorded on the first `model.response` of each
            log (`model_info`).
        policy: context policy (name, dict or `ContextPolicy`).
        limits: the brakes.
        log_dir: folder for `<run_id>.jsonl` logs; `None` keeps logs in memory.
        system_prompt: the system message of every run.
        gate: the permission gate; default `Gate()`.
        settings: sampling settings sent with every request, plus `data_class` (not sent):
            the least data class of every request of the run (R-S2). Each request's class is
            the highest of it and of the events whose content the prompt carries (`internal`
            unless marked); a model whose `max_data_class` is below it is not sent the request
            (a `FallbackModel` skips such nodes) and the step fails with `ModelError`.
        progress: callback receiving `Progress` items.
        estimator: token estimator used when a model reports no usage.
        clock: wall clock (seconds since epoch) for event timestamps and tools' `now()`.
        timer: monotonic clock (seconds) for durations and the `max_seconds` brake; inject it
            with `clock` (and a `run_id`) for byte-identical logs.
        artifacts: where large tool results go (R-A1): an `ArtifactStore` or a folder; default
            `<log_dir>/artifacts/`, or memory when there is no `log_dir`.
        transport: externalization thresholds, bindings note, R-A5 mode (`TransportPolicy`).
        workspace_revision: the workspace revision (a string, or a function returning the
            current one, e.g. a git commit); recorded in the contract, on write results and on
            forks, and checked on resume.
        confirmers: `{write_tool: confirm(record) -> EffectCheck}`: how to find out whether a
            write whose outcome is unknown took effect (used on resume, R-E5). Each key must
            be a registered tool's name by the time a run opens (`start`, `resume`,
            `restart` raise `UsageError` otherwise).
        redactor: secret scanner for every event (R-S1); default `Redactor()` (keys, tokens,
            passwords, private keys, e-mails); `None` turns it off.
        on_unavailable: when the model (or every node of a `FallbackModel` chain) stays
            unavailable after its retries: `"error"` ends the run (`finish_reason="error"`),
            `"pause"` ends the step with `finish_reason="paused"` and a later `step()` or
            `run()` tries again (R-M5).
        tool_groups: group selection (R-T3): past `threshold` tools (default 15) in a registry
            with grouped tools, the model first calls `choose_group`, then sees only the open
            group's tools (plus the ungrouped ones); default `ToolGroups()`.
        on_delta: called with each `StreamDelta` (text and tool-call argument fragments) as
            the model generates them, e.g. `hk.notebook.live_stream()` in a notebook; the model
            must stream (`settings={"stream": True}` or `stream=True` on the client) for the
            fragments to arrive as generated. The logged messages are the same without it.
        tracer: an OpenTelemetry `Tracer` (or `TracerProvider`) that receives live spans in
            the GenAI semantic conventions as the run goes: one per run, per model request
            (tokens), per tool call (`harnesskit.log.otel`, extra `[otel]`); `None` for none.
        stable_tools: send the same tool list on every request of a run, so a provider's prompt
            cache is reused (a chat template that renders the tools into the system message,
            like Qwen's, puts them before everything else, and any change to the list makes the
            server evaluate the whole prompt again): tools disabled by the circuit breaker stay
            listed (their calls are still refused, R-E3) and the `artifact_*` inspection tools
            are listed from the first request. `None` (default): on when the model says its
            server caches prompt prefixes (`model.caches_prompt_prefix`, true for `local:`
            models), else off (a disabled tool leaves the list; inspection tools join it with
            the first artifact).

    Raises:
        UsageError: an argument of the wrong type, a `log_dir` that is not a folder that can
            be created or written (a file, a read-only or missing mount, a NUL byte, a name
            too long for the file system), a `policy` file path that is not usable, a tool
            named like a built-in one (the prefix `artifact_`, or `choose_group`), `settings`
            holding NaN or Infinity (the log is JSON, which has no such numbers), or a model whose
            `max_data_class` is not one of `public`, `internal`, `restricted`, `secret`.
    """

    @checked_call("call it as hk.Harness(tools, model, limits=..., log_dir=..., ...)")
    def __init__(
        self,
        tools: ToolRegistry | Sequence[Tool | Callable[..., Any]] = (),
        model: Model | str | _NoModel = _NO_MODEL,
        *,
        policy: Any = None,
        limits: Limits | None = None,
        log_dir: str | Path | None = None,
        system_prompt: str = "",
        gate: Gate | None = None,
        settings: dict[str, Any] | None = None,
        progress: Callable[[Progress], None] | None = None,
        estimator: TokenEstimator | None = None,
        clock: Callable[[], float] = time.time,
        timer: Callable[[], float] = time.monotonic,
        artifacts: ArtifactStore | str | Path | None = None,
        transport: TransportPolicy | None = None,
        workspace_revision: str | Callable[[], str | None] | None = None,
        confirmers: dict[str, Confirmer] | None = None,
        redactor: Redactor | None | str = "default",
        on_unavailable: str = "error",
        tool_groups: ToolGroups | None = None,
        on_delta: Callable[[StreamDelta], None] | None = None,
        tracer: Any = None,
        stable_tools: bool | None = None,
    ) -> None:
        _check_arguments(log_dir, system_prompt, settings, progress)
        _check_parts(
            estimator=estimator, clock=clock, timer=timer, artifacts=artifacts,
            transport=transport, workspace_revision=workspace_revision, confirmers=confirmers,
            redactor=redactor, tool_groups=tool_groups, on_delta=on_delta,
        )  # fmt: skip
        if isinstance(tools, Tool) or callable(tools) and not isinstance(tools, ToolRegistry):
            raise UsageError(
                "Harness(tools=...) takes a list of tools or a ToolRegistry: [my_tool]"
            )
        self.tools = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
        _refuse_reserved_names(self.tools)
        self.model = model if isinstance(model, _NoModel) else get_model(model)
        if not callable(getattr(self.model, "request", None)):
            raise UsageError(
                f"Harness(model=...) needs a model (e.g. hk.ScriptedModel([...]) or "
                f"'ollama:qwen2.5'), got {model!r}"
            )
        model_limit(self.model)  # R-S2: a misspelt max_data_class is refused, never ignored
        if limits is not None and not isinstance(limits, Limits):
            raise UsageError(
                f"Harness(limits=...) takes hk.Limits(...), got {type(limits).__name__}"
            )
        if gate is not None and not isinstance(gate, Gate):
            raise UsageError(f"Harness(gate=...) takes hk.Gate(...), got {type(gate).__name__}")
        unknown = sorted(set((gate or Gate()).tools) - set(self.tools.names))
        if unknown:
            raise UsageError(
                f"Gate(tools=...) names tools this harness does not have: {unknown}; "
                f"known tools: {self.tools.names}"
            )
        self.policy = ContextPolicy.resolve(policy)
        self.limits = limits or Limits()
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.system_prompt = system_prompt
        self.gate = gate or Gate()
        self.settings = dict(settings or {})
        # the run's least data class (R-S2): not sent, it sets each request's `data_class`
        self.data_class = run_data_class(self.settings.pop("data_class", None))
        _refuse_non_finite("Harness(settings=...)", self.settings)  # names the nested key
        ModelRequest(messages=(), settings=self.settings)  # UsageError for a non-sampling key
        self.progress = progress
        self.estimator = estimator or TokenEstimator()
        self.clock = clock
        self.timer = timer
        self.artifacts = ArtifactStore.resolve(artifacts, log_dir=self.log_dir)
        self.transport = transport or TransportPolicy()
        if isinstance(redactor, str) and redactor != "default":
            raise UsageError(f"redactor must be a Redactor, None or 'default', got {redactor!r}")
        self.redactor: Redactor | None = Redactor() if isinstance(redactor, str) else redactor
        self._run_redactor: tuple[Redactor, tuple[str, ...], Redactor] | None = None
        if on_unavailable not in ("error", "pause"):
            raise UsageError(f"on_unavailable must be 'error' or 'pause', got {on_unavailable!r}")
        self.on_unavailable = on_unavailable
        self.workspace_revision = workspace_revision
        self.confirmers = dict(confirmers or {})
        self.tool_groups = tool_groups if tool_groups is not None else ToolGroups()
        self.on_delta = on_delta
        get_tracer = getattr(tracer, "get_tracer", None)
        self.tracer = get_tracer("harnesskit") if callable(get_tracer) else tracer
        if stable_tools is not None and not isinstance(stable_tools, bool):
            raise UsageError(f"stable_tools must be True, False or None, got {stable_tools!r}")
        self.stable_tools: bool = (
            bool(getattr(self.model, "caches_prompt_prefix", False) is True)
            if stable_tools is None
            else stable_tools
        )

    def revision(self) -> str | None:
        """The current workspace revision.

        Returns:
            The revision string, or `None` when not tracked.
        """
        rev = self.workspace_revision
        return rev() if callable(rev) else rev

    @property
    def run_system_prompt(self) -> str:
        """The system prompt each run records and sends: `system_prompt` + bindings note (R-A6)."""
        return self.transport.system_prompt(self.system_prompt, has_tools=len(self.tools) > 0)

    @checked_call("call it as h.start('the user request', run_id=..., task={...})")
    def start(
        self,
        user_message: str | Sequence[str] | None = None,
        *,
        run_id: str | None = None,
        task: dict[str, Any] | None = None,
    ) -> Run:
        """Open a run: write its `task.contract` and the first user message(s).

        Args:
            user_message: the user's opening turn(s).
            run_id: the run's id, which names its log `<log_dir>/<run_id>.jsonl`: 1-200
                characters from `A-Z a-z 0-9 . _ -`, starting with a letter or digit; default
                a fresh `run-<12 hex>`.
            task: extra task facts recorded in the contract (e.g. a benchmark task id).

        Returns:
            The new run, before its first step.

        Raises:
            UsageError: a user turn is not text; `task` is not a dict with text keys; `task`
                or the harness's `settings` hold NaN or Infinity; `run_id` breaks the rule
                above; a file already exists at the log's path (a log: logs are never reused;
                anything else: never appended to), or a symbolic link is at the log's path (or
                a dangling one at the ledger's): never followed; `confirmers` names a tool
                that is not registered; or the arguments do not fit (an unknown keyword, a
                second positional one).
        """
        if task is not None and (
            not isinstance(task, Mapping) or not all(isinstance(k, str) for k in task)
        ):
            raise UsageError(
                f"task must be a dict of task facts with text keys (e.g. task={{'task_id': "
                f"'t-1', 'goal': 'cancel order A1'}}), got {type(task).__name__} {task!r:.80}; "
                "the user's request itself is the first argument, start('cancel order A1')"
            )
        if isinstance(user_message, str):
            turns = [user_message]
        elif isinstance(user_message, list | tuple) or user_message is None:
            turns = list(user_message or ())
        else:
            turns = [user_message]  # type: ignore[list-item]  # refused just below
        if not all(isinstance(t, str) for t in turns):
            raise UsageError(f"user turns must be text, got {user_message!r:.80}")
        _refuse_non_finite("start(task=...)", task)
        from harnesskit.run import lifecycle
        from harnesskit.run._ids import check_run_id

        if run_id is None:
            import uuid  # loaded here: `import harnesskit` need not pay for it

            run_id = f"run-{uuid.uuid4().hex[:12]}"
        self._check_before_run()
        return lifecycle.open_run(self, check_run_id(run_id), turns, dict(task or {}))

    @checked_call("call it as h.run('the user request', run_id=..., task={...})")
    def run(self, user_message: str | Sequence[str], **kwargs: Any) -> Run:
        """`start(...)` then `run()`.

        Args:
            user_message: the user's opening turn(s).
            **kwargs: `run_id`, `task` (see `start`).

        Returns:
            The run, finished (or paused).

        Raises:
            UsageError: as for `start`, or the arguments do not fit (no user message).
        """
        return self.start(user_message, **kwargs).run()

    def run_redactor(self) -> Redactor | None:
        """The redactor every event of this harness's runs passes (R-S1).

        `redactor` with the model's own secrets added to its literals (`Model.secrets()`: the
        client's API key and base-URL credentials, raw and encoded), so a key the server or
        the model echoes back is scrubbed from every event, not only from the client's errors.
        `redactor` itself stays as given (its repr never shows the key).

        Returns:
            The redactor for the runs' logs and ledgers; `None` when `redactor` is `None`.

        Raises:
            UsageError: the model's `secrets()` returned something other than strings.
        """
        base = self.redactor
        if base is None:
            return None
        secrets = tuple(s for s in model_secrets(self.model) if s not in base.literals)
        if not secrets:
            return base
        cached = self._run_redactor
        if cached is not None and cached[0] is base and cached[1] == secrets:
            return cached[2]
        made = dataclasses.replace(base, literals=(*base.literals, *secrets))
        self._run_redactor = (base, secrets, made)
        return made

    @checked_call("call it as h.resume('runs/<run_id>.jsonl', branch_id=...)")
    def resume(self, path: str | Path, *, branch_id: str | None = None) -> Run:
        """Reopen a logged run and go on from where it stopped (R-V6; see `resume.reopen`).

        The six resume checks must pass; the step in flight is finished (writes already done
        return their recorded results, never act twice), then `run()` goes on. A pending call
        whose arguments the log holds redacted (`[REDACTED:password]`) is never run again: it
        gets its settled write's recorded result or a failure saying so, and is listed in
        the `run.resume` event (`redacted_calls`) and by `hk.check_resume(...).redacted_calls`.

        Args:
            path: the run's `.jsonl` log.
            branch_id: the branch to go on with; default the one last extended.

        Returns:
            The run, with the step in flight finished: `finish_reason` is `None` when it
            goes on with `run()`. A pause while finishing it (the gate's confirm callback
            raising `StopRun("paused")`), a tool's `StopRun` or a brake ends it as in `run()`:
            the run comes back with that finish reason and `run.finished` is logged.

        Raises:
            ResumeError: a check failed (`.failed` names it; restart or fork instead).
            CorruptLogError: the log or its write ledger (`<log>.idem`) is corrupt (a damaged
                last line too, unless a killed run or a power loss tore it: `torn_line`; nothing
                is written then), or the log's causal order cannot be established (a missing or
                looping parent, R-V4).
            UsageError: `path` is not a usable file path (a NUL byte, a name too long, a
                folder, a file in the way: `errors.checked_path`), `confirmers` names a tool
                that is not registered, `settings` hold NaN or Infinity (nothing is read),
                `branch_id` is not a string or None, or the arguments do not fit (no path, an
                unknown keyword).
        """
        from harnesskit.run import lifecycle

        checked_path(path, "h.resume(path)", kind="file", fix=_LOG_FIX)
        refuse_type(branch_id, (str, type(None)), "resume(..., branch_id=...)", "a branch name")
        self._check_before_run()
        return lifecycle.resume(self, path, branch_id=branch_id)

    @checked_call("call it as h.restart('runs/<run_id>.jsonl', reason='why it runs again')")
    def restart(self, path: str | Path, *, reason: str, branch_id: str | None = None) -> Run:
        """Run a logged task again from its start, on a new branch (`run.restart`).

        The old attempt stays in the log as evidence; see `resume.restart_point`.

        Args:
            path: the run's `.jsonl` log.
            reason: why the task is run again (recorded on the branch).
            branch_id: the new branch's name; default one is chosen.

        Returns:
            A run on the new branch, before its first step.

        Raises:
            UsageError: `path` is not a usable file path (`errors.checked_path`), the file
                is missing or holds no task contract; `confirmers` names a
                tool that is not registered, `settings` hold NaN or Infinity (nothing is
                read), `branch_id` is not a string or None, or the arguments do not fit (no
                path or `reason`).
            CorruptLogError: the log or its write ledger (`<log>.idem`) is corrupt, or the log's
                causal order cannot be established (a missing or looping parent, R-V4).
        """
        from harnesskit.run import lifecycle

        checked_path(path, "h.restart(path)", kind="file", fix=_LOG_FIX)
        refuse_type(branch_id, (str, type(None)), "restart(..., branch_id=...)", "a branch name")
        self._check_before_run()
        return lifecycle.restart(self, path, reason=reason, branch_id=branch_id)

    def _check_before_run(self) -> None:
        """Refuse what a run must not open with, naming it (`UsageError`).

        A confirmer for a tool that is not registered (a typo would leave the write it meant
        to settle unconfirmable on resume), and settings edited since construction to hold
        NaN/Infinity. Checked when a run opens, not only at construction: tools may be added
        to the registry (`ToolRegistry.add`) and `settings` edited after it.
        """
        _refuse_non_finite("Harness.settings", self.settings)
        unknown = sorted(set(self.confirmers) - set(self.tools.names))
        if unknown:
            raise UsageError(
                f"Harness(confirmers=...) names tools that are not registered: {unknown}; "
                f"registered tools: {self.tools.names}. Key each confirmer by the name of the "
                "write tool it confirms, and register that tool before start/resume/restart"
            )


def _refuse_non_finite(what: str, value: Any) -> None:
    """`UsageError` when `value` (bound for the log) holds NaN or Infinity.

    JSON has no such numbers: `json.dumps` writes the non-JSON tokens `NaN`, `Infinity`.
    """
    where = _json.non_finite(value)
    if where is not None:
        raise UsageError(
            f"{what} holds a number JSON cannot write ({where}); the log must stay JSON. "
            "Pass a finite number, or leave the key out (None where null is meant)"
        )


#: What to do about an unusable log path (`resume`, `restart`).
_LOG_FIX = "pass the path of a run's .jsonl log, e.g. 'runs/<run_id>.jsonl'"


def _check_arguments(log_dir: Any, system_prompt: Any, settings: Any, progress: Any) -> None:
    """Refuse bad `Harness` arguments at construction, naming the argument (see `Harness`)."""
    if log_dir is not None:
        checked_path(
            log_dir,
            "Harness(log_dir=...)",
            kind="folder",
            fix="pass a writable folder path, or None to keep logs in memory",
            takes="a folder path (str or Path) or None",
        )
        try:
            Path(log_dir).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"Harness(log_dir={str(log_dir)!r}) is not a usable folder "
                f"({type(exc).__name__}: {exc.strerror or exc}); pass a writable folder path, "
                f"or None to keep logs in memory"
            ) from exc
        if not os.access(log_dir, os.W_OK | os.X_OK):  # (root passes: start() then refuses)
            raise UsageError(
                f"Harness(log_dir={str(log_dir)!r}) is not writable (no permission to create "
                "files in it); pass a writable folder path, fix its permissions, or None to "
                "keep logs in memory"
            )
    if not isinstance(system_prompt, str):
        raise UsageError(
            f"Harness(system_prompt=...) takes a string ('' for none), got {system_prompt!r}"
        )
    if settings is not None and not isinstance(settings, dict):
        raise UsageError(
            f"Harness(settings=...) takes a dict such as {{'temperature': 0}} or None, "
            f"got {settings!r}"
        )
    if progress is not None and not callable(progress):
        raise UsageError(
            f"Harness(progress=...) takes a callback progress(item) such as hk.TqdmProgress(), "
            f"or None, got {progress!r}"
        )


#: Tool names harnesskit's built-in tools take: the artifact inspection tools (R-A4) share
#: this prefix, and tool groups (R-T3) add `choose_group`.
RESERVED_TOOL_PREFIX = "artifact_"


def _refuse_reserved_names(tools: ToolRegistry) -> None:
    """Refuse a user tool named like a built-in one (it would collide when a run starts).

    Raises:
        UsageError: naming the tool, the reserved prefix and name, and how to rename it.
    """
    from harnesskit.tools.groups import CHOOSE_GROUP

    for name in tools.names:
        if name.startswith(RESERVED_TOOL_PREFIX) or name == CHOOSE_GROUP:
            raise UsageError(
                f"tool name {name!r} is reserved: harnesskit's built-in tools use the prefix "
                f"{RESERVED_TOOL_PREFIX!r} (artifact_head, artifact_slice, ...: reading stored "
                f"results) and the name {CHOOSE_GROUP!r} (tool groups); rename the tool, e.g. "
                f"@hk.tool(name='my_{name.removeprefix(RESERVED_TOOL_PREFIX)}')"
            )


_ESTIMATOR_METHODS = ("count", "count_message", "count_messages", "count_tools")


def _check_parts(**parts: Any) -> None:
    """Refuse `Harness` parts of the wrong kind at construction, naming the argument.

    Raises:
        UsageError: a callback is not callable or an object is not of the kind the argument
            takes (they failed only later, at `start` or mid-run, with a raw error).
    """

    def refuse(name: str, wants: str) -> None:
        raise UsageError(f"Harness({name}=...) takes {wants}, got {parts[name]!r:.80}")

    for name in ("clock", "timer"):
        if not callable(parts[name]):
            refuse(name, "a function returning seconds as a float (e.g. time.monotonic)")
    if parts["on_delta"] is not None and not callable(parts["on_delta"]):
        refuse("on_delta", "a function on_delta(delta) or None")
    estimator = parts["estimator"]
    if estimator is not None and not all(
        callable(getattr(estimator, m, None)) for m in _ESTIMATOR_METHODS
    ):
        refuse("estimator", "a TokenEstimator (or an object with its count methods) or None")
    artifacts = parts["artifacts"]
    if artifacts is not None and not isinstance(artifacts, ArtifactStore | str | Path):
        refuse("artifacts", "an ArtifactStore, a folder path or None")
    kinds = (("transport", TransportPolicy), ("tool_groups", ToolGroups))
    for name, kind in kinds:
        if parts[name] is not None and not isinstance(parts[name], kind):
            refuse(name, f"hk.{kind.__name__}(...) or None")
    redactor = parts["redactor"]
    if redactor is not None and not isinstance(redactor, Redactor | str):
        refuse("redactor", "a Redactor, None or 'default'")
    revision = parts["workspace_revision"]
    if revision is not None and not (isinstance(revision, str) or callable(revision)):
        refuse("workspace_revision", "a revision string, a function returning one, or None")
    confirmers = parts["confirmers"]
    if confirmers is not None and (
        not isinstance(confirmers, dict)
        or not all(isinstance(k, str) and callable(v) for k, v in confirmers.items())
    ):
        refuse("confirmers", "a dict {tool name: confirmer function} or None")
