"""`local:` models: a llama.cpp server started and stopped by harnesskit (R-M1b).

```python
model = hk.get_model("local:qwen2.5-coder-1.5b")        # or -0.5b, or "local:/path/to/x.gguf"
with model:                                              # stops the server on exit
    h = hk.Harness(tools, model=model)
    h.run("...")
model.info   # {"server_version": "b11434-...", "sha256": "...", "port": 41234, ...}
```

`LocalModel` starts `llama-server` (built by `make local`, see `_local_install`) on a free
port of 127.0.0.1 on its first request (or on `start()` / `with`), waits for `/health`, and
sends every request through `OpenAICompatModel`, so retries, streaming and tolerant parsing
are the same as for any OpenAI-compatible server. The server runs with `--jinja`: the model's
own chat template renders the tools and the server turns calls written in the template's
format back into structured `tool_calls`. Qwen2.5-Coder 0.5B/1.5B never write their template's
`<tool_call>` tags (measured: the tag's logit sits ~20 below the chosen token); they write the
call as JSON, mostly in a ```` ```json ```` fence. With `call_format="fenced"` (the default
where it applies) the server gets the model's own template with one change, earlier calls
rendered as that fence, and derives its parser from it, so fenced calls come back as
structured `tool_calls`; a bare JSON call is still recovered from the text by the client and
marked `recovered`. It is stopped by `close()`,
by leaving a `with` block, when the object is garbage-collected, when the interpreter
exits, and (on Linux) when the owning process dies by a signal: servers are forked from one
long-lived thread with a parent-death signal, so no `llama-server` outlives its process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
import math
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any

from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import ModelError, UsageError, checked_path
from harnesskit.messages import ModelRequest, ModelResponse, Usage, check_data_class
from harnesskit.models import _local_install as install
from harnesskit.models.base import register_provider

__all__ = ["LocalModel", "ServerTimings", "server_timings"]

_LOG_TAIL_BYTES = 4000


@frozen_dataclass(kw_only=True)
class ServerTimings:
    """llama-server's own figures for one response (its `timings` object)."""

    prompt_evaluated: int
    """Prompt tokens the server computed for this request (tokens)."""
    prompt_cached: int
    """Prompt tokens served from the server's prompt cache (tokens)."""
    generated: int
    """Tokens generated (tokens)."""
    prompt_ms: float
    """Time spent evaluating the prompt (milliseconds)."""
    generated_ms: float
    """Time spent generating (milliseconds)."""

    @property
    def cache_share(self) -> float:
        """Share of the prompt served from cache (0-1); 0 for an empty prompt."""
        total = self.prompt_evaluated + self.prompt_cached
        return self.prompt_cached / total if total else 0.0

    @property
    def prompt_tokens_per_second(self) -> float:
        """Prompt evaluation speed (tokens/s); 0 when nothing was evaluated."""
        return self.prompt_evaluated / self.prompt_ms * 1000 if self.prompt_ms else 0.0

    @property
    def generated_tokens_per_second(self) -> float:
        """Generation speed (tokens/s); 0 when nothing was generated."""
        return self.generated / self.generated_ms * 1000 if self.generated_ms else 0.0


