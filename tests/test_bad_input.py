"""Bad input gets a clear error that names the problem, and loses nothing."""

import asyncio
import dataclasses
import datetime as dt
import json
from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.testing import reply


@hk.tool(risk="destructive")
def delete_account(user_id: str) -> dict:
    """Delete an account."""
    return {"deleted": user_id}


def _run_with_confirm(confirm):
    model = hk.ScriptedModel([reply.tool_call("delete_account", user_id="u1"), reply.text("ok")])
    return hk.Harness([delete_account], model, gate=hk.Gate(confirm=confirm))


@pytest.mark.parametrize("answer", ["n", "no", 1, None, [True]])
def test_confirm_callback_must_answer_a_bool(answer):
    h = _run_with_confirm(lambda req: answer)
    run = h.start("delete it")
    with pytest.raises(hk.UsageError, match="must return True"):
        run.run()
    assert run.finish_reason == "error"
    assert run.log.of_type("tool.result") == []  # nothing ran


def test_async_confirm_callback_is_refused_up_front():
    async def ask(req):
        return False

    with pytest.raises(hk.UsageError, match="not async"):
        hk.Gate(confirm=ask)
    with pytest.raises(hk.UsageError, match="plain function"):
        hk.Gate(confirm="yes")


def test_async_tools_are_awaited_and_generators_refused():
    @hk.tool
    async def fetch(key: str) -> dict:
        """Fetch."""
        await asyncio.sleep(0)
        return {"key": key}

    model = hk.ScriptedModel([reply.tool_call("fetch", key="k"), reply.text("ok")])
    run = hk.Harness([fetch], model).start("x").run()
    (result,) = run.log.of_type("tool.result")
    assert result.payload["ok"] is True
    assert json.loads(result.payload["content"]) == {"key": "k"}

    def rows():
        yield 1

    with pytest.raises(hk.UsageError, match="generator"):
        hk.tool(rows)


class Opaque:
    pass


@dataclasses.dataclass
class Point:
    x: int


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({1, 3, 2}, [1, 2, 3]),
        (dt.date(2024, 5, 15), "2024-05-15"),
        (Point(x=1), {"x": 1}),
    ],
)
def test_common_non_json_values_are_converted(value, expected):
    @hk.tool
    def give() -> object:
        """Give."""
        return value

    model = hk.ScriptedModel([reply.tool_call("give"), reply.text("ok")])
    run = hk.Harness([give], model).start("x").run()
    assert json.loads(run.log.of_type("tool.result")[0].payload["content"]) == expected


@pytest.mark.parametrize("value", [{(1, 2): "tuple key"}, Opaque(), b"\x00bytes"])
def test_unserializable_results_become_tool_errors(value):
    @hk.tool
    def give() -> object:
        """Give."""
        return value

    model = hk.ScriptedModel([reply.tool_call("give"), reply.text("ok")])
    run = hk.Harness([give], model).start("x").run()
    (result,) = run.log.of_type("tool.result")
    assert result.payload["error_type"] == "tool_error"
    assert "cannot be sent as JSON" in json.loads(result.payload["content"])["message"]
    assert run.finish_reason == "stop"


def test_circular_result_is_a_tool_error():
    loop_ = []
    loop_.append(loop_)

    @hk.tool
    def give() -> object:
        """Give."""
        return loop_

    run = hk.Harness([give], hk.ScriptedModel([reply.tool_call("give"), reply.text("ok")])).run("x")
    assert run.log.of_type("tool.result")[0].payload["error_type"] == "tool_error"


@pytest.mark.parametrize(
    "kwargs", [{"max_steps": -1}, {"max_seconds": -0.5}, {"max_tokens": "10"}, {"max_steps": True}]
)
def test_limits_are_validated(kwargs):
    with pytest.raises(hk.UsageError, match="Limits"):
        hk.Limits(**kwargs)


def test_harness_arguments_are_validated():
    with pytest.raises(hk.UsageError, match="list of tools"):
        hk.Harness(delete_account, "scripted")
    with pytest.raises(hk.UsageError, match="get_model"):
        hk.Harness([delete_account], None)
    with pytest.raises(hk.UsageError, match="hk.Limits"):
        hk.Harness([delete_account], "scripted", limits={"max_steps": 3})
    with pytest.raises(hk.UsageError, match="hk.Gate"):
        hk.Harness([delete_account], "scripted", gate={"read": "deny"})
    with pytest.raises(hk.UsageError, match="does not have"):
        hk.Harness([delete_account], "scripted", gate=hk.Gate(tools={"delete_acount": "deny"}))
    with pytest.raises(hk.UsageError, match="dicts"):
        hk.Gate(policy="deny")
    with pytest.raises(hk.UsageError, match="user turns must be text"):
        hk.Harness([delete_account], "scripted").run(123)
    with pytest.raises(hk.UsageError, match="needs a function"):
        hk.tool(42)
    with pytest.raises(hk.UsageError, match="list of turns"):
        hk.ScriptedModel("hello")
    with pytest.raises(hk.UsageError, match="needs fn"):
        hk.get_model("function")
    with pytest.raises(hk.UsageError, match="wrap a function"):
        hk.lint(print)


