"""Regenerate tests/fixtures/log_v2.jsonl and its schema-v1 twin log_v1.jsonl (R-V9).

The run is deterministic (scripted model, fixed clock). The v1 file is what a schema-1 writer
wrote for the same events: `id`, `parent`, `branch`, `kind` and `ts` (epoch seconds) instead of
`event_id`, `parent_id`, `branch_id`, `type` and `created_at`, and no `data_class` field.
Reading either file must give the same events (tests/test_trajectory.py).

Usage: PYTHONPATH=. python scripts/make_log_fixtures.py
"""

from __future__ import annotations

import datetime as dt
import json
import pathlib
import tempfile

import harnesskit as hk
from harnesskit.testing import reply

OUT = pathlib.Path(__file__).resolve().parents[1] / "tests" / "fixtures"


@hk.tool
def lookup(order_id: str) -> dict:
    """Look up an order.

    Args:
        order_id: the order id.
    """
    return {"order_id": order_id, "status": "shipped", "items": 2}


def to_v1(line: dict) -> dict:
    """Write one v2 line as the v1 writer did."""
    out = {"v": 1, "id": line["event_id"], "parent": line["parent_id"], "branch": line["branch_id"]}
    out["kind"] = line["type"]
    out["ts"] = dt.datetime.fromisoformat(line["created_at"]).timestamp()
    for key in ("source", "workspace_revision", "input_hash", "status", "summary", "supersedes"):
        out[key] = line[key]
    assert line["data_class"] == "internal", "v1 had no data_class: keep the fixture internal"
    out["payload"] = line["payload"]
    return out


def main() -> None:
    """Run the fixture task and write both files."""
    ticks = iter(range(1_700_000_000, 1_700_001_000))
    turns = [reply.tool_call("lookup", id=f"c{i}", order_id=f"A{i}") for i in range(1, 4)]
    model = hk.ScriptedModel([*turns, reply.text("All three orders have shipped.")])
    with tempfile.TemporaryDirectory() as tmp:
        h = hk.Harness([lookup], model, log_dir=tmp, clock=lambda: float(next(ticks)))
        run = h.start("Where are orders A1, A2 and A3?", run_id="fixture").run()
        tr = hk.Trajectory(run.log)
        first = run.log.of_type("tool.result")[0].event_id
        tr.supersede(first, by=run.log.of_type("tool.result")[1].event_id, reason="fresher data")
        tr.fork(first, "side", reason="check A1 again")
        run.log.append("user.message", {"content": "on the side branch"}, branch_id="side")
        run.log.close()
        text = (pathlib.Path(tmp) / "fixture.jsonl").read_text()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "log_v2.jsonl").write_text(text)
    v1 = [json.dumps(to_v1(json.loads(raw)), ensure_ascii=False) for raw in text.splitlines()]
    (OUT / "log_v1.jsonl").write_text("\n".join(v1) + "\n")
    print(f"wrote {len(v1)} events to {OUT}/log_v1.jsonl and log_v2.jsonl")


if __name__ == "__main__":
    main()
