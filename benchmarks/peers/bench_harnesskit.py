"""harnesskit on the peer workload, for `../shared/bench/peers/run.py --add`.

The same 10 tools, 20 scripted tool turns and final answer as the peers, run through the path a
user gets: `hk.tool` derives each tool's JSON Schema from its hints and docstring into a
`ToolRegistry`; `Harness.run()` drives the loop (brakes, context assembly under the default
`full-history` policy, gate, executor with jsonschema validation and the default per-tool
timeout, structured results) and every event (contract, user message, context record, request,
response, tool call, tool result, finish) is written to a JSONL log on disk and flushed after
every step, as in a normal run. One `Harness` is built once; every run opens a new log file.

The model is `hk.FunctionModel` answering chat-completions assistant dicts, so the argument text
is parsed into a `ToolCall` on every turn as a provider adapter does. Its `requests` list (kept
for tests) is cleared per run, as the peers reset their fakes.

Variants:
- `harnesskit/disk`: the default, logs under a temporary folder (removed at exit).
- `harnesskit/memory`: `log_dir=None`, the same events kept in memory only.
- `harnesskit/disk-no-timeout`: as `disk`, the tools declared with `timeout_seconds=None`, so
  each call runs inline with no timer at all (the `disk` variant hands each call to a worker
  thread that enforces the 30 s default timeout; this shows what that costs; a hung tool
  would then hang the run).
- `harnesskit/disk-inline`: as `disk`, with the opt-in `executor.INLINE_READS` on: the read
  calls run inline under a SIGALRM timer for their 30 s timeout.

    cd ../shared/bench/peers && /tmp/peers-venv/bin/python run.py --add \
        /path/to/benchmarks/peers/bench_harnesskit.py
"""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from pathlib import Path

import harnesskit as hk

try:
    import workload
except ImportError:  # run from this folder: find the shared peer workload
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "shared" / "bench" / "peers"))
    import workload

_TMP = tempfile.mkdtemp(prefix="hk-bench-")
atexit.register(shutil.rmtree, _TMP, True)


def _build(on_disk: bool, timeout: float | None = 30.0, inline_reads: bool = False):
    from harnesskit.tools import executor

    state = [0]

    def scripted(messages, info):
        workload.stamp()
        i = state[0]
        state[0] = i + 1
        if i < workload.N_TOOL_STEPS:
            cid, name, _, args_json = workload.SCRIPT[i]
            return {
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": name, "arguments": args_json},
                    }
                ],
            }
        return {"content": workload.FINAL_TEXT}

    model = hk.FunctionModel(scripted, name="scripted")
    harness = hk.Harness(
        tools=hk.ToolRegistry(hk.tool(f, timeout_seconds=timeout) for f in workload.TOOLS),
        model=model,
        system_prompt=workload.SYSTEM_PROMPT,
        limits=hk.Limits(max_steps=25),
        log_dir=Path(_TMP) if on_disk else None,
    )

    def run():
        state[0] = 0
        model.requests.clear()
        executor.INLINE_READS = inline_reads  # set for this run only (variants interleave)
        try:
            r = harness.run(workload.USER_PROMPT)
        finally:
            executor.INLINE_READS = False
        if r.finish_reason != "stop":
            raise AssertionError(f"harnesskit run ended with {r.finish_reason}: {r.error}")
        return r.final_text

    return ("sync", run)


VARIANTS = {
    "harnesskit/disk": lambda: _build(True),
    "harnesskit/memory": lambda: _build(False),
    "harnesskit/disk-no-timeout": lambda: _build(True, timeout=None),
    "harnesskit/disk-inline": lambda: _build(True, inline_reads=True),
}
