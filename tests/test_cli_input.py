"""Malformed files and conflicting options on the command line: a clear error, never a traceback.

The CLI runs in-process (`cli.main`), as in `test_bad_input.py`; each test names the mechanism
it pins (one loader for every JSON file, a budget on what a policy file expands to, ...).
"""

import pytest

import harnesskit as hk
from harnesskit import cli

DEEP = "[" * 200_000 + "]" * 200_000
HUGE_INT = "1" * 5_000


@pytest.fixture
def deep_json(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text(DEEP)
    return path


@pytest.mark.parametrize("command", ["replay", "sufficiency", "eval"])
@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_deeply_nested_json_is_a_usage_error_naming_the_file(tmp_path, capsys, command, suffix):
    path = tmp_path / f"deep{suffix}"
    path.write_text(DEEP)
    argv = [command, str(path)] + (["--no-progress"] if command == "eval" else [])
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "nested too deeply" in err
    assert "Traceback" not in err and "RecursionError" not in err


@pytest.mark.parametrize(
    ("command", "name", "text", "where"),
    [
        ("replay", "huge.json", f"[{HUGE_INT}]", "huge.json:"),
        ("eval", "huge.jsonl", '{"id": "a"}\n{"id": ' + HUGE_INT + "}\n", "huge.jsonl:2:"),
    ],
)
def test_an_integer_too_long_names_the_file_and_line_not_python(
    tmp_path, capsys, command, name, text, where
):
    path = tmp_path / name
    path.write_text(text)
    assert cli.main([command, str(path)]) == 2
    err = capsys.readouterr().err
    assert where in err and "integer too long" in err and "in quotes" in err
    assert "set_int_max_str_digits" not in err


def test_recorded_runs_loader_refuses_deep_json_in_the_api(deep_json):
    from harnesskit.domains.airline.trajectories import load_recorded_runs

    with pytest.raises(hk.UsageError, match="nested too deeply"):
        load_recorded_runs(deep_json)
    with pytest.raises(hk.UsageError, match="nested too deeply"):
        hk.load_cases(deep_json)


def test_json_error_position_reads_once(tmp_path, capsys):
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "abc\n')
    assert cli.main(["eval", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Unterminated string starting at char" in err and "at at" not in err


def _policy_cases(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a", "domain": "shop", "input": "hi"}\n')
    return cases


@pytest.mark.parametrize("text", ["a: " + "[" * 5000 + "]" * 5000 + "\n", DEEP])
def test_deeply_nested_policy_file_is_a_usage_error(tmp_path, capsys, text):
    policy = tmp_path / "deep.yaml"
    policy.write_text(text)
    cases = _policy_cases(tmp_path)
    assert cli.main(["eval", str(cases), "--policy", str(policy), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert str(policy) in err and "nested more than" in err and "Traceback" not in err
    with pytest.raises(hk.UsageError, match="nested more than"):
        hk.Harness(model=hk.ScriptedModel([]), policy=str(policy))


def _bomb(levels=9):
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join([*lines, "name: bomb"]) + "\n"


def test_an_alias_bomb_policy_is_refused_before_it_expands(tmp_path, capsys):
    policy = tmp_path / "bomb.yaml"
    policy.write_text(_bomb())
    cases = _policy_cases(tmp_path)
    assert cli.main(["eval", str(cases), "--policy", str(policy), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"{policy}:5" in err and "aliases" in err
    with pytest.raises(hk.UsageError, match="expands to more than"):
        hk.ContextPolicy.from_file(policy)


def test_a_few_aliases_in_a_policy_still_load(tmp_path):
    policy = tmp_path / "alias.yaml"
    policy.write_text("name: mine\nbase: &b {max_events: 5}\nlimits: *b\n")
    with pytest.raises(hk.UsageError, match="base"):  # the schema judges it, not the budget
        hk.ContextPolicy.from_file(policy)


def test_a_failed_write_has_its_own_exit_code_not_ctrl_c(tmp_path, capsys, monkeypatch):
    import errno

    from harnesskit.analysis.evals import Experiment

    def full_disk(self, *args, **kwargs):
        cause = OSError(errno.ENOSPC, "No space left on device")
        raise hk.errors.ExperimentInterrupted(
            "could not write the experiment's files", path="x", finished=13, total=32
        ) from cause

    def ctrl_c(self, *args, **kwargs):
        raise hk.errors.ExperimentInterrupted("interrupted", path="x", finished=1, total=2)

    cases = _policy_cases(tmp_path)
    monkeypatch.setattr(Experiment, "run", full_disk)
    assert cli.main(["eval", str(cases), "--no-progress"]) == cli.WRITE_FAILED == 4
    monkeypatch.setattr(Experiment, "run", ctrl_c)
    assert cli.main(["eval", str(cases), "--no-progress"]) == 130
    assert "4 when the experiment's files" in cli.build_parser().format_help()


def test_resume_refuses_options_that_differ_from_the_saved_experiment(tmp_path, capsys):
    from pathlib import Path

    shop = Path(__file__).resolve().parents[1] / "datasets" / "cases" / "shop.jsonl"
    out = tmp_path / "good"
    assert cli.main(["eval", str(shop), "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    argv = ["eval", "/nonexistent.jsonl", "--resume", str(out), "--model", "shop:hasty"]
    assert cli.main([*argv, "--repeats", "7", "--policy", "window", "--no-progress"]) == 2
    err = capsys.readouterr().err
    for named in ("/nonexistent.jsonl", "--model shop:hasty", "--repeats 7", "saved: 1"):
        assert named in err, err
    assert "--policy window (saved: full-history)" in err
    # the same values as saved, or none, resume as before
    assert cli.main(["eval", "--resume", str(out), "--repeats", "1", "--no-progress"]) == 0
