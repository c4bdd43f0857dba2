"""API misuse is a UsageError naming the argument, when it is made or when a run starts.

`run.fork(1, "b", harness=5)` raised a raw `AttributeError`; `TransportPolicy(max_inline_chars=
"x")` a raw `TypeError`; `Harness(timer=lambda: "x")` a raw `TypeError` mid-run; and
`path_params` naming an `int` parameter was accepted, then every call was denied.
"""

from __future__ import annotations

import math

import pytest

import harnesskit as hk
from harnesskit.errors import UsageError
from harnesskit.testing import reply


def _look(order_id: str) -> dict:
    """Look up an order.

    Args:
        order_id: the order's id.
    """
    return {"order_id": order_id}


def _harness(tmp_path=None, **kw):
    turns = [reply.tool_call("_look", order_id="A"), "done", "again"]
    return hk.Harness([hk.tool(_look)], hk.ScriptedModel(turns), log_dir=tmp_path, **kw)


@pytest.mark.parametrize("harness", [5, "h", object()])
def test_fork_with_something_that_is_not_a_harness_is_refused(harness):
    run = _harness().start("hi").run()
    before = len(run.log.events)
    with pytest.raises(UsageError, match=r"fork\(\.\.\., harness=\.\.\.\) takes a Harness"):
        run.fork(1, "b", harness=harness)
    assert len(run.log.events) == before  # nothing forked
    assert run.fork(1, "b", harness=_harness()).state.branch_id == "b"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_inline_chars", "x"),
        ("max_inline_chars", 1.5),
        ("max_inline_chars", True),
        ("max_inline_items", None),
        ("max_summary_chars", "10"),
        ("max_answer_chars", 4000.0),
        ("restate_chars", "200"),
        ("restate_chars", 0),
        ("min_source_chars", -1),
        ("min_source_chars", [1]),
        ("max_summary_share", "1"),
        ("max_summary_share", math.nan),
        ("max_summary_share", -0.5),
        ("max_summary_share", True),
    ],
)
def test_a_transport_policy_number_of_the_wrong_type_is_refused_naming_it(field, value):
    with pytest.raises(UsageError, match=rf"TransportPolicy\.{field} must be"):
        hk.TransportPolicy(**{field: value})


def test_transport_policy_numbers_of_the_right_type_are_kept():
    p = hk.TransportPolicy(
        max_inline_chars=500, restate_chars=None, max_summary_share=0, min_source_chars=0
    )
    assert (p.max_inline_chars, p.restate_chars, p.max_summary_share) == (500, None, 0)


@pytest.mark.parametrize("value", ["x", None, True, math.nan, math.inf])
def test_a_timer_that_does_not_return_seconds_is_refused_when_a_run_starts(tmp_path, value):
    h = _harness(tmp_path, timer=lambda: value)
    with pytest.raises(UsageError, match=r"Harness\(timer=\.\.\.\) returned"):
        h.start("hi", run_id="r")
    assert not (tmp_path / "r.jsonl").exists()  # nothing started


def test_a_timer_is_checked_on_resume_too(tmp_path):
    run = _harness(tmp_path).start("hi", run_id="r").run()
    run.log.close()
    with pytest.raises(UsageError, match=r"timer=\.\.\.\) returned 'x'"):
        _harness(tmp_path, timer=lambda: "x").resume(run.log.path)


def test_path_params_naming_a_parameter_that_cannot_hold_a_path_is_refused():
    def copy(src: str, count: int, flags: list[int], where: list[str] | None = None) -> str:
        """Copy a file.

        Args:
            src: source path.
            count: how many.
            flags: numeric flags.
            where: destination paths.
        """
        return src

    for name in ("count", "flags"):
        with pytest.raises(UsageError, match=rf"path_params names '{name}', which is not a pa"):
            hk.tool(path_params=(name,))(copy)
    t = hk.tool(path_params=("src", "where"))(copy)
    assert t.path_params == ("src", "where")
