"""One rule for the end of a log, shared by the reader and the writer (R-V1, R-V6).

What a killed writer leaves as its last line — the start of an event line (`{` first), or only
NUL bytes (a power loss: the file grew, its data never reached the disk) — is skipped by
`EventLog.read` and ended with a newline by resume, which then appends; the log stays
readable. Any other last line is damage: `read` and `resume` refuse it with a CorruptLogError
naming the line, and resume writes nothing to the file.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.errors import CorruptLogError
from harnesskit.testing import reply

PAID: list[str] = []


@hk.tool(risk="write")
def pay(ref: str, amount: int) -> dict:
    """Pay a bill.

    Use when the user asks to pay. Do not use otherwise.

    Args:
        ref: payment reference.
        amount: amount in cents.

    Returns:
        The receipt.
    """
    PAID.append(ref)
    return {"paid": ref, "amount": amount}


def harness(folder):
    model = hk.ScriptedModel(
        [
            reply.tool_call("pay", ref="R1", amount=5),
            reply.tool_call("pay", ref="R2", amount=7),
            reply.text("done"),
        ]
    )
    return hk.Harness([pay], model, log_dir=folder)


def stepped_once(folder):
    """A run stepped once and closed, as a killed process leaves it: the log's path."""
    run = harness(folder).start("pay R1 and R2", run_id="r")
    run.step()
    run.log.close()
    return folder / "r.jsonl"


TORN = {
    "nul bytes": b"\x00" * 37,
    "nul bytes then a newline": b"\x00" * 12 + b"\n",
    "the start of an event": b'{"v":3,"event_id":8,"type":"tool.ca',
    "the start of an event, then nul bytes": b'{"v":3,"event_id":8,' + b"\x00" * 20,
    "an event start cut inside a character": '{"v":3,"summary":"é'.encode()[:-1],
}

DAMAGED = {
    "text": b"garbage",
    "text and a newline": b"garbage\n",
    "nul bytes before an event start": b'\x00\x00{"v":3,',
    "a number": b"12",
    "nul bytes and text": b"\x00\x00abc",
}


@pytest.mark.parametrize("tail", TORN.values(), ids=TORN.keys())
def test_a_torn_last_line_is_skipped_on_read_and_resumed_past(tmp_path, tail):
    path = stepped_once(tmp_path)
    events = len(hk.EventLog.read(path))
    with open(path, "ab") as fh:
        fh.write(tail)
    back = hk.EventLog.read(path)
    assert len(back) == events and back.incomplete_tail is not None
    PAID.clear()
    run = harness(tmp_path).resume(path).run()
    assert run.finish_reason == "stop" and PAID == ["R2"]
    after = hk.EventLog.read(path)  # still readable: the torn line is skipped in the middle
    assert after.torn_lines and after.incomplete_tail is None
    assert [e.event_id for e in after] == list(range(1, len(after) + 1))
    assert after.events[-1].type == "run.finished"
    run2 = harness(tmp_path).resume(path)  # and resumed again
    assert run2.finish_reason == "stop"
    run2.log.close()


@pytest.mark.parametrize("tail", DAMAGED.values(), ids=DAMAGED.keys())
def test_any_other_last_line_is_refused_and_nothing_is_appended(tmp_path, tail):
    path = stepped_once(tmp_path)
    with open(path, "ab") as fh:
        fh.write(tail)
    before = path.read_bytes()
    lines = before.split(b"\n")
    line = len(lines) if lines[-1] else len(lines) - 1
    with pytest.raises(CorruptLogError, match=rf"r\.jsonl:{line}: .*nothing was written") as err:
        hk.EventLog.read(path)
    assert "neither an event nor" in str(err.value)
    PAID.clear()
    with pytest.raises(CorruptLogError, match=rf"r\.jsonl:{line}: .*move it out") as err:
        harness(tmp_path).resume(path)
    assert path.read_bytes() == before and PAID == []
    with pytest.raises(CorruptLogError, match=rf"r\.jsonl:{line}:"):
        harness(tmp_path).restart(path, reason="damaged")
    assert path.read_bytes() == before


def test_a_log_of_only_nul_bytes_is_a_run_that_never_started(tmp_path):
    """A power loss during the first line: the run starts again under its id."""
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"\x00" * 300)
    h = harness(tmp_path)
    with pytest.raises(hk.errors.UsageError, match="start it again under its id"):
        h.resume(path)
    PAID.clear()
    assert h.start("pay R1 and R2", run_id="r").run().finish_reason == "stop"
    back = hk.EventLog.read(path)
    assert back.torn_lines == [1] and back.events[0].type == "task.contract"
