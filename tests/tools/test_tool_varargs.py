"""`@tool` refuses `*args` and schema-less `**kwargs` instead of registering no parameters."""

from __future__ import annotations

from typing import Any

import pytest

import harnesskit as hk
from harnesskit.testing import reply


def test_star_args_is_refused_with_a_clear_usage_error():
    with pytest.raises(hk.UsageError, match=r"\*paths cannot be a tool parameter"):

        @hk.tool
        def read_many(*paths: str) -> str:
            return ",".join(paths)


def test_kwargs_without_a_schema_is_refused():
    with pytest.raises(hk.UsageError, match=r"\*\*options has no schema.*parameters="):

        @hk.tool
        def configure(name: str, **options: Any) -> str:
            return name


def test_kwargs_with_an_explicit_schema_receives_the_validated_arguments():
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    }

    @hk.tool(parameters=schema)
    def weather(**kwargs: Any) -> dict[str, Any]:
        """Weather for a city."""
        return {"got": kwargs}

    assert weather.parameters == schema
    run = hk.Harness(
        [weather],
        hk.ScriptedModel([reply.tool_call("weather", city="Oslo"), reply.text("ok")]),
    ).run("weather?")
    (result,) = [e for e in run.log if isinstance(e, hk.log.ToolResultEvent)]
    assert result.ok and '"city": "Oslo"' in result.content
