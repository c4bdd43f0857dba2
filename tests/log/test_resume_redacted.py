"""Resume, restart and fork over logs the redactor rewrote (R-V6, R-S1, R-E5).

The log is redacted before it is written: tool names such as `reset_password` or `get_token`
look like credential names, and tool arguments such as a password are replaced by
`[REDACTED:password]`. The frozen configuration must still be written exactly, and nothing
that acts may take a placeholder for the value it replaced.
"""

from __future__ import annotations

import json
import pathlib

import pytest

import harnesskit as hk
from harnesskit.testing import reply
from harnesskit.tools import EffectCheck


def config_harness(tmp, turns, *, gate_for_reset="confirm", policy=None):
    @hk.tool(risk="write")
    def reset_password(user: str) -> str:
        """Reset a user's password.

        Args:
            user: the user.
        """
        return "ok"

    @hk.tool
    def get_token(user: str) -> str:
        """Look up a user's token id.

        Args:
            user: the user.
        """
        return "tok-id-1"

    return hk.Harness(
        tools=[reset_password, get_token],
        model=hk.get_model("scripted", turns=turns),
        log_dir=tmp,
        gate=hk.Gate(tools={"reset_password": gate_for_reset, "get_token": "allow"}),
        limits=hk.Limits(max_steps=7, max_seconds=1 / 3),
        policy=policy,
    )


def half_run(tmp, **kw):
    h = config_harness(tmp, [reply.tool_call("get_token", user="bob"), reply.text("done")], **kw)
    run = h.start("look it up", run_id="cfg")
    run.step()
    run.log.close()
    return tmp / "cfg.jsonl"


def test_the_contract_and_frozen_starts_are_written_exactly_and_an_unchanged_harness_resumes(
    tmp_path,
):
    path = half_run(tmp_path)
    h = config_harness(tmp_path, [reply.text("done")])
    contract = hk.EventLog.read(path).of_type("task.contract")[0]
    assert contract.payload["tools"] == h.tools.versions()
    assert contract.payload["gate"] == h.gate.to_dict()
    assert contract.payload["limits"]["max_seconds"] == 1 / 3
    report = hk.check_resume(h, path)
    assert report.ok, report.failed
    run = h.resume(path)  # `run.resume` freezes the harness again: exactly
    run.log.close()
    resumed = hk.EventLog.read(path).last("run.resume")
    assert resumed.payload["frozen"]["tools"] == h.tools.versions()
    assert resumed.payload["frozen"]["permissions"] == h.gate.to_dict()
    again = config_harness(tmp_path, [reply.text("done")])
    assert hk.check_resume(again, path).ok  # checked against the resume's frozen start


def test_a_real_change_hidden_by_redaction_is_still_detected(tmp_path):
    path = half_run(tmp_path)
    changed = config_harness(tmp_path, [reply.text("done")], gate_for_reset="allow")
    report = hk.check_resume(changed, path)
    assert report.failed == ("permissions",)
    assert "confirm" in report.checks[3].detail and "allow" in report.checks[3].detail


def test_a_policy_whose_text_looks_like_a_credential_is_kept_and_compared_exactly(tmp_path):
    policy = {"name": "mine", "version": "2", "description": "token: never shown to the model"}
    path = half_run(tmp_path, policy=policy)
    h = config_harness(tmp_path, [reply.text("done")], policy=dict(policy))
    assert hk.check_resume(h, path).ok


def test_a_fork_freezes_its_start_exactly(tmp_path):
    h = config_harness(tmp_path, [reply.tool_call("get_token", user="bob"), reply.text("done")])
    run = h.start("look it up", run_id="fk")
    run.step()
    branch = run.fork(run.log.last("tool.result").event_id, "alt", reason="try again")
    branch.log.close()
    fork = hk.EventLog.read(tmp_path / "fk.jsonl").last("branch.fork")
    assert fork.payload["frozen"]["tools"] == h.tools.versions()
    assert fork.payload["frozen"]["permissions"] == h.gate.to_dict()


def test_a_system_prompt_holding_a_secret_compares_as_the_log_wrote_it(tmp_path):
    def harness(prompt):
        h = config_harness(tmp_path, [reply.tool_call("get_token", user="bob"), reply.text("x")])
        h.system_prompt = prompt
        return h

    run = harness("Call the API with api_key=abcd1234efgh5678.").start("go", run_id="sp")
    run.step()
    run.log.close()
    path = tmp_path / "sp.jsonl"
    assert "abcd1234efgh5678" not in path.read_text()
    assert hk.check_resume(harness("Call the API with api_key=abcd1234efgh5678."), path).ok
    changed = hk.check_resume(harness("Call the other API with api_key=abcd1234efgh5678."), path)
    assert changed.failed == ("task_contract",)


# ---------------------------------------------------------------- tool arguments redacted

SECRET = "hunter2-secret-value"


class Desk:
    """A vault handing out a credential and a login write tool that records what it got."""

    def __init__(self):
        self.logins = []

    def tools(self):
        @hk.tool
        def get_credentials(user: str) -> dict:
            """Read a user's stored credentials.

            Args:
                user: the user.
            """
            return {"user": user, "password": SECRET}

        @hk.tool(risk="write")
        def login(user: str, password: str) -> dict:
            """Log a user in.

            Args:
                user: the user.
                password: the user's password.
            """
            self.logins.append((user, password))
            return {"session": f"s-{len(self.logins)}", "user": user}

        return [get_credentials, login]

    def harness(self, tmp, turns, **kw):
        return hk.Harness(
            tools=self.tools(), model=hk.get_model("scripted", turns=turns), log_dir=tmp, **kw
        )


