import dataclasses
import json
import re

import pytest

import harnesskit as hk
from harnesskit.notebook import display
from harnesskit.testing import reply

HOSTILE = "<script>alert('pwned')</script><img src=x onerror=alert(1)>"
MEGA = HOSTILE + "A" * 1_000_000 + "</pre></details><script>tail()</script>"


@hk.tool(max_result_chars=3_000_000)
def fetch_page(url: str) -> str:
    """Fetch a page.

    Use this when the user gives a URL. Do not use it for files.

    Args:
        url: the address.

    Returns:
        The page text, verbatim.
    """
    return MEGA


def hostile_run():
    model = hk.ScriptedModel(
        [
            reply.tool_call("fetch_page", url="</pre><script>x()</script>" + "u" * 500_000),
            reply.text("Summary: " + MEGA),
        ]
    )
    # a 1 MB result stays inline here (this test is about rendering hostile text in the log);
    # the user pasting it and the model restating it are reported, not refused (R-A5)
    inline = hk.TransportPolicy(max_inline_chars=10**7, on_violation="report")
    h = hk.Harness(
        [fetch_page], model, system_prompt=HOSTILE, limits=hk.Limits(max_steps=5), transport=inline
    )
    run = h.start(MEGA)
    return run.run()


def assert_safe(html, *, max_chars):
    assert html is not None
    assert not re.search(r"<\s*script", html, re.I), "a raw <script> tag reached the HTML"
    assert "onerror=alert" not in html.replace("&lt;img src=x onerror=alert", "")
    assert len(html) <= max_chars, len(html)


def test_hostile_run_renders_escaped_and_bounded():
    run = hostile_run()
    assert run.finish_reason == "stop"
    # the 1 MB strings really are in the log, unshortened
    assert run.log.of_type("tool.result")[0].payload["content"] == MEGA
    assert run.log.of_type("user.message")[0].payload["content"] == MEGA
    html = run._repr_html_()
    assert_safe(html, max_chars=60_000)
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in html
    assert "<details>" in html and "chars not shown" in html
    # head and tail of the long answer are both kept
    assert "tail()" in html
    for obj in [run.log, run.state, *run.log.events]:
        assert_safe(obj._repr_html_(), max_chars=20_000 if obj is not run.log else 60_000)


def test_hostile_text_in_widgets_and_request_view_stays_escaped():
    run = hostile_run()
    explorer = hk.TraceExplorer(run)
    for step in explorer.steps:
        explorer.show_step(step)
        assert_safe(explorer.table.value, max_chars=60_000)
        assert_safe(explorer.detail.value, max_chars=60_000)
    request = run.log.of_type("model.request")[-1]
    explorer.select(request.event_id)
    assert "request sent" in explorer.detail.value
    assert_safe(explorer.detail.value, max_chars=60_000)


def test_plain_reprs_are_short_one_liners():
    run = hostile_run()
    approval = hk.tools.ApprovalRequest(
        tool="x", risk="destructive", arguments={"a": MEGA}, tool_call_id="c"
    )
    objs = [run, run.state, run.log, run.harness.tools, fetch_page, approval, *run.log.events]
    for obj in objs:
        text = repr(obj)
        assert "\n" not in text and len(text) <= 160, text[:200]


def test_set_display_plain_globally_and_as_context_manager():
    run = hostile_run()
    assert display.get_display() == "html"
    with hk.set_display("plain"):
        assert display.get_display() == "plain"
        for obj in [run, run.state, run.log, run.log[1], run.harness.tools, fetch_page]:
            assert obj._repr_html_() is None
    assert display.get_display() == "html" and run._repr_html_() is not None
    hk.set_display("plain")
    try:
        assert run._repr_html_() is None
    finally:
        hk.set_display("html")
    with pytest.raises(hk.UsageError, match="html"):
        hk.set_display("fancy")


class Exploding:
    def _repr_html_(self):
        return display.render_html(self)


@display.renderer("Exploding")
def _explode(obj):
    raise KeyError("boom")


def test_failing_renderer_warns_and_falls_back_to_plain():
    with pytest.warns(RuntimeWarning, match="could not render Exploding.*boom"):
        assert Exploding()._repr_html_() is None


@dataclasses.dataclass(frozen=True)
class FakeRef:  # not harnesskit's ArtifactRef, which has a renderer of its own
    id: str
    size: int
    preview: str
    shape: dict
    note: str | None = None

    def _repr_html_(self):
        return display.render_html(self)


class SpecialRef(FakeRef):
    pass


def test_dataclasses_render_as_field_tables_and_registered_renderers_win():
    ref = FakeRef(id="art-1", size=12, preview=HOSTILE, shape={"k": HOSTILE})
    html = ref._repr_html_()
    assert_safe(html, max_chars=10_000)
    assert "FakeRef" in html and "art-1" in html and "&lt;script&gt;" in html
    assert ">note<" not in html  # empty fields are left out
    display.register(
        "FakeRef", lambda r: display.card(f"ref {r.id}", display.text_block(r.preview))
    )
    try:
        for obj in (ref, SpecialRef(id="s-2", size=1, preview="p", shape={})):
            html = obj._repr_html_()
            assert html.count("ref ") == 1 and "field" not in html  # the registered view, via MRO
    finally:
        display._RENDERERS.pop("FakeRef")


