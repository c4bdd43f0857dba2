"""Experiments: every case × policy × model × repeat, run in parallel, scored, saved (R-P3).

```python
exp = hk.Experiment(
    hk.load_cases("datasets/cases/shop.jsonl"),
    policies=["full-history", "default"],
    models=["shop:careful", "shop:hasty"],
    repeats=4,
    seed=0,
)
result = exp.run()                  # a run directory under runs/experiments/
result.frame                         # one row per trial
result.summary()                     # pass rate, pass^1..k, tokens per pass, per policy × model
hk.ExperimentResult.load(result.path).frame.equals(result.frame)   # True
```

Trials run on threads (or, with `run(executor=distributed.Client(...))`, as Dask tasks); a
per-endpoint semaphore bounds the requests in flight to one model endpoint (per process).
Ctrl-C saves the finished trials; `resume(path)` runs the rest.
Each trial gets its own environment (a fresh database) and its own model, built
from a seed derived from `(seed, case id, repeat)` — the same for every policy and model, so
comparisons use common random numbers — which makes parallel and serial runs give the same
results.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import hashlib
import importlib
import json
import os
import re
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from harnesskit import _json
from harnesskit._lazy import frozen_dataclass
from harnesskit.analysis.evals import _schedule
from harnesskit.analysis.evals.cases import Case, load_cases, save_cases
from harnesskit.analysis.evals.results import (
    EXPERIMENT_SCHEMA_VERSION,
    ExperimentResult,
    read_manifest,
    read_rows,
)
from harnesskit.analysis.evals.scoring import CheckResult, Score, score
from harnesskit.analysis.evals.user import UserSimulator
from harnesskit.context.builder import ContextPolicy
from harnesskit.data.artifacts import atomic_write
from harnesskit.errors import (
    ArtifactError,
    CorruptLogError,
    EventLogError,
    ExperimentInterrupted,
    ModelError,
    UsageError,
    checked_call,
    checked_path,
)
from harnesskit.log.redact import Redactor, redact_fields
from harnesskit.messages import ModelRequest, ModelResponse
from harnesskit.models.base import Model, get_model
from harnesskit.run import Harness, Limits, Run
from harnesskit.run.progress import quiet_output
from harnesskit.tools.gate import Gate
from harnesskit.tools.spec import ToolRegistry

__all__ = [
    "MAX_TRIALS",
    "Domain",
    "Experiment",
    "Trial",
    "default_model",
    "derive_seed",
    "domain_agents",
    "endpoint_of",
    "get_domain",
    "register_domain",
]

#: The most trials an `Experiment` takes unless given `max_trials` (a typo such as
#: `repeats=10**9` would start a run that cannot finish).
MAX_TRIALS = 10_000


# -- domains ----------------------------------------------------------------------------------


@frozen_dataclass(kw_only=True)
class Domain:
    """Where cases run: a fresh environment per trial, plus the domain's offline agents.

    The environment is any object with `tools` (a `ToolRegistry` or list of tools) and
    optionally `system_prompt` (str), `gate` (`Gate`), `state` and
    `checks(case, log) -> list[CheckResult]` (domain checks such as a final-database check).
    """

    name: str
    """The name cases use in their `domain` field."""
    environment: Callable[[Case], Any]
    """Builds a fresh environment for one trial of a case."""
    agents: Mapping[str, Callable[..., Model]] = field(default_factory=dict)
    """`{style: factory(seed=...)}`: offline agents, named in experiments as `domain:style`."""
    finish_reasons: tuple[str, ...] = ()
    """The `StopRun` reasons the domain's tools end a run with (the airline's `transferred`):
    with the loop's own (`FINISH_REASONS`), the only names a case's `expect.finish_reason` may
    give; `load_cases` refuses any other (a typo such as `stopp` would fail every trial)."""
    setup_keys: tuple[str, ...] | None = None
    """The keys a case's `setup` may hold for this domain (beyond the simulated user's
    `user_instructions`/`instruction`); `load_cases` refuses others with a did-you-mean.
    `None`: not declared, `setup` is not checked."""


_DOMAINS: dict[str, Domain] = {}
#: What to do about an unusable experiment directory path.
_DIR_FIX = "pass a run directory written by Experiment.run"
_DOMAINS_LOCK = threading.Lock()
#: The package searched for a domain module when a name is not registered yet.
DOMAIN_PACKAGE = "harnesskit.domains"


def register_domain(domain: Domain) -> None:
    """Make cases with `domain: <name>` runnable, and its agents nameable as `name:style`.

    A domain module calls this when it is imported (the shipped `airline` and `shop` do).

    Args:
        domain: the domain; a later registration under the same name replaces an earlier one.

    Raises:
        UsageError: `domain` has no string `name`.
    """
    if not isinstance(getattr(domain, "name", None), str):
        raise UsageError(
            f"register_domain takes a Domain (with a name), got {type(domain).__name__}"
        )
    with _DOMAINS_LOCK:
        _DOMAINS[domain.name] = domain


def domain_agents() -> list[str]:
    """Every offline agent of the known domains, as `domain:style` model specs."""
    out: list[str] = []
    for name in sorted(_known_domains()):
        with contextlib.suppress(UsageError, ImportError):
            out += [f"{name}:{style}" for style in get_domain(name).agents]
    return out


def default_model(cases: Sequence[Case], domains: Mapping[str, Domain] | None = None) -> str:
    """The offline agent to run `cases` with when no model is named: their domain's first agent.

    Args:
        cases: the cases (all of one domain).
        domains: `{name: Domain}` overriding the registry.

    Returns:
        A `domain:style` model spec.

    Raises:
        UsageError: the cases span several domains, or their domain has no offline agent.
    """
    names = sorted({c.domain or "shop" for c in cases})
    if len(names) != 1:
        raise UsageError(
            f"the cases span the domains {names}; name a model, or select one domain's cases"
        )
    domain = (domains or {}).get(names[0]) or get_domain(names[0])
    if not domain.agents:
        raise UsageError(
            f"the {names[0]!r} domain has no offline agent; name a model "
            "(e.g. --model ollama:qwen2.5)"
        )
    return f"{domain.name}:{next(iter(domain.agents))}"


def _shipped_domains() -> list[str]:
    """Names of the modules in `DOMAIN_PACKAGE` (found by name; core never imports a domain)."""
    package = importlib.import_module(DOMAIN_PACKAGE)
    import pkgutil

    return sorted(m.name for m in pkgutil.iter_modules(package.__path__))


def _known_domains() -> set[str]:
    with _DOMAINS_LOCK:
        registered = set(_DOMAINS)
    return registered | set(_shipped_domains())


def get_domain(name: str) -> Domain:
    """The registered domain `name`; a shipped one (`harnesskit.domains.<name>`) loads on first use.

    Args:
        name: the domain's name, as cases give it in their `domain` field.

    Returns:
        The `Domain`.

    Raises:
        UsageError: no such domain (the message lists the known ones).
    """
    with _DOMAINS_LOCK:
        found = _DOMAINS.get(name)
    if found is None and name in _shipped_domains():
        importlib.import_module(f"{DOMAIN_PACKAGE}.{name}")  # the module registers itself
        with _DOMAINS_LOCK:
            found = _DOMAINS.get(name)
    if found is None:
        known = sorted(_known_domains())
        raise UsageError(f"unknown eval domain {name!r}; known: {known} (see register_domain)")
    return found


# -- trials -----------------------------------------------------------------------------------


@frozen_dataclass(kw_only=True)
class Trial:
    """One cell of an experiment: a case under one policy and model, one repeat."""

    index: int
    """Position in the experiment's trial order (case, policy, model, repeat)."""
    case: Case
    """The case."""
    policy: str
    """The context policy's label."""
    model: str
    """The model's label."""
    repeat: int
    """Repeat number, 0-based."""
    seed: int
    """Derived from `(experiment seed, case id, repeat)`; equal across policies and models."""

    @property
    def run_id(self) -> str:
        """A unique, filesystem-safe run id: `t0007-<case>-<policy>-<model>-r1`."""
        raw = f"t{self.index:04d}-{self.case.id}-{self.policy}-{self.model}-r{self.repeat}"
        return re.sub(r"[^A-Za-z0-9._-]+", "_", raw)[:180]