def test_a_bind_to_a_value_the_log_redacted_is_refused_after_resume(tmp_path):
    desk = Desk()
    run = desk.harness(
        tmp_path, [reply.tool_call("get_credentials", id="cred1", user="bob")]
    ).start("log bob in", run_id="bind")
    run.step()
    run.log.close()  # the process ends here; the clear password was in memory only
    path = tmp_path / "bind.jsonl"
    assert SECRET not in path.read_text()
    bound = {"$bind": "cred1#/password"}
    turns = [reply.tool_call("login", user="bob", password=bound), reply.text("could not")]
    resumed = desk.harness(tmp_path, turns).resume(path).run()
    assert desk.logins == []  # never acted with the placeholder
    result = resumed.log.last("tool.result")
    assert result.payload["ok"] is False and result.payload["error_type"] == "invalid_argument"
    message = json.loads(result.payload["content"])["message"]
    assert "redacted" in message and "[REDACTED:password]" in message


def test_a_bind_within_the_live_run_moves_the_clear_value(tmp_path):
    desk = Desk()
    bound = {"$bind": "cred1#/password"}
    turns = [
        reply.tool_call("get_credentials", id="cred1", user="bob"),
        reply.tool_call("login", user="bob", password=bound),
        reply.text("in"),
    ]
    desk.harness(tmp_path, turns).start("log bob in", run_id="live").run()
    assert desk.logins == [("bob", SECRET)]
    assert SECRET not in (tmp_path / "live.jsonl").read_text()


def killed_after(tmp, desk, event_type, *, ledger="as is"):
    """Run `login` with a typed password to the end, then cut the log after the first
    `event_type` event (a kill there); `ledger="started"` keeps only its `started` lines."""
    turns = [reply.tool_call("login", id="lg1", user="bob", password=SECRET), reply.text("in")]
    desk.harness(tmp, turns).start("log bob in", run_id="kill").run()
    path = tmp / "kill.jsonl"
    lines = path.read_text().splitlines()
    n = next(i for i, x in enumerate(lines) if json.loads(x)["type"] == event_type)
    path.write_text("\n".join(lines[: n + 1]) + "\n")
    idem = pathlib.Path(f"{path}.idem")
    if ledger == "started":
        idem.write_text("".join(x + "\n" for x in idem.read_text().splitlines() if "started" in x))
    elif ledger == "lost":
        idem.write_text("")
    desk.logins.clear()
    return path


def test_resume_never_reruns_a_call_whose_arguments_were_redacted(tmp_path):
    desk = Desk()
    path = killed_after(tmp_path, desk, "model.response", ledger="lost")  # it never started
    h = desk.harness(tmp_path, [reply.text("please type your password again")])
    report = hk.check_resume(h, path)
    assert report.ok and report.redacted_calls == ("lg1",)
    assert "redacted" in report.checks[1].detail
    run = h.resume(path).run()
    assert desk.logins == []  # never run with "[REDACTED:password]"
    back = hk.EventLog.read(path)
    resumed = back.last("run.resume").payload
    assert resumed["redacted_calls"] == [{"tool_call_id": "lg1", "tool": "login"}]
    result = back.last("tool.result").payload
    assert result["tool_call_id"] == "lg1" and result["ok"] is False
    assert "redacted" in json.loads(result["content"])["message"]
    assert run.finish_reason == "stop"


@pytest.mark.parametrize("applied", [True, False])
def test_a_redacted_write_settled_by_a_confirmer_keeps_its_key_and_is_not_rerun(tmp_path, applied):
    desk = Desk()
    path = killed_after(tmp_path, desk, "tool.call", ledger="started")
    original = json.loads(pathlib.Path(f"{path}.idem").read_text().splitlines()[0])["key"]
    seen = []

    def confirm(record):
        seen.append(record.key)
        return EffectCheck(applied=applied, evidence="the session table")

    h = desk.harness(tmp_path, [reply.text("done")], confirmers={"login": confirm})
    run = h.resume(path).run()
    assert set(seen) == {original}
    assert desk.logins == []
    back = hk.EventLog.read(path)
    result = back.last("tool.result").payload
    assert result["tool_call_id"] == "lg1" and result["ok"] is applied
    assert back.last("run.resume").payload["redacted_calls"][0]["tool_call_id"] == "lg1"
    assert run.finish_reason == "stop"


@pytest.mark.parametrize("ledger", ["as is", "started", "lost"])
def test_resuming_after_a_finished_redacted_write_adds_no_step(tmp_path, ledger):
    desk = Desk()
    path = killed_after(tmp_path, desk, "tool.result", ledger=ledger)
    run = desk.harness(tmp_path, [reply.text("in")]).resume(path).run()
    assert desk.logins == []
    back = hk.EventLog.read(path)
    assert [e.payload["step"] for e in back.of_type("model.response")] == [1, 2]
    assert [e.payload["tool_call_id"] for e in back.of_type("tool.result")] == ["lg1"]
    assert run.finish_reason == "stop" and run.state.step == 2
