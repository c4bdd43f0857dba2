"""The four-point audit (R-P2): planted violations are flagged, a clean run stays clean."""

import json
import pathlib

import pytest

import harnesskit as hk
from harnesskit.analysis.audit import POINTS, is_identifier
from harnesskit.domains import shop
from harnesskit.testing import reply

ROOT = pathlib.Path(__file__).resolve().parents[2]


def shop_run(turns, model, extra_tools=(), **kw):
    env = shop.environment()
    registry = hk.ToolRegistry([*env.tools, *extra_tools])
    h = hk.Harness(
        registry, model, system_prompt=env.system_prompt, limits=hk.Limits(max_steps=8), **kw
    )
    run = h.start(turns[0]).run()
    for t in turns[1:]:
        run.send(t).run()
    return run


def listing_text(customer_id):
    """The exact tool-result text of list_orders(customer_id) on a fresh shop."""
    value = shop.tools(shop.load_database())["list_orders"].fn(customer_id=customer_id)
    return json.dumps(value, ensure_ascii=False)


def result_event(run, tool):
    return next(e for e in run.log if e.type == "tool.result" and e.payload["tool"] == tool)


def test_identifier_heuristic():
    assert [is_identifier(v) for v in ("A1002", "cust_4821", "HAT045", "4WQ150", "12345678")] == [
        True
    ] * 5
    assert is_identifier("0b3f5a2c-9d7e-4f1a-8c6b-2e9d1f0a7b3c")
    assert not any(
        is_identifier(v)
        for v in ("2024-05-15", "10:30", "pending", "changed_mind", "10115", "Ana Ruiz", 42)
    )


def test_a_clean_run_stays_clean():
    run = shop_run(["Hi, where is my order A1001?"], shop.agent("careful"))
    report = hk.audit(run)
    assert report.clean, report.frame()
    assert report.counts() == dict.fromkeys(POINTS, 0)
    [typed] = report.findings  # the id the user gave, typed back: recorded, not flagged
    assert (typed.point, typed.flag, typed.value, typed.source) == (
        "copied_id",
        False,
        "A1001",
        "USER-2",
    )
    confirmed = shop_run(["Please cancel order A1002.", "yes"], shop.agent("careful"))
    assert hk.audit(confirmed).clean


def test_a_planted_copied_id_is_flagged_with_its_source():
    model = hk.ScriptedModel(
        [
            reply.tool_call("find_customer", name="Ana Ruiz", postcode="10115"),
            reply.tool_call("list_orders", customer_id="cust_4821"),  # typed from the result
            reply.text("You have two orders."),
        ]
    )
    run = shop_run(["Which orders do I have? I'm Ana Ruiz, postcode 10115."], model)
    report = hk.audit(run)
    assert not report.clean
    [flag] = report.flagged
    source = result_event(run, "find_customer")
    assert (flag.point, flag.tool, flag.argument, flag.value) == (
        "copied_id",
        "list_orders",
        "/customer_id",
        "cust_4821",
    )
    assert flag.source == source.label == f"TOOL-{source.event_id}"
    assert "instead of bound with $bind" in flag.detail
    assert report.counts()["copied_id"] == 1
    assert report.verdict.endswith("1 flagged — 1 copied_id")


def test_altered_and_invented_ids_are_flagged():
    model = hk.ScriptedModel(
        [
            reply.tool_call("get_order", order_id="A1010"),  # the user said A1001
            reply.tool_call("get_order", order_id="Q7777"),  # nowhere
            reply.text("Not found."),
        ]
    )
    report = hk.audit(shop_run(["Where is order A1001?"], model))
    altered, invented = report.flagged
    assert (
        altered.source == "USER-2"
        and altered.detail == "altered: 'A1001' in USER-2 arrived as 'A1010'"
    )
    assert (invented.source, invented.detail) == ("invented", "appears nowhere before the call")


def test_a_transposed_id_is_altered_as_in_the_transport_audit():
    """The id typed with two adjacent digits swapped is altered in both audits (one matcher)."""
    model = hk.ScriptedModel(
        [reply.tool_call("get_order", order_id="4WQ105"), reply.text("Not found.")]
    )
    run = shop_run(["Where is my booking 4WQ150?"], model)
    (flag,) = hk.audit(run).flagged
    assert flag.detail == "altered: '4WQ150' in USER-2 arrived as '4WQ105'"
    row = next(r for r in hk.transport_audit(run).rows if r["value"] == "4WQ105")
    assert (row["status"], row["closest"]) == ("altered", "4WQ150")


