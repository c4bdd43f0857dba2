"""Widgets driven headless: set values, click buttons, observe traits and the run's state."""

import time

import pytest

import harnesskit as hk
from harnesskit.testing import reply


def shop():
    """A tiny order domain: a read tool and a destructive tool with a dry run."""
    orders = {"A1": "shipped", "B2": "processing"}

    @hk.tool
    def find_order(order_id: str) -> dict:
        """Look up an order.

        Use this when the user names an order. Do not use it to change one.

        Args:
            order_id: the order id.

        Returns:
            The order and its status.
        """
        return {"order_id": order_id, "status": orders[order_id]}

    @hk.tool(risk="destructive")
    def cancel_order(order_id: str, dry_run: bool = False) -> dict:
        """Cancel an order.

        Use this when the user asks to cancel a processing order. Do not use it on shipped ones.

        Args:
            order_id: the order id.

        Returns:
            What changed.
        """
        if dry_run:
            return {"would_cancel": order_id, "status_before": orders[order_id]}
        orders[order_id] = "cancelled"
        return {"cancelled": order_id}

    return orders, hk.ToolRegistry([find_order, cancel_order])


def cancel_run(**prompt_kw):
    orders, tools = shop()
    prompt = hk.ApprovalPrompt(**prompt_kw)
    model = hk.ScriptedModel(
        [
            reply.tool_call("find_order", order_id="B2"),
            reply.tool_call("cancel_order", order_id="B2"),
            reply.text("Done."),
        ]
    )
    h = hk.Harness(tools, model, gate=hk.Gate(confirm=prompt), limits=hk.Limits(max_steps=6))
    return orders, prompt, model, h.start("Please cancel B2", run_id="w-1")


def test_next_step_and_run_to_end_by_click():
    orders, tools = shop()
    model = hk.ScriptedModel(
        [reply.tool_call("find_order", order_id="A1"), reply.text("It shipped.")]
    )
    run = hk.Harness(tools, model, limits=hk.Limits(max_steps=4)).start("Where is A1?")
    controls = hk.StepControls(run)
    assert controls.approval is None and controls.progress.max == 4 and controls.progress.value == 0
    assert "Where is A1?" in controls.last_event.value
    controls.next_button.click()
    assert controls.wait() == "idle"
    assert run.state.step == 1 and run.finish_reason is None
    assert controls.progress.value == 1 and "shipped" in controls.last_event.value
    assert "step 1 / 4" in controls.status.value
    controls.run_button.click()
    assert controls.wait() == "idle"
    assert run.finish_reason == "stop" and controls.progress.value == 2
    assert controls.progress.bar_style == "success" and "It shipped." in controls.last_event.value
    assert (
        controls.next_button.disabled
        and controls.run_button.disabled
        and controls.cancel_button.disabled
    )
    assert controls.next_step() is False  # nothing to do on a finished run


def test_approval_prompt_shows_arguments_and_preview_and_approve_resumes_the_step():
    orders, prompt, _, run = cancel_run()
    controls = hk.StepControls(run)
    assert controls.approval is prompt and prompt.widget in controls.widget.children
    controls.run_button.click()
    assert controls.wait() == "approval"
    assert prompt.pending.tool == "cancel_order" and prompt.pending.arguments == {"order_id": "B2"}
    assert prompt.pending.preview == {"would_cancel": "B2", "status_before": "processing"}
    assert "would_cancel" in prompt.detail.value and "B2" in prompt.detail.value
    assert not prompt.approve_button.disabled and "waiting for approval" in controls.status.value
    assert orders["B2"] == "processing"  # nothing happened yet: the step waits
    prompt.approve_button.click()
    assert controls.wait() == "idle"
    assert orders["B2"] == "cancelled" and run.finish_reason == "stop"
    [decision] = prompt.history
    assert (decision.approved, decision.by, decision.request.tool) == (
        True,
        "click",
        "cancel_order",
    )
    assert prompt.approve_button.disabled and prompt.pending is None
    result = run.log.of_type("tool.result")[-1].payload
    assert result["ok"] and result["tool"] == "cancel_order"


def test_deny_by_click_reaches_the_model_as_permission_denied():
    orders, prompt, model, run = cancel_run()
    controls = hk.StepControls(run)
    controls.run_to_end()
    assert controls.wait() == "approval"
    prompt.deny_button.click()
    assert controls.wait() == "idle"
    assert orders["B2"] == "processing" and run.finish_reason == "stop"
    result = run.log.of_type("tool.result")[-1].payload
    assert result["error_type"] == "permission_denied" and "refused" in result["content"]
    assert model.requests[-1].messages[-1].content == result["content"]
    assert [d.by for d in prompt.history] == ["click"]


def test_cancel_while_a_call_waits_denies_it_and_ends_the_run():
    orders, prompt, model, run = cancel_run()
    controls = hk.StepControls(run)
    controls.run_to_end()
    assert controls.wait() == "approval"
    controls.cancel_button.click()
    assert controls.wait() == "idle"
    assert run.finish_reason == "cancelled" and orders["B2"] == "processing"
    assert [(d.approved, d.by) for d in prompt.history] == [(False, "cancel")]
    assert len(model.requests) == 2  # no model call after the cancel


