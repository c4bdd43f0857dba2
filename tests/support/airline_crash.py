"""Crash-test driver for the airline agent (issue 6's done-when, on the real demo domain).

The five `airline.DEMO_TASKS` run one after another, each as its own run (`air-<i>`), over one
database. The database survives a kill: every write or destructive tool commits the entries it
changed, with its idempotency key and its result, as one line of `commits.jsonl` (the shipped
data plus these lines is the database; a torn last line is no commit). `HK_KILL_AT` names a
point where the process announces itself and waits to be SIGKILLed: `event:<n>` (the n-th event
over all runs) or `tool:<name>:before|after` (around the first call of a write tool; `after` is
when the effect is committed but its result not yet logged).

As a script: `python airline_crash.py <workdir>` runs (or resumes) the whole sequence.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import sys
import threading
import time
from typing import Any

import harnesskit as hk
from harnesskit.domains import airline
from harnesskit.tools.idempotency import EffectCheck, WriteRecord

TASKS = airline.DEMO_TASKS


class CommittedDB:
    """The airline database as shipped plus the commit lines of the writes that happened."""

    def __init__(self, workdir: pathlib.Path) -> None:
        self.path = workdir / "commits.jsonl"
        self.db = airline.load_database()
        self.commits: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        if self.path.exists():
            for raw in self.path.read_text().split("\n"):
                try:
                    line = json.loads(raw)
                except json.JSONDecodeError:
                    continue  # blank, or the torn last line of a killed commit: no commit
                for section, key, value in line["entries"]:
                    if value is None:
                        self.db.data[section].pop(key, None)
                    else:
                        self.db.data[section][key] = value
                    self.db.mark_changed(section, key)
                self.commits.append(line)

    def commit(self, tool: str, key: str | None, result: Any) -> None:
        entries = [
            [section, k, self.db.data[section].get(k)] for section, k in sorted(self.db.changed)
        ]
        line = {"tool": tool, "key": key, "result": result, "entries": entries}
        with open(self.path, "a") as fh:
            fh.write(json.dumps(line) + "\n")
            fh.flush()
        self.commits.append(line)

    def confirm(self, record: WriteRecord) -> EffectCheck:
        """Did the write with this record's key commit? (the confirmer given to the harness)"""
        hit = next((c for c in self.commits if c["key"] == record.key), None)
        if hit is None:
            return EffectCheck(applied=False, evidence="no commit with this key")
        return EffectCheck(applied=True, value=hit["result"], evidence=f"commit {record.key}")


def _pause(point: str) -> None:
    if os.environ.get("HK_KILL_AT") == point:
        print("AT", point, flush=True)
        time.sleep(120)


def _committing(tool: hk.Tool, store: CommittedDB, seen: set[str]) -> hk.Tool:
    """`tool`, committing its database changes (with the call's idempotency key) when it writes."""
    own_ctx = tool.context_param
    param = own_ctx or "crash_ctx"

    def fn(**kwargs: Any) -> Any:
        ctx = kwargs[param] if own_ctx else kwargs.pop(param)
        first = tool.name not in seen
        seen.add(tool.name)
        if first:
            _pause(f"tool:{tool.name}:before")
        with store.lock:
            result = tool.fn(**kwargs)
            store.commit(tool.name, ctx.idempotency_key, result)
        if first:
            _pause(f"tool:{tool.name}:after")
        return result

    return dataclasses.replace(tool, fn=fn, context_param=param)


def make_harness(store: CommittedDB) -> hk.Harness:
    """The airline harness over the committed database (writes commit; reads do not)."""
    seen: set[str] = set()
    tools = [
        t if t.risk == "read" else _committing(t, store, seen) for t in airline.tools(store.db)
    ]
    writes = [t.name for t in tools if t.risk != "read"]
    return hk.Harness(
        tools=hk.ToolRegistry(tools),
        model=airline.agent_model(),
        system_prompt=airline.POLICY,
        gate=hk.Gate(confirm=hk.allow_all),
        log_dir=store.path.parent / "logs",
        workspace_revision="tau-airline-v1",
        confirmers=dict.fromkeys(writes, store.confirm),
        clock=lambda: 1_715_800_000.0,
    )


def run_all(workdir: pathlib.Path, *, on_event: Any = None) -> list[hk.Run]:
    """Run (or resume) every task in order; a finished run is left as it is."""
    store = CommittedDB(workdir)
    runs = []
    for i, task in enumerate(TASKS):
        path = workdir / "logs" / f"air-{i}.jsonl"
        h = make_harness(store)
        if path.exists() and path.stat().st_size:
            if hk.EventLog.read(path).of_type("run.finished"):
                continue  # done before the crash
            run = h.resume(path)
        else:
            run = h.start(task.user_message, run_id=f"air-{i}")
        if on_event is not None:
            run.log.subscribe(on_event)
        runs.append(run.run())
    return runs


def main() -> None:
    workdir = pathlib.Path(sys.argv[1])
    point = os.environ.get("HK_KILL_AT", "")
    counter = [0]

    def on_event(_: hk.log.Event) -> None:
        counter[0] += 1
        if point == f"event:{counter[0]}":
            _pause(point)

    run_all(workdir, on_event=on_event if point.startswith("event:") else None)
    print("FINISHED", flush=True)


if __name__ == "__main__":
    main()
