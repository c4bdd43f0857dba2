"""A simulated user (τ-bench protocol) drives multi-turn cases; its turns are user events (R-P4)."""

import pathlib

import pytest

import harnesskit as hk
from harnesskit.analysis.evals import STOP_TOKEN, UserSimulator, user_instruction
from harnesskit.errors import UsageError
from harnesskit.log import UserMessageEvent
from harnesskit.models import base
from harnesskit.testing import reply
from tests.support.loopback import LoopbackServer, Reply, completion

ROOT = pathlib.Path(__file__).resolve().parents[2]
TAU2 = ROOT / "datasets" / "cases" / "airline_tau2.jsonl"


@pytest.fixture(scope="module")
def case():
    return next(c for c in hk.load_cases(TAU2) if c.id == "tau2-airline/0")


class Recorder:
    """Factories that keep the models they build, to look at what each was sent."""

    def __init__(self, turns, name):
        self.turns, self.name, self.built = turns, name, []

    def __call__(self, trial):
        model = hk.ScriptedModel(self.turns, name=self.name)
        self.built.append(model)
        return model


def agent():
    return Recorder(
        [
            reply.tool_call("get_reservation_details", id="call_1", reservation_id="EHGLP3"),
            "I am sorry: this reservation cannot be cancelled for a refund.",
            "Insurance does not change that; I cannot cancel it with a refund.",
        ],
        "agent",
    )


def test_a_tau2_airline_case_runs_end_to_end_with_a_scripted_user(case, tmp_path):
    agent_f = agent()
    user_f = Recorder(["But I was told I did not need insurance.", STOP_TOKEN], "scripted-user")
    exp = hk.Experiment([case], models={"agent": agent_f}, user=UserSimulator(model=user_f))
    result = exp.run(tmp_path / "run", parallel=False, progress=False)
    row = result.rows[0]
    assert row["error"] is None and row["pass"], row["failed_checks"]
    log = result.log(row["run_id"])
    users = log.of_type(UserMessageEvent)
    assert [u.content for u in users] == [case.input[0], "But I was told I did not need insurance."]
    assert users[0].payload.get("simulated") is None
    assert users[1].payload["simulated"] is True
    assert users[1].payload["simulator"] == "scripted-user"
    assert users[1].source == "user"

    # the user model saw its instruction and the conversation from its side
    sent = [r.messages for r in user_f.built[0].requests]
    assert len(sent) == 2  # one turn, then the stop token
    assert user_instruction(case) in sent[0][0].content and STOP_TOKEN in sent[0][0].content
    assert [m.role for m in sent[0][1:]] == ["assistant", "user"]
    assert sent[0][1].content == case.input[0]
    assert sent[0][2].content.startswith("I am sorry")
    assert [m.role for m in sent[1][1:]] == ["assistant", "user", "assistant", "user"]

    # the agent's context holds the simulated turn as a user message; nothing after the stop
    agent_requests = agent_f.built[0].requests
    assert len(agent_requests) == 3
    last = agent_requests[-1].messages
    assert last[-1].role == "user" and last[-1].content == users[1].content


def test_the_user_stops_after_max_turns(case, tmp_path):
    talkative = Recorder(["And another thing."] * 5, "chatty")
    endless = Recorder(["Noted."] * 10, "agent")
    exp = hk.Experiment(
        [case], models={"agent": endless}, user=UserSimulator(model=talkative, max_turns=2)
    )
    result = exp.run(tmp_path / "run", parallel=False, progress=False)
    log = result.log(result.rows[0]["run_id"])
    assert len(log.of_type(UserMessageEvent)) == 3  # the opening turn and two simulated ones
    assert len(endless.built[0].requests) == 3


def test_an_unknown_user_provider_is_refused_at_construction():
    with pytest.raises(UsageError, match="known providers"):
        UserSimulator(model="olama:x")


def test_a_real_model_user_over_openai_compat(case, tmp_path, monkeypatch):
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)
    replies = [Reply(json=completion("Can you check again?")), Reply(json=completion(STOP_TOKEN))]
    with LoopbackServer(replies) as srv:
        user = UserSimulator(model="openai-compat:user-model", model_options={"base_url": srv.url})
        exp = hk.Experiment([case], models={"agent": agent()}, user=user)
        result = exp.run(tmp_path / "run", parallel=False, progress=False)
        seen = srv.requests
    assert len(seen) == 2 and seen[0].body["model"] == "user-model"
    assert seen[0].body["messages"][0]["role"] == "system"
    log = result.log(result.rows[0]["run_id"])
    sim = [u for u in log.of_type(UserMessageEvent) if u.payload.get("simulated")]
    assert [u.content for u in sim] == ["Can you check again?"]
    assert sim[0].payload["simulator"] == "openai-compat:user-model"


def test_a_failing_user_model_is_an_infrastructure_error(case, tmp_path, monkeypatch):
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)
    with LoopbackServer([Reply(status=400, json={"error": "bad"})] * 8) as srv:
        user = UserSimulator(model="openai-compat:u", model_options={"base_url": srv.url})
        exp = hk.Experiment([case], models={"agent": agent()}, user=user)
        result = exp.run(tmp_path / "run", parallel=False, progress=False)
    assert result.rows[0]["error"].startswith("ModelError")
    assert len(result.failures()) == 0 and len(result.errors()) == 1


# -- R-S2: the simulated user is sent the run's data, so it is classed and checked like it --


class LimitedUser(hk.ScriptedModel):
    """A scripted user model carrying an approval, as a custom user model would."""

    def __init__(self, limit):
        super().__init__(["Thanks.", STOP_TOKEN] * 3, name="limited-user")
        self.max_data_class = limit


def _restricted_trial(case, tmp_path, user, answer):
    """The one trial row of a `restricted` experiment whose agent always says `answer`."""
    exp = hk.Experiment(
        [case],
        models={"agent": Recorder([answer] * 3, "agent")},
        user=UserSimulator(model=user),
        settings={"data_class": "restricted"},
    )
    return exp.run(tmp_path / "run", parallel=False, progress=False).rows[0]


def test_a_public_only_user_model_is_not_sent_a_restricted_runs_answers(case, tmp_path):
    user = LimitedUser("public")

    row = _restricted_trial(case, tmp_path, user, "Your card on file ends 4242-CANARY.")

    assert user.requests == []  # nothing reached the user model
    assert "limited-user is approved up to 'public'" in row["error"]
    assert "'restricted'" in row["error"]


def test_an_approved_user_model_gets_requests_marked_with_their_class(case, tmp_path):
    user = LimitedUser("restricted")

    row = _restricted_trial(case, tmp_path, user, "Done.")

    assert row["error"] is None
    assert [r.data_class for r in user.requests] == ["restricted", "restricted"]


def test_a_restricted_turn_in_the_log_keeps_the_user_reply_from_an_internal_model(case):
    run = hk.Harness([], hk.ScriptedModel(["ok"])).start(case.input[0])
    run.log.append(
        "user.message", {"content": "My PIN is 4711-CANARY"}, source="user", data_class="restricted"
    )
    user = LimitedUser("internal")

    with pytest.raises(hk.ModelError, match=r"'restricted' \(USER-"):
        UserSimulator(model=user).reply(user, case, run.log, seed=1, run_id="r")

    assert user.requests == []
