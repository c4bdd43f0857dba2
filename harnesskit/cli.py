"""Command line: `harnesskit demo | replay | eval | sufficiency`. Only this and `display` print."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from harnesskit.errors import HarnessError

__all__ = ["main"]


def _cmd_demo(args: argparse.Namespace) -> int:
    from harnesskit.domains.airline.jobs import run_demo

    report = run_demo(out_dir=args.out, model=_model(args))
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
    """Add `--model`, `--base-url` and `--api-key-env` to a command that runs agents."""
    parser.add_argument(
        "--model",
        help="model spec, e.g. ollama:qwen2.5, vllm:NAME, deepseek:deepseek-chat, "
        "openai-compat:NAME (with --base-url); default: the command's offline model",
    )
    parser.add_argument("--base-url", help="server URL for --model, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument(
        "--api-key-env", help="environment variable holding the API key for --model"
    )


def _model(args: argparse.Namespace) -> object | None:
    """The model named by `add_model_options`' flags, or None for the command's default."""
    if not args.model:
        return None
    from harnesskit.models import get_model

    options = {"base_url": args.base_url, "api_key_env": args.api_key_env}
    return get_model(args.model, **{k: v for k, v in options.items() if v})


def _cmd_eval(args: argparse.Namespace) -> int:
    import pandas as pd

    from harnesskit.analysis.audit import audit
    from harnesskit.analysis.evals import Experiment, load_cases

    cases = load_cases(args.cases, domain=args.domain, tags=args.tag or ())
    if not cases:
        print(f"no cases selected from {args.cases}", file=sys.stderr)
        return 2
    exp = Experiment(
        cases,
        policies=args.policy or ["full-history"],
        models=args.model or ["shop:careful"],
        repeats=args.repeats,
        seed=args.seed,
        name=args.name,
        max_workers=args.workers,
    )
    result = exp.run(args.out, progress=not args.no_progress)
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
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one sub-command per job."""
    parser = argparse.ArgumentParser(prog="harnesskit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the embedded offline agent and print a table")
    demo.add_argument("--out", default="runs", help="folder for logs and charts (default: runs)")
    add_model_options(demo)
    demo.set_defaults(func=_cmd_demo)
    replay = sub.add_parser(
        "replay", help="replay recorded tau-bench airline runs and compare their rewards"
    )
    replay.add_argument("path", help="trajectory file, e.g. .../gpt-4o-airline.json")
    replay.add_argument("--limit", type=int, default=None, help="replay only the first N runs")
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
    suf.add_argument("--limit", type=int, default=None, help="only the first N runs")
    suf.set_defaults(func=_cmd_sufficiency)
    ev = sub.add_parser(
        "eval", help="run cases × policies × models × repeats and print the summary table"
    )
    ev.add_argument("cases", help="a cases .jsonl file or a folder of them")
    ev.add_argument("--policy", action="append", help="context policy (repeatable)")
    ev.add_argument(
        "--model",
        action="append",
        help="model: a domain agent such as shop:careful, or a get_model spec (repeatable)",
    )
    ev.add_argument("--repeats", type=int, default=1, help="trials per cell (pass^k needs k)")
    ev.add_argument("--seed", type=int, default=0, help="experiment seed (default 0)")
    ev.add_argument("--out", default=None, help="run directory (default runs/experiments/...)")
    ev.add_argument("--workers", type=int, default=4, help="parallel trials (default 4)")
    ev.add_argument("--name", default="eval", help="experiment name (default eval)")
    ev.add_argument("--domain", default=None, help="only cases of this domain")
    ev.add_argument("--tag", action="append", help="only cases with this tag (repeatable)")
    ev.add_argument("--audit", action="store_true", help="also print the four-point audit")
    ev.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    ev.set_defaults(func=_cmd_eval)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `harnesskit` command; returns the process exit code."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except HarnessError as exc:  # a wrong flag or an unreachable provider: say so, no traceback
        print(f"harnesskit: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path that is a file, not writable, missing ...
        print(
            f"harnesskit: cannot use {exc.filename or 'a path'}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return 2
    except ValueError as exc:  # e.g. a data file that is not JSON
        print(f"harnesskit: bad input: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
