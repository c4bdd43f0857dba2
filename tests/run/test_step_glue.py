"""The step's glue fast paths give what the general code gives.

The brake pre-check without building every reading, the model response kept instead of
copied, the gate's shared `allow` decision and the tool result encoded with one reused C
encoder are each compared with the code they stand in for, on ordinary and hostile inputs.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import itertools
import math
import pathlib
import threading
import uuid

import pytest

import harnesskit as hk
from harnesskit.errors import BrakeTripped
from harnesskit.messages import Message, ModelResponse, ToolCall, Usage
from harnesskit.run import _call
from harnesskit.run.limits import Limits
from harnesskit.run.state import RunState
from harnesskit.tools import executor as executor_module
from harnesskit.tools.gate import Gate, GateDecision


def _general(limits: Limits, state: RunState, seconds: float) -> BrakeTripped | None:
    """What `check_before_request` raised before its fast path: every reading, in order."""
    for brake, (value, limit, unit) in limits.measure(state, seconds=seconds).items():
        if limit is not None and value >= limit:
            return BrakeTripped(brake, value=value, limit=limit, unit=unit)
    return None


def _raised(limits: Limits, state: RunState, seconds: float) -> BrakeTripped | None:
    try:
        limits.check_before_request(state, seconds=seconds)
    except BrakeTripped as exc:
        return exc
    return None


def _same(a: BrakeTripped | None, b: BrakeTripped | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.brake, a.value, a.limit, a.unit, str(a)) == (
        b.brake,
        b.value,
        b.limit,
        b.unit,
        str(b),
    )


def test_the_brake_pre_check_trips_exactly_as_every_reading_does():
    limit_values = [None, 0, 1, 3]
    seconds_values = [None, 0.0, 0.5, 2.0]
    readings = [0, 1, 2, 3, 4]
    checked = 0
    at_least_one = [v for v in limit_values if v != 0]  # max_steps/max_consecutive_errors >= 1
    for steps, tokens, prompt, errors in itertools.product(
        at_least_one, limit_values, limit_values, at_least_one
    ):
        for max_seconds in seconds_values:
            limits = Limits(
                max_steps=steps,
                max_tokens=tokens,
                max_prompt_tokens=prompt,
                max_consecutive_errors=errors,
                max_seconds=max_seconds,
            )
            for value in readings:
                state = RunState(run_id="r")
                state.step = value
                state.prompt_tokens = value // 2
                state.completion_tokens = value - value // 2
                state.consecutive_errors = 4 - value
                for seconds in (0.0, 1.0, 2.0, math.nan, math.inf):
                    assert _same(_raised(limits, state, seconds), _general(limits, state, seconds))
                    checked += 1
    assert checked > 10_000


def test_a_limits_subclass_keeps_the_general_check():
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Strict(Limits):
        def measure(self, state, *, seconds):
            out = Limits.measure(self, state, seconds=seconds)
            out["max_steps"] = (99, 1, "steps")  # a reading the fast path cannot know
            return out

    with pytest.raises(BrakeTripped, match="max_steps"):
        Strict().check_before_request(RunState(run_id="r"), seconds=0.0)


def _responses():
    call = ToolCall(id="c", name="f", arguments={"a": 1}, raw_arguments='{"a": 1}')
    message = Message(role="assistant", content="hi", tool_calls=(call,))
    full = ModelResponse(
        message=message,
        usage=Usage(prompt_tokens=3, completion_tokens=4, cached_tokens=1),
        finish_reason="tool_calls",
        model="m",
        raw={"id": "x"},
        original_content="orig",
    )
    return [full, ModelResponse(message=message)]


def test_the_response_is_kept_or_rebuilt_as_dataclasses_replace_would():
    other = Message(role="assistant", content="other")
    usage = Usage(prompt_tokens=1, completion_tokens=2, estimated=True)
    for reply in _responses():
        for message, use in ((reply.message, reply.usage), (other, usage), (reply.message, usage)):
            if use is None:
                continue
            got = _call._with(reply, message, use)
            assert got == dataclasses.replace(reply, message=message, usage=use)
            assert all(
                getattr(got, f.name)
                is getattr(dataclasses.replace(reply, message=message, usage=use), f.name)
                for f in dataclasses.fields(ModelResponse)
            )
        assert _call._with(reply, reply.message, reply.usage) is reply

    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Tagged(ModelResponse):
        tag: str = "t"

    tagged = Tagged(message=other, tag="kept")
    got = _call._with(tagged, other, usage)
    assert type(got) is Tagged and got.tag == "kept" and got.usage is usage


def test_the_shared_allow_decision_is_the_decision_it_stands_for():
    gate = Gate()
    got = gate.check(hk.tool(lambda: 1, name="f", description="F."), {})
    assert got == GateDecision(allowed=True, decision="allow", approved_by="policy")
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.allowed = False  # type: ignore[misc]


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    y: float


class NotJson:
    pass


def _cycle():
    out: list = [1]
    out.append({"again": out})
    return out


def _deep(n: int):
    value: list = []
    for _ in range(n):
        value = [value]
    return value


VALUES = [
    {"a": 1, "b": [1.5, None, True], "c": "caf\u00e9 \u2028 \x00"},
    [],
    {},
    0,
    -1.25,
    1e300,
    None,
    True,
    {1: "int key", 2.5: "float key", None: "none key", False: "bool key"},
    {
        "set": {3, 1, 2},
        "date": dt.date(2026, 1, 2),
        "when": dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
    },
    {"path": pathlib.PurePosixPath("/a/b"), "id": uuid.UUID(int=7), "d": decimal.Decimal("1.10")},
    {"color": Color.RED, "point": Point(1, 2.5), "frozen": frozenset({"x"})},
    {"nan": math.nan},
    [math.inf],
    {"bytes": b"x"},
    {(1, 2): "tuple key"},
    {"x": NotJson()},
    _cycle(),
    {"self": None},
    _deep(50),
    _deep(5000),
    "\udce9 lone",
    {"lone": "\ud800"},
]
VALUES[18]["self"] = VALUES[18]  # a dict that holds itself


def _outcome(fn, value):
    try:
        return ("ok", fn(value))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_results_encode_as_the_strict_encoder_does(value):
    fast = _outcome(executor_module._strict_text, value)
    assert fast == _outcome(executor_module._STRICT_JSON.encode, value)
    assert _outcome(executor_module._strict_text, {"ok": 1}) == ("ok", '{"ok": 1}')  # no leftovers


def test_the_reused_encoder_is_safe_across_threads():
    errors: list[object] = []
    good = {"a": [1, 2, {"b": "c"}]}
    expected = executor_module._STRICT_JSON.encode(good)

    def work(i: int) -> None:
        for _ in range(300):
            value = _cycle() if i % 2 else good
            got = _outcome(executor_module._strict_text, value)
            if i % 2 == 0 and got != ("ok", expected):
                errors.append(got)
            if i % 2 and got[0] != "ValueError":
                errors.append(got)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
