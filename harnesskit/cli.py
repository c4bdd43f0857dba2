"""Command line: `harnesskit demo | replay | eval | sufficiency`. Only this and `display` print.

`harnesskit eval` exits 0 only when every trial ran to an end (and, with `--fail-under RATE`,
the pass rate reached RATE); 1 for a pass rate under RATE, 2 for a usage error (an unknown
model, a case naming a tool its domain lacks, ...), 3 when trials hit infrastructure errors
(the model server unreachable, 5xx after retries, a timeout), 4 when the experiment's files
could not be written (a full disk, a folder made read-only: the trials saved so far stay, and
`--resume` runs the rest), 130 after Ctrl-C.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from collections.abc import Sequence
from typing import Any

from harnesskit.errors import ExperimentInterrupted, HarnessError, UsageError

__all__ = ["WRITE_FAILED", "main"]

#: Exit code of `harnesskit eval` when the experiment's files could not be written.
WRITE_FAILED = 4


def _cmd_demo(args: argparse.Namespace) -> int:
    from harnesskit.domains.airline.jobs import run_demo

    report = run_demo(
        out_dir=args.out, model=_model(args), policy=args.policy, max_steps=args.max_steps
    )
    if report.interrupted:
        return 130
    return 1 if any(row.finish_reason == "error" for row in report.rows) else 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from harnesskit.domains.airline.jobs import run_replay

    run_replay(
        args.path, limit=args.limit, log_dir=args.log_dir, per_run=not args.summary, mode=args.mode
    )
    return 0


def _cmd_sufficiency(args: argparse.Namespace) -> int:
    from harnesskit.analysis.sufficiency import combine, sufficiency, summary_line
    from harnesskit.domains.airline.replay import replay_run
    from harnesskit.domains.airline.trajectories import load_recorded_runs
    from harnesskit.domains.airline.values import VALUE_SHAPES

    runs = load_recorded_runs(args.path, limit=args.limit)
    names = args.policy or ["default"]
    frames: dict[str, list[object]] = {name: [] for name in names}
    for run in runs:  # replay each run once, judge it under every policy
        replayed = replay_run(run)
        for name in names:
            frames[name].append(sufficiency(replayed, name, shapes=VALUE_SHAPES))
    lines = [(name, combine(frames[name])) for name in names]
    for name, frame in lines:
        s = frame.attrs["summary"]
        print(
            f"{name}: {s['calls']} calls in {len(runs)} runs, {s['requests']} requests; "
            f"values from user/tool {s['values']} (derived by the model {s['values_derived']}); "
            f"tokens vs full history: {s['history_token_ratio']:.3f} without the system "
            f"message, {s['with_system_ratio']:.3f} with it, {s['with_tools_ratio']:.3f} "
            "with tool specs"
        )
    for name, frame in lines:
        print(summary_line(frame, name))
    return 0


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Add `--model`, `--base-url`, `--api-key-env`, `--timeout` to a command that runs agents."""
    parser.add_argument(
        "--model",
        help="model spec, e.g. ollama:qwen2.5, vllm:NAME, deepseek:deepseek-chat, "
        "openai-compat:NAME (with --base-url); default: the command's offline model",
    )
    parser.add_argument("--base-url", help="server URL for --model, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument(
        "--api-key-env", help="environment variable holding the API key for --model"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds for one model request attempt (default: the provider's; local: 300)",
    )


def _model(args: argparse.Namespace) -> object | None:
    """The model named by `add_model_options`' flags, or None for the command's default.

    Raises:
        UsageError: `--timeout` that is not a finite number of seconds > 0, or model flags
            without `--model`.
    """
    timeout = getattr(args, "timeout", None)
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise UsageError(f"--timeout must be a finite number of seconds > 0, got {timeout:g}")
    if not args.model:
        flags = (("--timeout", timeout), ("--base-url", args.base_url))
        given = [f for f, v in (*flags, ("--api-key-env", args.api_key_env)) if v]
        if given:
            raise UsageError(
                f"{' and '.join(given)} {'apply' if len(given) > 1 else 'applies'} to a real "
                "model: add --model (e.g. --model local:qwen2.5-coder-0.5b); the offline model "
                "has no server and no timeout"
            )
        return None
    from harnesskit.models import get_model

    options = {
        "base_url": args.base_url,
        "api_key_env": args.api_key_env,
        "timeout_seconds": timeout,
    }
    return get_model(args.model, **{k: v for k, v in options.items() if v is not None})


#: `get_model` providers that answer without a server (`--base-url`/`--api-key-env` mean nothing).
_OFFLINE_PROVIDERS = frozenset({"scripted", "function", "replay"})


def _cli_model(spec: str, options: tuple[tuple[str, str], ...], trial: Any) -> Any:
    """Build one trial's model from the command line's spec and options (picklable)."""
    from harnesskit.models import get_model

    return get_model(spec, **dict(options))


def _eval_models(specs: Sequence[str], args: argparse.Namespace) -> dict[str, Any]:
    """`{label: spec or factory}`: domain agents by name, other specs built with the options.

    Raises:
        UsageError: a spec names an unknown provider (the message lists the known providers
            and the domain agents), or the options do not fit it; `--base-url` or
            `--api-key-env` given when every model is offline (a domain agent, `scripted`,
            ...) and there is no `--user`, which they would be silently ignored by.
    """
    from harnesskit.analysis.evals.experiment import domain_agents
    from harnesskit.models import get_model

    agents = domain_agents()
    domains = {a.split(":", 1)[0] for a in agents}
    pairs = (("base_url", args.base_url), ("api_key_env", args.api_key_env))
    options = tuple((k, v) for k, v in pairs if v)
    offline = [s for s in specs if s.partition(":")[0] in domains | _OFFLINE_PROVIDERS]
    if options and len(offline) == len(specs) and not args.user:
        flags = " and ".join(f"--{k.replace('_', '-')}" for k, _ in options)
        raise UsageError(
            f"{flags} {'apply' if len(options) > 1 else 'applies'} to a model served over HTTP, "
            f"but the model{'s' * (len(specs) > 1)} ({', '.join(specs)}) "
            f"{'are' if len(specs) > 1 else 'is'} offline and would ignore "
            f"{'them' if len(options) > 1 else 'it'}: add --model with a server's spec (e.g. "
            "--model openai-compat:NAME, ollama:qwen2.5) or --user SPEC, or drop "
            f"{'them' if len(options) > 1 else 'it'}"
        )
    out: dict[str, Any] = {}
    for spec in specs:
        if spec.partition(":")[0] in domains:
            out[spec] = spec  # the experiment checks the style and the cases' domain
            continue
        if spec.partition(":")[0] in _OFFLINE_PROVIDERS:
            out[spec] = functools.partial(_cli_model, spec, ())  # no server: no options
            continue
        try:
            get_model(spec, **dict(options))  # validates before any trial; sends nothing
        except UsageError as exc:
            if "unknown model provider" in str(exc):
                raise UsageError(f"{exc}; domain agents: {', '.join(agents)}") from None
            raise
        out[spec] = functools.partial(_cli_model, spec, options)
    return out


def _cmd_eval(args: argparse.Namespace) -> int:
    import pandas as pd

    from harnesskit.analysis.audit import audit
    from harnesskit.analysis.evals import Experiment, UserSimulator, load_cases
    from harnesskit.analysis.evals.experiment import default_model

    user = None
    if args.user:
        pairs = (("base_url", args.base_url), ("api_key_env", args.api_key_env))
        user = UserSimulator(model=args.user, model_options={k: v for k, v in pairs if v})

    try:
        if args.resume:
            from pathlib import Path

            from harnesskit.analysis.evals.results import read_manifest

            if not (Path(args.resume) / "experiment.json").is_file():
                raise UsageError(f"{args.resume} holds no experiment.json: nothing to resume")
            saved = read_manifest(args.resume)  # CorruptLogError naming the file when damaged
            _refuse_resume_conflicts(args, saved)
            exp = Experiment.from_dir(
                args.resume,
                models=_eval_models(list(saved["models"]), args),
                max_workers=args.workers,
                user=user,
                **({"max_trials": args.max_trials} if args.max_trials is not None else {}),
            )
            result = exp.resume(args.resume, progress=not args.no_progress, executor=args.executor)
        else:
            if not args.cases:
                raise UsageError("name a cases file or folder, or --resume DIR")
            cases = load_cases(args.cases, domain=args.domain, tags=args.tag or ())
            if not cases:
                print(f"no cases selected from {args.cases}", file=sys.stderr)
                return 2
            exp = Experiment(
                cases,
                policies=args.policy or ["full-history"],
                models=_eval_models(args.model or [default_model(cases)], args),
                repeats=args.repeats or 1,
                seed=args.seed or 0,
                name=args.name if args.name is not None else "eval",
                max_workers=args.workers,
                user=user,
                **({"max_trials": args.max_trials} if args.max_trials is not None else {}),
            )
            result = exp.run(args.out, progress=not args.no_progress, executor=args.executor)
    except ExperimentInterrupted as exc:
        print(f"harnesskit: {exc}", file=sys.stderr)
        # a failed write carries its cause (OSError, ArtifactError); Ctrl-C has none
        return WRITE_FAILED if exc.__cause__ is not None else 130
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(result.summary().round(3).to_string())
        failures = result.failures()
        if len(failures):
            print(f"\n{len(failures)} failed trials; failed checks:")
            flat = failures.explode("failed_checks")
            print(flat.groupby(["case", "failed_checks"]).size().rename("trials").to_string())
        if args.audit:
            print("\naudit (flagged findings per point):")
            print(audit(result).summary().round(3).to_string())
    print(f"\nrun directory: {result.path}")
    errors = result.errors()
    if len(errors):
        first = errors.iloc[0]
        print(
            f"harnesskit: {len(errors)} of {len(result)} trials did not run to an end "
            f"(infrastructure, not the agent), e.g. {first['run_id']}: {first['error']}; "
            + _after_errors(result.rows, str(result.path)),
            file=sys.stderr,
        )
        return 3
    ran = result.frame
    rate = float(ran["pass"].mean()) if len(ran) else 0.0
    if args.fail_under is not None and rate < args.fail_under:
        print(
            f"harnesskit: pass rate {rate:.3f} is under --fail-under {args.fail_under}",
            file=sys.stderr,
        )
        return 1
    return 0


def _refuse_resume_conflicts(args: argparse.Namespace, saved: dict[str, Any]) -> None:
    """Refuse options given with `--resume` that differ from the saved experiment's.

    A resumed experiment runs the cases, policies, models, repeats, seed and name it was
    started with; a differing value would be silently ignored.

    Raises:
        UsageError: one or more such options, each named with the value saved.
    """
    conflicts = []
    if args.cases:
        conflicts.append(f"the cases path {args.cases!r} (saved: {len(saved['cases'])} cases)")
    for flag, given in (("--domain", args.domain), ("--tag", args.tag)):
        if given:
            conflicts.append(f"{flag} {given!r} (the saved experiment's cases are fixed)")
    for flag, given, kept in (
        ("--model", args.model, list(saved["models"])),
        ("--policy", args.policy, list(saved["policies"])),
    ):
        if given and sorted(given) != sorted(kept):
            conflicts.append(f"{flag} {', '.join(given)} (saved: {', '.join(kept)})")
    for flag, value, key in (
        ("--repeats", args.repeats, "repeats"),
        ("--seed", args.seed, "seed"),
        ("--name", args.name, "name"),
    ):
        if value is not None and value != saved[key]:
            conflicts.append(f"{flag} {value!r} (saved: {saved[key]!r})")
    if conflicts:
        raise UsageError(
            f"--resume {args.resume} runs the experiment as it was saved, but these options "
            f"differ from it: {'; '.join(conflicts)}. Drop them to resume, or leave out "
            "--resume to start a new experiment with them (--out NEW_DIR)"
        )


def _after_errors(rows: Sequence[dict[str, Any]], path: str) -> str:
    """What to do about the trials that did not run to an end, by the HTTP status that ended them.

    A status no retry changes (`NO_RETRY_STATUS`: 400 bad request, 401 bad key, 403, 404 no
    such model or URL, ...) is a configuration error: `--resume` alone would fail the same way.
    """
    from harnesskit.models._retry import NO_RETRY_STATUS

    failed = [r for r in rows if r.get("error") is not None]
    config = sorted({r["error_status"] for r in failed if r.get("error_status") in NO_RETRY_STATUS})
    if not config:
        return f"run them again with --resume {path}"
    n = sum(r.get("error_status") in NO_RETRY_STATUS for r in failed)
    statuses = ", ".join(f"HTTP {s}" for s in config)
    return (
        f"{n} of them the model's server refused with {statuses}, a configuration error that "
        "running them again will not fix: check --model, --base-url and the API key "
        f"(--api-key-env), then run them again with --resume {path}"
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one sub-command per job."""
    from harnesskit import __version__

    parser = argparse.ArgumentParser(prog="harnesskit", description=__doc__)
    parser.add_argument("--version", action="version", version=f"harnesskit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the embedded offline agent and print a table")
    demo.add_argument("--out", default="runs", help="folder for logs and charts (default: runs)")
    demo.add_argument(
        "--policy",
        default="full-history",
        help="context policy of every task: full-history (the default), default, window, "
        "summary, or a policy file",
    )
    demo.add_argument(
        "--max-steps",
        type=int,
        default=20,
        help="step brake of every task (default 20; a CPU model takes 5-15 s a step)",
    )
    add_model_options(demo)
    demo.set_defaults(func=_cmd_demo)
    replay = sub.add_parser(
        "replay", help="replay recorded tau-bench airline runs and compare their rewards"
    )
    replay.add_argument("path", help="trajectory file, e.g. .../gpt-4o-airline.json")
    replay.add_argument("--limit", type=_count, default=None, help="replay only the first N runs")
    replay.add_argument("--log-dir", default=None, help="write one JSONL event log per run here")
    replay.add_argument("--summary", action="store_true", help="print only the summary lines")
    replay.add_argument(
        "--mode",
        choices=("tau_bench", "strict"),
        default="tau_bench",
        help="tools as recorded (tau_bench, default) or strict: a missing cancellation reason "
        "is derived from the user's words, and allowed/refused cancellations are counted per rule",
    )
    replay.set_defaults(func=_cmd_replay)
    suf = sub.add_parser(
        "sufficiency",
        help="replay recorded tau-bench airline runs under a context policy and print how "
        "many typed values each prompt held (R-C9)",
    )
    suf.add_argument("path", help="trajectory file, e.g. .../gpt-4o-airline.json")
    suf.add_argument(
        "--policy", action="append", help="context policy (repeatable; default: default)"
    )
    suf.add_argument("--limit", type=_count, default=None, help="only the first N runs")
    suf.set_defaults(func=_cmd_sufficiency)
    ev = sub.add_parser(
        "eval", help="run cases × policies × models × repeats and print the summary table"
    )
    ev.add_argument("cases", nargs="?", help="a cases .jsonl file or a folder of them")
    ev.add_argument("--policy", action="append", help="context policy (repeatable)")
    ev.add_argument(
        "--model",
        action="append",
        help="model: a domain agent such as shop:careful, or a get_model spec such as "
        "ollama:qwen2.5 (repeatable); default: the first agent of the cases' domain",
    )
    ev.add_argument(
        "--user",
        metavar="SPEC",
        default=None,
        help="a simulated user answering the agent with each case's user instruction "
        "(tau-bench protocol), e.g. ollama:qwen2.5; uses --base-url and --api-key-env too",
    )
    ev.add_argument("--base-url", help="server URL for --model, e.g. http://127.0.0.1:8080/v1")
    ev.add_argument("--api-key-env", help="environment variable holding the API key for --model")
    ev.add_argument(
        "--repeats",
        type=_count,
        default=None,
        help="trials per cell, >= 1 (default 1; pass^k needs k)",
    )
    ev.add_argument("--seed", type=_seed, default=None, help="experiment seed, >= 0 (default 0)")
    ev.add_argument(
        "--max-trials",
        type=_count,
        default=None,
        help="refuse an experiment of more trials than this (default 10000)",
    )
    ev.add_argument("--out", default=None, help="run directory (default runs/experiments/...)")
    ev.add_argument("--workers", type=_count, default=4, help="parallel trials (default 4)")
    ev.add_argument("--name", default=None, help="experiment name (default eval)")
    ev.add_argument("--domain", default=None, help="only cases of this domain")
    ev.add_argument("--tag", action="append", help="only cases with this tag (repeatable)")
    ev.add_argument("--audit", action="store_true", help="also print the four-point audit")
    ev.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    ev.add_argument(
        "--fail-under",
        type=_rate,
        default=None,
        metavar="RATE",
        help="exit 1 when the pass rate (0..1, over the trials that ran) is under RATE",
    )
    ev.add_argument(
        "--resume",
        metavar="DIR",
        default=None,
        help="finish an interrupted run directory: run only its missing (or errored) trials",
    )
    ev.add_argument(
        "--executor",
        metavar="ADDRESS",
        default=None,
        help="run trials on a Dask scheduler, e.g. tcp://10.0.0.5:8786 (extra [distributed])",
    )
    ev.set_defaults(func=_cmd_eval)
    return parser


def _count(text: str) -> int:
    """A count from the command line: a whole number >= 1 (argparse exits 2 otherwise)."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"{text} is less than 1 (a count: 1 or more)")
    return count


def _seed(text: str) -> int:
    """A seed from the command line: a whole number >= 0 (argparse exits 2 otherwise)."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 0") from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative (a seed: 0 or more)")
    return seed


def _rate(text: str) -> float:
    """A pass rate from the command line: a number from 0 to 1 (argparse exits 2 otherwise)."""
    try:
        rate = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number from 0 to 1") from None
    if not 0.0 <= rate <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is outside 0..1 (a pass rate, e.g. 0.8)")
    return rate


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `harnesskit` command; returns the process exit code."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:  # Ctrl-C outside a trial loop: a clear line, no traceback
        print("harnesskit: interrupted", file=sys.stderr)
        return 130
    except HarnessError as exc:  # a wrong flag or an unreachable provider: say so, no traceback
        print(f"harnesskit: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path that is a file, not writable, missing ... or the network
        if exc.filename is None:  # not about a path: a connection refused or timed out ...
            print(f"harnesskit: {type(exc).__name__}: {exc}", file=sys.stderr)
        else:
            print(f"harnesskit: cannot use {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # e.g. a data file that is not JSON
        print(f"harnesskit: bad input: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
