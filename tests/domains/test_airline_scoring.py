import pytest

from harnesskit.domains import airline
from harnesskit.errors import UsageError


def test_outputs_match_case_insensitively_without_commas():
    found = airline.outputs_found(["23553", "Gold"], ["The total is $23,553.", "you are GOLD"])
    assert found == {"23553": True, "Gold": True}
    assert airline.outputs_found(["1,000"], ["1000"]) == {
        "1,000": False
    }  # only the text loses commas


@pytest.mark.parametrize(
    ("kwargs", "reward", "reason"),
    [
        ({"final_hash": "a", "expected_hash": "a"}, 1.0, "pass"),
        ({"final_hash": "a", "expected_hash": "b"}, 0.0, "final database differs from expected"),
        (
            {
                "final_hash": "a",
                "expected_hash": "a",
                "required_outputs": ["327"],
                "agent_texts": ["326"],
            },
            0.0,
            "required output(s) not said: 327",
        ),
        (
            {
                "final_hash": "a",
                "expected_hash": "a",
                "required_outputs": ["327"],
                "agent_texts": ["$327"],
            },
            1.0,
            "pass",
        ),
        (
            {"final_hash": "a", "expected_hash": "a", "completed": False},
            0.0,
            "episode not finished (step limit)",
        ),
    ],
)
def test_score(kwargs, reward, reason):
    result = airline.score(**kwargs)
    assert (result.reward, result.reason) == (reward, reason)


def test_expected_state_of_no_actions_is_the_fresh_state():
    assert airline.expected_state_hash([]) == airline.load_database().state_hash(full=True)


def test_expected_state_skips_the_transfer_and_applies_writes():
    actions = [
        airline.ExpectedAction(name="transfer_to_human_agents", kwargs={"summary": "x"}),
        airline.ExpectedAction(
            name="send_certificate", kwargs={"user_id": "mia_li_3668", "amount": 100}
        ),
    ]
    db = airline.load_database()
    airline.ops.send_certificate(db, "mia_li_3668", 100)
    assert airline.expected_state_hash(actions) == db.state_hash(full=True)
    assert airline.apply_actions(airline.load_database(), actions[:1]) == []


def test_pass_hat_k_definition():
    trials = {
        "a": [True, True, False, False],
        "b": [True, True, True, True],
        "c": [0.0, 0.0, 0.0, 1.0],
    }
    got = airline.pass_hat_ks(trials)
    # a: 2/4, 1/6, 0, 0 ; b: 1, 1, 1, 1 ; c: 1/4, 0, 0, 0
    assert got[1] == pytest.approx((0.5 + 1 + 0.25) / 3)
    assert got[2] == pytest.approx((1 / 6 + 1) / 3)
    assert got[3] == pytest.approx(1 / 3)
    assert got[4] == pytest.approx(1 / 3)
    assert airline.pass_hat_ks({"a": [True]}) == {1: 1.0}
    with pytest.raises(UsageError):
        airline.pass_hat_k(trials, 0)
    with pytest.raises(UsageError):
        airline.pass_hat_k(trials, 5)
