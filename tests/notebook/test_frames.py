import json
import os
import subprocess
import sys

import pandas as pd
import pytest

import harnesskit as hk
from harnesskit.messages import Message, ModelResponse, Usage
from harnesskit.testing import reply


@hk.tool
def lookup(key: str) -> dict:
    """Look a key up.

    Use this when asked for a key. Do not use it to write.

    Args:
        key: the key.

    Returns:
        The value.
    """
    if key == "bad":
        raise hk.ToolNotFoundError(f"no key {key!r}")
    return {"key": key, "value": "v" * 40}


def with_usage(response, prompt, completion):
    return ModelResponse(
        message=response.message,
        usage=Usage(prompt_tokens=prompt, completion_tokens=completion),
        finish_reason=response.finish_reason,
    )


def braked_run(tmp_path=None):
    """Three tool steps (one failing, one with two calls), then the max_steps brake closes."""
    turns = [
        with_usage(reply.tool_call("lookup", key="a"), 100, 10),
        with_usage(
            reply.tool_calls(reply.call("lookup", key="b"), reply.call("lookup", key="bad")),
            150,
            20,
        ),
        with_usage(reply.tool_call("lookup", key="bad"), 220, 15),
        with_usage(reply.text("best effort"), 300, 30),
    ]
    model = hk.ScriptedModel(turns)
    h = hk.Harness(
        [lookup],
        model,
        system_prompt="You are terse.",
        limits=hk.Limits(max_steps=3, max_tokens=1000),
        log_dir=tmp_path,
    )
    return h.start("find a, b", run_id="r-braked").run(), model


def test_budget_frame_one_row_per_request_with_exact_numbers():
    run, _ = braked_run()
    df = hk.frame(run, kind="budget")
    assert run.finish_reason == "max_steps"
    cols = [
        "request",
        "step",
        "final",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "cum_prompt_tokens",
        "cum_tokens",
        "tool_calls",
        "tool_errors",
        "estimated",
    ]
    assert df[cols].values.tolist() == [
        [1, 1, False, 100, 10, 110, 100, 110, 1, 0, False],
        [2, 2, False, 150, 20, 170, 250, 280, 2, 1, False],
        [3, 3, False, 220, 15, 235, 470, 515, 1, 1, False],
        [4, 3, True, 300, 30, 330, 770, 845, 0, 0, False],
    ]
    assert df.attrs["limits"]["max_steps"] == 3 and df.attrs["limits"]["max_tokens"] == 1000
    assert (df["seconds"] >= 0).all() and (df["model_seconds"] >= 0).all()
    assert df["messages"].tolist()[0] == 2  # system prompt + user message


def test_budget_frame_from_a_log_read_back_from_disk_matches(tmp_path):
    run, _ = braked_run(tmp_path)
    log = hk.EventLog.read(run.log.path)
    live, read = hk.frame(run, kind="budget"), hk.frame(log, kind="budget")
    cols = ["step", "final", "prompt_tokens", "completion_tokens", "cum_tokens", "tool_calls"]
    assert live[cols].equals(read[cols])
    assert read.attrs["limits"]["max_tokens"] == 1000 and read.attrs["run_id"] == "r-braked"


def test_composition_is_computed_from_the_exact_requests_sent():
    run, model = braked_run()
    comp = hk.frame(run, kind="composition")
    est = run.harness.estimator
    assert len(comp) == len(model.requests) == 4
    for row, sent in zip(comp.to_dict("records"), model.requests, strict=True):
        msgs = sent.messages
        by_role = {"system": 0, "user": 0, "assistant": 0, "tool_results": 0, "other": 0}
        for i, m in enumerate(msgs):
            key = {"tool": "tool_results"}.get(m.role, m.role)
            if m.role == "system" and i > 0:
                key = "other"
            by_role[key] += est.count_message(m)
        assert {k: row[k] for k in by_role} == by_role
        assert row["tool_specs"] == est.count_tools(sent.tools)
        assert row["total"] == sum(by_role.values()) + row["tool_specs"]
    last = comp.iloc[-1]
    # the closing request keeps the tools (tool_choice="none"); the brake's note is "other"
    assert last["final"] and last["tool_specs"] == comp.iloc[0]["tool_specs"] > 0
    assert last["other"] > 0
    assert (
        comp["system"].tolist()
        == [est.count_message(Message(role="system", content=run.log[1].payload["system_prompt"]))]
        * 4  # "You are terse." plus the bindings note (R-A6)
    )


def test_frame_accepts_runs_logs_and_lists_of_records():
    run, _ = braked_run()
    df, raw = hk.frame(run), run.log.frame()
    assert len(hk.frame(run.log)) == len(run.log) and list(df.columns) == list(raw.columns)
    # the same table, typed: the payload dicts are their JSON text
    assert [json.loads(p) for p in df["payload"]] == raw["payload"].tolist()

    def cells(frame):
        return {c: [None if pd.isna(v) else v for v in frame[c]] for c in frame if c != "payload"}

    assert cells(df) == cells(raw)
    assert "object" not in {str(t) for t in df.dtypes}

    @hk.tool
    def vague(status: str, day: str) -> str:
        """Does stuff."""
        return ""

    issues = hk.frame(hk.lint(vague))
    assert {"missing-when", "free-string-enum", "date-without-format"} <= set(issues["code"])
    assert list(issues.columns) == ["tool", "code", "message", "param"]
    assert hk.frame([{"a": 1}, {"a": 2}])["a"].tolist() == [1, 2]
    with pytest.raises(hk.UsageError):
        hk.frame(42)
    with pytest.raises(hk.UsageError):
        hk.frame([1, 2])