@hk.tool
def compare_orders(order_ids: list[str]) -> dict:
    """Compare several orders side by side.

    Use this when the customer asks to compare orders. Do not use it for one order.

    Args:
        order_ids: the orders to compare.

    Returns:
        `{"compared": n}`.
    """
    return {"compared": len(order_ids)}


def test_a_copied_array_is_flagged_and_a_bound_one_is_not():
    model = hk.ScriptedModel(
        [
            reply.tool_call("list_orders", customer_id="cust_7316"),
            reply.tool_call("compare_orders", order_ids=["B2001", "B2002", "B2003"]),
            reply.tool_call("compare_orders", order_ids={"$bind": "call#/orders"}),
            reply.text("Compared."),
        ]
    )
    # the 12 orders stay inline (max 20 items) so the model can copy them, which is the point
    inline = hk.TransportPolicy(max_inline_items=20)
    run = shop_run(
        ["Compare my filter orders, I'm customer cust_7316."],
        model,
        [compare_orders],
        transport=inline,
    )
    report = hk.audit(run)
    arrays = [f for f in report.flagged if f.point == "copied_array"]
    assert len(arrays) == 1 and arrays[0].argument == "/order_ids"
    assert arrays[0].source == result_event(run, "list_orders").label
    assert [f.argument for f in report.flagged if f.point == "copied_id"] == [
        "/order_ids/0",
        "/order_ids/1",
        "/order_ids/2",
    ]
    bound_call = [e for e in run.log if e.type == "tool.call"][2]
    assert not [f for f in report.findings if f.event_id == bound_call.event_id]
    user_typed = [f for f in report.findings if f.tool == "list_orders"]
    assert [(f.flag, f.source) for f in user_typed] == [(False, "USER-2")]


def test_a_planted_two_form_prompt_is_flagged():
    def restating(messages, info):
        last = messages[-1]
        if last.role == "user" and "A1004" not in last.text:
            return hk.ToolCall(id="", name="list_orders", arguments={"customer_id": "cust_7316"})
        if last.role == "tool" and "orders" in last.text:
            return f"Here is what the system returned: {last.text[:300]}"  # a restatement
        if last.role == "user":
            return hk.ToolCall(id="", name="get_order", arguments={"order_id": "A1004"})
        return "A1004 is pending."

    always = hk.TransportPolicy(max_summary_share=None)  # externalize the 12 orders anyway
    run = shop_run(
        ["List my orders, I'm cust_7316.", "And A1004?"],
        hk.FunctionModel(restating),
        transport=always,
    )
    report = hk.audit(run)
    found = [f for f in report.flagged if f.point == "two_forms"]
    assert [run.log[f.event_id].payload["step"] for f in found] == [3, 4]  # both later prompts
    two = found[0]
    assert run.log[two.event_id].type == "model.request"
    call_id = result_event(run, "list_orders").payload["tool_call_id"]
    assert two.source == f"call {call_id}"
    assert two.detail.endswith("again as 300 chars restated in message 4 (assistant)")
    clean = hk.audit(
        shop_run(["List my orders, I'm cust_7316."], hk.FunctionModel(restating), transport=always)
    )
    assert not [
        f for f in clean.flagged if f.point == "two_forms"
    ]  # restated, but no prompt after it


def test_representation_alerts_are_two_form_findings():
    run = shop_run(["Where is my order A1001?"], shop.agent("careful"))
    run.log.append(
        "alert.representation", {"ref": "art_1", "message": "art_1 sent as full and summary"}
    )
    [alert] = hk.audit(run).flagged
    assert (alert.point, alert.detail) == ("two_forms", "art_1 sent as full and summary")


def make_preview_tool(edit):
    @hk.tool
    def preview_listing(ref: str, customer_id: str) -> dict:
        """Show 60 chars of an earlier listing (a preview).

        Use this to quote a listing. Do not use it to change anything.

        Args:
            ref: the tool_call id of the listing.
            customer_id: whose listing it was.

        Returns:
            `{"ref", "offset", "preview"}`.
        """
        text = listing_text(customer_id)[60:120]
        return {
            "ref": ref,
            "offset": 60,
            "preview": text.replace("shipped", "pending") if edit else text,
        }

    return preview_listing


