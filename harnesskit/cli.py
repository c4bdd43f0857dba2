"""Command line: `harnesskit demo | replay | eval | probe`; only it and display print."""

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

    run_replay(args.path, limit=args.limit, log_dir=args.log_dir, per_run=not args.summary)
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
    replay.set_defaults(func=_cmd_replay)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `harnesskit` command; returns the process exit code."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except HarnessError as exc:  # a wrong flag or an unreachable provider: say so, no traceback
        print(f"harnesskit: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
