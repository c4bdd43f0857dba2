"""A log torn anywhere in its first two lines can be resumed, restarted or started again (R-V6).

Every byte boundary of the first two lines is tried: a cut inside the first line (the task
contract) leaves a run that never started — resume says so and the same id starts again after
the cut-off line, which readers skip; from the first complete line on, the run resumes and
restarts. The system prompt holds multi-byte characters, so some cuts fall inside one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

import harnesskit as hk
from harnesskit.testing import reply


def harness(folder):
    model = hk.ScriptedModel([reply.text("ok")] * 4)
    return hk.Harness(
        [], model, log_dir=folder, system_prompt="Réponds en français ✓", clock=lambda: 0.0
    )


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    folder = tmp_path_factory.mktemp("whole")
    harness(folder).start("bonjour ✓", run_id="r").run()
    return (folder / "r.jsonl").read_bytes()


def test_every_cut_in_the_first_two_lines_resumes_restarts_or_starts_again(whole, tmp_path):
    first, second = whole.split(b"\n")[:2]
    assert any(b >= 0x80 for b in first)  # multi-byte characters in the first line
    end_first = len(first)  # from here on the contract is complete
    outcomes = {"started again": 0, "resumed and restarted": 0}
    for cut in range(len(first) + 1 + len(second) + 2):
        folder = tmp_path / f"cut{cut}"
        folder.mkdir()
        path = folder / "r.jsonl"
        path.write_bytes(whole[:cut])
        h = harness(folder)
        if cut < end_first:
            with pytest.raises(hk.errors.UsageError, match="start it again under its id"):
                h.resume(path)
            run = h.start("bonjour ✓", run_id="r").run()
            assert run.finish_reason == "stop", cut
            log = hk.EventLog.read(path)
            assert log.events[0].type == "task.contract"
            assert log.torn_lines == ([1] if whole[:cut].strip() else []), cut
            outcomes["started again"] += 1
        else:
            assert h.resume(path).run().finish_reason in ("stop", None), cut
            restarted = h.restart(path, reason="torn log").run()
            assert restarted.finish_reason == "stop", cut
            outcomes["resumed and restarted"] += 1
    assert outcomes["started again"] == end_first
    assert outcomes["resumed and restarted"] == len(second) + 3


def test_a_log_killed_twice_while_writing_its_first_line_still_starts(tmp_path, whole):
    path = tmp_path / "r.jsonl"
    path.write_bytes(whole[:40] + b"\n" + whole[:90])  # two cut-off first lines
    run = harness(tmp_path).start("bonjour ✓", run_id="r").run()
    assert run.finish_reason == "stop"
    assert hk.EventLog.read(path).torn_lines == [1, 2]


def test_a_real_sigkill_during_the_first_line_leaves_a_run_that_starts_again(tmp_path):
    """A child process is SIGKILLed by itself halfway through writing its first log line."""
    script = textwrap.dedent(
        f"""
        import builtins, os, signal, sys
        sys.path.insert(0, {os.getcwd()!r})
        import harnesskit as hk
        import harnesskit.log.events as events

        class Dying:  # the real file; the process dies halfway through the first long line
            def __init__(self, f):
                self.f = f
            def write(self, text):
                if len(text) > 10_000:
                    self.f.write(text[: len(text) // 2])
                    self.f.flush()
                    os.kill(os.getpid(), signal.SIGKILL)
                return self.f.write(text)
            def __getattr__(self, name):
                return getattr(self.f, name)

        events.open = lambda *a, **k: Dying(builtins.open(*a, **k))
        h = hk.Harness([], hk.ScriptedModel([]), log_dir={str(tmp_path)!r},
                       system_prompt="é" * 50_000)
        h.start("hello", run_id="k")
        """
    )
    child = subprocess.run([sys.executable, "-c", script], timeout=120)
    assert child.returncode == -signal.SIGKILL
    path = tmp_path / "k.jsonl"
    assert path.stat().st_size > 0 and not path.read_bytes().endswith(b"\n")
    h = harness(tmp_path)
    with pytest.raises(hk.errors.UsageError, match="start it again"):
        h.resume(path)
    with pytest.raises(hk.errors.UsageError, match="start it again"):
        h.restart(path, reason="killed")
    assert h.start("hello", run_id="k").run().finish_reason == "stop"
    assert hk.EventLog.read(path).torn_lines == [1]
