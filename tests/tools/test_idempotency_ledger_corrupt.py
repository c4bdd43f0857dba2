"""A damaged write ledger (`<run>.jsonl.idem`) is a named error, never silently forgotten (R-E5).

Only a last line cut off by a killed writer is skipped (and cut off the file, so that later
lines never follow it); any other line that is not a write record stops the resume: skipping it
could forget a write that started, and the write would act twice.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.errors import CorruptLogError, SchemaVersionError
from harnesskit.testing import reply
from harnesskit.tools import EffectCheck, IdempotencyLedger, ledger_path


def _paying_run(tmp_path):
    """A run that noted, then paid and died before the payment's outcome was recorded."""
    paid: list[str] = []

    @hk.tool(risk="write")
    def note(text: str) -> str:
        """Write a note.

        Args:
            text: the note.
        """
        return "noted"

    @hk.tool(risk="write", idempotency_fields=("ref",))
    def pay(ref: str, amount: int) -> dict:
        """Charge a card.

        Args:
            ref: payment reference.
            amount: amount in cents.
        """
        paid.append(ref)
        if len(paid) == 1:  # the process "dies" after the charge, before its result is logged
            raise hk.StopRun("crashed")
        return {"paid": ref}

    model = hk.ScriptedModel(
        [
            reply.tool_call("note", text="hi"),
            reply.tool_call("pay", ref="R1", amount=10),
            "done",
        ]
    )
    harness = hk.Harness([note, pay], model, log_dir=tmp_path)
    run = harness.start("pay", run_id="r").run()
    assert run.finish_reason == "crashed" and paid == ["R1"]
    path = tmp_path / "r.jsonl"
    return harness, path, ledger_path(path), paid


def _states(idem):
    return [json.loads(x)["state"] for x in idem.read_text(encoding="utf-8").splitlines()]


def test_the_run_leaves_a_started_payment_in_the_ledger(tmp_path):
    _, _, idem, _ = _paying_run(tmp_path)
    assert _states(idem) == ["started", "done", "started"]


@pytest.mark.parametrize(
    ("bad", "where", "says"),
    [
        (b"[1,2]", 1, "a JSON list"),
        (b"5", 1, "a JSON int"),
        (b'{"foo": 1}', 1, "unknown field(s) 'foo'"),
        (b"\xff\xfe", 1, "not UTF-8"),
        (b"garbage", 1, "not valid JSON"),
    ],
)
def test_a_bad_line_before_the_records_stops_the_resume(tmp_path, bad, where, says):
    harness, path, idem, paid = _paying_run(tmp_path)
    idem.write_bytes(bad + b"\n" + idem.read_bytes())
    with pytest.raises(CorruptLogError) as info:
        harness.resume(path)
    text = str(info.value)
    assert f"{idem}:{where}: " in text and says in text and "act twice" in text
    assert paid == ["R1"]


def test_a_damaged_started_line_is_not_read_as_never_started(tmp_path):
    # the old reader skipped any non-JSON line: the payment's `started` line damaged on disk
    # made resume say "never started; runs now", and it charged again
    harness, path, idem, paid = _paying_run(tmp_path)
    lines = idem.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b',"state":', b',"state"', 1)  # damaged; it keeps its end
    idem.write_bytes(b"\n".join(lines))
    with pytest.raises(CorruptLogError, match=r"r\.jsonl\.idem:3: not valid JSON"):
        harness.resume(path).run()
    assert paid == ["R1"]


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda d: d.update(state="exploded"), "state 'exploded'"),
        (lambda d: d.update(arguments=None), "field 'arguments' is NoneType"),
        (lambda d: d.pop("key"), "no 'key'"),
        (lambda d: d.update(step="1"), "field 'step' is str"),
    ],
)
def test_a_record_with_wrong_fields_is_corruption(tmp_path, edit, says):
    _, _, idem, _ = _paying_run(tmp_path)
    lines = idem.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    edit(first)
    idem.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(CorruptLogError, match=r"\.idem:1: .*" + says.replace("(", r"\(")):
        IdempotencyLedger.open(idem)


def test_a_newer_ledger_version_is_a_schema_error(tmp_path):
    _, _, idem, _ = _paying_run(tmp_path)
    lines = idem.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"v":1', '"v":9')
    idem.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(SchemaVersionError, match=r"\.idem:2: ledger version 9"):
        IdempotencyLedger.open(idem)