def test_tool_options_are_validated():
    def f(x: int) -> int:
        return x

    # a string raised a raw TypeError; inf and 1e12 were taken, then every call failed with
    # `tool_error: OverflowError` and the tool was blamed
    for bad in (0, -1, "1", float("inf"), float("nan"), 1e12, True):
        with pytest.raises(hk.UsageError, match="timeout_seconds"):
            hk.tool(f, timeout_seconds=bad)
    for bad in (-5, 0, "100", 2.5, True):
        with pytest.raises(hk.UsageError, match="max_result_chars"):
            hk.tool(f, max_result_chars=bad)
    assert hk.tool(f, timeout_seconds=2).timeout_seconds == 2


def test_run_that_raises_still_records_its_end(tmp_path):
    model = hk.ScriptedModel([reply.tool_call("delete_account", user_id="u")])
    h = hk.Harness([delete_account], model, log_dir=tmp_path, gate=hk.Gate(confirm=hk.allow_all))
    run = h.start("x", run_id="r")
    with pytest.raises(hk.UsageError, match="ran out of turns"):
        run.run()
    last = hk.EventLog.read(tmp_path / "r.jsonl")[-1]
    assert last.type == "run.finished"
    assert last.payload["finish_reason"] == "error"
    assert "ran out of turns" in last.payload["error"]


def test_error_text_is_redacted_in_the_log():
    key = "sk-Zq8XvT4mN2pR7wY1kL9cB3hJ6fD0sA5gE8uI2oP4"

    def failing(messages, info):
        raise hk.ModelError(f"401: bad key {key}", status_code=401)

    run = hk.Harness([], hk.FunctionModel(failing)).run("x")
    assert key not in json.dumps([e.to_dict() for e in run.log])


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8"),
        (b'{"v": 1, "something": "else"}\n{"v": 2}\n', ":1: not an event line"),
        (b"[1, 2, 3]\n\n", ":1: a JSON list"),
    ],
)
def test_reading_something_that_is_not_a_log(tmp_path, content, match):
    p = tmp_path / "x.jsonl"
    p.write_bytes(content)
    with pytest.raises(hk.errors.CorruptLogError, match=match):
        hk.EventLog.read(p)


def test_negative_event_index_counts_from_the_end():
    log = hk.EventLog()
    log.append("user.message", {"content": "a"})
    log.append("user.message", {"content": "b"})
    assert log[-1].payload["content"] == "b"
    assert log[1].payload["content"] == "a"
    with pytest.raises(hk.UsageError, match="no event 3"):
        log[3]


def test_cli_reports_user_mistakes_without_a_traceback(tmp_path, capsys):
    from harnesskit import cli

    not_json = tmp_path / "runs.json"
    not_json.write_text("{oops")
    assert cli.main(["replay", str(not_json)]) == 2
    assert "not a JSON trajectory file" in capsys.readouterr().err
    a_file = tmp_path / "afile.txt"
    a_file.write_text("x")
    assert cli.main(["demo", "--out", str(a_file)]) == 2
    assert "is a file; give --out a folder" in capsys.readouterr().err
    runs = Path(__file__).parents[2] / "shared" / "datasets" / "sierra-research__tau-bench"
    recorded = runs / "historical_trajectories" / "gpt-4o-airline.json"
    if recorded.exists():  # the option named is the one the user gave
        assert cli.main(["replay", "--limit", "1", "--log-dir", str(a_file), str(recorded)]) == 2
        assert "is a file; give --log-dir a folder" in capsys.readouterr().err
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    assert cli.main(["replay", str(empty)]) == 2
    assert "no runs" in capsys.readouterr().err


def test_cli_names_a_network_error_as_such_not_as_a_path(monkeypatch, capsys):
    from harnesskit import cli

    def refused(args):
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(cli, "build_parser", _parser_running(refused))
    assert cli.main(["anything"]) == 2
    err = capsys.readouterr().err
    assert "ConnectionRefusedError" in err and "Connection refused" in err
    assert "cannot use a path" not in err


