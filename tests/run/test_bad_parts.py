"""Wrong-typed arguments to the public API are `UsageError`s naming the argument, up front.

`Harness(...)` parts are checked at construction (they failed at `start` or mid-run with a raw
error), as are `run.send`, `run.fork`, `Trajectory.search` filters and `@tool` arguments.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TypedDict

import pytest

import harnesskit as hk
from harnesskit.context.tokens import TokenEstimator
from harnesskit.errors import CorruptLogError
from harnesskit.testing import reply


def _model():
    return hk.ScriptedModel([reply.text("a"), reply.text("b")])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"estimator": 5},
        {"clock": 5},
        {"timer": None},
        {"artifacts": 5},
        {"transport": 5},
        {"confirmers": 5},
        {"confirmers": {"refund": 5}},
        {"redactor": 5},
        {"tool_groups": 5},
        {"on_delta": 5},
        {"workspace_revision": 5},
    ],
)
def test_harness_parts_of_the_wrong_kind_are_refused_at_construction(kwargs):
    (name,) = kwargs
    with pytest.raises(hk.UsageError, match=rf"Harness\({name}=\.\.\.\) takes"):
        hk.Harness([], _model(), **kwargs)


def test_valid_harness_parts_still_work(tmp_path):
    h = hk.Harness(
        [],
        _model(),
        estimator=TokenEstimator(),
        clock=lambda: 0.0,
        artifacts=tmp_path / "a",
        transport=hk.TransportPolicy(),
        confirmers={},
        redactor=None,
        on_delta=lambda d: None,
        workspace_revision=lambda: "rev",
    )
    assert h.run("hi").final_text == "a"


@pytest.mark.parametrize("text", [None, 5, ["a"]])
def test_send_takes_text(text):
    run = hk.Harness([], _model()).run("hi")
    with pytest.raises(hk.UsageError, match=r"run\.send\(\.\.\.\) takes the user's message"):
        run.send(text)
    assert run.send("more").run().final_text == "b"


def test_fork_names_must_be_strings():
    run = hk.Harness([], _model()).run("hi")
    with pytest.raises(hk.UsageError, match="branch name 5 must be a str and must match"):
        run.fork(1, 5)


@pytest.mark.parametrize("field", ["branch", "type", "status", "kind"])
def test_search_filters_must_be_strings(field):
    traj = hk.Trajectory(hk.Harness([], _model()).run("hi").log)
    with pytest.raises(hk.UsageError, match=rf"search\({field}=\.\.\.\) takes a string"):
        traj.search(**{field: 5})
    assert len(traj.search(branch=(b for b in ["main"]))) == len(traj.log)


def _good(order_id: str) -> str:
    """Look up an order.

    Args:
        order_id: the id.

    Returns:
        The order.
    """
    return order_id


class Node(TypedDict):
    name: str
    children: list[Node]


@dataclasses.dataclass
class Tree:
    name: str
    kids: list[Tree]


def _add_node(root: Node) -> str:
    """Store a tree.

    Args:
        root: the tree.

    Returns:
        ok.
    """
    return "ok"


def _add_tree(root: Tree) -> str:
    """Store a tree.

    Args:
        root: the tree.

    Returns:
        ok.
    """
    return "ok"


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (lambda: hk.tool(name=5)(_good), "tool name 5 must be a str"),
        (lambda: hk.tool(parameters="x")(_good), "parameters must be a JSON Schema dict"),
        (
            lambda: hk.Tool(name="a", description="b", parameters=None, fn=_good),
            "parameters must be a JSON Schema dict",
        ),
        (
            lambda: hk.Tool(name="a", description="b", parameters={"type": "object"}, fn=None),
            "fn must be the function to call",
        ),
        (lambda: hk.tool(_add_node), "type Node refers to itself"),
        (lambda: hk.tool(_add_tree), "type Tree refers to itself"),
    ],
)
def test_tool_arguments_of_the_wrong_type_are_usage_errors(build, said):
    with pytest.raises(hk.UsageError, match=said):
        build()


@dataclasses.dataclass
class Point:
    x: int


def test_a_type_used_twice_side_by_side_is_not_recursive():
    def segment(a: Point, b: Point) -> str:
        """A segment.

        Args:
            a: start.
            b: end.

        Returns:
            ok.
        """
        return "ok"

    assert hk.tool(segment).parameters["properties"]["b"]["required"] == ["x"]


# -- hand-edited logs ---------------------------------------------------------------------------


def _edited_log(tmp_path, edit):
    run = hk.Harness(
        [hk.tool(_good)],
        hk.ScriptedModel([reply.tool_call("_good", order_id="A"), "done"]),
        log_dir=tmp_path,
    ).run("hi")
    lines = run.log.path.read_text().splitlines()
    for i, line in enumerate(lines):
        data = json.loads(line)
        if edit(data):
            lines[i] = json.dumps(data)
            run.log.path.write_text("\n".join(lines) + "\n")
            return run.log.path, i + 1
    raise AssertionError("no line edited")


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda d: d["type"] == "user.message" and d.update(payload=[1]) is None, "payload is a"),
        (
            lambda d: d["type"] == "tool.result" and d["payload"].update(content=5) is None,
            "'content' is a int, not a str",
        ),
        (
            lambda d: d["type"] == "tool.call" and d["payload"].update(arguments=[1]) is None,
            "'arguments' is a list, not a dict",
        ),
        (
            lambda d: d["type"] == "model.response" and d["payload"].update(message="x") is None,
            "'message' is a str, not a dict",
        ),
    ],
)
def test_a_payload_of_the_wrong_shape_is_a_corrupt_log_error_naming_the_line(tmp_path, edit, said):
    path, line = _edited_log(tmp_path, edit)
    with pytest.raises(CorruptLogError, match=rf"{path.name}:{line}: .*{said}"):
        hk.EventLog.read(path)
    with pytest.raises(CorruptLogError):
        hk.Harness([hk.tool(_good)], _model()).resume(path)


def _refund(order_id: str) -> dict:
    """Refund an order."""
    return {"order_id": order_id, "refunded": True}


def _confirm(record):
    return hk.tools.EffectCheck(applied=False, evidence="not in the books")


def test_a_confirmer_for_a_tool_that_is_not_registered_is_refused_naming_both(tmp_path):
    h = hk.Harness(
        [hk.tool(_refund)], _model(), log_dir=tmp_path / "logs", confirmers={"refnud": _confirm}
    )
    said = r"confirmers=\.\.\.\) names tools that are not registered: \['refnud'\]; registered "
    with pytest.raises(hk.UsageError, match=said + r"tools: \['_refund'\]"):
        h.start("hi", run_id="r1")
    assert list((tmp_path / "logs").iterdir()) == []  # nothing written

    path = hk.Harness([hk.tool(_refund)], _model(), log_dir=tmp_path / "logs").run("hi").log.path
    before = path.read_bytes()
    for reopen in (lambda: h.resume(path), lambda: h.restart(path, reason="again")):
        with pytest.raises(hk.UsageError, match=said):
            reopen()
    assert path.read_bytes() == before


def test_a_confirmer_may_be_given_before_its_tool_is_added_to_the_registry():
    registry = hk.ToolRegistry()
    h = hk.Harness(registry, _model(), confirmers={"_refund": _confirm})
    registry.add(_refund)
    assert h.run("hi").final_text == "a"
