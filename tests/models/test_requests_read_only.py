"""`model.requests` (`Requests`) is a read-only list: edits are refused with a `UsageError`
(only `clear()` is allowed), and indexing behaves as a list's."""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.testing import reply


def _model_with_requests(n=4):
    model = hk.ScriptedModel([reply.text(f"answer {i}") for i in range(n)])
    h = hk.Harness([], model, policy="full-history")
    run = h.start("turn 0")
    run.run()
    for i in range(1, n):
        run.send(f"turn {i}").run()
    assert len(model.requests) == n
    return model, h, run


EDITS = {
    "append": lambda r, x: r.append(x),
    "extend": lambda r, x: r.extend([x]),
    "insert": lambda r, x: r.insert(0, x),
    "pop": lambda r, x: r.pop(),
    "remove": lambda r, x: r.remove(x),
    "sort": lambda r, x: r.sort(),
    "reverse": lambda r, x: r.reverse(),
    "item assignment": lambda r, x: r.__setitem__(0, x),
    "item deletion": lambda r, x: r.__delitem__(0),
    "slice assignment": lambda r, x: r.__setitem__(slice(0, 1), [x]),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_edits_are_refused_as_read_only_and_change_nothing(edit):
    model, _, _ = _model_with_requests()
    before = list(model.requests)
    with pytest.raises(hk.UsageError, match=r"read-only.*Only clear\(\)"):
        EDITS[edit](model.requests, before[0])
    assert list(model.requests) == before


def test_in_place_add_is_refused():
    model, _, _ = _model_with_requests()
    with pytest.raises(hk.UsageError, match="read-only"):
        model.requests += [model.requests[0]]


@pytest.mark.parametrize("index", [1.0, "0", None, (0,), 0.5])
def test_an_index_that_is_no_int_is_a_type_error_as_for_a_list(index):
    model, _, _ = _model_with_requests()
    as_list = list(model.requests)
    with pytest.raises(TypeError):
        as_list[index]
    with pytest.raises(TypeError, match="indices must be integers or slices"):
        model.requests[index]


def test_negative_indexes_and_slices_read_as_a_list():
    model, _, _ = _model_with_requests(5)
    as_list = list(model.requests)
    n = len(as_list)
    for i in range(-n, n):
        assert model.requests[i] == as_list[i]
    for bad in (n, -n - 1, 10**6):
        with pytest.raises(IndexError):
            model.requests[bad]
    for sl in (
        slice(None), slice(1, 3), slice(-2, None), slice(None, -1), slice(None, None, -1),
        slice(-1, -4, -1), slice(3, 1), slice(0, 100, 2), slice(-100, 2),
    ):  # fmt: skip
        assert model.requests[sl] == as_list[sl]
    assert model.requests[-1] is as_list[-1]


def test_after_clear_running_out_counts_every_request_received():
    model, h, run = _model_with_requests(2)
    model.requests.clear()
    assert len(model.requests) == 0
    with pytest.raises(hk.UsageError, match="all 2 were used and request 3 "):
        run.send("one more").run()
    assert len(model.requests) == 1
