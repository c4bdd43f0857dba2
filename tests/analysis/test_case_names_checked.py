"""A case's `expect.finish_reason` and `setup` keys are checked against what exists, at load.

A finish reason that names none (`"stopp"`) made every trial of the case fail
("finish_reason in ['stopp']"); an unknown `setup` key was silently ignored. Both are refused
by `load_cases` with a did-you-mean: the loop's reasons are `run.limits.FINISH_REASONS`, a
domain adds its own (`Domain.finish_reasons`) and declares the `setup` keys it reads
(`Domain.setup_keys`).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import harnesskit as hk
from harnesskit.analysis.evals.cases import USER_SETUP_KEYS
from harnesskit.errors import UsageError
from harnesskit.run.limits import BRAKES, FINISH_REASONS


def _case(**fields: Any) -> dict[str, Any]:
    return {"id": "a", "domain": "shop", "input": "where is A1001", **fields}


def test_the_finish_reasons_are_the_loops_own() -> None:
    limits = {f.name for f in dataclasses.fields(hk.Limits)} - {
        "closing_seconds",
        "max_calls_per_turn",
    }
    assert set(BRAKES) == limits
    assert {"stop", "length", "cancelled", "paused", "error", *BRAKES} <= set(FINISH_REASONS)


@pytest.mark.parametrize(
    ("finish", "path", "near"),
    [
        ("stopp", "$.expect.finish_reason", "stop"),
        (["stop", "max_stepz"], "$.expect.finish_reason[1]", "max_steps"),
        ("pausd", "$.expect.finish_reason", "paused"),
    ],
)
def test_a_finish_reason_that_names_none_is_refused_with_a_did_you_mean(
    finish: Any, path: str, near: str, tmp_path: Path
) -> None:
    f = tmp_path / "cases.jsonl"
    f.write_text(json.dumps(_case(expect={"finish_reason": finish})) + "\n")
    with pytest.raises(UsageError) as info:
        hk.load_cases(f)
    message = str(info.value)
    assert f"{f}:1" in message and f"at {path}:" in message
    assert f"did you mean {near!r}?" in message


@pytest.mark.parametrize("finish", [*FINISH_REASONS, ["stop", "length"], None])
def test_every_finish_reason_of_the_loop_is_accepted(finish: Any) -> None:
    (case,) = hk.load_cases([_case(expect={"finish_reason": finish})])
    assert case.finish_reasons == (
        None if finish is None else tuple(finish if isinstance(finish, list) else [finish])
    )


def test_a_domain_s_own_finish_reason_is_accepted_and_its_typo_refused() -> None:
    airline = {"id": "t", "domain": "airline", "input": "hi"}
    (case,) = hk.load_cases([{**airline, "expect": {"finish_reason": "transferred"}}])
    assert case.finish_reasons == ("transferred",)
    with pytest.raises(UsageError, match=r"did you mean 'transferred'\?"):
        hk.load_cases([{**airline, "expect": {"finish_reason": "transfered"}}])
    with pytest.raises(UsageError, match="is no finish reason"):  # not the shop's
        hk.load_cases([_case(expect={"finish_reason": "transferred"})])


def test_an_unknown_setup_key_is_refused_with_a_did_you_mean() -> None:
    with pytest.raises(UsageError) as info:
        hk.load_cases([_case(setup={"evil": 1, "user_instruction": "be terse"})])
    message = str(info.value)
    assert "unknown key 'evil'" in message
    assert "unknown key 'user_instruction' (did you mean 'user_instructions'?)" in message
    with pytest.raises(UsageError, match=r"'db_action' \(did you mean 'db_actions'\?\)"):
        hk.load_cases([{"id": "t", "domain": "airline", "input": "hi", "setup": {"db_action": []}}])


def test_the_shipped_cases_still_load() -> None:
    root = Path(hk.__file__).parent.parent / "datasets" / "cases"
    files = sorted(root.glob("**/*.jsonl"))
    if not files:
        pytest.skip(f"no shipped case files under {root}")
    for f in files:
        assert hk.load_cases(f), f


def test_setup_keys_the_user_reads_are_always_allowed() -> None:
    setup = dict.fromkeys(USER_SETUP_KEYS, "be terse")
    (case,) = hk.load_cases([_case(setup=setup)])
    assert case.setup == setup


def test_a_domain_that_declares_nothing_keeps_setup_free_and_its_reasons_strict() -> None:
    env = SimpleNamespace(tools=[])
    hk.register_domain(hk.Domain(name="free-setup", environment=lambda case: env))
    (case,) = hk.load_cases([{"id": "f", "domain": "free-setup", "input": "hi", "setup": {"x": 1}}])
    assert case.setup == {"x": 1}
    with pytest.raises(UsageError, match="stopp"):
        hk.load_cases(
            [
                {
                    "id": "f",
                    "domain": "free-setup",
                    "input": "hi",
                    "expect": {"finish_reason": "stopp"},
                }
            ]
        )
    hk.register_domain(
        hk.Domain(name="own-stop", environment=lambda case: env, finish_reasons=("handed_off",))
    )
    (case,) = hk.load_cases(
        [
            {
                "id": "o",
                "domain": "own-stop",
                "input": "hi",
                "expect": {"finish_reason": "handed_off"},
            }
        ]
    )
    assert case.finish_reasons == ("handed_off",)


def test_a_domain_not_registered_is_not_checked() -> None:
    """A domain may be registered after its cases are loaded; `Experiment` refuses it if not."""
    (case,) = hk.load_cases(
        [{"id": "n", "domain": "later", "input": "hi", "expect": {"finish_reason": "own"}}]
    )
    assert case.finish_reasons == ("own",)
