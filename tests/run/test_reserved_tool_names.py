"""Names of harnesskit's built-in tools are reserved: a user tool taking one is refused at once.

The artifact inspection tools (`artifact_*`, R-A4) and the tool-group chooser (`choose_group`,
R-T3) join a run's tools when it starts; a user tool with such a name used to be accepted by
`Harness(...)`, then `start()` failed with "a tool named ... is already registered".
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.testing import reply


def named(name):
    def fn(ref: str) -> str:
        """Mine.

        Args:
            ref: a ref.
        """
        return "mine"

    return hk.tool(name=name)(fn)


@hk.tool
def big(q: str) -> dict:
    """Rows.

    Args:
        q: a query.
    """
    return {"rows": list(range(50))}


@pytest.mark.parametrize(
    "name", ["artifact_head", "artifact_outline", "artifact_slice", "artifact_mine", "choose_group"]
)
def test_a_reserved_name_is_refused_by_the_harness_naming_the_prefix(name, tmp_path):
    model = hk.ScriptedModel([reply.tool_call("big", q="x"), "done"])
    with pytest.raises(hk.UsageError, match=r"is reserved.*prefix 'artifact_'") as err:
        hk.Harness([big, named(name)], model, log_dir=tmp_path)
    assert repr(name) in str(err.value) and "rename the tool" in str(err.value)
    with pytest.raises(hk.UsageError, match="is reserved"):
        hk.Harness(hk.ToolRegistry([named(name)]), model)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["artifacts", "my_artifact_head", "artifact", "choose_groups"])
def test_names_near_the_reserved_ones_are_fine(name):
    model = hk.ScriptedModel(
        [reply.tool_call("big", q="x"), reply.tool_call(name, ref="r"), "done"]
    )
    run = hk.Harness([big, named(name)], model).run("go")
    assert run.finish_reason == "stop"
    assert run.log.of_type("tool.result")[-1].content == "mine"
