"""Command line: `harnesskit demo | replay | eval | probe`; only it and display print."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _cmd_demo(args: argparse.Namespace) -> int:
    from harnesskit import _demo

    return _demo.main(out_dir=args.out)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one sub-command per job."""
    parser = argparse.ArgumentParser(prog="harnesskit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the embedded offline agent and print a table")
    demo.add_argument("--out", default="runs", help="folder for logs and charts (default: runs)")
    demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `harnesskit` command; returns the process exit code."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