def test_a_torn_last_line_is_skipped_and_cut_off_so_a_second_resume_reads_too(tmp_path):
    _, _, idem, _ = _paying_run(tmp_path)
    whole = idem.read_bytes()
    cut = whole[: len(whole) - 30]  # the last record was being written when the run died
    idem.write_bytes(cut)
    ledger = IdempotencyLedger.open(idem)
    assert [r.tool for r in ledger.records.values()] == ["note"]
    assert idem.read_bytes() == whole[: whole.rindex(b"\n", 0, len(cut)) + 1]  # cut off
    record = ledger.records[next(iter(ledger.records))]
    ledger.settle(record.key, EffectCheck(applied=True, value="noted"), by="human:test")
    # a later open (a second resume) reads every line: the torn one is not in the middle
    again = IdempotencyLedger.open(idem)
    assert again.records[record.key].note.startswith("settled by human:test")
    assert _states(idem) == ["started", "done", "done"]


def test_a_torn_last_line_cut_inside_a_utf8_character_is_skipped(tmp_path):
    idem = tmp_path / "x.jsonl.idem"
    good = {"key": "k1", "state": "started", "tool": "pay", "arguments": {"who": "Zoë"}}
    line = json.dumps(good, ensure_ascii=False).encode()
    idem.write_bytes(line + b"\n" + line[: line.index("ë".encode()) + 1])
    ledger = IdempotencyLedger.open(idem)
    assert list(ledger.records) == ["k1"]
    assert idem.read_bytes() == line + b"\n"


def test_a_whole_last_line_without_its_newline_is_kept_and_ended(tmp_path):
    idem = tmp_path / "x.jsonl.idem"
    line = json.dumps({"key": "k1", "state": "started", "tool": "pay"}).encode()
    idem.write_bytes(line)
    assert list(IdempotencyLedger.open(idem).records) == ["k1"]
    assert idem.read_bytes() == line + b"\n"


@pytest.mark.parametrize("check", [True, False, None, {"applied": True}])
def test_settle_without_an_effect_check_says_what_to_pass(tmp_path, check):
    _, _, idem, _ = _paying_run(tmp_path)
    ledger = IdempotencyLedger.open(idem)
    (started,) = ledger.unsettled()
    before = idem.read_bytes()
    with pytest.raises(hk.UsageError, match=r"takes an EffectCheck.*EffectCheck\(applied=True"):
        ledger.settle(started.key, check)
    assert idem.read_bytes() == before and ledger.unsettled() == [started]
    done = ledger.settle(started.key, EffectCheck(applied=True, value={"paid": "R1"}), by="me")
    assert done.state == "done" and done.result["content"] == '{"paid": "R1"}'


def _done_run(tmp_path):
    """A run whose payment finished and was recorded `done`; the log is cut back to its call."""
    paid: list[str] = []

    @hk.tool(risk="write")
    def charge(ref: str) -> dict:
        """Charge a card.

        Args:
            ref: payment reference.
        """
        paid.append(ref)
        return {"charged": ref}

    model = hk.ScriptedModel([reply.tool_call("charge", ref="R1"), "done", "done"])
    harness = hk.Harness([charge], model, log_dir=tmp_path)
    harness.start("pay", run_id="d").run()
    path = tmp_path / "d.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    upto = next(i for i, x in enumerate(lines) if json.loads(x)["type"] == "tool.call")
    path.write_text("".join(lines[: upto + 1]), encoding="utf-8")  # died before the result
    assert paid == ["R1"] and _states(ledger_path(path)) == ["started", "done"]
    return harness, path, ledger_path(path), paid


@pytest.mark.parametrize(
    "damage",
    [
        lambda r: r.pop("result"),
        lambda r: r.update(result=None),
        lambda r: r.update(result={}),
        lambda r: r.update(result={"ok": True, "content": 5}),
        lambda r: r.update(result={"ok": "yes", "content": "x"}),
    ],
)
def test_a_done_write_without_a_usable_result_stops_the_resume_and_never_acts_again(
    tmp_path, damage
):
    harness, path, idem, paid = _done_run(tmp_path)
    started, done = (json.loads(x) for x in idem.read_text(encoding="utf-8").splitlines())
    damage(done)
    idem.write_text(json.dumps(started) + "\n" + json.dumps(done) + "\n", encoding="utf-8")
    with pytest.raises(CorruptLogError, match=r"\.idem:2: a done write without its result"):
        harness.resume(path).run()
    assert paid == ["R1"]  # the charge did not run a second time


def test_a_write_done_twice_with_different_results_stops_the_resume(tmp_path):
    harness, path, idem, paid = _done_run(tmp_path)
    started, done = (json.loads(x) for x in idem.read_text(encoding="utf-8").splitlines())
    other = {**done, "result": {**done["result"], "content": "different"}}
    idem.write_text("".join(json.dumps(r) + "\n" for r in (started, done, other)), "utf-8")
    with pytest.raises(CorruptLogError, match="done a second time with a different result"):
        harness.resume(path).run()
    assert paid == ["R1"]
