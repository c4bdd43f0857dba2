"""A write repeated after a later write acted on what it made is a new write, not a duplicate (R-E5).

Keys leave the step out, so the same booking re-issued ten steps later is served from the ledger.
But a booking that was cancelled in between no longer stands: a recorded GPT-4o airline run
(tau-bench task 0, trial 3) books, cancels that reservation and books the same flights again,
and the ledger used to hand the model the cancelled reservation as its new booking.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.domains import airline
from harnesskit.testing import reply
from harnesskit.tools import IdempotencyLedger, ledger_path


def _airline(made: list[str], *, cancel_fails: bool = False):
    """`book(user_id, flight)` makes a new id each time; `cancel(booking_id)`; `note(user_id)`.

    `cancel_fails`: every cancel raises `ToolError` (no effect).
    """

    @hk.tool(risk="write")
    def book(user_id: str, flight: str) -> dict:
        """Book a flight for a user.

        Use when the user confirmed the flight. Do not use to change a booking.

        Args:
            user_id: the user.
            flight: the flight number.

        Returns:
            The booking.
        """
        made.append(f"B{len(made) + 1}")
        return {"booking_id": made[-1], "user_id": user_id, "flight": flight, "status": "ok"}

    @hk.tool(risk="write")
    def cancel(booking_id: str) -> dict:
        """Cancel a booking.

        Use when the user asks to cancel. Do not use for other changes.

        Args:
            booking_id: the booking to cancel.

        Returns:
            The cancelled booking.

        Raises:
            ToolError: the booking cannot be cancelled.
        """
        if cancel_fails:
            raise hk.ToolError(f"{booking_id} cannot be cancelled")
        return {"booking_id": booking_id, "status": "cancelled"}

    @hk.tool(risk="write")
    def note(user_id: str, text: str) -> dict:
        """Add a note to a user's profile.

        Use when the user asks to remember something. Do not use for bookings.

        Args:
            user_id: the user.
            text: the note.

        Returns:
            The note's id.
        """
        return {"note_id": "N1", "user_id": user_id}

    return [book, cancel, note]


def _results(run: hk.Run) -> list[dict]:
    return [e.payload for e in run.log.events if e.type == "tool.result"]


def test_booking_again_after_cancelling_it_books_anew(tmp_path):
    made: list[str] = []
    model = hk.ScriptedModel(
        [
            reply.tool_call("book", user_id="u1", flight="HAT1"),
            reply.tool_call("cancel", booking_id="B1"),
            reply.tool_call("book", user_id="u1", flight="HAT1"),
            reply.tool_call("book", user_id="u1", flight="HAT1"),  # nothing acted on B2 since
            "done",
        ]
    )
    run = hk.Harness(_airline(made), model, log_dir=tmp_path).run("book, cancel, book again")
    assert made == ["B1", "B2"]
    results = _results(run)
    assert json.loads(results[2]["content"])["booking_id"] == "B2"
    assert not results[2].get("duplicate")
    assert results[3]["duplicate"] is True  # a repeat of the latest booking, not of B1
    assert json.loads(results[3]["content"])["booking_id"] == "B2"
    assert results[3]["duplicate_of"] == results[2]["tool_call_id"]

    # the ledger on disk reads back and knows the latest booking
    ledger = IdempotencyLedger.open(ledger_path(run.log.path))
    (record,) = [r for r in ledger.records.values() if r.tool == "book"]
    assert record.state == "done"
    assert json.loads(record.result["content"])["booking_id"] == "B2"


def test_a_write_that_names_nothing_the_booking_made_leaves_it_a_duplicate(tmp_path):
    made: list[str] = []
    model = hk.ScriptedModel(
        [
            reply.tool_call("book", user_id="u1", flight="HAT1"),
            # names the user, which the booking was given, not something it made
            reply.tool_call("note", user_id="u1", text="window seat"),
            reply.tool_call("cancel", booking_id="B9"),  # another booking
            reply.tool_call("book", user_id="u1", flight="HAT1"),
            "done",
        ]
    )
    run = hk.Harness(_airline(made), model, log_dir=tmp_path).run("book twice")
    assert made == ["B1"]
    assert _results(run)[3]["duplicate"] is True


def test_a_failed_cancel_leaves_the_booking_standing(tmp_path):
    made: list[str] = []
    model = hk.ScriptedModel(
        [
            reply.tool_call("book", user_id="u1", flight="HAT1"),
            reply.tool_call("cancel", booking_id="B1"),
            reply.tool_call("book", user_id="u1", flight="HAT1"),
            "done",
        ]
    )
    run = hk.Harness(_airline(made, cancel_fails=True), model, log_dir=tmp_path).run("book")
    assert made == ["B1"]  # the cancel had no effect: the booking still stands
    assert _results(run)[2]["duplicate"] is True


def test_a_reopened_ledger_keeps_the_order_of_writes(tmp_path):
    made: list[str] = []
    model = hk.ScriptedModel(
        [
            reply.tool_call("book", user_id="u1", flight="HAT1"),
            reply.tool_call("cancel", booking_id="B1"),
            "paused here",
        ]
    )
    harness = hk.Harness(_airline(made), model, log_dir=tmp_path)
    run = harness.run("book and cancel")
    path = ledger_path(run.log.path)
    ledger = IdempotencyLedger.open(path)
    book = next(r for r in ledger.records.values() if r.tool == "book")
    assert ledger._superseded(book)  # read back from disk: the cancel came after the booking
    assert not ledger._superseded(next(r for r in ledger.records.values() if r.tool == "cancel"))


RECORDED = (
    Path(__file__).parents[2]
    / "../shared/datasets/sierra-research__tau-bench/historical_trajectories/gpt-4o-airline.json"
)


@pytest.mark.skipif(not RECORDED.is_file(), reason=f"recorded runs not at {RECORDED}")
def test_the_recorded_run_that_rebooks_after_cancelling_replays_exactly():
    run = next(
        r for r in airline.load_recorded_runs(RECORDED, limit=200) if (r.task_id, r.trial) == (0, 3)
    )
    result = airline.replay_run(run, address_key="province")
    assert result.divergences == ()  # the third booking is HATHAV, as recorded
    ids = [
        json.loads(e.payload["content"]).get("reservation_id")
        for e in result.log.of_type("tool.result")
        if e.payload["tool"] == "book_reservation" and e.payload["content"].startswith("{")
    ]
    assert ids == ["HATHAT", "HATHAU", "HATHAV"]
    assert result.result.reward == run.reward


def _book_cancel_book(tmp_path, made: list[str], *, cut_after: str) -> Path:
    """Book, cancel, book again, then cut the log (killed) and lose the ledger.

    `cut_after`: `"result"` keeps the second booking's result, `"call"` ends the log at its
    call (killed while it acted).
    """
    turns = [
        reply.tool_call("book", user_id="u1", flight="HAT1"),
        reply.tool_call("cancel", booking_id="B1"),
        reply.tool_call("book", user_id="u1", flight="HAT1"),
        "done",
    ]
    hk.Harness(_airline(made), hk.ScriptedModel(turns), log_dir=tmp_path).start(
        "book", run_id="r"
    ).run()
    assert made == ["B1", "B2"]
    path = tmp_path / "r.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    kind = "tool.result" if cut_after == "result" else "tool.call"
    last = [i for i, x in enumerate(lines) if json.loads(x)["type"] == kind][2]
    path.write_bytes(b"".join(lines[: last + 1]))
    ledger_path(path).unlink()
    return path


def test_a_lost_ledger_is_rebuilt_with_the_latest_booking(tmp_path):
    made: list[str] = []
    path = _book_cancel_book(tmp_path, made, cut_after="result")
    again = [reply.tool_call("book", user_id="u1", flight="HAT1"), "done"]  # the model forgot
    harness = hk.Harness(_airline(made), hk.ScriptedModel(again), log_dir=tmp_path)
    run = harness.resume(path).run()
    run.log.close()
    assert made == ["B1", "B2"]  # no third booking: a repeat of B2, which nothing acted on
    last = [e for e in run.log.events if e.type == "tool.result"][-1]
    assert last.payload.get("duplicate") is True
    assert json.loads(last.content)["booking_id"] == "B2"


def test_a_lost_ledger_leaves_a_rebooking_killed_mid_way_unknown(tmp_path):
    made: list[str] = []
    path = _book_cancel_book(tmp_path, made, cut_after="call")
    harness = hk.Harness(_airline(made), hk.ScriptedModel(["done"]), log_dir=tmp_path)
    with pytest.raises(hk.ResumeError) as info:  # it ran again (B1 was cancelled): unknown
        harness.resume(path)
    assert info.value.failed == ("tool_calls",)
    ledger = IdempotencyLedger.open(ledger_path(path))
    book = next(r for r in ledger.records.values() if r.tool == "book")
    assert book.state == "started" and made == ["B1", "B2"]
