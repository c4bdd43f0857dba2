"""Many harnesses on one log folder, each storing the same large result (storage race tests).

Run as a script (`python storage_worker.py LOG_DIR N TAG`) it starts N harnesses on threads,
all released at once, and prints one JSON line: `{"ok": n, "errors": [...]}`.
"""

from __future__ import annotations

import json
import sys
import threading
import traceback
from pathlib import Path

import harnesskit as hk
from harnesskit.testing import reply


@hk.tool
def big_table() -> dict:
    """A result large enough to be stored as an artifact (the same bytes for every caller)."""
    return {"rows": [{"i": i, "text": "x" * 50} for i in range(400)]}


def run_many(log_dir: Path, n: int, tag: str) -> dict:
    """Run `n` harnesses on `log_dir` in threads; return the count that stopped and the errors."""
    errors: list[str] = []
    ok: list[str] = []
    barrier = threading.Barrier(n)

    def one(i: int) -> None:
        try:
            model = hk.ScriptedModel([reply.tool_call("big_table"), "done"])
            harness = hk.Harness([big_table], model, log_dir=log_dir)
            barrier.wait()
            run = harness.run("go", run_id=f"{tag}-{i:03d}")
            result = run.log.of_type(hk.log.ToolResultEvent)[0]
            ref = json.loads(result.content)["artifact_ref"]
            if json.loads(harness.artifacts.read(ref)) != big_table.fn():
                errors.append(f"{run.state.run_id}: artifact {ref} reads back different bytes")
            if run.finish_reason == "stop":
                ok.append(run.state.run_id)
            else:
                errors.append(f"{run.state.run_id}: {run.finish_reason}")
        except Exception:  # the test reports every crash
            errors.append(traceback.format_exc(limit=3))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"ok": len(ok), "errors": errors}


if __name__ == "__main__":
    print(json.dumps(run_many(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3])))