def server_timings(response: ModelResponse) -> ServerTimings | None:
    """Read llama-server's per-response `timings` from a response's raw body.

    Args:
        response: a response of a `LocalModel` (or any llama-server), streamed or not (a
            streamed answer keeps the `timings` of its last chunk).

    Returns:
        The figures, or `None` when the body has no `timings` object.
    """
    raw = response.raw or {}
    t = raw.get("timings")
    if not isinstance(t, dict):
        return None
    return ServerTimings(
        prompt_evaluated=int(t.get("prompt_n") or 0),
        prompt_cached=int(t.get("cache_n") or 0),
        generated=int(t.get("predicted_n") or 0),
        prompt_ms=float(t.get("prompt_ms") or 0.0),
        generated_ms=float(t.get("predicted_ms") or 0.0),
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the forked child before exec
    """Ask Linux to SIGKILL this child when the thread that forked it exits.

    SIGKILL, not SIGTERM: llama-server catches SIGTERM for a graceful shutdown, which took
    up to 16 s here and once left a busy server running (still alive 40 s after its owner
    died); with the owner gone nothing needs the grace.
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return
    if os.getppid() != _PARENT_PID:  # the parent died before prctl: go now
        os._exit(1)


_PR_SET_PDEATHSIG = 1
_PARENT_PID = os.getpid()


class _Spawner:
    """One daemon thread that starts every server of this process.

    Linux's parent-death signal (`PR_SET_PDEATHSIG`) fires when the *thread* that forked a
    child exits, so servers are forked from this thread, which lives as long as the process:
    when the process ends in any way (SIGTERM, SIGKILL, a crash) the kernel sends each server
    SIGKILL, where atexit handlers and finalizers never ran. A normal exit stops them earlier
    through their finalizers. Elsewhere than Linux the servers are started directly.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[list[str], dict[str, Any], Future[Any]]] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, args: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        """Start `args` like `subprocess.Popen(args, **kwargs)`, from the spawner thread.

        Raises:
            OSError: the binary could not be executed (as `Popen` raises it).
        """
        if not sys.platform.startswith("linux"):
            return subprocess.Popen(args, **kwargs)
        global _PARENT_PID
        with self._lock:
            if self._thread is None or not self._thread.is_alive() or os.getpid() != _PARENT_PID:
                _PARENT_PID = os.getpid()  # a forked copy of this process needs its own thread
                self._jobs = queue.SimpleQueue()
                self._thread = threading.Thread(
                    target=self._serve, args=(self._jobs,), name="hk-llama-spawner", daemon=True
                )
                self._thread.start()
        done: Future[subprocess.Popen[bytes]] = Future()
        self._jobs.put((args, kwargs, done))
        return done.result()

    @staticmethod
    def _serve(jobs: queue.SimpleQueue[tuple[list[str], dict[str, Any], Future[Any]]]) -> None:
        while True:
            args, kwargs, done = jobs.get()
            try:
                done.set_result(subprocess.Popen(args, preexec_fn=_die_with_parent, **kwargs))
            except BaseException as exc:  # handed to the caller's thread
                done.set_exception(exc)


_SPAWNER = _Spawner()


def _call_template(gguf: Path, call_format: str, jinja: bool) -> tuple[str, str | None]:
    """Resolve `call_format` to `"fenced"` (with the derived template) or `"template"`."""
    from harnesskit.models import _gguf

    if call_format not in ("auto", "fenced", "template"):
        raise UsageError(f"call_format must be 'auto', 'fenced' or 'template', got {call_format!r}")
    if call_format == "template" or not jinja:
        return "template", None
    try:
        own = _gguf.chat_template(gguf)
    except UsageError:
        if call_format == "fenced":
            raise
        own = None
    fenced = _gguf.fenced_call_template(own) if own is not None else None
    if fenced is None and call_format == "fenced":
        found = "none found" if own is None else "it does not"
        raise UsageError(
            f"{gguf}: call_format='fenced' needs a chat template that renders tool calls in "
            f"<tool_call> tags as Qwen2.5's does ({found}); use call_format='template'"
        )
    return ("fenced", fenced) if fenced is not None else ("template", None)


#: Seconds a stopped server gets to exit after SIGTERM before SIGKILL (a busy llama-server
#: takes up to 16 s for its graceful shutdown here; nothing of it needs keeping).
_GRACE_SECONDS = 3.0


