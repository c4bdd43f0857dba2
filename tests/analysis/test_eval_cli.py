"""`harnesskit eval` for scripts: exit codes, model checks, infrastructure errors, Ctrl-C, resume."""

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time

import pytest

from harnesskit.cli import main
from harnesskit.models import base
from tests.support.loopback import LoopbackServer, Reply, completion

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHOP = ROOT / "datasets" / "cases" / "shop.jsonl"
TAU2 = ROOT / "datasets" / "cases" / "airline_tau2.jsonl"


@pytest.fixture
def loopback_allowed(monkeypatch):
    """Model requests may go out: only to the loopback servers these tests start."""
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)


def one_case(tmp_path, **extra):
    case = {"id": "hello", "domain": "shop", "input": "Where is order A1?", **extra}
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(case) + "\n")
    return path


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("harnesskit ")


@pytest.mark.parametrize("spec", ["olama:x", "nosuch"])
def test_a_typod_model_fails_before_any_trial(spec, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["eval", str(SHOP), "--model", spec, "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "known providers" in err and "ollama" in err and "shop:careful" in err
    assert not out.exists()  # refused before the run directory, let alone a trial


def test_a_domain_agent_on_another_domains_cases_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["eval", str(TAU2), "--model", "shop:careful", "--out", str(out)]) == 2
    assert "'shop' domain" in capsys.readouterr().err
    assert not out.exists()


def test_the_default_model_follows_the_cases_domain(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["eval", str(SHOP), "--out", str(out), "--no-progress"])
    assert code == 0
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert {r["model"] for r in rows} == {"shop:careful"}


def test_cases_from_two_domains_without_a_model_are_refused(tmp_path, capsys):
    both = tmp_path / "both"
    both.mkdir()
    (both / "a.jsonl").write_text(SHOP.read_text())
    (both / "b.jsonl").write_text(TAU2.read_text().splitlines()[0] + "\n")
    assert main(["eval", str(both), "--out", str(tmp_path / "run")]) == 2
    assert "span the domains ['airline', 'shop']" in capsys.readouterr().err


def test_a_case_naming_a_missing_tool_is_refused_with_did_you_mean(tmp_path, capsys):
    path = one_case(tmp_path, expect={"calls": [{"tool": "get_ordr"}]})
    assert main(["eval", str(path), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "'get_ordr'" in err and "did you mean 'get_order'" in err


def test_a_dead_server_counts_errors_and_exits_non_zero(tmp_path, capsys, loopback_allowed):
    with socket.socket() as s:  # a port nobody listens on: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "run"
    args = ["eval", str(one_case(tmp_path)), "--model", "openai-compat:m", "--out", str(out)]
    code = main([*args, "--base-url", f"http://127.0.0.1:{port}/v1", "--no-progress"])
    assert code == 3
    assert "did not run to an end" in capsys.readouterr().err
    row = json.loads((out / "results.jsonl").read_text())
    assert row["error"].startswith("ModelError") and "onnect" in row["error"]
    from harnesskit.analysis.evals import ExperimentResult

    result = ExperimentResult.load(out)
    summary = result.summary()
    assert summary["errors"].iloc[0] == 1 and summary["pass_rate"].isna().all()
    assert summary["pass^1"].isna().all()  # no trial ran: no pass^k either, not 0.0
    assert summary["tokens_per_pass"].isna().all()
    assert len(result.failures()) == 0  # not blamed on the agent


def test_base_url_and_api_key_env_reach_a_loopback_server(tmp_path, monkeypatch, loopback_allowed):
    monkeypatch.setenv("MY_KEY", "sk-loopback")
    out = tmp_path / "run"
    with LoopbackServer([Reply(json=completion("Order A1 has shipped."))] * 4) as srv:
        args = ["eval", str(one_case(tmp_path)), "--model", "openai-compat:m", "--out", str(out)]
        code = main([*args, "--base-url", srv.url, "--api-key-env", "MY_KEY", "--no-progress"])
        seen = srv.requests
    assert code == 0
    assert seen and seen[0].headers["authorization"] == "Bearer sk-loopback"
    assert seen[0].body["model"] == "m"


def test_fail_under(tmp_path, loopback_allowed):
    path = one_case(tmp_path, expect={"calls": [{"tool": "get_order"}]})
    with LoopbackServer([Reply(json=completion("No idea."))] * 4) as srv:
        base = ["eval", str(path), "--model", "openai-compat:m", "--base-url", srv.url]
        assert main([*base, "--out", str(tmp_path / "a"), "--no-progress"]) == 0
        assert main([*base, "--out", str(tmp_path / "b"), "--fail-under", "0.5"]) == 1


def _eval(args, **kw):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "harnesskit.cli", "eval", *args, "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        **kw,
    )


def test_ctrl_c_saves_the_finished_trials_and_resume_runs_exactly_the_rest(tmp_path):
    out = tmp_path / "run"
    slow = Reply(json=completion("Done."), delay_seconds=0.3)
    with LoopbackServer([slow] * 400) as srv:
        model = ["--model", "openai-compat:m", "--base-url", srv.url, "--workers", "2"]
        proc = _eval([str(SHOP), *model, "--repeats", "3", "--out", str(out)])
        deadline = time.monotonic() + 120
        while len(list((out / "logs").glob("*.jsonl"))) < 4:  # two trials done, two running
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 130, stderr
        assert "Traceback" not in stderr
        assert "interrupted" in stderr and f"--resume {out}" in stderr
        rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
        assert 2 <= len(rows) < 24
        assert all(r["error"] is None for r in rows)
        manifest = json.loads((out / "experiment.json").read_text())
        assert manifest["interrupted"] and not manifest["finished"]
        kept = {r["run_id"]: (out / "logs" / f"{r['run_id']}.jsonl").read_bytes() for r in rows}
        before = len(srv.requests)

        proc = _eval(["--resume", str(out), *model])
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
        rows_after = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
        requests = len(srv.requests) - before
    assert len(rows_after) == 24
    assert len({r["run_id"] for r in rows_after}) == 24
    # the saved trials were not run again: their logs are byte for byte the same
    assert {k: (out / "logs" / f"{k}.jsonl").read_bytes() for k in kept} == kept
    # one request per user turn of each missing trial, and none for the kept ones
    turns = {}
    for line in SHOP.read_text().splitlines():
        case = json.loads(line)
        turns[case["id"]] = 1 if isinstance(case["input"], str) else len(case["input"])
    missing = [r for r in rows_after if r["run_id"] not in kept]
    assert requests == sum(turns[r["case"]] for r in missing)
    assert json.loads((out / "experiment.json").read_text())["finished"]


def test_ctrl_c_in_demo_prints_the_finished_tasks_without_a_traceback(tmp_path):
    slow = Reply(json=completion("Done."), delay_seconds=0.4)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with LoopbackServer([slow] * 50) as srv:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harnesskit.cli", "demo", "--out", str(tmp_path)]
            + ["--model", "openai-compat:m", "--base-url", srv.url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        deadline = time.monotonic() + 120
        while len(list(tmp_path.glob("demo-*/*.jsonl"))) < 2:  # one task done, one running
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert "Traceback" not in stderr
    assert stdout.splitlines()[0].startswith("task")
    assert "interrupted (Ctrl-C); not run:" in stdout


@pytest.mark.parametrize(
    ("fault", "detail"),
    [(Reply(status=503, json={"error": "overloaded"}), "503"), (Reply(delay_seconds=1.0), "")],
    ids=["5xx-after-retries", "timeout"],
)
def test_5xx_after_retries_and_timeouts_are_errors_not_failures(
    fault, detail, tmp_path, loopback_allowed
):
    import harnesskit as hk
    from harnesskit.models import get_model
    from harnesskit.models._retry import RetryPolicy

    no_wait = RetryPolicy(max_retries=1, initial_backoff_seconds=0, max_backoff_seconds=0)
    with LoopbackServer([fault] * 4) as srv:

        def model(trial):
            return get_model(
                "openai-compat:m", base_url=srv.url, retry=no_wait, timeout_seconds=0.2
            )

        cases = hk.load_cases(one_case(tmp_path))
        result = hk.Experiment(cases, models={"m": model}).run(tmp_path / "run", progress=False)
    row = result.rows[0]
    assert row["error"].startswith("ModelError") and detail in row["error"]
    assert len(result.errors()) == 1 and len(result.failures()) == 0
    assert result.summary()["errors"].iloc[0] == 1


def test_eval_with_a_simulated_user_on_a_tau2_case(tmp_path, loopback_allowed):
    from harnesskit.analysis.evals import ExperimentResult

    path = tmp_path / "tau2.jsonl"
    path.write_text(TAU2.read_text().splitlines()[0] + "\n")
    texts = ["I cannot cancel it for a refund.", "Please try.", "Still no.", "###STOP###"]
    out = tmp_path / "run"
    with LoopbackServer([Reply(json=completion(t)) for t in texts]) as srv:
        args = ["eval", str(path), "--model", "openai-compat:agent", "--user", "openai-compat:user"]
        code = main([*args, "--base-url", srv.url, "--out", str(out), "--no-progress"])
        seen = [r.body["model"] for r in srv.requests]
    assert code == 0
    assert seen == ["agent", "user", "agent", "user"]
    result = ExperimentResult.load(out)
    log = result.log(result.rows[0]["run_id"])
    users = [(e.content, e.payload.get("simulated")) for e in log.of_type("user.message")]
    assert users[1:] == [("Please try.", True)]


@pytest.mark.parametrize("rate", ["1.5", "-3", "abc"])
def test_fail_under_outside_0_to_1_is_a_usage_error_before_any_trial(rate, capsys):
    from harnesskit import cli

    with pytest.raises(SystemExit) as exc:
        cli.main(["eval", "datasets/cases/shop.jsonl", "--fail-under", rate])
    assert exc.value.code == 2
    assert "--fail-under" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--repeats", "0"),
        ("--repeats", "-1"),
        ("--workers", "0"),
        ("--max-trials", "0"),
        ("--seed", "-1"),
        ("--repeats", "two"),
    ],
)
def test_a_count_under_1_or_a_negative_seed_is_refused_naming_the_option(
    tmp_path, capsys, option, value
):
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exc:
        main(["eval", str(SHOP), "--out", str(out), "--no-progress", option, value])
    assert exc.value.code == 2
    assert f"argument {option}: " in capsys.readouterr().err
    assert not out.exists()  # refused before the run directory, let alone a trial


@pytest.mark.parametrize(
    "command",
    [["replay", "x.json", "--limit", "0"], ["sufficiency", "x.json", "--limit", "-1"]],
    ids=["replay-limit", "sufficiency-limit"],
)  # fmt: skip
def test_the_other_commands_counts_are_refused_too(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main(command)
    assert exc.value.code == 2
    assert f"argument {command[-2]}: " in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags",
    [["--base-url", "http://127.0.0.1:9/v1"], ["--api-key-env", "MY_KEY"]],
    ids=["base-url", "api-key-env"],
)
@pytest.mark.parametrize(
    "models",
    [[], ["--model", "shop:careful"], ["--model", "shop:careful", "--model", "scripted"]],
    ids=["default-agent", "domain-agent", "agent-and-scripted"],
)
def test_server_options_for_an_offline_model_are_refused_not_ignored(
    tmp_path, capsys, flags, models
):
    out = tmp_path / "run"
    code = main(["eval", str(SHOP), "--out", str(out), "--no-progress", *models, *flags])
    assert code == 2
    err = capsys.readouterr().err
    assert f"{flags[0]} applies to a model served over HTTP" in err and "offline" in err
    assert not out.exists()


def test_server_options_beside_a_real_model_are_kept(tmp_path):
    from harnesskit import cli

    parsed = cli.build_parser().parse_args(
        ["eval", str(SHOP), "--model", "shop:careful", "--model", "openai-compat:m",
         "--base-url", "http://127.0.0.1:9/v1"]
    )  # fmt: skip
    models = cli._eval_models(parsed.model, parsed)
    assert models["shop:careful"] == "shop:careful"
    assert models["openai-compat:m"].args[1] == (("base_url", "http://127.0.0.1:9/v1"),)


def test_demo_refuses_api_key_env_without_a_model(capsys):
    assert main(["demo", "--api-key-env", "MY_KEY"]) == 2
    assert "--api-key-env applies to a real model" in capsys.readouterr().err


@pytest.mark.parametrize("status", [400, 401, 404])
def test_a_server_refusing_every_request_is_named_a_configuration_error(
    status, tmp_path, capsys, loopback_allowed
):
    """A 400/401/404 is the configuration (key, model, URL): a plain --resume fails the same way."""
    out = tmp_path / "run"
    refuse = Reply(status=status, json={"error": {"message": "no"}})
    with LoopbackServer([refuse] * 8) as srv:
        args = ["eval", str(one_case(tmp_path)), "--model", "openai-compat:m", "--out", str(out)]
        code = main([*args, "--base-url", srv.url, "--no-progress"])
    assert code == 3
    err = capsys.readouterr().err
    assert f"1 of them the model's server refused with HTTP {status}" in err
    assert "configuration error" in err and "will not fix" in err and "--base-url" in err
    row = json.loads((out / "results.jsonl").read_text())
    assert row["error_status"] == status

    from harnesskit.analysis.evals import ExperimentResult

    assert ExperimentResult.load(out).rows[0]["error_status"] == status  # a row field it reads


def test_a_5xx_after_retries_still_says_resume(tmp_path, capsys, loopback_allowed):
    out = tmp_path / "run"
    with LoopbackServer([Reply(status=503, json={"error": "overloaded"})] * 8) as srv:
        args = ["eval", str(one_case(tmp_path)), "--model", "openai-compat:m", "--out", str(out)]
        assert main([*args, "--base-url", srv.url, "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert f"run them again with --resume {out}" in err and "configuration" not in err
