"""The airline domain's eval glue: its `hk.Domain`, registered when the domain is imported.

An environment per trial is a fresh database with the domain's tools and policy; its `checks`
add τ-bench's final-database check when a case lists `setup.db_actions`. The one offline agent
is the embedded one (`airline:embedded` in an experiment's models).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import harnesskit as hk
from harnesskit.domains.airline.agent import agent_model
from harnesskit.domains.airline.data import AirlineDB, load_database
from harnesskit.domains.airline.scoring import expected_state_hash
from harnesskit.domains.airline.tools import POLICY, tools
from harnesskit.domains.airline.trajectories import ExpectedAction

__all__ = ["DOMAIN", "AirlineEnvironment", "environment"]


@dataclass(slots=True, kw_only=True)
class AirlineEnvironment:
    """One trial's world: tools over a private database copy, the policy text, the database."""

    tools: hk.ToolRegistry
    """The harness tools over `state`."""
    system_prompt: str
    """The airline policy (`POLICY`)."""
    state: AirlineDB
    """The trial's private database."""

    def checks(self, case: Any, log: hk.EventLog) -> list[hk.CheckResult]:
        """τ-bench's database check when the case lists `setup.db_actions`.

        Args:
            case: the eval case (`harnesskit.analysis.evals.Case`).
            log: the trial's event log (unused: the check reads the final database).

        Returns:
            One `CheckResult` (kind `state`) when the case lists `setup.db_actions`, else none.
        """
        actions = case.setup.get("db_actions")
        if actions is None:
            return []
        expected = expected_state_hash(
            [ExpectedAction(name=a["tool"], kwargs=a.get("args") or {}) for a in actions]
        )
        final = self.state.state_hash()
        what = f"after the task's {len(actions)} actions" if actions else "unchanged"
        return [
            hk.CheckResult(
                name="final database equals the expected one",
                kind="state",
                passed=final == expected,
                detail=f"expected the fresh database {what}; "
                + ("equal" if final == expected else f"hash {final[:12]} ≠ {expected[:12]}"),
            )
        ]


def environment(case: Any = None) -> AirlineEnvironment:
    """A fresh environment for one trial (`case` is accepted and unused).

    Args:
        case: the eval case.

    Returns:
        Tools over a fresh database, the policy and the database.
    """
    db = load_database()
    return AirlineEnvironment(tools=tools(db), system_prompt=POLICY, state=db)


def _embedded(*, seed: int = 0) -> hk.FunctionModel:
    return agent_model()  # deterministic: the seed has nothing to vary


_embedded.__name__ = "embedded"

#: The airline eval domain, registered with `hk.register_domain` on import.
DOMAIN = hk.Domain(
    name="airline",
    environment=environment,
    agents={"embedded": _embedded},
    finish_reasons=("transferred",),  # `transfer_to_human_agents` ends the run (tools.py)
    setup_keys=("tau2_task_id", "db_actions", "read_actions", "unchecked_assertions"),
)
hk.register_domain(DOMAIN)
