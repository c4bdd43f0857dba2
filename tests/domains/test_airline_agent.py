"""The embedded offline agent and the demo job."""

import json

import pytest

import harnesskit as hk
from harnesskit import cli
from harnesskit.domains import airline
from harnesskit.domains.airline.agent import parse_request


def test_parse_booking_request():
    req = parse_request(airline.DEMO_TASKS[0].user_message)
    assert (req.intent, req.user_id, req.origin, req.destination, req.date) == (
        "book",
        "mei_hernandez_8984",
        "ATL",
        "PHX",
        "2024-05-20",
    )
    assert (req.cabin, req.one_stop_ok, req.bags, req.insurance) == ("economy", True, 2, False)
    assert (req.card_last_four, req.use_gift_cards, req.use_certificate) == ("1698", True, False)


def test_parse_cancel_requests():
    req = parse_request(
        "I'm lei_rossi_3206 and I'm sick. Cancel VAAOXJ: it's business class and I have insurance."
    )
    assert (req.intent, req.reservation_id, req.reason) == ("cancel", "VAAOXJ", "health")
    assert (req.claimed_cabin, req.claimed_insurance) == ("business", True)
    req = parse_request("cancel 4WQ150, my plans changed")
    assert (req.reason, req.claimed_cabin, req.claimed_insurance) == ("change_of_plan", None, None)
    assert parse_request("hello").intent == "unknown"


def test_agent_reads_before_it_claims():
    db = airline.load_database()
    h = hk.Harness(
        tools=airline.tools(db),
        model=airline.agent_model(),
        system_prompt=airline.POLICY,
        gate=hk.Gate(confirm=hk.allow_all),
    )
    run = h.run("anya_brown_2655: please cancel JEPRZB, plans changed")
    calls = [e.payload for e in run.log.of_type("tool.call")]
    assert [c["tool"] for c in calls] == ["get_reservation_details", "cancel_reservation"]
    assert calls[1]["arguments"]["expected_cabin_class"] == "economy"
    assert run.log.of_type("alert.mismatch") == []
    assert run.finish_reason == "stop" and "is cancelled" in run.final_text


def test_run_demo_writes_logs_and_chart(tmp_path):
    report = airline.run_demo(tmp_path, echo=None)
    assert [r.task for r in report.rows] == [t.name for t in airline.DEMO_TASKS]
    assert all(r.passed for r in report.rows), report.to_text()
    # the partly flown trip goes to a human agent, which ends the run as in tau-bench
    assert [r.finish_reason for r in report.rows] == ["stop"] * 4 + ["transferred"]
    assert all(r.estimated for r in report.rows) and "prompt tokens: estimated" in report.to_text()
    booking = report.rows[0]
    # 5 airline calls + 4 artifact_slice pages: the one-stop search (37 itineraries) is stored
    # as an artifact (R-A1) and read back 10 items at a time, only the fields the choice needs
    assert booking.tool_calls == 9
    assert max(booking.tokens_per_step) > 2 * min(booking.tokens_per_step)  # the large search
    assert report.rows[3].mismatches == 2
    assert report.chart.read_bytes()[:4] == b"\x89PNG"
    for row in report.rows:
        assert hk.EventLog.read(row.log_path).of_type("run.finished")
    text = report.to_text()
    assert text.splitlines()[0].split() == [
        "task",
        "steps",
        "tool",
        "calls",
        "prompt",
        "tokens",
        "finish_reason",
        "pass",
    ]
    assert "passed 5/5" in text


def test_cli_demo(tmp_path, capsys):
    assert cli.main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "book-cheapest-one-stop" in out and "passed 5/5" in out
    (first,) = tmp_path.glob("demo-*")
    assert (first / "tokens_per_step.png").is_file()
    assert len(list(first.glob("*.jsonl"))) == 5
    # a second demo never touches the first one's logs: it gets a folder of its own
    assert cli.main(["demo", "--out", str(tmp_path)]) == 0
    assert len(list(tmp_path.glob("demo-*"))) == 2


def test_agent_answers_a_brakes_closing_request_in_text():
    import harnesskit as hk
    from harnesskit.domains import airline

    db = airline.load_database()
    task = airline.DEMO_TASKS[0]
    h = hk.Harness(
        airline.tools(db),
        airline.agent_model(),
        limits=hk.Limits(max_steps=2),
        gate=hk.Gate(confirm=hk.allow_all),
    )
    run = h.start(task.user_message).run()
    assert run.finish_reason == "max_steps"
    assert run.final_text.startswith("I could not finish your booking")
    assert "get_user_details" in run.final_text


def test_the_demo_labels_estimated_and_reported_tokens_and_shows_cache_reuse():
    from harnesskit.domains.airline.jobs import DemoReport, DemoRow

    def row(**kw):
        return DemoRow(
            **{"task": "t", "steps": 2, "tool_calls": 1, "prompt_tokens": 1000}
            | {"finish_reason": "stop", "passed": True}
            | kw
        )

    offline = DemoReport(rows=(row(),)).to_text()
    assert "prompt tokens: estimated" in offline and "cached" not in offline
    real = DemoReport(rows=(row(estimated=False, cached_tokens=850),)).to_text()
    assert "prompt tokens: reported by the provider" in real
    assert "cached" in real.splitlines()[0] and " 85%" in real.splitlines()[1]