def derive_seed(seed: int, case_id: str, repeat: int) -> int:
    """The trial seed: 31 bits of sha256 over `seed:case_id:repeat`."""
    digest = hashlib.sha256(f"{seed}:{case_id}:{repeat}".encode()).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


ModelSpec = str | Model | Callable[[Trial], Model | str]
PolicySpec = str | dict[str, Any] | ContextPolicy


class _Throttled:
    """A model proxy holding its endpoint's semaphore for the duration of each request."""

    def __init__(self, model: Model, semaphore: threading.Semaphore | None) -> None:
        self.model = model
        self.name = model.name
        self._sem = semaphore

    @property
    def max_data_class(self) -> str | None:
        """The wrapped model's approval (R-S2): a throttle never drops or widens it."""
        limit: str | None = getattr(self.model, "max_data_class", None)
        return limit

    def request(self, request: ModelRequest) -> ModelResponse:
        if self._sem is None:
            return self.model.request(request)
        with self._sem:
            return self.model.request(request)


def endpoint_of(model: Any) -> str:
    """The key of a model's concurrency limit: its `endpoint` or `base_url`, else its name."""
    for attr in ("endpoint", "base_url"):
        value = getattr(model, attr, None)
        if value:
            return str(value)
    return str(getattr(model, "name", type(model).__name__))


# -- the experiment ---------------------------------------------------------------------------


