"""`python -m harnesskit ...`: the `harnesskit` command (`harnesskit.cli.main`), same exit codes."""

import sys

from harnesskit.cli import main

if __name__ == "__main__":
    sys.exit(main())
