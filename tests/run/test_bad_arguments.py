"""Bad `Harness`, `Limits` and `fork` arguments are refused up front, naming the argument."""

import json
import math
import pathlib

import pytest

import harnesskit as hk
from harnesskit.testing import reply

SHOP = pathlib.Path(__file__).resolve().parents[2] / "datasets" / "cases" / "shop.jsonl"


def _model():
    return hk.ScriptedModel([reply.text("a"), reply.text("b")])


# -- Harness -------------------------------------------------------------------------------------


@pytest.mark.parametrize("log_dir", [5, 2.5, ["logs"], ""])
def test_log_dir_must_be_a_path(log_dir):
    with pytest.raises(hk.UsageError, match=r"Harness\(log_dir=...\) takes a folder path"):
        hk.Harness([], _model(), log_dir=log_dir)


def test_log_dir_that_is_a_file_is_refused_naming_the_path(tmp_path):
    file = tmp_path / "passwd"
    file.write_text("root:x:0:0\n")
    with pytest.raises(hk.UsageError, match=r"log_dir=\.\.\.\): \S*passwd is a file, not a folder"):
        hk.Harness([], _model(), log_dir=file)
    assert file.read_text() == "root:x:0:0\n"  # untouched


def test_log_dir_under_a_file_is_refused(tmp_path):
    file = tmp_path / "plain"
    file.write_text("")
    with pytest.raises(
        hk.UsageError, match=r"log_dir=.*plain/logs goes through a file .*plain is a file"
    ):
        hk.Harness([], _model(), log_dir=str(file / "logs"))


def test_log_dir_that_cannot_be_created_is_refused():
    with pytest.raises(hk.UsageError, match=r"log_dir='/proc/nope'.*writable folder"):
        hk.Harness([], _model(), log_dir="/proc/nope")


def test_a_new_log_dir_is_created_and_used(tmp_path):
    folder = tmp_path / "a" / "b"
    run = hk.Harness([], _model(), log_dir=folder).start("x").run()
    assert folder.is_dir()
    assert run.log.path.parent == folder and run.log.path.is_file()


@pytest.mark.parametrize("prompt", [None, 5, ["be brief"]])
def test_system_prompt_must_be_a_string(prompt):
    with pytest.raises(hk.UsageError, match=r"Harness\(system_prompt=...\) takes a string"):
        hk.Harness([], _model(), system_prompt=prompt)


@pytest.mark.parametrize("settings", [[1], "temperature=0", 0.5])
def test_settings_must_be_a_dict(settings):
    with pytest.raises(hk.UsageError, match=r"Harness\(settings=...\) takes a dict"):
        hk.Harness([], _model(), settings=settings)


@pytest.mark.parametrize("progress", [5, "tqdm", True])
def test_progress_must_be_callable(progress):
    with pytest.raises(hk.UsageError, match=r"Harness\(progress=...\) takes a callback"):
        hk.Harness([], _model(), progress=progress)


def test_valid_progress_and_settings_still_work():
    items = []
    h = hk.Harness([], _model(), progress=items.append, settings={"temperature": 0})
    h.start("x").run()
    assert items and items[-1].status == "finished"
    assert hk.Harness([], _model(), settings=None, progress=None).settings == {}


@pytest.mark.parametrize(
    ("settings", "where"),
    [
        ({"temperature": math.nan}, "temperature = nan"),
        ({"top_p": math.inf}, "top_p = inf"),
        ({"extra_body": {"options": {"tau": -math.inf}}}, r"extra_body\.options\.tau = -inf"),
        ({"logit_bias": [1, [2, math.nan]]}, r"logit_bias\[1\]\[1\] = nan"),
    ],
)
def test_settings_holding_nan_or_infinity_are_refused_naming_the_key(tmp_path, settings, where):
    with pytest.raises(hk.UsageError, match=rf"Harness\(settings=...\) holds .*\({where}\)"):
        hk.Harness([], _model(), settings=settings, log_dir=tmp_path)
    with pytest.raises(hk.UsageError, match=rf"Experiment\(settings=...\) holds .*\({where}\)"):
        hk.Experiment(hk.load_cases(SHOP)[:1], settings=settings)

    h = hk.Harness([], _model(), log_dir=tmp_path)
    path = h.run("x", run_id="r1").log.path
    before = path.read_bytes()
    h.settings.update(settings)  # edited after construction: refused when a run opens
    for attempt in (
        lambda: h.start("x", run_id="r2"),
        lambda: h.resume(path),
        lambda: h.restart(path, reason="again"),
    ):
        with pytest.raises(hk.UsageError, match=rf"Harness\.settings holds .*\({where}\)"):
            attempt()
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["r1.jsonl"]  # no r2


