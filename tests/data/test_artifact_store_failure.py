"""An artifact that cannot be written does not lose the result of a call that ran (R-E1, R-A1).

The store fails for real: a file put where `<log_dir>/artifacts` should be after the harness
was built (what a full or broken disk looks like to the run), or a folder without write permission. The tool has acted already,
so its result is still recorded: a bounded preview inline, a note, `artifact_error` in its meta;
the ledger records the write as done and the run goes on.
"""

from __future__ import annotations

import json
import os

import pytest

import harnesskit as hk
from harnesskit.testing import reply
from harnesskit.tools import ledger_path


def _export_tool(acted: list[str]):
    @hk.tool(risk="write")
    def export_orders(q: str) -> str:
        """Export orders and mark them exported.

        Args:
            q: which orders.
        """
        acted.append(q)
        return "order-line " * 2_000  # 22 000 chars: over the inline limit, so an artifact

    return export_orders


def _run(tmp_path, break_store=None):
    acted: list[str] = []
    model = hk.ScriptedModel([reply.tool_call("export_orders", q="all", id="c1"), "exported"])
    h = hk.Harness([_export_tool(acted)], model, log_dir=tmp_path)
    if break_store is not None:
        break_store()  # after the harness checked its folders: the store breaks mid-run
    run = h.start("go", run_id="r")
    return run.run(), acted


def _check_recorded(run, acted, tmp_path):
    assert run.finish_reason == "stop" and run.final_text == "exported"
    assert acted == ["all"]  # acted once, and the run went on
    log = hk.EventLog.read(tmp_path / "r.jsonl")
    types = [e.type for e in log.events]
    assert "tool.result" in types and types[-1] == "run.finished"
    (result,) = log.of_type("tool.result")
    assert result.ok and "could not" in result.payload["artifact_error"]
    assert result.payload["truncated"] is True and result.payload["full_chars"] == 22_000
    body = json.loads(result.content)
    assert body["stored"] is False and body["total_chars"] == 22_000
    assert body["preview"] == ("order-line " * 2_000)[: body["preview_chars"]]
    assert body["preview_chars"] <= 2_000 and "artifact store could not keep them" in body["note"]
    assert not log.of_type("artifact.created")
    # the model was told (the next request holds the structured result)
    last = log.of_type("model.request")[-1]
    sent = log.request_messages(last.event_id)
    assert any(m.get("role") == "tool" and m.get("content") == result.content for m in sent)
    # the write is settled in the ledger: a resume will not ask whether it happened
    states = [json.loads(x)["state"] for x in ledger_path(log.path).read_text().splitlines()]
    assert states == ["started", "done"]


def test_a_file_in_place_of_the_artifacts_folder(tmp_path):
    def break_store():
        (tmp_path / "artifacts").write_text("not a folder: the store cannot write here\n")

    run, acted = _run(tmp_path, break_store)  # (one there already is refused by the Harness)
    _check_recorded(run, acted, tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_an_unwritable_artifacts_folder(tmp_path):
    store = tmp_path / "artifacts"
    store.mkdir()
    store.chmod(0o555)
    try:
        run, acted = _run(tmp_path)
    finally:
        store.chmod(0o755)
    _check_recorded(run, acted, tmp_path)
