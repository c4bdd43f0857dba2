"""Tool groups (R-T3): with 40 tools the model picks a group first, then sees only that group."""

from __future__ import annotations

import json

import harnesskit as hk
from harnesskit.log import ContextInjectedEvent, ModelRequestEvent, ToolResultEvent
from harnesskit.testing import reply
from harnesskit.tools import ToolGroups

GROUPS = ["orders", "billing", "shipping", "returns"]


def _make(name: str, group: str) -> hk.Tool:
    def fn(item: str) -> str:
        return f"{name}:{item}"

    return hk.Tool(
        name=name,
        description=f"{name} does one thing for {group}.",
        parameters={
            "type": "object",
            "properties": {"item": {"type": "string", "description": "the item"}},
            "required": ["item"],
            "additionalProperties": False,
        },
        fn=fn,
        group=group,
    )


def forty_tools() -> list[hk.Tool]:
    return [_make(f"{g}_{i}", g) for g in GROUPS for i in range(10)]


def _offered(log):
    return [
        [t["function"]["name"] for t in log.request_tools(e.event_id)]
        for e in log.of_type(ModelRequestEvent)
    ]


def test_forty_tools_run_through_group_selection():
    model = hk.ScriptedModel(
        [
            reply.tool_call("choose_group", group="billing"),
            reply.tool_call("billing_3", item="x"),
            reply.tool_call("shipping_1", item="y"),  # not open: refused
            reply.tool_call("choose_group", group="shipping"),
            reply.tool_call("shipping_1", item="y"),
            reply.text("done"),
        ]
    )
    groups = ToolGroups(descriptions={"billing": "Invoices and payments."})
    run = hk.Harness(tools=forty_tools(), model=model, tool_groups=groups).run("go")
    assert run.finish_reason == "stop"
    offered = _offered(run.log)
    assert offered[0] == ["choose_group"]
    assert offered[1] == ["choose_group", *[f"billing_{i}" for i in range(10)]]
    assert offered[4] == ["choose_group", *[f"shipping_{i}" for i in range(10)]]
    assert max(len(o) for o in offered) == 11  # never all 40
    requests = run.log.of_type(ModelRequestEvent)
    assert [r.payload["tool_group"] for r in requests] == [
        None, "billing", "billing", "billing", "shipping", "shipping"
    ]  # fmt: skip
    injected = run.log.of_type(ContextInjectedEvent)
    assert [i.payload["tool_group"] for i in injected] == [
        r.payload["tool_group"] for r in requests
    ]
    results = run.log.of_type(ToolResultEvent)
    assert [(r.tool, r.ok) for r in results] == [
        ("choose_group", True),
        ("billing_3", True),
        ("shipping_1", False),
        ("choose_group", True),
        ("shipping_1", True),
    ]
    assert "call choose_group(group='shipping') first" in results[2].content
    assert json.loads(results[0].content) == {
        "group": "billing",
        "tools": [f"billing_{i}" for i in range(10)],
    }
    choose = run.log.request_tools(requests[0].event_id)[0]["function"]
    assert "- billing: Invoices and payments." in choose["description"]
    assert (
        "- orders: 10 tools: orders_0, orders_1, orders_2, orders_3, ..." in choose["description"]
    )
    assert choose["parameters"]["properties"]["group"]["enum"] == GROUPS


def test_an_unknown_group_is_a_schema_error_naming_the_groups():
    model = hk.ScriptedModel([reply.tool_call("choose_group", group="nope"), reply.text("ok")])
    run = hk.Harness(tools=forty_tools(), model=model).run("go")
    (result,) = run.log.of_type(ToolResultEvent)
    assert result.error_type == "invalid_argument" and "billing" in result.content


def test_small_or_ungrouped_registries_are_offered_whole_and_log_no_group():
    few = forty_tools()[:12]
    model = hk.ScriptedModel([reply.tool_call("orders_1", item="a"), reply.text("ok")])
    run = hk.Harness(tools=few, model=model).run("go")
    assert _offered(run.log)[0] == [t.name for t in few]
    assert "tool_group" not in run.log.of_type(ModelRequestEvent)[0].payload
    high = ToolGroups(threshold=50)
    run = hk.Harness(
        tools=forty_tools(), model=hk.ScriptedModel([reply.text("ok")]), tool_groups=high
    ).run("go")
    assert len(_offered(run.log)[0]) == 40


def test_resume_reopens_the_group_from_the_log(tmp_path):
    model = hk.ScriptedModel([reply.tool_call("choose_group", group="returns"), reply.text("x")])
    h = hk.Harness(tools=forty_tools(), model=model, log_dir=tmp_path)
    run = h.start("go", run_id="r-groups")
    run.step()
    run.log.close()
    h2 = hk.Harness(
        tools=forty_tools(),
        model=hk.ScriptedModel([reply.tool_call("returns_2", item="z"), reply.text("ok")]),
        log_dir=tmp_path,
    )
    again = h2.resume(run.log.path).run()
    assert again.tool_specs.groups.open == "returns"
    assert [(r.tool, r.ok) for r in again.log.of_type(ToolResultEvent)][-1] == ("returns_2", True)


def test_lint_does_not_flag_a_grouped_registry():
    codes = {i.code for i in hk.lint(forty_tools())}
    assert "too-many-ungrouped" not in codes
    ungrouped = [
        hk.Tool(name=f"t{i}", description="x", parameters={"type": "object"}, fn=str)
        for i in range(16)
    ]
    assert "too-many-ungrouped" in {i.code for i in hk.lint(ungrouped)}
