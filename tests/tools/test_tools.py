import dataclasses
import datetime as dt
from typing import Literal, TypedDict

import pytest

import harnesskit as hk
from harnesskit.tools.spec import schema_for_type


class Passenger(TypedDict):
    first_name: str
    dob: dt.date


@dataclasses.dataclass
class Flight:
    number: str
    date: dt.date
    note: str = ""


def test_schema_from_hints_and_docstring():
    @hk.tool(risk="write", group="booking")
    def book(
        cabin: Literal["economy", "business"],
        day: dt.date,
        passengers: list[Passenger],
        flights: list[Flight],
        bags: int = 0,
        memo: str | None = None,
    ) -> str:
        """Book a flight.

        Use this when the user confirmed. Do not use it to search.

        Args:
            cabin: the cabin class.
            day: travel date.
            passengers: who flies.
            flights: the segments,
                in order.
            bags: checked bags.
            memo: optional note.

        Returns:
            The reservation id.
        """
        return "X"

    p = book.parameters
    assert p["required"] == ["cabin", "day", "passengers", "flights"]
    assert p["properties"]["cabin"] == {
        "type": "string",
        "enum": ["economy", "business"],
        "description": "the cabin class.",
    }
    assert p["properties"]["day"]["format"] == "date"
    item = p["properties"]["passengers"]["items"]
    assert item["properties"]["dob"] == {"type": "string", "format": "date"}
    assert item["required"] == ["first_name", "dob"]
    assert p["properties"]["flights"]["items"]["required"] == ["number", "date"]
    assert p["properties"]["flights"]["description"] == "the segments, in order."
    assert p["properties"]["bags"]["default"] == 0
    assert p["properties"]["memo"]["anyOf"][1] == {"type": "null"}
    assert "Args:" not in book.description and "Returns:" in book.description
    assert (book.risk, book.group, book.idempotent) == ("write", "booking", False)
    assert book.to_openai()["function"]["name"] == "book"


def test_explicit_schema_overrides():
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    @hk.tool(parameters=schema, description="Search.")
    def search(q):
        return q

    assert search.parameters is schema and search.description == "Search."


def test_missing_hint_and_bad_hint_are_clear():
    def f(x):
        return x

    with pytest.raises(hk.UsageError, match="parameter 'x' needs a type hint"):
        hk.tool(f)
    with pytest.raises(hk.UsageError, match="no JSON Schema equivalent"):
        schema_for_type(type(lambda: 0))


def test_registry_is_single_source_and_rejects_duplicates():
    @hk.tool
    def alpha(x: int) -> int:
        """A."""
        return x

    reg = hk.ToolRegistry([alpha])
    assert reg.names == ["alpha"] and reg["alpha"] is alpha
    assert [s["function"]["name"] for s in reg.specs()] == ["alpha"]
    assert reg.specs(exclude=["alpha"]) == ()
    with pytest.raises(hk.UsageError, match="already registered"):
        reg.add(alpha)
    with pytest.raises(hk.UsageError, match="registered: alpha"):
        reg["beta"]


def test_lint_reports_each_defect_and_passes_a_good_tool():
    @hk.tool
    def bad(status: str, start_date: str, x: int) -> str:
        """Get.

        Args:
            status: one of 'open' or 'closed'.
            start_date: when it starts.
        """
        return ""

    codes = {(i.code, i.param) for i in hk.lint(bad)}
    assert codes == {
        ("missing-what", None),
        ("missing-when", None),
        ("missing-when-not", None),
        ("missing-returns", None),
        ("free-string-enum", "status"),
        ("date-without-format", "start_date"),
        ("undocumented-param", "x"),
    }

    @hk.tool
    def good(status: Literal["open", "closed"], start: dt.date) -> str:
        """List the tickets of one status that start on a date.

        Use this when the user asks which tickets are open or closed. Do not use it to change
        a ticket.

        Args:
            status: which tickets.
            start: the first day.

        Returns:
            A JSON list of ticket ids.
        """
        return ""

    assert hk.lint(good) == []


def test_lint_flags_many_ungrouped_tools():
    tools = []
    for i in range(16):

        def f(x: int) -> int:
            return x

        tools.append(hk.Tool.from_function(f, name=f"t{i}"))
    issues = hk.lint(hk.ToolRegistry(tools))
    assert any(i.code == "too-many-ungrouped" and i.tool == "*" for i in issues)