class Experiment:
    """Cases × policies × models × repeats, run in parallel with a per-endpoint limit.

    Args:
        cases: the cases (see `load_cases`).
        policies: context policies (names, dicts or `ContextPolicy`), or `{label: policy}`.
        models: model specs, or `{label: spec}`. A spec is a string (`"shop:careful"` names a
            domain's offline agent, built per trial with the trial's seed; anything else goes
            to `get_model`), a factory `fn(trial) -> Model`, or a `Model` instance shared by
            all trials (not allowed for the stateful offline models).
        repeats: trials per (case, policy, model); pass^k needs `repeats >= k`.
        seed: the experiment seed; each trial's seed is derived from it, the case id and the
            repeat, and is sent in the request settings (`seed`) and to agent factories.
        name: the experiment's name (run folder prefix).
        domains: `{name: Domain}` overriding the registry for this experiment.
        limits: default brakes; a case's `limits` override them.
        gate: the gate for environments that bring none. The default allows every risk level
            (destructive too): the cases judge whether the agent asked before acting, so the
            gate must not refuse on its behalf. Pass `Gate()` to evaluate under the
            interactive default (destructive → confirm → refused in batch).
        max_workers: threads running trials at once.
        per_endpoint: requests in flight per model endpoint (`endpoint_of`): one number for
            all, or `{endpoint: n}` (endpoints not listed are unlimited); `None` = unlimited.
        settings: sampling settings sent with every request (the trial seed is added).
        user: a `UserSimulator` answering the agent after each of its answers, with the
            case's user instruction (τ-bench protocol); `None` sends only the case's `input`
            turns.
        max_trials: the most trials (cases × policies × models × repeats) the experiment may
            hold; raise it to run a larger one on purpose. It guards against a typo such as
            `repeats=10**9`, which would start a run that cannot finish.

    Raises:
        UsageError: `cases` is not a list of `Case`s (see `load_cases`); no cases, policies or
            models; a field of the wrong type, naming it (`policies`, `models` not lists or
            `{label: spec}`; `seed` not an int; `name` not a non-empty string; `limits`,
            `gate`, `domains`, `per_endpoint`, `settings` not what they take), an unknown
            policy (with a did-you-mean) or `settings` a `Harness` would refuse; duplicate
            labels or case ids; `repeats`, `max_workers` or `max_trials` not
            an int >= 1; more trials than `max_trials`; `settings` holding NaN or Infinity
            (the logs are JSON, which has no such numbers); arguments that do not fit (a
            fourth positional one, an unknown keyword).
    """

    @checked_call("call it as hk.Experiment(cases, policies, models, repeats=..., seed=...)")
    def __init__(
        self,
        cases: Sequence[Case],
        policies: Sequence[PolicySpec] | Mapping[str, PolicySpec] = ("full-history",),
        models: Sequence[ModelSpec] | Mapping[str, ModelSpec] = ("shop:careful",),
        *,
        repeats: int = 1,
        seed: int = 0,
        name: str = "experiment",
        domains: Mapping[str, Domain] | None = None,
        limits: Limits | None = None,
        gate: Gate | None = None,
        max_workers: int = 4,
        per_endpoint: int | Mapping[str, int] | None = 4,
        settings: Mapping[str, Any] | None = None,
        user: UserSimulator | None = None,
        max_trials: int = MAX_TRIALS,
    ) -> None:
        if isinstance(cases, str | os.PathLike):
            raise UsageError(
                "Experiment takes cases, not a path: "
                f"hk.Experiment(hk.load_cases({str(cases)!r}), ...)"
            )
        if not isinstance(cases, Sequence) or not all(isinstance(c, Case) for c in cases):
            raise UsageError(
                f"Experiment takes a list of cases, got {cases!r:.80}; "
                "load them with hk.load_cases(path)"
            )
        if not cases:
            raise UsageError("an experiment needs at least one case")
        if isinstance(policies, str | ContextPolicy):
            policies = [policies]  # one policy, not its characters
        if isinstance(models, str):
            models = [models]
        _check_config(
            policies=policies, models=models, seed=seed, name=name, domains=domains,
            limits=limits, gate=gate, per_endpoint=per_endpoint, settings=settings,
        )  # fmt: skip
        ids = [c.id for c in cases]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise UsageError(f"duplicate case ids in the experiment: {dupes}")
        counts = (("repeats", repeats), ("max_workers", max_workers), ("max_trials", max_trials))
        for what, n in counts:
            if type(n) is not int or n < 1:  # (a bool is no count either)
                raise UsageError(f"{what} must be an int >= 1, got {n!r:.40}")
        self.cases = list(cases)
        self.policies = _labelled(policies, _policy_label, "policy")
        for p in self.policies.values():
            _policy_label(p)  # fail early on an unknown policy
        self.domains = dict(domains or {})
        self.models = _labelled(models, _model_label, "model")
        total = len(self.cases) * len(self.policies) * len(self.models) * repeats
        if total > max_trials:
            raise UsageError(
                f"this experiment holds {total:,} trials ({len(self.cases)} cases × "
                f"{len(self.policies)} policies × {len(self.models)} models × {repeats:,} "
                f"repeats), over the limit of max_trials={max_trials:,}; lower repeats or the "
                f"cases, or pass max_trials={total} (`harnesskit eval --max-trials {total}`) to "
                "run that many on purpose"
            )
        self.max_trials = max_trials
        self._check_case_tools()
        for label, spec in self.models.items():
            if isinstance(spec, str):
                self._check_model_spec(spec)  # a typo fails here, not in every trial
            if type(spec).__name__ in ("ScriptedModel", "FunctionModel", "ReplayModel"):
                raise UsageError(
                    f"model {label!r}: a {type(spec).__name__} instance keeps state between "
                    "requests, so trials cannot share it; pass a factory `lambda trial: ...` "
                    "that builds one per trial (use trial.seed)"
                )
        self.repeats = repeats
        self.seed = seed
        self.name = name
        self.domains = dict(domains or {})
        self.limits = limits or Limits()
        self.gate = gate
        self.max_workers = max_workers
        self.per_endpoint = per_endpoint
        self.settings = dict(settings or {})
        bad = _json.non_finite(self.settings)
        if bad is not None:
            raise UsageError(
                f"Experiment(settings=...) holds a number JSON cannot write ({bad}); every "
                "trial's log must stay JSON. Pass a finite number, or leave the key out"
            )
        try:  # what each trial's Harness would refuse, refused before any trial runs
            ModelRequest(
                messages=(), settings={k: v for k, v in self.settings.items() if k != "data_class"}
            )
        except UsageError as exc:
            raise UsageError(f"Experiment(settings=...): {exc}") from None
        if user is not None and not isinstance(user, UserSimulator):
            raise UsageError(f"user must be a UserSimulator, got {type(user).__name__}")
        self.user = user
        self._semaphores: dict[str, threading.Semaphore | None] = {}
        self._sem_lock = threading.Lock()
        self._stop: _schedule.Stop | None = None

    def trials(self) -> list[Trial]:
        """Every trial, in order: case, then policy, then model, then repeat."""
        out: list[Trial] = []
        for case in self.cases:
            for policy in self.policies:
                for model in self.models:
                    for r in range(self.repeats):
                        out.append(
                            Trial(
                                index=len(out),
                                case=case,
                                policy=policy,
                                model=model,
                                repeat=r,
                                seed=derive_seed(self.seed, case.id, r),
                            )
                        )
        return out

    @checked_call("call it as exp.run(out_dir, parallel=..., progress=...)")
    def run(
        self,
        out_dir: str | os.PathLike[str] | None = None,
        *,
        parallel: bool = True,
        progress: bool = True,
        executor: Any = None,
    ) -> ExperimentResult:
        """Run every trial, score it, and write the run directory.

        Ctrl-C stops starting new trials and waits for the running ones; a second Ctrl-C
        cancels those. What finished is written to `results.jsonl`, then
        `ExperimentInterrupted` is raised; `resume(path)` runs the rest.

        Args:
            out_dir: the run directory (must be absent or empty); default
                `runs/experiments/<name>-<UTC time>-<6 hex>`.
            parallel: False runs the trials one after another on this thread.
            progress: show a tqdm progress bar (one tick per finished trial); never drawn
                when stderr is not a TTY outside a notebook (CI logs).
            executor: where trials run: `None` = `max_workers` threads here; a
                `distributed.Client`, or a Dask scheduler address such as
                `"tcp://10.0.0.5:8786"` (needs the `[distributed]` extra). On Dask each trial
                is one task; the workers must see `out_dir` at the same path (a shared disk),
                since each trial writes its own log and artifacts there and returns its row.

        Returns:
            The `ExperimentResult`, rows in trial order.

        Each trial's row is appended to `results.jsonl` as it finishes (whole lines only), and
        the file is rewritten in trial order at the end.

        Raises:
            UsageError: `out_dir` is not a usable folder path (a NUL byte, a name too long, a
                file, a file in the way: `errors.checked_path`), exists and is not empty, or cannot
                be written (checked by writing `cases.jsonl` and `experiment.json` before any
                trial runs); a case names an unknown domain; the arguments do not fit (an
                unknown keyword).
            ExperimentInterrupted: Ctrl-C stopped the run, or a write failed mid-run (disk
                full, permission removed): no trial starts after it, the finished trials are
                saved (no half-written line), and `resume(path)` runs the rest once the folder
                is writable again.
        """
        if out_dir is not None:
            checked_path(
                out_dir,
                "exp.run(out_dir=...)",
                kind="folder",
                fix="pick a new or empty folder, or None for one under runs/experiments/",
            )
        path = Path(out_dir) if out_dir is not None else _default_dir(self.name)
        if path.exists() and any(path.iterdir()):
            raise UsageError(f"run directory {path} is not empty; pick a new one")
        for case in self.cases:
            self._domain(case)  # fail before starting on an unknown domain
        trials = self.trials()
        try:  # the first writes prove the folder writable before any trial runs
            (path / "logs").mkdir(parents=True, exist_ok=True)
            save_cases(self.cases, path / "cases.jsonl", redactor=_redactor())
            _write_json(path / "experiment.json", self._manifest(len(trials), finished=False))
        except (OSError, ArtifactError) as exc:
            raise UsageError(
                f"exp.run(out_dir=...): cannot write the run directory {path} ({_why(exc)}); "
                "pick a writable folder (no trial was run)"
            ) from exc
        return self._execute(path, trials, {}, parallel, progress, executor)

    @checked_call("call it as exp.resume(run_dir, parallel=..., progress=...)")
    def resume(
        self,
        path: str | os.PathLike[str],
        *,
        parallel: bool = True,
        progress: bool = True,
        executor: Any = None,
    ) -> ExperimentResult:
        """Run only the trials a run directory lacks (interrupted, or ended in an error).

        Trials saved without an `error` are kept as they are; the others run again from
        scratch (their partial logs and artifacts are removed first).

        Args:
            path: a directory written by `run` of an experiment with the same cases,
                policies, models, repeats and seed.
            parallel: as for `run`.
            progress: as for `run`.
            executor: as for `run`.

        Returns:
            The `ExperimentResult` of every trial, rows in trial order.

        Raises:
            UsageError: `path` is not a usable folder path (`errors.checked_path`), the
                folder is not an experiment directory, its configuration differs from this
                experiment's, or the arguments do not fit (no path).
            CorruptLogError: `experiment.json` or a line of `results.jsonl` other than a
                cut-off last one (skipped with a `RuntimeWarning`, its trial runs again) is
                damaged, or rows of `results.jsonl` belong to no trial of this experiment (a
                `run_id` it does not have: they would be dropped); the message names the file
                and the lines or rows, and nothing is run or changed.
            ExperimentInterrupted: Ctrl-C stopped the run again, or a write failed (as for
                `run`).
        """
        p = checked_path(path, "exp.resume(path)", kind="folder", fix=_DIR_FIX)
        manifest = read_manifest(p)
        mine = self._manifest(0, finished=False)
        keys = ("cases", "policies", "models", "repeats", "seed")
        differ = [k for k in keys if manifest.get(k) != mine[k]]
        if differ:
            raise UsageError(
                f"cannot resume {p}: this experiment's {', '.join(differ)} differ from the saved "
                "one; build the Experiment with the same arguments (or use Experiment.from_dir)"
            )
        trials = self.trials()
        by_id = {t.run_id: t for t in trials}
        kept: dict[int, dict[str, Any]] = {}
        results = p / "results.jsonl"
        if results.is_file():
            rows = read_rows(results)  # a cut-off last line: its trial runs again
            foreign = [r for r in rows if r["run_id"] not in by_id]
            if foreign:  # rewriting results.jsonl would drop them: nothing is touched
                listed = "; ".join(
                    f"run_id {r['run_id']!r} (case={r['case']!r}, policy={r['policy']!r}, "
                    f"model={r['model']!r}, repeat={r['repeat']!r})"
                    for r in foreign[:5]
                )
                more = f" (+{len(foreign) - 5} more)" if len(foreign) > 5 else ""
                raise CorruptLogError(
                    f"{results}: {len(foreign)} row(s) belong to no trial of this experiment: "
                    f"{listed}{more}; resuming would drop them when the file is rewritten, so "
                    "nothing was run or changed. Move those lines to another file (they come "
                    "from another experiment or a hand edit), or restore the file from a backup"
                )
            for row in rows:
                if row.get("error") is None:
                    kept[by_id[row["run_id"]].index] = row
        missing = [t for t in trials if t.index not in kept]
        for t in missing:  # a cancelled or failed attempt leaves files the new one must not meet
            for leftover in (p / "logs").glob(f"{t.run_id}.jsonl*"):
                leftover.unlink()
            _rmtree(p / "artifacts" / t.run_id)
        return self._execute(p, missing, kept, parallel, progress, executor)

    @classmethod
    def from_dir(cls, path: str | os.PathLike[str], **kwargs: Any) -> Experiment:
        """The experiment a run directory was written by, when its models are named by specs.

        Its `cases.jsonl` holds the cases redacted (R-S1): a case whose text held a credential
        comes back with the `[REDACTED:...]` marker in its place. To resume such a case
        exactly, build the `Experiment` from the original cases file instead.

        Args:
            path: a directory written by `run`.
            **kwargs: `Experiment` arguments to set (e.g. `models={label: factory}` when the
                saved models were factories, or `max_workers`).

        Returns:
            An `Experiment` whose `resume(path)` finishes that directory.

        Raises:
            UsageError: `path` is not a usable folder path (`errors.checked_path`), or the
                folder is not an experiment directory.
            CorruptLogError: its `experiment.json` is damaged (not a JSON object with the
                experiment's fields).
        """
        p = checked_path(path, "Experiment.from_dir(path)", kind="folder", fix=_DIR_FIX)
        manifest = read_manifest(p)
        args: dict[str, Any] = {
            "policies": manifest["policies"],
            "models": manifest["models"],
            "repeats": manifest["repeats"],
            "seed": manifest["seed"],
            "name": manifest["name"],
            "max_workers": manifest.get("max_workers", 4),
            "max_trials": manifest.get("max_trials", MAX_TRIALS),
        }
        args.update(kwargs)
        return cls(load_cases(p / "cases.jsonl"), **args)

    def _execute(
        self,
        path: Path,
        todo: Sequence[Trial],
        rows: dict[int, dict[str, Any]],
        parallel: bool,
        progress: bool,
        executor: Any,
    ) -> ExperimentResult:
        from tqdm.auto import tqdm

        total = len(self.cases) * len(self.policies) * len(self.models) * self.repeats
        stop = _schedule.Stop()
        self._stop = stop
        own_client, backend = self._backend(path, parallel, executor)
        quiet = not progress or quiet_output()  # no bar lines in CI logs (not a TTY)
        bar = tqdm(total=total, initial=len(rows), desc=self.name, unit="trial", disable=quiet)

        results = path / "results.jsonl"
        broken: list[BaseException] = []  # the first write failure: no new trials after it

        def write_failed(exc: BaseException) -> None:
            if not broken:
                broken.append(exc)
            stop.scheduling.set()

        def done(trial: Trial, row: dict[str, Any]) -> None:
            if stop.cancel.is_set() and row.get("finish_reason") == "cancelled":
                return  # cancelled by the second Ctrl-C: not a result, resume runs it again
            if broken:
                return  # written or not, resume runs it again once the folder is writable
            # as the trial's log holds it (R-S1): check details and errors quote case text
            row = redact_fields(_redactor(), row, keep=_ROW_NAMES)
            try:  # saved as it finishes: a killed experiment keeps every finished trial
                _append_row(results, _row_line(row))
            except OSError as exc:
                write_failed(exc)
                return
            rows[trial.index] = row
            bar.update(1)

        def failed(trial: Trial, exc: BaseException) -> dict[str, Any]:
            if isinstance(exc, _WriteFailed):
                write_failed(exc.__cause__ or exc)
            return _row(trial, None, f"{type(exc).__name__}: {exc}", {}, None)

        try:
            try:  # only the kept rows, in order: a rerun trial's old row must not stay beside it
                atomic_write(results, "".join(_row_line(rows[i]) for i in sorted(rows)).encode())
            except ArtifactError as exc:
                raise UsageError(
                    f"cannot write {results} ({_why(exc)}); make the folder writable "
                    "(no trial was run)"
                ) from exc
            _schedule.run_trials(todo, done, failed, backend=backend, stop=stop)
        finally:
            bar.close()
            self._stop = None
            if own_client is not None:
                own_client.close()
        ordered = [rows[i] for i in sorted(rows)]
        finished = len(ordered) == total
        try:
            atomic_write(results, "".join(_row_line(r) for r in ordered).encode())
            manifest = self._manifest(total, finished=finished)
            manifest["interrupted"] = bool(stop.presses or broken)
            _write_json(path / "experiment.json", manifest)
        except (OSError, ArtifactError) as exc:
            write_failed(exc)  # results.jsonl still holds every saved row, in finishing order
        if broken:
            raise ExperimentInterrupted(
                f"could not write the experiment's files in {path} ({_why(broken[0])}); "
                f"stopped starting trials: {len(ordered)} of {total} are saved in {results} "
                "(no line is half-written). Free disk space or restore write permission, then "
                f"run the rest with Experiment.resume({str(path)!r}) or "
                f"`harnesskit eval --resume {path}`",
                path=str(path),
                finished=len(ordered),
                total=total,
            ) from broken[0]
        if stop.presses and not finished:
            raise ExperimentInterrupted(
                f"interrupted: {len(ordered)} of {total} trials finished and saved in {path}; "
                f"run the rest with Experiment.resume({str(path)!r}) or "
                f"`harnesskit eval --resume {path}`",
                path=str(path),
                finished=len(ordered),
                total=total,
            )
        return ExperimentResult(ordered, path=path, repeats=self.repeats)

    def _backend(self, path: Path, parallel: bool, executor: Any) -> tuple[Any, Any]:
        if executor is None:
            if parallel and self.max_workers > 1:
                return None, _schedule.Threads(self._run_in, self.max_workers, path)
            return None, _schedule.Inline(self._run_in, path)
        client = executor
        own = None
        if isinstance(executor, str):
            try:
                dd: Any = importlib.import_module("distributed")
            except ImportError:
                raise UsageError(
                    "a Dask executor needs the distributed package: "
                    "pip install 'harnesskit[distributed]'"
                ) from None
            client = own = dd.Client(executor)
        if not callable(getattr(client, "submit", None)) or not hasattr(client, "nthreads"):
            own_close = getattr(own, "close", None)
            if callable(own_close):
                own_close()
            raise UsageError(
                f"executor must be None, a distributed.Client or a scheduler address, "
                f"got {type(executor).__name__}"
            )
        return own, _schedule.Dask(client, _remote_trial, self, path)

    def _run_in(self, trial: Trial, path: Path) -> dict[str, Any]:
        return self._run_trial(trial, path)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for local in ("_semaphores", "_sem_lock", "_stop"):
            state.pop(local, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._semaphores = {}
        self._sem_lock = threading.Lock()
        self._stop = None

    # -- internals ----------------------------------------------------------------------------
    def _check_model_spec(self, spec: str) -> None:
        prefix, _, style = spec.partition(":")
        domain = self.domains.get(prefix)
        if domain is None and prefix in _known_domains():
            domain = get_domain(prefix)
        if domain is not None:
            if style not in domain.agents:
                raise UsageError(
                    f"domain {prefix!r} has no agent {style!r}; agents: {sorted(domain.agents)}"
                )
            others = sorted({self._domain(c).name for c in self.cases} - {domain.name})
            if others:
                raise UsageError(
                    f"model {spec!r} is an agent of the {domain.name!r} domain, but cases of "
                    f"{others} would run it on tools it does not know; pick a model of that "
                    "domain or filter the cases (--domain)"
                )
            return
        if prefix in ("scripted", "function", "replay"):
            return
        try:
            get_model(spec)  # builds the client only: no request is sent
        except UsageError as exc:
            if "unknown model provider" not in str(exc):
                raise
            raise UsageError(
                f"unknown model {spec!r}: {exc}; domain agents: {', '.join(domain_agents())}"
            ) from None

    def _check_case_tools(self) -> None:
        """Refuse cases naming tools their domain lacks (a typo is not the model's fault)."""
        by_domain: dict[str, list[Case]] = {}
        for case in self.cases:
            by_domain.setdefault(case.domain or "shop", []).append(case)
        for name, cases in by_domain.items():
            env = self._domain(cases[0]).environment(cases[0])
            tools = env.tools if isinstance(env.tools, ToolRegistry) else ToolRegistry(env.tools)
            known = {t.name for t in tools}
            for case in cases:
                named = [c.tool for c in (*case.calls, *case.forbid_calls)]
                named += list(case.forbid_tools)
                for tool in named:
                    if tool not in known:
                        import difflib

                        near = difflib.get_close_matches(tool, sorted(known), n=1)
                        hint = f"; did you mean {near[0]!r}?" if near else ""
                        raise UsageError(
                            f"case {case.id!r} names tool {tool!r}, which the {name!r} domain "
                            f"lacks{hint} (tools: {sorted(known)})"
                        )

    def _domain(self, case: Case) -> Domain:
        name = case.domain or "shop"
        return self.domains.get(name) or get_domain(name)

    def _model(self, trial: Trial) -> Model:
        spec: Any = self.models[trial.model]
        if not isinstance(spec, str) and not hasattr(spec, "request") and callable(spec):
            spec = spec(trial)
        if isinstance(spec, str):
            prefix, _, style = spec.partition(":")
            domain = self.domains.get(prefix)
            if domain is None and prefix in _known_domains():
                domain = get_domain(prefix)
            if domain is not None and style in domain.agents:
                return domain.agents[style](seed=trial.seed)
            if domain is not None:
                raise UsageError(
                    f"domain {prefix!r} has no agent {style!r}; agents: {sorted(domain.agents)}"
                )
            return get_model(spec)
        model: Model = spec
        return model

    def _semaphore(self, model: Model) -> threading.Semaphore | None:
        key = endpoint_of(model)
        with self._sem_lock:
            if key not in self._semaphores:
                limit = self.per_endpoint
                n = limit.get(key) if isinstance(limit, Mapping) else limit
                self._semaphores[key] = threading.Semaphore(n) if n else None
            return self._semaphores[key]

    def _run_trial(self, trial: Trial, path: Path) -> dict[str, Any]:
        case, run, error = trial.case, None, None
        status: int | None = None  # the HTTP status of the model error that ended it, if any
        risks: dict[str, str] = {}
        env: Any = None
        remove_hook: Callable[[], None] | None = None
        try:
            env = self._domain(case).environment(case)
            registry = env.tools if isinstance(env.tools, ToolRegistry) else ToolRegistry(env.tools)
            risks = {t.name: t.risk for t in registry}
            model = self._model(trial)
            limits = Limits(**{**_limits_dict(self.limits), **case.limits})
            harness = Harness(
                registry,
                _Throttled(model, self._semaphore(model)),
                policy=self.policies[trial.policy],
                limits=limits,
                log_dir=path / "logs",
                artifacts=path / "artifacts" / trial.run_id,
                system_prompt=getattr(env, "system_prompt", "") or "",
                gate=getattr(env, "gate", None)
                or self.gate
                or Gate(policy={"destructive": "allow"}),
                settings={**self.settings, "seed": trial.seed},
            )
            task = {
                "case": case.id,
                "policy": trial.policy,
                "model": trial.model,
                "repeat": trial.repeat,
                "seed": trial.seed,
            }
            run = harness.start(case.input[0], run_id=trial.run_id, task=task)
            if self._stop is not None:
                remove_hook = self._stop.on_cancel(run.cancel)
            run.run()
            for text in case.input[1:]:
                if run.finish_reason != "stop":
                    break
                run.send(text).run()
            if self.user is not None:
                self._simulate_user(trial, run)
        except Exception as exc:  # a trial that crashes is a failed row, not a dead experiment
            if isinstance(exc, OSError) or type(exc) is EventLogError:  # (read/write I/O)
                raise _WriteFailed(f"{type(exc).__name__}: {exc}") from exc  # the disk, not it
            error, status = f"{type(exc).__name__}: {exc}", _http_status(exc)
        finally:
            if remove_hook is not None:
                remove_hook()
            if run is not None:  # a crashed run did not reach its own close
                run.executor.close()
                run.log.close()
        if run is not None and run.log.write_error is not None:  # the disk failed, not the trial
            raise _WriteFailed(str(run.log.write_error)) from run.log.write_error
        if error is None and run is not None and isinstance(run.error, ModelError):
            error = f"{type(run.error).__name__}: {run.error}"  # infrastructure, not behaviour
            status = _http_status(run.error)
        row = _row(trial, run, error, risks, env)
        if status is not None:
            row["error_status"] = status
        return row

    def _simulate_user(self, trial: Trial, run: Run) -> None:
        """Let the simulated user answer each agent answer until it writes its stop token."""
        user = self.user
        if user is None:
            return
        model = user.build(trial)
        for _ in range(user.max_turns):
            if run.finish_reason != "stop" or (
                self._stop is not None and self._stop.cancel.is_set()
            ):
                return
            text = user.reply(
                model,
                trial.case,
                run.log,
                seed=trial.seed,
                run_id=trial.run_id,
                data_class=run.harness.data_class,
            )
            if user.done(text):
                return
            st = run.state
            payload = {"content": text, "simulated": True, "simulator": user.label}
            run.log.append(
                "user.message", payload, source="user", branch_id=st.branch_id, summary=text[:80]
            )
            st.finish_reason = None  # what `Run.send` does for a stopped run
            run.log.flush()
            run.run()

    def _manifest(self, n_trials: int, *, finished: bool) -> dict[str, Any]:
        """`experiment.json` as written (redacted, R-S1; the case ids exact), and compared."""
        manifest = {
            "schema_version": EXPERIMENT_SCHEMA_VERSION,
            "name": self.name,
            "seed": self.seed,
            "repeats": self.repeats,
            "cases": [c.id for c in self.cases],
            "policies": {k: ContextPolicy.resolve(v).to_dict() for k, v in self.policies.items()},
            "models": {k: _model_label(v) for k, v in self.models.items()},
            "trials": n_trials,
            "max_workers": self.max_workers,
            "max_trials": self.max_trials,
            "user": self.user.label if self.user is not None else None,
            "finished": finished,
        }
        return redact_fields(_redactor(), manifest, keep=("cases",))

    def __repr__(self) -> str:
        return (
            f"<Experiment {self.name}: {len(self.cases)} cases × {len(self.policies)} policies × "
            f"{len(self.models)} models × {self.repeats} repeats>"
        )


def _row(
    trial: Trial, run: Run | None, error: str | None, risks: Mapping[str, str], env: Any
) -> dict[str, Any]:
    case = trial.case
    if run is not None:
        extra: list[CheckResult] = []
        domain_checks = getattr(env, "checks", None)
        if callable(domain_checks):
            extra = list(domain_checks(case, run.log))
        s = score(case, run.log, risks=risks, extra=extra)
        st = run.state
        steps, prompt, completion = st.step, st.prompt_tokens, st.completion_tokens
        calls = len(st.tool_history)
    else:
        s, steps, prompt, completion, calls = Score(case_id=case.id, checks=()), 0, 0, 0, 0
    if error is not None:
        failed = CheckResult(name="run completes", kind="run", passed=False, detail=error)
        s = Score(case_id=case.id, checks=(*s.checks, failed))
    return {
        "case": case.id,
        "policy": trial.policy,
        "model": trial.model,
        "repeat": trial.repeat,
        "seed": trial.seed,
        "pass": s.passed,
        "steps": steps,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "tool_calls": calls,
        "finish_reason": "error" if error else (run.finish_reason if run else None),
        "failed_checks": s.failed,
        "error": error,
        "run_id": trial.run_id,
        "checks": [c.to_dict() for c in s.checks],
    }


# -- helpers ----------------------------------------------------------------------------------


def _http_status(exc: BaseException) -> int | None:
    """The HTTP status a `ModelError` was answered with (`None`: no answer, or no model error)."""
    status = exc.status_code if isinstance(exc, ModelError) else None
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def _labelled(items: Any, label: Callable[[Any], str], what: str) -> dict[str, Any]:
    if isinstance(items, Mapping):
        out = dict(items)
    else:
        out = {}
        for item in items:
            key = label(item)
            if key in out:
                raise UsageError(f"two {what} specs share the label {key!r}; pass a dict of labels")
            out[key] = item
    if not out:
        raise UsageError(f"an experiment needs at least one {what}")
    return out


def _policy_label(spec: Any) -> str:
    """The label of a policy spec; an unknown or invalid one is refused naming `policies`."""
    try:
        return ContextPolicy.resolve(spec).name
    except UsageError as exc:
        raise UsageError(f"Experiment(policies=...): {exc}") from None


def _refuse(field: str, value: Any, takes: str) -> UsageError:
    return UsageError(
        f"Experiment({field}=...) takes {takes}, got {type(value).__name__} {value!r:.60}"
    )


def _check_config(
    *,
    policies: Any,
    models: Any,
    seed: Any,
    name: Any,
    domains: Any,
    limits: Any,
    gate: Any,
    per_endpoint: Any,
    settings: Any,
) -> None:
    """Refuse an experiment configuration of the wrong types before anything runs.

    Raises:
        UsageError: naming the field (`policies`, `models`, `seed`, ...), what it takes and
            what came.
    """
    for field_name, value, what in (
        (
            "policies",
            policies,
            "a list of policies (names, dicts, ContextPolicy) or {label: policy}",
        ),
        ("models", models, "a list of model specs (str, Model, fn(trial)) or {label: spec}"),
    ):
        if isinstance(value, Mapping):
            bad = [k for k in value if not isinstance(k, str) or not k]
            if bad:
                raise UsageError(
                    f"Experiment({field_name}=...) labels must be non-empty strings, "
                    f"got {bad[0]!r:.60}"
                )
        elif isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise _refuse(field_name, value, what)
    specs = models.values() if isinstance(models, Mapping) else models
    for spec in specs:
        model_like = callable(getattr(spec, "request", None)) or callable(spec)
        if not isinstance(spec, str) and not model_like:
            raise _refuse(
                "models",
                spec,
                "model specs: a str such as 'shop:careful', a Model, or fn(trial) -> Model",
            )
    if type(seed) is not int:
        raise _refuse("seed", seed, "an int")
    if not isinstance(name, str) or not name.strip():
        raise _refuse("name", name, "a non-empty string")
    if domains is not None and (
        not isinstance(domains, Mapping)
        or not all(isinstance(k, str) and isinstance(v, Domain) for k, v in domains.items())
    ):
        raise _refuse("domains", domains, "{name: Domain} or None")
    if limits is not None and not isinstance(limits, Limits):
        raise _refuse("limits", limits, "hk.Limits(...) or None")
    if gate is not None and not isinstance(gate, Gate):
        raise _refuse("gate", gate, "hk.Gate(...) or None")
    counts = per_endpoint.values() if isinstance(per_endpoint, Mapping) else [per_endpoint]
    if per_endpoint is not None and not all(type(n) is int and n >= 1 for n in counts):
        raise _refuse("per_endpoint", per_endpoint, "None, an int >= 1, or {endpoint: int >= 1}")
    if settings is not None and (
        not isinstance(settings, Mapping) or not all(isinstance(k, str) for k in settings)
    ):
        raise _refuse("settings", settings, "a dict such as {'temperature': 0} or None")


def _model_label(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    if hasattr(spec, "request"):
        return str(spec.name)
    return str(getattr(spec, "__name__", type(spec).__name__))


#: A row's fields written exactly: the trial it is (resume and `results.jsonl` checks match
#: rows by them; `run_id` also names the trial's log file).
_ROW_NAMES = ("case", "policy", "model", "run_id")


@functools.cache
def _redactor() -> Redactor:
    """The scanner the trial logs use (a `Harness`'s default), for the files beside them."""
    return Redactor()


def _limits_dict(limits: Limits) -> dict[str, Any]:
    return {f.name: getattr(limits, f.name) for f in dataclasses.fields(Limits)}


def _default_dir(name: str) -> Path:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name)
    return Path("runs") / "experiments" / f"{safe}-{stamp}-{uuid.uuid4().hex[:6]}"


class _WriteFailed(Exception):
    """A trial could not write its log (disk full, permission): the experiment stops."""


def _why(exc: BaseException) -> str:
    cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
    if isinstance(cause, OSError) and cause.strerror:
        return f"{cause.strerror}, errno {cause.errno}"
    return f"{type(exc).__name__}: {exc}"


def _row_line(row: Mapping[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, default=str) + "\n"


def _append_row(path: Path, line: str) -> None:
    """Append one `results.jsonl` line whole, or leave the file as it was.

    Raises:
        OSError: the write failed; the file was cut back to its old end (when it could be).
    """
    data = line.encode()
    start = path.stat().st_size if path.exists() else 0
    try:
        with open(path, "ab") as fh:
            fh.write(data)
    except OSError:
        with contextlib.suppress(OSError):  # a half-written line must not stay behind
            os.truncate(path, start)
        raise


def _write_json(path: Path, data: Any) -> None:
    text = json.dumps(data, indent=1, ensure_ascii=False, default=str) + "\n"
    atomic_write(path, text.encode())


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _remote_trial(experiment: Experiment, trial: Trial, path: str) -> dict[str, Any]:
    """One trial as a Dask task: writes its log and artifacts under `path`, returns its row."""
    return experiment._run_trial(trial, Path(path))
