"""Command line: `harnesskit demo | replay | eval | probe`; only it and display print."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _cmd_demo(args: argparse.Namespace) -> int:
    from harnesskit.domains.airline.jobs import run_demo

    report = run_demo(out_dir=args.out)
    return 0 if report.passed == len(report.rows) else 1


def _cmd_replay(args: argparse.Namespace) -> int:
    from harnesskit.domains.airline.jobs import run_replay

    run_replay(args.path, limit=args.limit, log_dir=args.log_dir, per_run=not args.summary)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one sub-command per job."""
    parser = argparse.ArgumentParser(prog="harnesskit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the embedded offline agent and print a table")
    demo.add_argument("--out", default="runs", help="folder for logs and charts (default: runs)")
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
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