def test_frame_kinds_are_one_scheme_and_a_wrong_kind_names_the_valid_ones():
    run, _ = braked_run()
    from harnesskit.notebook.frames import FRAME_KINDS

    assert FRAME_KINDS == ("events", "budget", "composition", "comparison")
    assert hk.frame(run, kind="events").equals(hk.frame(run))
    assert len(hk.frame(run, kind="budget")) == len(hk.frame(run, kind="composition"))
    with pytest.raises(hk.UsageError, match=r"unknown frame kind 'budgets'.*'comparison'"):
        hk.frame(run, kind="budgets")
    with pytest.raises(hk.UsageError, match=r"takes \{label: run\}"):
        hk.frame(run, kind="comparison")


def test_comparison_frame_summarises_each_run():
    run, _ = braked_run()
    h = hk.Harness(
        [lookup],
        hk.ScriptedModel([reply.tool_call("lookup", key="a"), reply.text("ok")]),
        policy={"name": "tight", "version": "2"},
    )
    other = h.start("find a").run()
    df = hk.frame({"full": run, "tight": other.log}, kind="comparison")
    assert df.loc[
        "full",
        [
            "policy",
            "steps",
            "requests",
            "tool_calls",
            "tool_errors",
            "prompt_tokens",
            "finish_reason",
            "incomplete",
        ],
    ].tolist() == ["full-history", 3, 4, 4, 2, 770, "max_steps", True]
    assert df.loc["tight", ["policy", "steps", "finish_reason", "incomplete"]].tolist() == [
        "tight",
        2,
        "stop",
        False,
    ]
    assert df.loc["full", "max_prompt_tokens"] == 300


def test_plot_budget_draws_tokens_against_the_brakes():
    run, _ = braked_run()
    fig = hk.plot_budget(run)
    top, bottom = fig.axes
    heights = [p.get_height() for p in top.patches]
    assert heights == [100, 150, 220, 300, 10, 20, 15, 30]  # prompt bars, then completion bars
    hlines = [line.get_ydata()[0] for line in bottom.lines if line.get_linestyle() == "--"]
    assert hlines == [1000]  # max_tokens is near what was used: drawn
    legend = [t.get_text() for t in top.get_legend().get_texts()]
    assert "max_steps = 3" in legend
    assert [t.get_text() for t in bottom.get_xticklabels()] == ["1", "2", "3", "3*"]
    assert "finish_reason=max_steps" in top.get_title()


def test_plot_budget_names_far_limits_instead_of_drawing_them():
    h = hk.Harness(
        [lookup],
        hk.ScriptedModel([reply.text("hi")]),
        limits=hk.Limits(max_steps=100, max_tokens=10_000_000),
    )
    fig = hk.plot_budget(h.run("hello"))
    top, bottom = fig.axes
    assert not [ln for ln in bottom.lines if ln.get_linestyle() == "--"]
    assert any("% used" in t.get_text() for t in bottom.get_legend().get_texts())
    assert any("max_steps = 100 (used 1)" in t.get_text() for t in top.get_legend().get_texts())


def test_plot_composition_and_comparison():
    run, _ = braked_run()
    comp = hk.frame(run, kind="composition")
    fig = hk.plot_composition(run)
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["system", "user", "assistant", "tool results", "tool specs", "other"]
    first = ax.containers[0]
    assert [p.get_height() for p in first] == comp["system"].tolist()
    fig = hk.plot_comparison({"a": run, "b": run.log}, metric="cum_tokens")
    assert [line.get_ydata().tolist() for line in fig.axes[0].lines] == [[110, 280, 515, 845]] * 2
    with pytest.raises(hk.UsageError, match="metric"):
        hk.plot_comparison({"a": run}, metric="nope")


def test_plots_refuse_a_run_without_requests():
    run = hk.Harness([lookup], hk.ScriptedModel([])).start("x")
    with pytest.raises(hk.UsageError, match="no model request"):
        hk.plot_budget(run)
    with pytest.raises(hk.UsageError, match="no model request"):
        hk.plot_composition(run)
    with pytest.raises(hk.UsageError, match="Run or an EventLog"):
        hk.frame("run", kind="budget")


def test_charts_use_agg_when_headless():
    code = (
        "import harnesskit as hk, sys\n"
        "from harnesskit.testing import reply\n"
        "assert 'matplotlib' not in sys.modules\n"
        "run = hk.Harness([], hk.ScriptedModel([reply.text('hi')])).run('x')\n"
        "fig = hk.plot_budget(run)\n"
        "import matplotlib\n"
        "print(matplotlib.get_backend().lower())\n"
    )
    env = {
        k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "MPLBACKEND")
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "agg"


def test_budget_frame_shows_the_reported_prompt_cache_reuse():
    def cached(response, prompt, hit):
        return ModelResponse(
            message=response.message,
            usage=Usage(prompt_tokens=prompt, completion_tokens=5, cached_tokens=hit),
            finish_reason=response.finish_reason,
        )

    turns = [
        cached(reply.tool_call("lookup", key="a"), 1000, 0),
        cached(reply.text("ok"), 1200, 990),
    ]
    run = hk.Harness([lookup], hk.ScriptedModel(turns)).run("find a")
    df = hk.frame(run, kind="budget")
    assert df["cached_tokens"].tolist() == [0, 990]
    assert list(df.columns).index("cached_tokens") == list(df.columns).index("prompt_tokens") + 1


def test_budget_chart_labels_the_cached_part_of_the_prompts():
    turns = [
        ModelResponse(
            message=reply.text("ok").message,
            usage=Usage(prompt_tokens=1000, completion_tokens=5, cached_tokens=800),
        )
    ]
    run = hk.Harness([lookup], hk.ScriptedModel(turns)).run("find a")
    fig = hk.plot_budget(run)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "prompt from cache (80%)" in labels
