"""Logs with parent ids no writer produces (`EventLog.append` refuses them), for trajectory tests.

A hand edit or a damaged copy is how a missing, later or looping parent reaches a log: write the
events out, set the parents, read the file back.
"""

from __future__ import annotations

import json
from pathlib import Path

import harnesskit as hk


def with_parents(folder: Path, log: hk.EventLog, parents: dict[int, int]) -> hk.EventLog:
    """`log` as read back from a copy whose `parent_id`s were edited ({event id: parent id})."""
    path = folder / "hand-edited.jsonl"
    lines = []
    for event in log.events:
        line = event.to_dict()
        if event.event_id in parents:
            line["parent_id"] = parents[event.event_id]
        lines.append(json.dumps(line))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return hk.EventLog.read(path)
