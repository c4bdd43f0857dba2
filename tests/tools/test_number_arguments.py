"""A number reaches the tool as the type its parameter is hinted with (FINDINGS 13).

JSON has one number type and JSON Schema's `integer` accepts `2.0` and `1e2`, so without a
conversion a parameter hinted `int` received a float (`ROWS[2.0]` failed with TypeError).
"""

import dataclasses
import json
from typing import Literal, TypedDict

import pytest

import harnesskit as hk
from harnesskit.testing import reply


class Window(TypedDict):
    start: int
    label: str


@dataclasses.dataclass
class Page:
    n: int
    ratio: float = 1.0


ROWS = ["a", "b", "c"]
GOT: list = []


@hk.tool
def page(n: int) -> str:
    """Return one row.

    Args:
        n: row index.

    Returns:
        The row.
    """
    GOT.append(n)
    return ROWS[n]


@pytest.mark.parametrize("raw", ['{"n": 2.0}', '{"n": 2e0}', '{"n": 0.2e1}'])
def test_an_integral_number_for_an_int_parameter_arrives_as_int(raw):
    GOT.clear()
    run = hk.Harness([page], hk.ScriptedModel([reply.raw_call("page", raw), reply.text("k")]))
    (result,) = run.run("go").log.of_type(hk.log.ToolResultEvent)
    assert result.ok, result.content
    assert GOT == [2] and type(GOT[0]) is int
    assert result.content == "c"


def test_a_non_integral_number_for_an_int_parameter_is_still_refused():
    GOT.clear()
    run = hk.Harness(
        [page], hk.ScriptedModel([reply.raw_call("page", '{"n": 2.5}'), reply.text("k")])
    )
    (result,) = run.run("go").log.of_type(hk.log.ToolResultEvent)
    assert not result.ok and result.error_type == "invalid_argument"
    assert GOT == []


def test_numbers_take_their_hinted_type_in_containers_and_nested_objects():
    got = []

    @hk.tool
    def f(
        n: int,
        ratio: float,
        ids: list[int],
        pair: tuple[int, float],
        maybe: int | None,
        either: int | str,
        counts: dict[str, int],
        window: Window,
        pages: list[Page],
        pick: Literal[1, 2],
        big: int,
    ) -> str:
        """F.

        Args:
            n: n.
            ratio: ratio.
            ids: ids.
            pair: pair.
            maybe: maybe.
            either: either.
            counts: counts.
            window: window.
            pages: pages.
            pick: pick.
            big: big.

        Returns:
            ok.
        """
        values = dict(locals())
        del values["got"]
        got.append(values)
        return "ok"

    raw = json.dumps(
        {
            "n": 1e2,
            "ratio": 5,
            "ids": [1.0, 2],
            "pair": [3.0, 4],
            "maybe": 7.0,
            "either": 8.0,
            "counts": {"a": 9.0},
            "window": {"start": 10.0, "label": "w"},
            "pages": [{"n": 11.0, "ratio": 2}],
            "pick": 2.0,
            "big": 1e20,
        }
    )
    run = hk.Harness([f], hk.ScriptedModel([reply.raw_call("f", raw), reply.text("k")])).run("go")
    (result,) = run.log.of_type(hk.log.ToolResultEvent)
    assert result.ok, result.content
    (args,) = got
    expected = {
        "n": 100,
        "ratio": 5,
        "ids": [1, 2],
        "pair": (3, 4),
        "maybe": 7,
        "either": 8,
        "counts": {"a": 9},
        "window": {"start": 10, "label": "w"},
        "pages": [{"n": 11, "ratio": 2}],
        "pick": 2,
        "big": 10**20,
    }
    assert args == expected

    def types_of(value):
        if isinstance(value, dict):
            return {k: types_of(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [types_of(v) for v in value]
        return type(value).__name__

    assert types_of(args) == types_of(expected)
    (call,) = run.log.of_type(hk.log.ToolCallEvent)  # the log keeps what the model sent
    assert call.arguments["n"] == 100.0 and type(call.arguments["n"]) is float
