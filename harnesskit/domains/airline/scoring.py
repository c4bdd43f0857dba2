"""Scoring airline runs the way τ-bench does, and pass^k.

A run earns reward 1 when (a) its final database hashes equal to a fresh database after the
task's reference actions, and (b) every required output string appears in something the agent
said to the user (case-insensitive, commas removed from the agent's text). Runs that never
reached the end of their episode score 0.

pass^k (the τ-bench paper's reliability metric): for a task tried n times with c successes,
the chance that k trials drawn without replacement all succeed is C(c, k) / C(n, k); pass^k is
that number averaged over tasks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from math import comb
from pathlib import Path
from typing import Any

import harnesskit as hk
from harnesskit.domains.airline.data import AddressKey, load_database
from harnesskit.domains.airline.ops import dispatch
from harnesskit.domains.airline.trajectories import TERMINATING_TOOLS, ExpectedAction

__all__ = [
    "RewardResult",
    "apply_actions",
    "expected_state_hash",
    "outputs_found",
    "pass_hat_k",
    "pass_hat_ks",
    "score",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class RewardResult:
    """The reward of one run and why."""

    reward: float
    """1.0 or 0.0."""
    db_match: bool
    """The final database hash equals the expected one."""
    outputs: Mapping[str, bool] = field(default_factory=dict)
    """Each required output and whether the agent said it."""
    completed: bool = True
    """The episode ended normally; an unfinished run scores 0."""
    final_hash: str = ""
    """sha256 of the run's final database."""
    expected_hash: str = ""
    """sha256 of the database after the reference actions."""

    @property
    def reason(self) -> str:
        """A short explanation: `"pass"`, or what failed."""
        if not self.completed:
            return "episode not finished (step limit)"
        problems = []
        if not self.db_match:
            problems.append("final database differs from expected")
        missing = [o for o, found in self.outputs.items() if not found]
        if missing:
            problems.append(f"required output(s) not said: {', '.join(missing)}")
        return "; ".join(problems) or "pass"


def apply_actions(db: Any, actions: Iterable[ExpectedAction]) -> list[str | None]:
    """Apply reference actions to `db` as the benchmark's ground truth does.

    Terminating tools (the transfer to a human) are skipped, as the benchmark skips them.

    Args:
        db: an `AirlineDB` to mutate.
        actions: the task's reference actions, in order.

    Returns:
        The output text of each applied action, in order.
    """
    return [
        dispatch(db, action.name, action.kwargs)
        for action in actions
        if action.name not in TERMINATING_TOOLS
    ]


_expected_cache: dict[tuple[str, str, str], str] = {}


def expected_state_hash(
    actions: Sequence[ExpectedAction],
    *,
    data_dir: str | Path | None = None,
    address_key: AddressKey = "state",
) -> str:
    """Return the hash of a fresh database after the task's reference actions.

    Results are cached per (actions, data folder, address key) for the process.

    Args:
        actions: the task's reference actions.
        data_dir: the database folder (`None`: the shipped one).
        address_key: as for `load_database`.

    Returns:
        64 hex characters.
    """
    key = (
        json.dumps([[a.name, a.kwargs] for a in actions], sort_keys=True),
        str(data_dir),
        address_key,
    )
    cached = _expected_cache.get(key)
    if cached is None:
        db = load_database(data_dir, address_key=address_key)
        apply_actions(db, actions)
        cached = _expected_cache[key] = db.state_hash()
    return cached


def outputs_found(required: Iterable[str], agent_texts: Iterable[str]) -> dict[str, bool]:
    """Check each required output against what the agent said.

    Args:
        required: the task's output strings.
        agent_texts: the agent's messages to the user.

    Returns:
        `{output: found}`; an output is found when its lower-case form is a substring of some
        message's lower-case text with commas removed.
    """
    said = [text.lower().replace(",", "") for text in agent_texts]
    return {out: any(out.lower() in text for text in said) for out in required}


def score(
    *,
    final_hash: str,
    expected_hash: str,
    required_outputs: Iterable[str] = (),
    agent_texts: Iterable[str] = (),
    completed: bool = True,
) -> RewardResult:
    """Score one run.

    Args:
        final_hash: hash of the run's final database.
        expected_hash: hash after the reference actions (`expected_state_hash`).
        required_outputs: strings the agent must have said.
        agent_texts: the agent's messages to the user.
        completed: whether the episode ended normally.

    Returns:
        The `RewardResult`; reward 1.0 only when completed, the hashes match and every output
        was found.
    """
    found = outputs_found(required_outputs, agent_texts)
    db_match = final_hash == expected_hash
    ok = completed and db_match and all(found.values())
    return RewardResult(
        reward=1.0 if ok else 0.0,
        db_match=db_match,
        outputs=found,
        completed=completed,
        final_hash=final_hash,
        expected_hash=expected_hash,
    )


def pass_hat_k(successes: Mapping[Any, Sequence[bool | float]], k: int) -> float:
    """pass^k over tasks: mean over tasks of C(c, k) / C(n, k).

    Args:
        successes: per task, the outcome of each trial (`True`/1.0 for success).
        k: how many trials must all succeed (1 ≤ k).

    Returns:
        A number in [0, 1]; tasks with fewer than `k` trials are left out.

    Raises:
        UsageError: `k` < 1, or no task has `k` trials.
    """
    if k < 1:
        raise hk.UsageError(f"pass^k needs k >= 1, got {k}")
    values = [
        comb(sum(1 for t in trials if t), k) / comb(len(trials), k)
        for trials in successes.values()
        if len(trials) >= k
    ]
    if not values:
        raise hk.UsageError(f"no task has at least {k} trials; pass^{k} is undefined")
    return sum(values) / len(values)


def pass_hat_ks(
    successes: Mapping[Any, Sequence[bool | float]], ks: Iterable[int] = (1, 2, 3, 4)
) -> dict[int, float]:
    """pass^k for several k at once (see `pass_hat_k`); k values no task reaches are left out."""
    counts = [len(t) for t in successes.values()]
    return {k: pass_hat_k(successes, k) for k in ks if counts and max(counts) >= k}
