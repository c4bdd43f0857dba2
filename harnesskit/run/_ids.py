"""Private: tool-call ids made unique within a run, derived so identical runs match (R-E2).

A replacement id depends only on the run id, branch, step and the call's position, never on a
random source: two runs with the same inputs, clock and run id write the same ids.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import TYPE_CHECKING

from harnesskit.messages import Message

if TYPE_CHECKING:
    from harnesskit.run.state import RunState

__all__ = ["unique_call_ids"]


def unique_call_ids(message: Message, state: RunState) -> Message:
    """Replace missing or already-used tool_call ids so results match calls by id.

    Args:
        message: the assistant message as the model returned it.
        state: the run's state; every id kept or made is added to `state.call_ids`.

    Returns:
        `message` itself when every id was fresh, else a copy whose replaced calls carry
        `call_<step>_<position>_<6 hex of sha256(run_id:branch_id)>` (plus `_<n>` in the rare
        case that id is taken too) and the model's id in `original_id`.
    """
    taken, calls, changed = state.call_ids, [], False
    for i, c in enumerate(message.tool_calls):
        if not c.id or c.id in taken:
            stem = hashlib.sha256(f"{state.run_id}:{state.branch_id}".encode()).hexdigest()[:6]
            new_id, n = f"call_{state.step}_{i}_{stem}", 0
            while new_id in taken:
                n += 1
                new_id = f"call_{state.step}_{i}_{stem}_{n}"
            c, changed = dataclasses.replace(c, id=new_id, original_id=c.id), True
        taken.add(c.id)
        calls.append(c)
    if not changed:
        return message
    return Message(
        role="assistant", content=message.content, tool_calls=tuple(calls), name=message.name
    )