def test_demo_runs_under_the_policy_it_is_given(tmp_path, capsys):
    from harnesskit import cli

    assert cli.main(["demo", "--out", str(tmp_path), "--policy", "window"]) == 0
    out = capsys.readouterr().out
    assert "context policy: window" in out
    (log,) = list(tmp_path.rglob("demo-cancel-business.jsonl"))
    contract = hk.EventLog.read(log).of_type("task.contract")[0]
    assert "window" in json.dumps(contract.payload)
    assert cli.main(["demo", "--out", str(tmp_path), "--policy", "nope"]) == 2
    assert "unknown context policy 'nope'" in capsys.readouterr().err


def test_demo_report_gives_the_cache_share_from_step_2():
    from harnesskit.domains.airline.jobs import DemoReport, DemoRow

    row = DemoRow(
        task="t",
        steps=3,
        tool_calls=2,
        prompt_tokens=3000,
        finish_reason="stop",
        passed=True,
        tokens_per_step=(1000, 1000, 1000),
        cached_per_step=(0, 900, 700),
        cached_tokens=1600,
        estimated=False,
    )
    assert row.cache_share_from_step_2 == 0.8
    text = DemoReport(rows=(row,)).to_text()
    assert "80.0% of prompt tokens served from the cache from step 2 on (53.3% with" in text
    assert "reported by the provider" in text
    assert (
        DemoRow(
            task="u",
            steps=1,
            tool_calls=0,
            prompt_tokens=5,
            finish_reason="stop",
            passed=True,
            tokens_per_step=(5,),
        ).cache_share_from_step_2
        is None
    )


def test_demo_goes_on_after_a_brake_whose_closing_request_failed(tmp_path):
    """A braked run is a result (the row says why), not a model that cannot answer."""
    from harnesskit.domains.airline import DEMO_TASKS, run_demo

    def policy(messages, info):
        if info.final:
            raise hk.ModelError("timeout after 30.00s", model="slow")
        return hk.testing.reply.tool_call("get_user_details", user_id="nobody_1")

    model = hk.FunctionModel(policy, name="slow")
    model.timeout_seconds = 300.0  # what a local CPU model declares per attempt
    report = run_demo(tmp_path, tasks=DEMO_TASKS[1:3], model=model, max_steps=2, echo=None)

    assert [r.task for r in report.rows] == [t.name for t in DEMO_TASKS[1:3]]
    assert all(r.finish_reason == "max_steps" and "timeout" in r.error for r in report.rows)
    assert report.skipped == ()
    contract = hk.EventLog.read(report.rows[0].log_path).of_type("task.contract")[0]
    assert "300" in json.dumps(contract.payload)  # the closing request's allowance


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tasks": None}, "tasks must be a non-empty tuple"),
        ({"tasks": ()}, "tasks must be a non-empty tuple"),
        ({"tasks": ["cancel-business"]}, "tasks must be DemoTask objects"),
        ({"out_dir": None}, "out_dir must be a folder path"),
        ({"echo": "yes"}, "echo must be a function"),
        ({"policy": "nope"}, "unknown context policy 'nope'"),
        ({"max_steps": 0}, "max_steps must be an int >= 1"),
        ({"model": "local:x"}, "model must be a Model"),
    ],
)
def test_run_demo_refuses_bad_arguments_before_making_a_folder(tmp_path, kwargs, message):
    from harnesskit.domains.airline import run_demo

    kwargs.setdefault("out_dir", tmp_path / "out")
    with pytest.raises(hk.UsageError, match=message):
        run_demo(**kwargs)
    assert not (tmp_path / "out").exists()


def test_demo_max_steps_flag_brakes_every_task(tmp_path, capsys):
    from harnesskit import cli

    assert cli.main(["demo", "--out", str(tmp_path), "--max-steps", "3"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("book-cheapest-one-stop"))
    assert row.split()[1:2] == ["3"] and "max_steps" in row
    assert cli.main(["demo", "--out", str(tmp_path), "--max-steps", "0"]) == 2
    assert "max_steps must be an int >= 1" in capsys.readouterr().err


def test_a_demo_run_the_model_never_answered_shows_the_error_not_a_failed_agent(tmp_path):
    """Server down, a bad key, no model file: the row says so, it is not scored as the agent's."""
    from harnesskit.domains.airline import DEMO_TASKS, run_demo

    def down(messages, info):
        raise hk.ModelError("connection failed (ConnectError: refused)", model="down")

    report = run_demo(tmp_path, tasks=DEMO_TASKS[:1], model=hk.FunctionModel(down), echo=None)
    (row,) = report.rows
    assert row.finish_reason == "error" and not row.passed
    text = report.to_text()
    (line,) = [t for t in text.splitlines() if t.startswith(row.task)]
    assert "NO:" not in line and "final database" not in line
    assert "ERROR (not scored): ModelError: " in line and "connection failed" in line
    assert "passed 0/1" in text and "1 did not run to an end" in text


def test_a_braked_demo_run_is_scored_even_when_its_closing_request_failed():
    from harnesskit.domains.airline.jobs import DemoReport, DemoRow

    row = DemoRow(
        task="t",
        steps=2,
        tool_calls=1,
        prompt_tokens=10,
        finish_reason="max_steps",
        passed=False,
        reason="final database differs from expected",
        error="ModelError: timeout after 30.00s",
    )
    text = DemoReport(rows=(row,)).to_text()
    assert "NO: final database differs" in text and "did not run to an end" not in text