def test_cancel_when_idle_ends_the_run_without_asking_the_model():
    _, _, model, run = cancel_run()
    controls = hk.StepControls(run)
    controls.next_step()
    controls.wait()
    controls.cancel()
    assert controls.wait() == "idle"
    assert run.finish_reason == "cancelled" and len(model.requests) == 1
    assert controls.progress.bar_style == "warning" and controls.cancel_button.disabled


def test_prompt_on_the_main_thread_uses_the_fallback_and_warns():
    orders, prompt, _, run = cancel_run()
    run.step()
    with pytest.warns(RuntimeWarning, match="main thread"):
        run.step()
    assert orders["B2"] == "processing"
    assert [(d.approved, d.by) for d in prompt.history] == [(False, "fallback")]
    assert run.log.of_type("tool.result")[-1].payload["error_type"] == "permission_denied"
    orders2, prompt2, _, run2 = cancel_run(fallback=hk.allow_all)
    run2.step()
    with pytest.warns(RuntimeWarning):
        run2.step()
    assert orders2["B2"] == "cancelled" and prompt2.history[0].approved


def test_unanswered_prompt_times_out_as_a_denial():
    orders, prompt, _, run = cancel_run(timeout_seconds=0.01)
    controls = hk.StepControls(run)
    controls.run_to_end()
    while controls.wait() == "approval":  # nobody clicks: the prompt gives up by itself
        time.sleep(0.005)
    assert [(d.approved, d.by) for d in prompt.history] == [(False, "timeout")]
    assert orders["B2"] == "processing" and run.finish_reason == "stop"
    assert prompt.approve() is False  # a late answer finds nothing waiting


def test_errors_on_the_worker_are_shown_and_reraised_by_wait():
    _, tools = shop()
    run = hk.Harness(tools, hk.ScriptedModel([reply.tool_call("find_order", order_id="A1")])).start(
        "x"
    )
    controls = hk.StepControls(run)
    controls.run_to_end()
    with pytest.raises(hk.UsageError, match="ran out of turns"):
        controls.wait()
    assert "UsageError" in controls.status.value
    assert controls.wait() == "idle"  # re-raised once


def test_trace_explorer_slider_table_and_exact_request():
    orders, prompt, _, run = cancel_run()
    explorer = hk.TraceExplorer(run)
    assert explorer.steps == [0] and explorer.slider.max == 0
    controls = hk.StepControls(run)
    controls.run_to_end()
    assert controls.wait() == "approval"
    prompt.approve()
    controls.wait()
    assert explorer.steps == [0, 1, 2, 3] and explorer.slider.max == 3  # followed the live run
    explorer.slider.value = 2
    step2 = [e for e in run.log.events if e.step == 2]
    assert [v for _, v in explorer.events.options] == [e.event_id for e in step2]
    assert "step 2: " in explorer.table.value and "cancel_order" in explorer.table.value
    request = run.log.of_type("model.request")[1]
    assert explorer.events.value == request.event_id
    sent = run.log.request_messages(request.event_id)
    assert len(sent) == 4 and f"{len(sent)} messages" in explorer.detail.value  # + bindings note
    assert "Please cancel B2" in explorer.detail.value and "find_order" in explorer.detail.value
    result = run.log.of_type("tool.result")[-1]
    explorer.events.value = result.event_id
    assert (
        f"TOOL-{result.event_id}" in explorer.detail.value and "cancelled" in explorer.detail.value
    )
    explorer.select(1)
    assert explorer.slider.value == 0 and "task.contract" in explorer.detail.value


def test_trace_explorer_reads_a_log_from_disk(tmp_path):
    _, tools = shop()
    model = hk.ScriptedModel([reply.tool_call("find_order", order_id="A1"), reply.text("ok")])
    run = hk.Harness(tools, model, log_dir=tmp_path).run("A1?")
    explorer = hk.TraceExplorer(hk.EventLog.read(run.log.path))
    assert explorer.steps == [0, 1, 2]
    explorer.slider.value = 1
    assert "request sent" in explorer.detail.value


def test_widgets_display_as_live_widgets_with_a_short_text():
    _, prompt, _, run = cancel_run()
    for obj in (hk.StepControls(run), hk.TraceExplorer(run), prompt):
        bundle = obj._repr_mimebundle_()
        assert set(bundle) == {"application/vnd.jupyter.widget-view+json", "text/plain"}
        assert bundle["text/plain"] == repr(obj) and "\n" not in repr(obj)


def test_snapshots_keep_a_static_copy_of_the_view():
    orders, prompt, _, run = cancel_run()
    controls = hk.StepControls(run)
    controls.run_to_end()
    assert controls.wait() == "approval"
    snap = prompt.snapshot()
    assert (
        "approve <b>cancel_order</b>?" in snap._repr_html_()
        and "would_cancel" in snap._repr_html_()
    )
    assert repr(snap) == repr(prompt)
    with hk.set_display("plain"):
        assert snap._repr_html_() is None
    prompt.approve()
    controls.wait()
    explorer = hk.TraceExplorer(run)
    explorer.slider.value = 1
    html = explorer.snapshot()._repr_html_()
    assert "step 1: " in html and "request sent" in html and "Please cancel B2" in html
    assert "Run w-1" in controls.snapshot()._repr_html_()
