"""A branch forked with another harness writes into the same log under both redactors (R-S1).

The log's redactor knew only the first harness's secrets (its model's API key as a literal),
so a branch run by a harness whose model had another key logged that key verbatim when the
model or a tool echoed it back.
"""

from __future__ import annotations

import json

import harnesskit as hk
from harnesskit.testing import reply
from harnesskit.tools import IdempotencyLedger, ledger_path

KEY_B = "kb-Zx81+Qm/Secret77"  # no vendor prefix: found only as the model's literal


class _KeyedModel(hk.ScriptedModel):
    """A scripted model that names its API key as a secret, as a network client does."""

    def secrets(self) -> tuple[str, ...]:
        return (KEY_B,)


@hk.tool(risk="write")
def note(text: str) -> dict:
    """Write a note.

    Use when asked to remember. Do not use for anything else.

    Args:
        text: the note.

    Returns:
        The note as stored.
    """
    return {"stored": text}


def test_the_forked_harness_key_is_redacted_in_the_shared_log(tmp_path):
    first = hk.Harness([note], hk.ScriptedModel(["hello"]), log_dir=tmp_path)
    run = first.start("hi", run_id="r").run()
    echoing = _KeyedModel([reply.tool_call("note", text=f"my key is {KEY_B}"), f"key {KEY_B}"])
    other = hk.Harness([note], echoing, log_dir=tmp_path)
    branch = run.fork(-1, "b", harness=other)
    branch.send("again")
    branch.run()
    branch.log.close()
    text = (tmp_path / "r.jsonl").read_text()
    assert KEY_B not in text and json.dumps(KEY_B)[1:-1] not in text
    assert "[REDACTED" in text
    ledger = ledger_path(tmp_path / "r.jsonl")
    assert KEY_B not in ledger.read_text()
    record = next(iter(IdempotencyLedger.open(ledger).records.values()))
    assert "REDACTED" in record.arguments["text"]


def test_the_first_harness_keeps_its_redaction_when_the_fork_has_none(tmp_path):
    first = hk.Harness([note], hk.ScriptedModel(["hello"]), log_dir=tmp_path)
    run = first.start("hi", run_id="r").run()
    plain = hk.Harness(
        [note], hk.ScriptedModel(["sk-proj-" + "a1B2" * 12]), log_dir=tmp_path, redactor=None
    )
    branch = run.fork(-1, "b", harness=plain)
    branch.send("again")
    branch.run()
    branch.log.close()
    assert "sk-proj-a1B2" not in (tmp_path / "r.jsonl").read_text()
