import dataclasses
import datetime as dt
import enum
import json
import math
from typing import Literal, TypedDict

import pytest

import harnesskit as hk
from harnesskit.testing import reply
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


class Cabin(enum.Enum):
    ECONOMY = "economy"
    BUSINESS = "business"


class Seats(enum.IntEnum):
    ONE = 1
    TWO = 2


def test_date_datetime_and_enum_parameters_arrive_as_their_hinted_types():
    got = []

    @hk.tool
    def book(
        day: dt.date,
        at: dt.datetime,
        cabin: Cabin,
        seats: Seats = Seats.ONE,
        flex: list[dt.date] | None = None,
    ) -> str:
        """Book a seat."""
        got.append((day, at, cabin, seats, flex))
        return "booked"

    props = book.parameters["properties"]
    assert props["day"] == {"type": "string", "format": "date"}
    assert props["at"] == {"type": "string", "format": "date-time"}
    assert props["cabin"] == {"type": "string", "enum": ["economy", "business"]}
    assert props["seats"] == {"type": "integer", "enum": [1, 2], "default": 1}
    call = reply.tool_call(
        "book", day="2024-05-15", at="2024-05-15T14:30:00Z", cabin="business", seats=2,
        flex=["2024-05-16"],
    )  # fmt: skip
    run = hk.Harness([book], hk.ScriptedModel([call, reply.text("done")])).run("book it")
    assert got == [
        (
            dt.date(2024, 5, 15),
            dt.datetime(2024, 5, 15, 14, 30, tzinfo=dt.UTC),
            Cabin.BUSINESS,
            Seats.TWO,
            [dt.date(2024, 5, 16)],
        )
    ]
    (recorded,) = run.log.of_type("tool.call")  # the log keeps what the model sent
    assert recorded.arguments["day"] == "2024-05-15" and recorded.arguments["cabin"] == "business"


@pytest.mark.parametrize(
    ("arguments", "name", "expected"),
    [
        ({"day": "15/05/2024", "at": "2024-05-15T14:30:00Z"}, "day", "YYYY-MM-DD"),
        ({"day": "2024-05-15", "at": "tomorrow 3pm"}, "at", "2024-05-15T14:30:00Z"),
    ],
)
def test_a_date_that_does_not_parse_is_an_invalid_argument_naming_it(arguments, name, expected):
    ran = []

    @hk.tool
    def remind(day: dt.date, at: dt.datetime) -> str:
        """Set a reminder."""
        ran.append(1)
        return "set"

    model = hk.ScriptedModel([reply.tool_call("remind", **arguments), reply.text("ok")])
    run = hk.Harness([remind], model).run("remind me")
    (result,) = run.log.of_type("tool.result")
    body = json.loads(result.content)
    assert ran == [] and body["error_type"] == "invalid_argument"
    assert (f"argument {name!r}" in body["message"] or f"$.{name}" in body["message"]) and (
        expected in body["message"]
    ), body
    assert name in body["hint"]


def test_call_arguments_leaves_other_values_and_nested_objects_as_json():
    @hk.tool
    def f(n: int, when: dt.date | None = None, tags: list[str] | None = None) -> str:
        """F."""
        return "x"

    args = {"n": 3, "when": None, "tags": ["a"]}
    assert f.call_arguments(args) == args
    with pytest.raises(hk.errors.ToolArgumentsError, match="argument 'when'"):
        f.call_arguments({"n": 1, "when": 20240515})


@pytest.mark.parametrize("default", [math.inf, -math.inf, math.nan, (1.0, math.inf)])
def test_a_non_finite_default_is_refused_when_the_tool_is_made(default):
    def search_flights(origin: str, max_price: float = default) -> list:
        """Search flights.

        Args:
            origin: IATA code.
            max_price: the most to pay.
        """
        return []

    with pytest.raises(hk.UsageError) as info:
        hk.tool(search_flights)
    message = str(info.value)
    assert "'search_flights'" in message and "'max_price'" in message
    assert "None as the default" in message


def test_a_non_finite_number_in_an_explicit_schema_is_refused_naming_where():
    def f(**kwargs) -> str:
        """F."""
        return ""

    schema = {"type": "object", "properties": {"x": {"type": "number", "maximum": math.inf}}}
    with pytest.raises(hk.UsageError, match=r"'f'.*\$\.properties\.x\.maximum"):
        hk.tool(f, parameters=schema)


def test_a_finite_float_default_is_sent_in_the_schema():
    @hk.tool
    def g(limit: float = 2.5) -> str:
        """G."""
        return ""

    assert g.parameters["properties"]["limit"]["default"] == 2.5