class Report:
    def __init__(self, n):
        self.n = n

    def frame(self):
        import pandas as pd

        return pd.DataFrame({"case": range(self.n), "answer": [HOSTILE] * self.n})

    def __repr__(self):
        return f"<Report {self.n} cases>"

    def _repr_html_(self):
        return display.render_html(self)


def test_reports_with_a_frame_render_bounded_head_and_tail():
    html = Report(1000)._repr_html_()
    assert_safe(html, max_chars=40_000)
    assert "970 rows not shown" in html
    assert html.count("<tr>") == display.HEAD_ROWS + display.TAIL_ROWS + 2  # header + gap row
    assert ">999<" in html and ">0<" in html


def test_whole_fragment_cap_shows_a_summary():
    class Huge:
        def __repr__(self):
            return "<Huge>"

    display.register("Huge", lambda _: "<b>x</b>" * display.MAX_HTML_CHARS)
    try:
        html = display.render_html(Huge())
    finally:
        display._RENDERERS.pop("Huge")
    assert len(html) < 2_000 and "over the" in html and "&lt;Huge&gt;" in html


def test_text_block_keeps_short_text_and_folds_long_text():
    short = display.text_block("a < b")
    assert "a &lt; b" in short and "<details>" not in short
    text = "H" * 5000 + "<middle>" + "T" * 5000
    long = display.text_block(text, inline=100, limit=1000)
    assert "<details>" in long and "10,008 chars" in long
    assert "&lt;middle&gt;" not in long  # the middle is cut, head and tail kept
    assert "H" * 100 in long and "T" * 500 in long and "9,008 chars not shown" in long


def test_tables_keep_head_and_tail_rows():
    html = display.table(["n"], [[i] for i in range(100)])
    assert "70 rows not shown" in html and ">0<" in html and ">99<" in html and ">50<" not in html


def test_tool_and_registry_views_show_the_spec():
    from typing import Literal

    @hk.tool(risk="write", group="orders")
    def set_status(order_id: str, status: Literal["open", "closed"]) -> dict:
        """Set an order's status.

        Use this when asked. Do not use it to delete.

        Args:
            order_id: the id.
            status: the new status.

        Returns:
            The order.
        """
        return {}

    html = set_status._repr_html_()
    assert "set_status" in html and "&quot;open&quot; | &quot;closed&quot;" in html
    assert "group orders" in html and "order_id</b> *" in html
    reg = hk.ToolRegistry([set_status, fetch_page])._repr_html_()
    assert "set_status" in reg and "fetch_page" in reg and "destructive" not in reg


def test_a_hostile_log_read_from_disk_renders_escaped(tmp_path):
    evil = "<script>x()</script>"
    lines = [
        {
            "v": 2,
            "event_id": 1,
            "type": "task.contract",
            "payload": {"run_id": evil},
            "summary": evil,
        },
        {
            "v": 2,
            "event_id": 2,
            "type": "model.request",
            "source": evil,
            "branch_id": evil,
            "payload": {
                "step": evil,
                "n_messages": evil,
                "token_estimate": evil,
                "messages": [{"role": "user", "content": evil}],
                "tools": [{"function": {"name": evil}}],
            },
        },
        {
            "v": 2,
            "event_id": 3,
            "type": "model.response",
            "status": evil,
            "payload": {
                "step": evil,
                "usage": {"prompt_tokens": evil, "completion_tokens": evil},
                "message": {
                    "role": "assistant",
                    "content": evil,
                    "tool_calls": [{"id": evil, "function": {"name": evil, "arguments": evil}}],
                },
            },
        },
        {
            "v": 2,
            "event_id": 4,
            "type": "tool.call",
            "payload": {"tool": evil, "arguments": {evil: evil}},
        },
    ]
    path = tmp_path / "evil.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    log = hk.EventLog.read(path)
    for html in [log._repr_html_(), *(e._repr_html_() for e in log)]:
        assert_safe(html, max_chars=20_000)
    explorer = hk.TraceExplorer(log)
    explorer.select(2)
    assert_safe(explorer.detail.value, max_chars=20_000) and "request sent" in explorer.detail.value
    assert_safe(explorer.table.value, max_chars=20_000)


def test_report_tables_render_through_the_seam_and_honour_plain_mode():
    """Reports defined below the notebook layer render via harnesskit._repr (notebook/renderers)."""
    from harnesskit import _repr

    model = hk.ScriptedModel([reply.tool_call("fetch_page", url="<b>x</b>"), reply.text("done")])
    run = hk.Harness([fetch_page], model).run("read <b>x</b>")
    report = hk.audit(run)
    html = report._repr_html_()
    assert html is not None and html == _repr.html(report) and report.verdict in html
    assert "<table" in hk.Trajectory(run.log)._repr_html_()
    with hk.set_display("plain"):
        assert report._repr_html_() is None and hk.Trajectory(run.log)._repr_html_() is None