@pytest.mark.parametrize("task", [{"score": math.nan}, {"runs": [{"budget": math.inf}]}])
def test_task_facts_holding_nan_or_infinity_are_refused(tmp_path, task):
    h = hk.Harness([], _model(), log_dir=tmp_path)
    with pytest.raises(hk.UsageError, match=r"start\(task=...\) holds a number JSON cannot"):
        h.start("x", run_id="r1", task=task)
    with pytest.raises(hk.UsageError, match=r"task must be a dict of task facts"):
        h.start("x", run_id="r1", task=["score"])
    assert list(tmp_path.iterdir()) == []
    run = h.run("x", run_id="r1", task={"score": 0.5, "note": None})
    for line in run.log.path.read_text().splitlines():
        json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} in the log"))


# -- Limits --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("max_steps", 2.5, "must be an int"),
        ("max_steps", True, "must be an int"),
        ("max_steps", -1, ">= 0"),
        ("max_steps", 0, ">= 1"),
        ("max_consecutive_errors", 0, ">= 1"),
        ("max_steps", "10", "must be an int"),
        ("max_tokens", math.inf, "must be an int"),
        ("max_tokens", 1000.0, "must be an int"),
        ("max_prompt_tokens", -5, ">= 0"),
        ("max_consecutive_errors", False, "must be an int"),
        ("max_seconds", math.nan, "finite"),
        ("max_seconds", math.inf, "finite"),
        ("max_seconds", -0.5, ">= 0"),
        ("max_seconds", True, "number of seconds"),
        ("closing_seconds", math.nan, "finite"),
        ("closing_seconds", "30", "number of seconds"),
    ],
)
def test_bad_limits_are_refused_naming_the_field(field, value, message):
    with pytest.raises(hk.UsageError, match=rf"Limits\.{field} .*{message}"):
        hk.Limits(**{field: value})


def test_valid_limits_still_work():
    limits = hk.Limits(max_steps=3, max_tokens=None, max_seconds=1.5, closing_seconds=None)
    assert (limits.max_steps, limits.max_seconds) == (3, 1.5)
    assert hk.Limits(max_seconds=0, max_tokens=0).max_seconds == 0
    assert hk.Limits(max_seconds=2).max_seconds == 2


# -- fork ----------------------------------------------------------------------------------------


def test_fork_ids_below_minus_len_are_refused_like_zero():
    run = hk.Harness([], _model()).start("x").run()
    n = len(run.log.events)
    first = run.fork(-n, "oldest")  # -1..-len count from the end, like log[-1]
    assert first.log.of_type("branch.fork")[-1].parent_id == 1
    n = len(run.log.events)
    for bad in (0, -(n + 1), -(n + 10), n + 1):
        with pytest.raises(hk.UsageError, match=rf"no event {bad}: the log has events 1\.\.{n}"):
            run.fork(bad, f"b{abs(bad)}")


# -- start(task=...) -----------------------------------------------------------------------------


@pytest.mark.parametrize("task", ["cancel order A1", ["A1"], 5, {1: "a"}, b"x"])
@pytest.mark.parametrize("via", ["start", "run"])
def test_a_task_that_is_not_a_dict_is_refused_before_anything_is_written(tmp_path, task, via):
    h = hk.Harness([], _model(), log_dir=tmp_path)
    with pytest.raises(hk.UsageError, match=r"task must be a dict of task facts with text keys"):
        getattr(h, via)("hello", task=task, run_id="r")
    assert list(tmp_path.iterdir()) == []  # no log, no ledger


def test_a_task_dict_is_recorded_in_the_contract_and_the_run_works(tmp_path):
    run = hk.Harness([], _model(), log_dir=tmp_path).run("hello", task={"task_id": "t-1"})
    assert run.finish_reason == "stop" and run.log.events[0].task == {"task_id": "t-1"}
    run.log.close()