def preview_run(edit):
    def policy(messages, info):
        last = messages[-1]
        if last.role == "user":
            return hk.ToolCall(
                id="c_list", name="list_orders", arguments={"customer_id": "cust_4821"}
            )
        if '"orders"' in last.text:
            return hk.ToolCall(
                id="c_prev",
                name="preview_listing",
                arguments={"ref": "c_list", "customer_id": "cust_4821"},
            )
        return "Here is the start of your listing."

    return shop_run(
        ["Show me the start of my orders, I'm cust_4821."],
        hk.FunctionModel(policy),
        [make_preview_tool(edit)],
    )


def test_a_planted_edited_preview_is_flagged_and_an_exact_one_is_not():
    exact = hk.audit(preview_run(edit=False))
    [ok] = [f for f in exact.findings if f.point == "preview_mismatch"]
    assert not ok.flag and ok.detail == "byte-equal to c_list at offset 60"
    edited = hk.audit(preview_run(edit=True))
    [bad] = [f for f in edited.flagged if f.point == "preview_mismatch"]
    assert bad.source == "c_list" and bad.tool == "preview_listing"
    assert bad.detail.startswith("differs from c_list at offset 60+")
    assert "'shipped" in bad.detail and "became 'pending" in bad.detail


def test_a_preview_typed_by_the_model_is_checked_too():
    source = listing_text("cust_4821")
    model = hk.ScriptedModel(
        [
            reply.tool_call("list_orders", id="c1", customer_id="cust_4821"),
            reply.tool_call("compare_orders", order_ids=["A1001", "A1002"]),
            reply.tool_call(
                "note", text={"ref": "c1", "offset": 0, "preview": source[:30].upper()}
            ),
            reply.text("ok"),
        ]
    )

    @hk.tool
    def note(text: dict) -> str:
        """Keep a note. Use it to remember something. Do not use it to act.

        Args:
            text: the note.

        Returns:
            "noted".
        """
        return "noted"

    report = hk.audit(shop_run(["Note my orders, I'm cust_4821."], model, [compare_orders, note]))
    [bad] = [f for f in report.flagged if f.point == "preview_mismatch"]
    assert bad.tool == "note" and bad.source == "c1"


def test_policy_facts_from_the_model_are_flagged():
    model = hk.ScriptedModel(
        [
            reply.tool_call(
                "cancel_order", order_id="A1001", reason="other", expected_status="pending"
            ),
            reply.text("It cannot be cancelled."),
        ]
    )
    run = shop_run(["Cancel A1001, it is still pending."], model)
    [fact] = hk.audit(run).flagged
    mismatch = run.log[fact.event_id]
    assert mismatch.type == "alert.mismatch"
    assert fact.detail == "model claimed status='pending'; the system's truth is 'shipped'"
    configured = hk.audit(run, policy_fact_args=["expected_status"])
    assert [f.point for f in configured.flagged] == ["model_fact", "model_fact"]


def test_audit_of_an_experiment_one_row_per_run_one_summary(tmp_path):
    cases = hk.load_cases(ROOT / "datasets" / "cases" / "shop.jsonl")
    result = hk.Experiment(
        cases, ["full-history"], ["shop:careful", "shop:hasty"], repeats=2, seed=4
    ).run(tmp_path / "e", progress=False)
    ea = hk.audit(result)
    runs = ea.runs()
    assert len(runs) == len(result) and list(runs.columns)[-6:] == [*POINTS, "clean"]
    listing = runs[runs["case"] == "shop/list-orders"]
    assert (listing["copied_id"] == 1).all() and not listing[
        "clean"
    ].any()  # customer id from a tool
    status = runs[(runs["case"] == "shop/status-shipped") & (runs["model"] == "shop:careful")]
    assert status["clean"].all()
    summary = ea.summary()
    assert list(summary.columns) == ["runs", "clean_runs", "clean_rate", *POINTS]
    assert summary.loc[("full-history", "shop:careful"), "runs"] == 16
    assert hk.audit(tmp_path / "e").summary().equals(summary)  # from the run directory
    log_path = tmp_path / "e" / "logs" / f"{listing['run_id'].iloc[0]}.jsonl"
    assert hk.audit(log_path).counts()["copied_id"] == 1
    assert "clean_rate" in ea._repr_html_()
    with pytest.raises(hk.UsageError, match="cannot audit a int"):
        hk.audit(3)
