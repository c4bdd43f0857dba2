"""A tiny eval domain whose one tool returns a large result (the parallel storage race repro).

Every trial stores the same ~30 kB JSON as an artifact, so parallel trials write the same
content-addressed files at once. `race:fetch` calls the tool once, then answers.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import harnesskit as hk
from harnesskit.testing import reply


@hk.tool
def fetch_table(case: str) -> dict:
    """Return the big table of a case.

    Args:
        case: the case name.
    """
    return {"rows": [{"i": i, "text": "x" * 50} for i in range(400)]}


def environment(case: Any) -> SimpleNamespace:
    return SimpleNamespace(tools=[fetch_table], system_prompt="Fetch the table, then answer.")


def fetch_agent(*, seed: int) -> hk.ScriptedModel:
    return hk.ScriptedModel(
        [reply.tool_call("fetch_table", id="call_1", case="c"), "The table has 400 rows."],
        name="race-fetch",
    )


DOMAIN = hk.Domain(name="race", environment=environment, agents={"fetch": fetch_agent})


def cases(n: int = 10) -> list:
    return hk.load_cases(
        [
            {
                "id": f"race-{i}",
                "domain": "race",
                "input": f"Fetch table {i}.",
                "expect": {
                    "calls": [{"tool": "fetch_table"}],
                    "answer": {"contains": ["400 rows"]},
                },
            }
            for i in range(n)
        ]
    )


def experiment(**kwargs: Any) -> hk.Experiment:
    """10 cases × 4 repeats = 40 trials, each storing one large result."""
    return hk.Experiment(
        cases(), models=["race:fetch"], repeats=4, domains={"race": DOMAIN}, **kwargs
    )
