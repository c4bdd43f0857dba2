"""Private: run ids that are safe file names; tool-call ids made unique within a run (R-E2).

A run id names its log, `<log_dir>/<run_id>.jsonl` (and the files beside it), so it is checked
as a file name (`check_run_id`). A replacement call id depends only on the run id, branch, step
and the call's position, never on a random source: two runs with the same inputs, clock and
run id write the same ids.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from typing import TYPE_CHECKING

from harnesskit import _json
from harnesskit.errors import UsageError
from harnesskit.messages import Message, ToolCall

if TYPE_CHECKING:
    from harnesskit.run.state import RunState

__all__ = ["RUN_ID_RULE", "check_run_id", "safe_run_id", "unique_call_ids"]

#: The rule for run ids, as error messages state it. 200 leaves room for the longest name
#: derived from a log's (`.<run_id>.jsonl.ctx-<16 hex>.<8>`, a context snapshot being written)
#: under the usual 255-byte limit, and holds the experiments' ids (up to 180).
RUN_ID_RULE = "1-200 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit"
_MAX_RUN_ID = 200
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_SAFE = _ALNUM | frozenset("._-")


def check_run_id(run_id: object) -> str:
    """`run_id` when it is a safe file name for the run's log, else refuse it.

    Args:
        run_id: the id asked for.

    Returns:
        `run_id`, unchanged.

    Raises:
        UsageError: not a `str`, or not 1-200 characters from `A-Z a-z 0-9 . _ -` starting
            with a letter or digit (so `../x`, `a/b`, `.hidden`, a NUL byte, spaces and names
            too long for the file system are refused before anything is written).
    """
    if (
        isinstance(run_id, str)
        and 0 < len(run_id) <= _MAX_RUN_ID
        and run_id[0] in _ALNUM
        and _SAFE.issuperset(run_id)
    ):
        return run_id
    shown = repr(run_id) if len(repr(run_id)) <= 80 else repr(run_id)[:77] + "..."
    raise UsageError(
        f"run_id must be {RUN_ID_RULE} (it names the log file <log_dir>/<run_id>.jsonl), got "
        f"{type(run_id).__name__} {shown}; e.g. run_id='cancel-4WQ150-1', or leave it out for "
        "a fresh run-<12 hex>"
    )


def safe_run_id(text: str) -> str:
    """A run id made from free text (labels, an old log's id): unsafe runs of characters -> `_`.

    Args:
        text: the text, e.g. `f"probe-{policy}-{kind}"`.

    Returns:
        A string `check_run_id` accepts (`text` itself when it already is one).
    """
    out = "".join(c if c in _SAFE else "_" for c in text)[:_MAX_RUN_ID]
    if not out or out[0] not in _ALNUM:
        out = ("r" + out)[:_MAX_RUN_ID]
    return out


#: The longest provider tool-call id echoed back as is (R-M2). Providers' own ids are 9-46
#: characters (`call_...`, `toolu_...`, `chatcmpl-tool-<32 hex>`); a longer one (a runaway
#: generation, a hostile server) would be repeated in every later request of the run.
MAX_CALL_ID = 64


def _safe_call_id(call_id: str) -> bool:
    """True when `call_id` can be echoed to any provider: 1-64 printable ASCII, no spaces."""
    return (
        0 < len(call_id) <= MAX_CALL_ID
        and call_id.isascii()
        and call_id.isprintable()
        and not any(c.isspace() for c in call_id)
    )


def unique_call_ids(message: Message, state: RunState) -> Message:
    """Replace missing, already-used or unsafe tool_call ids so results match calls by id.

    Unsafe: longer than `MAX_CALL_ID` characters, or holding whitespace, control or non-ASCII
    characters; the runtime's own id is sent from then on and the provider's stays in the log
    (`id_replacements` of the `model.response`).

    Args:
        message: the assistant message as the model returned it.
        state: the run's state; every id kept or made is added to `state.call_ids`.

    Returns:
        `message` itself when every id was fresh, else a copy whose replaced calls carry
        `call_<step>_<position>_<6 hex of sha256(run_id:branch_id)>` (plus `_<n>` in the rare
        case that id is taken too) and the model's id in `original_id`. A call whose
        arguments hold a NaN or infinite float (any model's, not only an HTTP one's) is made
        an `invalid_argument` call telling the model to send a finite number: `inf` never
        reaches a tool.
    """
    taken, calls, changed = state.call_ids, [], False
    for i, c in enumerate(message.tool_calls):
        if c.arguments and not _flat_finite(c.arguments):
            refused = _finite_call(c)
            c, changed = refused, changed or refused is not c
        if not c.id or c.id in taken or not _safe_call_id(c.id):
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


def _flat_finite(arguments: dict[str, object]) -> bool:
    """True when `arguments` hold only finite scalars (the common case: no walk needed)."""
    for v in arguments.values():
        kind = type(v)
        if kind is float:
            if not math.isfinite(v):  # type: ignore[arg-type]
                return False
        elif kind is dict or kind is list or kind is tuple:
            return False
    return True


def _finite_call(call: ToolCall) -> ToolCall:
    """`call`, or a copy answered `invalid_argument` when its arguments hold NaN or inf."""
    read = _json.finite_arguments(call.arguments or {})
    if read.arguments is not None:
        return call
    return dataclasses.replace(
        call,
        arguments=None,
        raw_arguments=call.raw_arguments or json.dumps(call.arguments, default=repr),
        parse_error=read.error,
        parse_error_type=read.error_type,
        parse_hint=read.hint,
    )
