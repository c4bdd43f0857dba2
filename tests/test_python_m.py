"""`python -m harnesskit ...` is the `harnesskit` command: same parser, output and exit codes."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import harnesskit

ROOT = pathlib.Path(harnesskit.__file__).resolve().parents[1]


def _python_m(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "harnesskit", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )


def test_version_prints_as_the_console_script_does():
    done = _python_m("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"harnesskit {harnesskit.__version__}"


def test_a_usage_error_exits_2_under_the_commands_own_name():
    done = _python_m("eval", "--fail-under", "2")
    assert done.returncode == 2
    assert "harnesskit eval: error: argument --fail-under" in done.stderr
    assert "__main__" not in done.stderr


def test_a_harness_error_is_reported_without_a_traceback(tmp_path):
    done = _python_m("eval", "--resume", str(tmp_path))
    assert done.returncode == 2
    assert "holds no experiment.json" in done.stderr and "Traceback" not in done.stderr
