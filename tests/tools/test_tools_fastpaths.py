"""Tool.argument_errors: the fast acceptance of flat schemas never disagrees with jsonschema."""

from typing import Literal

from hypothesis import given
from hypothesis import strategies as st

import harnesskit as hk
from harnesskit.tools.spec import _fast_accept

PRIMITIVES = ["string", "integer", "number", "boolean", "null"]
VALUES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.sampled_from([0, 1, 1.0, 0.0, True, False, "a", "b", ""])
    | st.text(max_size=3)
    | st.lists(st.integers(), max_size=2)
    | st.dictionaries(st.text(max_size=2), st.integers(), max_size=2)
)
PROPERTY = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(PRIMITIVES)
        | st.lists(st.sampled_from(PRIMITIVES), min_size=1, unique=True),
        "enum": st.lists(
            st.sampled_from([0, 1, True, False, "a", "b", 2]),
            min_size=1,
            unique_by=lambda v: (type(v), v),
        ),
        "description": st.just("d"),
        "default": st.just(1),
    },
)
NAMES = st.sampled_from(["a", "b", "c"])


@st.composite
def schemas(draw):
    props = draw(st.dictionaries(NAMES, PROPERTY, max_size=3))
    schema = {"type": "object", "properties": props}
    if draw(st.booleans()):
        schema["additionalProperties"] = draw(st.booleans())
    required = draw(st.lists(NAMES, unique=True, max_size=3))
    if required:
        schema["required"] = required
    return schema


@given(schema=schemas(), arguments=st.dictionaries(NAMES | st.just("zz"), VALUES, max_size=4))
def test_argument_errors_are_exactly_jsonschemas(schema, arguments):
    t = hk.Tool(name="t", description="d", parameters=schema, fn=lambda **kw: None)
    expected = sorted(t.validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    got = t.argument_errors(arguments)
    assert [(e.message, list(e.absolute_path)) for e in got] == [
        (e.message, list(e.absolute_path)) for e in expected
    ]
    accepts = _fast_accept(schema)
    if accepts is not None and accepts(arguments):
        assert expected == []  # the fast path only ever says yes when jsonschema does


def test_tool_schemas_from_hints_take_the_fast_path_and_keep_jsonschema_errors():
    @hk.tool
    def book(flight: str, seats: int, price: float, cabin: Literal["economy", "business"]) -> str:
        """Book.

        Args:
            flight: flight number.
            seats: how many.
            price: price.
            cabin: the cabin.
        """
        return flight

    assert _fast_accept(book.parameters) is not None
    ok = {"flight": "HAT1", "seats": 2, "price": 10, "cabin": "economy"}
    assert book.argument_errors(ok) == []
    assert book.argument_errors({**ok, "seats": 2.0}) == []  # jsonschema: 2.0 is an integer
    for bad, message in [
        ({**ok, "seats": True}, "True is not of type 'integer'"),
        ({**ok, "cabin": "first"}, "'first' is not one of ['economy', 'business']"),
        ({**ok, "extra": 1}, "Additional properties are not allowed ('extra' was unexpected)"),
        ({"flight": "HAT1", "price": 1, "cabin": "economy"}, "'seats' is a required property"),
    ]:
        assert [e.message for e in book.argument_errors(bad)] == [message]


def test_enum_tells_booleans_from_numbers_like_jsonschema():
    schema = {"type": "object", "properties": {"n": {"enum": [1, "a", False]}}}
    t = hk.Tool(name="t", description="d", parameters=schema, fn=lambda **kw: None)
    for value, ok in [(1, True), (True, False), (0, False), (False, True), (1.0, True)]:
        assert (t.argument_errors({"n": value}) == []) is ok, value
        assert (list(t.validator.iter_errors({"n": value})) == []) is ok, value


def test_schemas_outside_the_flat_subset_always_use_jsonschema():
    for schema in [
        {"type": "object", "properties": {"d": {"type": "string", "format": "date"}}},
        {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}},
        {"type": "object", "properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}},
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}},
        {"type": "object", "additionalProperties": {"type": "integer"}},
    ]:
        assert _fast_accept(schema) is None, schema
    t = hk.Tool(
        name="t",
        description="d",
        parameters={"type": "object", "properties": {"d": {"type": "string", "format": "date"}}},
        fn=lambda **kw: None,
    )
    assert [e.message for e in t.argument_errors({"d": "2024-13-01"})] == [
        "'2024-13-01' is not a 'date'"
    ]


def test_spec_hash_is_computed_once_and_follows_a_replaced_spec():
    import dataclasses
    import hashlib
    import json

    @hk.tool
    def ping(host: str) -> str:
        """Ping a host.

        Args:
            host: the host.
        """
        return host

    blob = json.dumps([ping.to_openai(), ping.version, ping.risk], sort_keys=True)
    assert ping.spec_hash == hashlib.sha256(blob.encode()).hexdigest()[:16] == ping.spec_hash
    changed = dataclasses.replace(ping, description="Ping a host twice.")
    assert changed.spec_hash != ping.spec_hash
    assert hk.ToolRegistry([changed]).versions() == {"ping": f"1:{changed.spec_hash}"}
