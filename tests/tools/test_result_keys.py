"""A tool result whose dict keys collide once written as JSON is a tool_error (FINDINGS 15).

JSON keys are strings: `{1: "a", "1": "b"}` was sent to the model (and logged) as
`{"1": "a", "1": "b"}`, an object with a duplicate key that readers resolve differently.
"""

import json

import pytest

import harnesskit as hk
from harnesskit.testing import reply


def _result_of(value):
    @hk.tool
    def give() -> dict:
        """Return the value."""
        return value

    model = hk.ScriptedModel([reply.tool_call("give"), reply.text("k")])
    (result,) = hk.Harness([give], model).run("go").log.of_type(hk.log.ToolResultEvent)
    return result


@pytest.mark.parametrize(
    ("value", "where", "written"),
    [
        ({1: "a", "1": "b"}, "$", '"1"'),
        ({"rows": [{"x": 1}, {None: 1, "null": 2}]}, "$.rows[1]", '"null"'),
        ({"flags": ({True: 1, "true": 0},)}, "$.flags[0]", '"true"'),
        ({"k": {1.5: "a", "1.5": "b"}}, "$.k", '"1.5"'),
    ],
)
def test_keys_that_collide_as_json_are_a_tool_error_naming_them(value, where, written):
    result = _result_of(value)
    body = json.loads(result.content)
    assert not result.ok and body["error_type"] == "tool_error"
    assert f"at {where}" in body["message"] and written in body["message"], body["message"]


@pytest.mark.parametrize(
    "value",
    [
        {1: "a", 2: "b"},
        {"1": "a", "2": "b"},
        {"rows": [{"1": 1}, {"2": 2}]},
        {"text": 'say \\"1\\": yes', "n": {3: "c"}},
    ],
)
def test_keys_that_stay_distinct_are_sent_as_before(value):
    result = _result_of(value)
    assert result.ok and result.content == json.dumps(value, ensure_ascii=False)