def _check_options(given: Mapping[str, Any]) -> None:
    """Refuse wrong types and values of `LocalModel`'s options before anything starts.

    Raises:
        UsageError: naming the option, what it must be and what came.
    """
    model = given["model"]
    if not isinstance(model, str | os.PathLike):
        raise UsageError(f"model must be a catalogue key or a path to a .gguf file, got {model!r}")
    for name in ("ctx_size", "threads", "parallel"):
        value = given[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UsageError(f"{name} must be an int of at least 1, got {value!r}")
    seed = given["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise UsageError(f"seed must be an int, got {seed!r}")
    for name in ("timeout_seconds", "startup_timeout_seconds"):
        value = given[name]
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= 0
        ):
            raise UsageError(f"{name} must be a finite number of seconds > 0, got {value!r}")
    temperature = given["temperature"]
    if temperature is not None and (
        isinstance(temperature, bool)
        or not isinstance(temperature, int | float)
        or not math.isfinite(temperature)
        or temperature < 0
    ):
        raise UsageError(f"temperature must be None or a number >= 0, got {temperature!r}")
    from harnesskit.models.openai_compat import OpenAICompatModel

    options = given["client_options"]
    try:  # the client is built when the server starts: refuse a bad option now, not then
        inspect.signature(OpenAICompatModel).bind("model", **options)
    except TypeError as exc:
        raise UsageError(
            f"LocalModel got an option neither it nor OpenAICompatModel takes ({exc}); "
            "see help(LocalModel)"
        ) from None
    for name in ("provider", "base_url"):
        if name in options:
            raise UsageError(f"LocalModel sets {name} itself (the server it starts); drop {name}=")
    from harnesskit.models._options import check_client_options

    check_client_options(options)  # values too: the client is built only when the server starts


def _stop(
    proc: subprocess.Popen[bytes], grace_seconds: float, log: IO[bytes] | None, *files: Path
) -> None:
    """Terminate the server process, reap it, close its log and remove `files` (idempotent)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace_seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if log is not None:
        log.close()
    for path in files:
        path.unlink(missing_ok=True)


class LocalModel:
    """A GGUF model served by a llama.cpp server that this object starts and stops.

    Implements the `Model` protocol: `request(ModelRequest) -> ModelResponse`.
    """

    caches_prompt_prefix = True
    """llama-server reuses the longest cached prefix of the previous prompt: a `Harness` keeps
    the tool list stable for it (`Harness(stable_tools=None)`)."""

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        ctx_size: int = 8192,
        threads: int = 2,
        seed: int = 0,
        parallel: int = 1,
        jinja: bool = True,
        call_format: str = "auto",
        repack: bool = True,
        temperature: float | None = 0.0,
        timeout_seconds: float = 300.0,
        startup_timeout_seconds: float = 180.0,
        server: str | os.PathLike[str] | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        **client_options: Any,
    ) -> None:
        """Resolve the weights and the runtime (the server is not started here).

        Args:
            model: a catalogue key (`"qwen2.5-coder-0.5b"`, `"qwen2.5-coder-1.5b"`), or a
                path (text or `Path`) to any `.gguf` file.
            ctx_size: the server's context window (tokens), shared by all slots.
            threads: CPU threads for generation and prompt evaluation.
            seed: the server's sampling seed (requests may still send their own `seed`).
            parallel: server slots; 1 keeps the whole context and prompt cache for one run.
            jinja: render prompts with the model's own chat template and parse its tool calls
                into structured `tool_calls` (`--jinja`); False falls back to the server's
                built-in template, and tool calls arrive as text.
            call_format: how the chat template renders earlier tool calls, which is also the
                form the server parses into `tool_calls`: `"template"` the GGUF's template as
                it is; `"fenced"` the same template with Qwen2.5's `<tool_call>` tags replaced
                by a ```` ```json ```` fence (what Qwen2.5-Coder 0.5B/1.5B write; the tools'
                description in the system block is unchanged); `"auto"` fenced when the
                template renders calls as Qwen2.5's does, else the template as it is.
            repack: let the server repack weights for the CPU; False passes `--no-repack`.
            temperature: the sampling temperature sent with every request unless its settings
                give one; 0 (greedy) makes runs repeatable, `None` leaves the server's default.
            timeout_seconds: timeout of one request attempt (seconds); the default suits a cold
                CPU model evaluating a long first prompt.
            startup_timeout_seconds: how long to wait for `/health` after starting (seconds).
            server: the `llama-server` binary; `None` uses `$HARNESSKIT_LLAMA_SERVER` or the
                cached build of `make local`.
            extra_args: more command-line flags for the server, passed last.
            env: the environment that locates the cache (`None` = `os.environ`).
            **client_options: passed to `OpenAICompatModel` (`stream`, `retry`,
                `max_wait_seconds`, `on_attempt`, `extra_body`, `max_data_class`, ...);
                `max_data_class` is also this model's own attribute (R-S2).

        Raises:
            UsageError: unknown catalogue key, a missing GGUF file or binary (the message says to
                run `make local`), a `model`/`server` path that is not usable (a NUL byte, a
                name too long, a folder: `errors.checked_path`), an option of the wrong type
                or value (sizes and counts are ints >= 1, seconds finite and > 0, a client
                option `OpenAICompatModel` does not take), a `max_data_class` that is not one
                of the four classes, an unknown `call_format`, or
                `call_format="fenced"` for a GGUF whose template does not render calls as
                Qwen2.5's does.
            ModelError: a cached GGUF's sha256 differs from the upstream value.
        """
        _check_options(locals())
        model = os.fspath(model) if isinstance(model, os.PathLike) else model
        if not model:
            raise UsageError(
                "give a local model after the prefix, e.g. get_model('local:qwen2.5-coder-1.5b') "
                "or get_model('local:/path/to/model.gguf')"
            )
        self.key = model
        self.name = f"local:{model}"
        if model in install.CATALOGUE:
            spec = install.CATALOGUE[model]
            self.gguf = install.gguf_path(spec, env=env)
            if not self.gguf.is_file():
                raise UsageError(
                    f"{self.name}: weights not installed ({self.gguf} missing); run `make local` "
                    f"or `python -m harnesskit.models._local_install --model {model}`"
                )
            self.sha256 = install.verified_sha256(self.gguf, expected=spec.sha256)
        elif model.endswith(".gguf") or os.sep in model:
            where = "LocalModel(model)"
            checked_path(model, where, kind="file", fix="pass a catalogue key or a .gguf file path")
            self.gguf = Path(model).expanduser().resolve()
            if not self.gguf.is_file():
                raise UsageError(f"{self.name}: GGUF file not found: {self.gguf}")
            self.sha256 = install.verified_sha256(self.gguf)
        else:
            install.lookup(model)  # raises the UsageError listing the catalogue
            raise AssertionError("unreachable")  # pragma: no cover
        if server is not None:
            checked_path(
                server, "LocalModel(server=...)", kind="file", fix="pass llama-server's path"
            )
        self.binary = Path(server) if server is not None else install.runtime_binary(env=env)
        if not (self.binary.is_file() and os.access(self.binary, os.X_OK)):
            raise UsageError(
                f"{self.name}: llama-server not found at {self.binary}; run `make local` (builds "
                "it once, ~15-25 min on 2 cores) or set $HARNESSKIT_LLAMA_SERVER"
            )
        self.ctx_size = ctx_size
        self.threads = threads
        self.seed = seed
        self.parallel = parallel
        self.jinja = jinja
        self.call_format, self._template = _call_template(self.gguf, call_format, jinja)
        self.repack = repack
        self.temperature = temperature
        self.timeout_seconds = timeout_seconds
        self.startup_timeout_seconds = startup_timeout_seconds
        self.extra_args = tuple(extra_args)
        self._client_options = client_options
        check_data_class(client_options.get("max_data_class"), "LocalModel(max_data_class=...)")
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._client: Any = None
        self._log: IO[bytes] | None = None
        self._template_path: Path | None = None
        self.port: int | None = None
        self.server_version: str | None = None
        self._lock = threading.RLock()  # one server even when threads share the model

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs, else `None`."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    @property
    def base_url(self) -> str | None:
        """The server's OpenAI-compatible URL (`http://127.0.0.1:PORT/v1`), once started."""
        return f"http://127.0.0.1:{self.port}/v1" if self.port else None

    @property
    def info(self) -> dict[str, Any]:
        """What a run log should record about this model: weights, runtime and flags.

        Returns:
            A JSON-ready dict: `model`, `gguf`, `sha256`, `server_version` (the server's
            `build_info`, `None` until started), `server`, `runtime_version` (the cache key of
            a `make local` build, else `None`), `args` (the server's flags), `port` and `pid`
            (`None` when stopped), `timeout_seconds`, `call_format` (`fenced` or `template`).
        """
        return {
            "model": self.name,
            "gguf": str(self.gguf),
            "sha256": self.sha256,
            "server_version": self.server_version,
            "server": str(self.binary),
            "runtime_version": (
                install.RUNTIME_VERSION if self.binary == install.runtime_binary() else None
            ),
            "args": self._args(self.port or 0)[3:],
            "port": self.port if self.pid else None,
            "pid": self.pid,
            "timeout_seconds": self.timeout_seconds,
            "call_format": self.call_format,
        }

    def _args(self, port: int) -> list[str]:
        args = [str(self.binary), "-m", str(self.gguf), "--host", "127.0.0.1"]
        args += ["--port", str(port), "--ctx-size", str(self.ctx_size)]
        args += ["--threads", str(self.threads), "--threads-batch", str(self.threads)]
        args += ["--parallel", str(self.parallel), "--seed", str(self.seed), "--alias", self.key]
        args += ["--jinja" if self.jinja else "--no-jinja", "--no-webui"]
        if self._template is not None:
            args += ["--chat-template-file", str(self._template_path or "<fenced template>")]
        if not self.repack:
            args.append("--no-repack")
        return args + list(self.extra_args)

    def start(self) -> LocalModel:
        """Start the server if it is not running and wait until it is healthy.

        Returns:
            This model, for chaining.

        Raises:
            ModelError: the server exited during start-up or was not healthy within
                `startup_timeout_seconds` (the message has the tail of its log).
        """
        with self._lock:
            if self.pid is None:
                self._start()
        return self

    def _start(self) -> None:
        self.close()
        # The server's log is a file without a name: nothing is left on disk when this process
        # dies by a signal; the server writes to its copy of the descriptor, `log_tail` reads ours.
        self._log = tempfile.TemporaryFile(prefix="hk-llama-server-", suffix=".log")  # noqa: SIM115  (closed by close())
        if self._template is not None:  # the fenced variant, for --chat-template-file
            tfd, template_name = tempfile.mkstemp(prefix="hk-chat-template-", suffix=".jinja")
            with os.fdopen(tfd, "w", encoding="utf-8") as out:
                out.write(self._template)
            self._template_path = Path(template_name)
        port = _free_port()
        proc = _SPAWNER.popen(
            self._args(port),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if not k.startswith("LLAMA_ARG_")},
        )
        self._proc = proc
        files = [self._template_path] if self._template_path is not None else []
        self._finalizer = weakref.finalize(  # also at exit
            self, _stop, proc, _GRACE_SECONDS, self._log, *files
        )
        self.port = port
        try:
            self._wait_healthy(proc, port)
            if self._template_path is not None:  # read at start-up; no file outlives us
                self._template_path.unlink(missing_ok=True)
            self._client = self._make_client()
        except BaseException:
            self.close()
            raise

    def _make_client(self) -> Any:
        from harnesskit.models.openai_compat import OpenAICompatModel

        return OpenAICompatModel(
            self.key, provider="openai-compat", base_url=self.base_url, **self._options()
        )

    def _options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"api_key": "", "timeout_seconds": self.timeout_seconds}
        options.update(self._client_options)
        if self.temperature is not None:
            options["extra_body"] = {
                "temperature": self.temperature,
                **(options.get("extra_body") or {}),
            }
        return options

    def _wait_healthy(self, proc: subprocess.Popen[bytes], port: int) -> None:
        deadline = time.monotonic() + self.startup_timeout_seconds
        url = f"http://127.0.0.1:{port}"
        while True:
            if proc.poll() is not None:
                raise ModelError(
                    f"{self.name}: llama-server exited with code {proc.returncode} while starting"
                    f"\n{self.log_tail()}",
                    model=self.name,
                )
            with (
                contextlib.suppress(OSError, ValueError),
                urllib.request.urlopen(f"{url}/health", timeout=2) as resp,
            ):
                if resp.status == 200:
                    break
            if time.monotonic() > deadline:
                raise ModelError(
                    f"{self.name}: llama-server was not healthy after "
                    f"{self.startup_timeout_seconds:g} s\n{self.log_tail()}",
                    model=self.name,
                )
            time.sleep(0.2)
        with (
            contextlib.suppress(OSError, ValueError),
            urllib.request.urlopen(f"{url}/props", timeout=5) as resp,
        ):
            props = json.loads(resp.read())
            self.server_version = str(props.get("build_info") or "") or None

    def log_tail(self, max_bytes: int = _LOG_TAIL_BYTES) -> str:
        """Return the end of the server's log (its stdout and stderr).

        Args:
            max_bytes: how much of the end to return (bytes).

        Returns:
            The text, or `""` when the server was never started.
        """
        log = self._log
        if log is None or log.closed:
            return ""
        size = os.fstat(log.fileno()).st_size
        start = max(0, size - max_bytes)
        return os.pread(log.fileno(), size - start, start).decode("utf-8", "replace")

    @property
    def max_data_class(self) -> str | None:
        """The most sensitive data class this model may receive (R-S2), `None` = any.

        The client it wraps enforces it too; exposing it lets a `FallbackModel` skip this node
        and a run refuse a request before the server is even started.
        """
        limit: str | None = self._client_options.get("max_data_class")
        return limit

    def close(self) -> None:
        """Stop the server (terminate, then kill after 3 s) and close the HTTP client.

        Safe to call more than once; the model starts a new server on its next request.
        """
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._finalizer is not None:
            self._finalizer()  # runs _stop once, and no longer at exit
            self._finalizer = None
        self._proc = None
        if self._template_path is not None:
            self._template_path.unlink(missing_ok=True)
        if self._log is not None:
            self._log.close()
        self._log, self._template_path = None, None

    def __enter__(self) -> LocalModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = f"pid={self.pid}, port={self.port}" if self.pid else "stopped"
        return f"LocalModel({self.name!r}, {state})"

    # -- the Model protocol ---------------------------------------------------------------------

    def request(self, request: ModelRequest) -> ModelResponse:
        """Send one request to the server, starting it first if needed.

        Args:
            request: as for `OpenAICompatModel.request`; `settings` go to the server.

        Returns:
            The normalized response; `raw["timings"]` holds the server's figures (read them
            with `server_timings`), `usage.cached_tokens` the prompt tokens served from cache.

        Raises:
            UsageError: model requests are blocked (`harnesskit.testing.block_real_models`).
            ModelError: the server could not start, died, or failed after the retries; when it
                died the message gives its exit code and the tail of its log.
            ModelOutputError: the model's output stayed unusable after one corrective request.
        """
        from harnesskit.models import base

        if not base.ALLOW_MODEL_REQUESTS:
            raise UsageError(
                f"model requests are blocked (harnesskit.testing.block_real_models()); "
                f"{self.name} was not started"
            )
        if self._proc is not None and self._proc.poll() is not None:
            raise self._died()
        self.start()
        try:
            response: ModelResponse = self._client.request(request)
        except ModelError as exc:
            if self._proc is not None and self._proc.poll() is not None:
                raise self._died() from exc
            raise
        usage, timings = response.usage, server_timings(response)
        if timings is not None and (usage is None or not usage.cached_tokens):
            prompt = timings.prompt_evaluated + timings.prompt_cached
            usage = Usage(
                prompt_tokens=usage.prompt_tokens if usage else prompt,
                completion_tokens=usage.completion_tokens if usage else timings.generated,
                cached_tokens=timings.prompt_cached,
            )
        return dataclasses.replace(response, model=self.name, usage=usage)

    def _died(self) -> ModelError:
        assert self._proc is not None
        code = self._proc.returncode
        return ModelError(
            f"{self.name}: llama-server (pid {self._proc.pid}) exited with code {code}; "
            f"call close() and retry to start a new one\n{self.log_tail(1000)}",
            model=self.name,
        )


register_provider("local", LocalModel)