def _parser_running(func):
    import argparse

    def build():
        p = argparse.ArgumentParser()
        p.add_argument("x")
        p.set_defaults(func=func)
        return p

    return build


def test_unset_api_key_env_is_an_error(monkeypatch):
    monkeypatch.delenv("HK_TEST_UNSET_KEY", raising=False)
    with pytest.raises(hk.UsageError, match="HK_TEST_UNSET_KEY"):
        hk.get_model(
            "openai-compat:m", base_url="http://127.0.0.1:9/v1", api_key_env="HK_TEST_UNSET_KEY"
        )


def test_a_missing_line_in_the_middle_is_corruption(tmp_path):
    p = tmp_path / "l.jsonl"
    with hk.EventLog(p) as log:
        for i in range(4):
            log.append("user.message", {"content": str(i)})
    lines = p.read_text().splitlines(True)
    p.write_text("".join(lines[:2] + lines[3:]))
    with pytest.raises(hk.errors.CorruptLogError, match="event id 4 where 3 was expected"):
        hk.EventLog.read(p)


def test_fork_at_minus_one_is_the_last_event():
    model = hk.ScriptedModel([reply.text("a"), reply.text("b")])
    run = hk.Harness([], model).start("x").run()
    last = run.log[-1].event_id
    branch = run.fork(-1, "b1")
    fork = branch.log.of_type("branch.fork")[-1]
    assert fork.parent_id == last
    with pytest.raises(hk.UsageError, match="event id"):
        run.fork("5", "b2")


def test_one_name_is_not_split_into_characters():
    from harnesskit.analysis.probes import run_probes

    matrix = run_probes("default", kinds="expired_snippet", repeats=1, seed=0)
    assert matrix.index.tolist() == ["default"]
    assert matrix.columns.tolist() == ["expired_snippet"]
    with pytest.raises(hk.UsageError, match="at least one"):
        run_probes([], kinds=["expired_snippet"])
    with pytest.raises(hk.UsageError, match="whole number"):
        run_probes("default", repeats=1.5)
    cases = hk.load_cases("datasets/cases/shop.jsonl")
    with pytest.raises(hk.UsageError, match="no agent 'carefull'"):
        hk.Experiment(cases, models="shop:carefull")
    assert list(hk.Experiment(cases, models="shop:careful", policies="default").models) == [
        "shop:careful"
    ]


def test_search_filter_typos_are_errors_not_empty_frames():
    run = hk.Harness([], hk.ScriptedModel([reply.text("a")])).run("x")
    traj = hk.Trajectory(run.log)
    assert len(traj.search(type="model.response")) == 1
    with pytest.raises(hk.UsageError, match="unknown \\['tool.reslt'\\]"):
        traj.search(type="tool.reslt")
    with pytest.raises(hk.UsageError, match="status"):
        traj.search(status="actve")
    with pytest.raises(hk.UsageError, match="kind"):
        traj.search(kind="factt")


def test_a_harness_without_a_model_inspects_but_its_first_step_says_what_to_pass(tmp_path):
    h = hk.Harness([delete_account], log_dir=tmp_path)  # fine for starting and inspecting
    run = h.start("hello", run_id="nomodel")
    assert run.log[1].type == "task.contract"
    with pytest.raises(hk.UsageError, match=r"has no model.*Harness\(tools, model\)"):
        run.step()
    assert run.finish_reason == "error"
    finished = hk.EventLog.read(tmp_path / "nomodel.jsonl").last("run.finished")
    assert "ScriptedModel" in finished.payload["error"]  # the hint is on record too
    assert "ran out of turns" not in finished.payload["error"]


def test_bad_containers_and_payloads_are_usage_errors():
    # each raised a raw AttributeError / TypeError / ValueError before
    with pytest.raises(hk.UsageError, match="EventLog"):
        hk.context.ContextBuilder("default").build(None)
    with pytest.raises(hk.UsageError, match="list of tools"):
        hk.Harness(5, hk.ScriptedModel([]))
    with pytest.raises(hk.UsageError, match="a Tool or a function"):
        hk.Harness([5], hk.ScriptedModel([]))
    log = hk.EventLog()
    cyclic: dict = {}
    cyclic["self"] = cyclic
    with pytest.raises(hk.UsageError, match="cannot be written as JSON"):
        log.append("checkpoint", cyclic)
    assert len(log) == 0  # nothing half-written
    assert log.append("checkpoint", {"ok": 1}).event_id == 1
