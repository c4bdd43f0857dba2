"""A realistic event stream at scale, made by the real harness.

One real run (a scripted model calling four small tools, each step logged as a normal run logs
it: context record, request, response, tool call, tool result) gives the template; the
stream repeats its step blocks, and every 100th event is a `status.supersede` or
`status.reject` pointing at an earlier tool result so status folds have work to do.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _common  # noqa: F401  (puts the checkout on sys.path)

import harnesskit as hk
from harnesskit.testing import reply


def _tools() -> list[hk.Tool]:
    @hk.tool
    def get_user(user_id: str) -> dict:
        """Look up a user.

        Args:
            user_id: the user's id.
        """
        return {"user_id": user_id, "name": "Mia Li", "reservations": ["NO6JO3", "AIXC01"]}

    @hk.tool
    def search_flights(origin: str, destination: str, date: str) -> list:
        """Search flights.

        Args:
            origin: IATA code.
            destination: IATA code.
            date: YYYY-MM-DD.
        """
        return [{"flight": f"HAT{100 + i}", "from": origin, "to": destination} for i in range(5)]

    @hk.tool
    def get_reservation(reservation_id: str) -> dict:
        """Fetch a reservation.

        Args:
            reservation_id: six characters.
        """
        return {"reservation_id": reservation_id, "status": "confirmed", "cabin": "economy"}

    @hk.tool
    def calculate(expression: str) -> str:
        """Evaluate arithmetic.

        Args:
            expression: e.g. 2 + 2.
        """
        return "4"

    return [get_user, search_flights, get_reservation, calculate]


CALLS = [
    ("get_user", {"user_id": "mia_li_3668"}),
    ("search_flights", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}),
    ("get_reservation", {"reservation_id": "NO6JO3"}),
    ("calculate", {"expression": "120 + 19.5"}),
]


def template_run(steps: int = 12) -> hk.EventLog:
    """The log of one real run with `steps` tool steps (in memory)."""
    turns = [
        reply.tool_call(*CALLS[i % len(CALLS)][:1], **CALLS[i % len(CALLS)][1])
        for i in range(steps)
    ]
    model = hk.ScriptedModel([*turns, reply.text("Done.")])
    h = hk.Harness(
        _tools(),
        model,
        system_prompt="You are an airline agent.",
        limits=hk.Limits(max_steps=steps + 2),
    )
    return h.run("Please sort out my trip.", run_id="template").log


def stream(n: int) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """`(type, payload, append_kwargs)` for `n` events, as `EventLog.append` takes them."""
    log = template_run()
    head = [e for e in log.events if e.type in ("task.contract", "user.message")]
    body = [
        e
        for e in log.events
        if e.type
        in ("context.injected", "model.request", "model.response", "tool.call", "tool.result")
    ]
    body = body[5:-3] if len(body) > 10 else body  # whole steps from the middle of the run
    emitted = 0
    results: list[int] = []
    for e in itertools.chain(head, itertools.cycle(body)):
        if emitted >= n:
            return
        emitted += 1
        if emitted % 100 == 0 and results:
            target = results[len(results) // 2]
            kind = "status.supersede" if emitted % 200 == 0 else "status.reject"
            yield (
                kind,
                {"target": target, "reason": "newer evidence"},
                {"supersedes": target, "summary": f"{kind} {target}"},
            )
            continue
        if e.type == "tool.result":
            results.append(emitted)
        yield (
            e.type,
            e.payload,
            {"source": e.source, "summary": e.summary, "input_hash": e.input_hash},
        )


def write_log(path: Path, n: int) -> hk.EventLog:
    """Append `n` events to a new log at `path` (flushed every 5 events, as a run does per step)."""
    log = hk.EventLog(path, run_id="scale")
    for i, (type_, payload, kw) in enumerate(stream(n)):
        log.append(type_, payload, **kw)
        if i % 5 == 4:
            log.flush()
    log.close()
    return log
