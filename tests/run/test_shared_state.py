"""A model or a tool that changes what it was handed changes nothing the harness keeps.

Tool specs and settings reach the model read-only; a tool gets its own copy of list and dict
arguments, so the logged call (in memory and on disk) and later requests stay as they were.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.testing import reply


@hk.tool
def lookup_order(order_id: str) -> dict:
    """Look up one order by id.

    Args:
        order_id: the order's id.

    Returns:
        The order.
    """
    return {"order_id": order_id}


@hk.tool
def tag_items(items: list[str], meta: dict) -> str:
    """Tag items (changes its arguments in place, as careless tools do).

    Args:
        items: the items.
        meta: extra data.

    Returns:
        Done.
    """
    items.append("MUTATED")
    meta["mutated"] = True
    return "ok"


def test_a_model_cannot_change_a_tools_schema_or_later_settings(tmp_path):
    seen, refused = [], []

    def policy(messages, info):
        seen.append((dict(info.settings), json.dumps(info.tools)))
        for change in (
            lambda: info.settings.__setitem__("temperature", 99),
            lambda: info.tools[0]["function"].__setitem__("name", "hacked"),
            lambda: info.tools[0]["function"]["parameters"]["required"].append("x"),
            lambda: info.tools[0]["function"]["parameters"]["properties"]["order_id"].update(
                type="integer"
            ),
        ):
            with pytest.raises(hk.UsageError, match="read-only") as err:
                change()
            refused.append(err.value)
        return "done" if len(seen) > 1 else reply.tool_call("lookup_order", order_id="A")

    h = hk.Harness(
        [lookup_order], hk.FunctionModel(policy), settings={"temperature": 0}, log_dir=tmp_path
    )
    run = h.run("go")

    assert run.finish_reason == "stop"
    assert len(refused) == 8
    assert seen[0] == seen[1]
    assert seen[1][0] == {"temperature": 0}
    assert lookup_order.parameters["properties"]["order_id"] == {
        "type": "string",
        "description": "the order's id.",
    }
    assert h.settings == {"temperature": 0}


def test_a_tool_that_changes_its_arguments_leaves_the_logged_call_as_sent(tmp_path):
    turn = reply.tool_call("tag_items", items=["a"], meta={"k": 1})
    run = hk.Harness([tag_items], hk.ScriptedModel([turn, "done"]), log_dir=tmp_path).run("go")

    (call,) = run.log.of_type("tool.call")
    assert call.payload["arguments"] == {"items": ["a"], "meta": {"k": 1}}
    on_disk = [e for e in hk.EventLog.read(run.log.path) if e.type == "tool.call"]
    assert on_disk[0].payload["arguments"] == call.payload["arguments"]
    response = run.log.of_type("model.response")[0]
    assert response.payload["message"]["tool_calls"][0]["function"]["arguments"] == json.dumps(
        {"items": ["a"], "meta": {"k": 1}}
    )


def test_a_deeply_nested_argument_is_copied_for_the_tool_too(tmp_path):
    deep: dict = {}
    cur = deep
    for _ in range(600):  # deeper than copy.deepcopy manages under the default recursion limit
        cur["a"] = {}
        cur = cur["a"]
    turn = reply.tool_call("tag_items", items=["a"], meta=deep)
    run = hk.Harness([tag_items], hk.ScriptedModel([turn, "done"]), log_dir=tmp_path).run("go")

    (result,) = run.log.of_type("tool.result")
    assert result.ok is True
    assert "mutated" not in run.log.of_type("tool.call")[0].payload["arguments"]["meta"]
