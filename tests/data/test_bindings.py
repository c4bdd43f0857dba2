"""Parameter bindings (R-A6) and the transport audit (R-A7)."""

import json
from typing import Any

import pytest

import harnesskit as hk
from harnesskit.testing import reply

USERS = {
    "mia_li_3668": {
        "name": {"first": "Mia", "last": "Li"},
        "payment_methods": [{"id": "credit_card_4421", "balance": 12.5}, {"id": "gift_card_77", "balance": None}],
        "reservations": ["4WQ150", "ZFA04Y", "Q69X3R"],
        "note": "ünïcödé ✈ \"quoted\" \\ back",
        "ratio": 0.1,
    }
}  # fmt: skip
FLIGHTS = [
    {"flight_number": f"HAT{i:03d}", "price": 100 + i, "date": "2024-05-20"} for i in range(30)
]

received = []


@hk.tool
def get_user(user_id: str) -> dict:
    """Get a user.

    Use this when you need the user's details. Do not use it to change anything.

    Args:
        user_id: the user's id.

    Returns:
        The user as JSON.
    """
    if user_id not in USERS:
        raise hk.ToolNotFoundError(f"no user {user_id}")
    return USERS[user_id]


@hk.tool
def search_flights(origin: str, destination: str) -> list:
    """Search flights.

    Use this when the user wants flights. Do not use it to book.

    Args:
        origin: IATA code.
        destination: IATA code.

    Returns:
        The flights as JSON.
    """
    return FLIGHTS


@hk.tool
def use(value: Any, items: list | None = None) -> dict:
    """Record what it was given.

    Use this in tests. Do not use it elsewhere.

    Args:
        value: anything.
        items: a list of anything.

    Returns:
        ok.
    """
    received.append((value, items))
    return {"ok": True}


def harness(turns, **kw):
    model = hk.ScriptedModel(turns)
    return hk.Harness([get_user, search_flights, use], model, **kw), model


def canon(v):
    return json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def test_bind_delivers_the_exact_value_from_a_call_an_artifact_and_a_label():
    received.clear()
    art = "art_" + __import__("hashlib").sha256(json.dumps(FLIGHTS).encode()).hexdigest()[:12]
    h, _ = harness([
        reply.tool_calls(reply.call("get_user", id="u1", user_id="mia_li_3668"),
                         reply.call("search_flights", id="s1", origin="JFK", destination="SEA")),
        reply.tool_call("use", value={"$bind": "u1#/payment_methods"},
                        items=[{"$bind": "u1#/note"}, {"$bind": "u1#/ratio"}, "typed"]),
        reply.tool_call("use", value={"$bind": f"{art}#/17"}, items=[{"$bind": "s1#/29/price"}]),
        reply.tool_call("use", value={"$bind": "u1"}),
        reply.tool_call("use", value={"$bind": "TOOL-8#/reservations/2"}),
        reply.text("done"),
    ])  # fmt: skip
    run = h.run("go")
    assert [e.payload["ok"] for e in run.log.of_type("tool.result")] == [True] * 6
    assert run.log[8].type == "tool.result" and run.log[8].payload["tool"] == "get_user"
    user = USERS["mia_li_3668"]
    assert received == [
        (user["payment_methods"], [user["note"], 0.1, "typed"]),
        (FLIGHTS[17], [129]),
        (user, None),
        ("Q69X3R", None),
    ]
    assert canon(received[2][0]) == canon(user)
    # the log keeps what the model wrote (the binding), not a retyped value
    call = run.log.of_type("tool.call")[2]
    assert call.payload["arguments"]["value"] == {"$bind": "u1#/payment_methods"}


@pytest.mark.parametrize(
    ("binding", "error_type", "expected"),
    [
        ("u1#/payment_methods/0/idd", "invalid_argument",
         "argument /value: $bind 'u1#/payment_methods/0/idd' does not resolve: pointer "
         "'/payment_methods/0/idd': no key 'idd'; at /payment_methods/0 there is an object with "
         "keys [id, balance]"),
        ("u1#/payment_methods/5", "invalid_argument",
         "'5' is not a valid index; at /payment_methods there is an array of 2 items (indexes 0–1)"),
        ("u1#/ratio/x", "invalid_argument", "at /ratio there is a number (0.1)"),
        ("u1#flights", "invalid_argument", "a JSON pointer starts with '/'"),
        ("nope#/a", "invalid_argument",
         "$bind source 'nope' is neither an artifact id nor a tool_call_id of this run; known: "
         "u1 (get_user), bad (get_user)"),
        ("bad#/a", "invalid_argument", "call 'bad' failed (not_found); there is no value to bind"),
    ],
)  # fmt: skip
def test_a_bad_binding_is_a_named_invalid_argument(binding, error_type, expected):
    h, _ = harness([
        reply.tool_calls(reply.call("get_user", id="u1", user_id="mia_li_3668"),
                         reply.call("get_user", id="bad", user_id="nobody")),
        reply.tool_call("use", value={"$bind": binding}),
        reply.text("done"),
    ])  # fmt: skip
    run = h.run("go")
    result = run.log.of_type("tool.result")[-1].payload
    body = json.loads(result["content"])
    assert result["ok"] is False and body["error_type"] == error_type
    assert expected in body["message"], body["message"]
    assert body["hint"]


def test_binding_objects_must_hold_only_bind_and_a_string():
    h, _ = harness([
        reply.tool_call("get_user", id="u1", user_id="mia_li_3668"),
        reply.tool_call("use", value={"$bind": "u1#/ratio", "also": 1}),
        reply.tool_call("use", value={"$bind": 7}),
        reply.text("done"),
    ])  # fmt: skip
    run = h.run("go")
    msgs = [json.loads(e.payload["content"])["message"] for e in run.log.of_type("tool.result")[1:]]
    assert all("a binding is exactly" in m for m in msgs) and msgs[0].startswith("argument /value")


def test_binding_an_expired_artifact_answers_not_found_with_why():
    class Clock:
        t = 1_700_000_000.0

        def __call__(self):
            return self.t

    clock = Clock()
    store = hk.ArtifactStore(ttl_seconds=30, clock=clock)

    def later(messages, info):
        if info.step == 1:
            return reply.tool_call("search_flights", id="s1", origin="A", destination="B")
        if info.step == 2:
            clock.t += 31
            return reply.tool_call("use", value={"$bind": "s1#/3"})
        return reply.text("done")

    run = hk.Harness([search_flights, use], hk.FunctionModel(later), artifacts=store).run("go")
    body = json.loads(run.log.of_type("tool.result")[-1].payload["content"])
    assert body["error_type"] == "not_found"
    assert "is expired: expired at 2023-11-14T22:13:50+00:00 (lifetime 30 s)" in body["message"]


def test_bindings_are_resolved_before_validation():
    @hk.tool
    def pick(flight_number: str) -> str:
        """Pick a flight.

        Use this when choosing. Do not use it to search.

        Args:
            flight_number: e.g. HAT001.

        Returns:
            The flight number.
        """
        return flight_number

    model = hk.ScriptedModel([
        reply.tool_call("search_flights", id="s1", origin="A", destination="B"),
        reply.tool_call("pick", flight_number={"$bind": "s1#/4/flight_number"}),
        reply.tool_call("pick", flight_number={"$bind": "s1#/4/price"}),  # an integer: schema error
        reply.text("done"),
    ])  # fmt: skip
    run = hk.Harness([search_flights, pick], model).run("go")
    ok, bad = run.log.of_type("tool.result")[1:]
    assert ok.payload["content"] == "HAT004"
    assert "at $.flight_number: expected type string, received 104" in bad.payload["content"]


# --- the transport audit ---------------------------------------------------------------------


def test_a_transposed_id_is_altered_by_one_edit():
    """`4WQ150` typed as `4WQ105` is one swap of adjacent digits: altered, as `hk.audit` says."""
    h, _ = harness([
        reply.tool_call("get_user", id="u1", user_id="mia_li_3668"),
        reply.tool_call("use", value="4WQ105"),
        reply.text("done"),
    ])  # fmt: skip
    audit = hk.transport_audit(h.run("I am mia_li_3668; cancel my trip"))
    row = next(r for r in audit.rows if r["value"] == "4WQ105")
    assert (row["status"], row["closest"], row["how"]) == (
        "altered",
        "4WQ150",
        "mixed up (1 edits)",
    )


def test_the_id_matcher_counts_a_swap_as_one_edit():
    from harnesskit.data.idmatch import altered_copy, edit_distance

    assert edit_distance("4WQ150", "4WQ105") == 1 and edit_distance("ab", "ba") == 1
    assert edit_distance("kitten", "sitting") == 3 and edit_distance("abc", "xyz", cap=1) == 2
    assert altered_copy("4WQ105", "4WQ150") == (2, "mixed up (1 edits)")
    assert altered_copy("Q7777", "A1001", max_edits=2) is None


def test_audit_finds_typed_ids_their_sources_and_alterations():
    h, _ = harness([
        reply.tool_call("get_user", id="u1", user_id="mia_li_3668"),              # from the user
        reply.tool_call("use", value="ZFA04Y"),                                     # from a result
        reply.tool_call("use", value="zfa04y"),                                     # case changed
        reply.tool_call("use", value="4WQ15"),                                      # cut
        reply.tool_call("use", value="Q69X3B"),                                     # mixed up
        reply.tool_call("use", value="credit_card_9999"),                           # invented
        reply.tool_call("use", value={"$bind": "u1#/reservations/0"}),              # bound
        reply.tool_call("use", value="x", items=["4WQ150", "ZFA04Y", "Q69X3R"]),    # copied array
        reply.tool_call("use", value="x", items=["Q69X3R", "4WQ150"]),              # subset array
        reply.tool_call("use", value="Cancel ZFA04Y for mia_li_3668 please"),       # ids in text
        reply.text("done"),
    ])  # fmt: skip
    run = h.run("I am mia_li_3668; what about my trips?")
    audit = hk.transport_audit(run)
    df = audit.frame()
    assert list(df.columns) == list(hk.data.TransportAudit.COLUMNS)
    ids = df[(df.kind != "array") & ~df.in_text & (df.path == "/value") | (df.tool == "get_user")]
    got = ids[["value", "kind", "transport", "status", "origin", "closest", "how"]]
    assert got.astype(object).where(got.notna(), None).values.tolist() == [
        ["mia_li_3668", "user_id", "typed", "exact", "user", None, None],
        ["ZFA04Y", "reservation_id", "typed", "exact", "tool", None, None],
        ["zfa04y", "reservation_id", "typed", "altered", "tool", "ZFA04Y", "case changed"],
        ["4WQ15", "reservation_id", "typed", "altered", "tool", "4WQ150", "cut (5 of 6 chars)"],
        ["Q69X3B", "reservation_id", "typed", "altered", "tool", "Q69X3R", "mixed up (1 edits)"],
        [
            "credit_card_9999",
            "payment_id",
            "typed",
            "invented",
            None,
            None,
            "in no earlier message",
        ],
        ["u1#/reservations/0", "binding", "bound", "bound", None, None, None],
    ]
    src = df.set_index("value").loc["zfa04y"]
    assert src.source == "tool result TOOL-7 (get_user)" and src.source_event_id == 7
    assert df.iloc[0].source == "user message USER-2"
    arrays = [(r["status"], r["how"]) for r in audit.rows if r["kind"] == "array"]
    assert arrays == [("copied", None), ("subset", "2 of 3 items")]
    in_text = [(r["value"], r["status"]) for r in audit.rows if r["in_text"]]
    assert in_text == [("ZFA04Y", "exact"), ("mia_li_3668", "exact")]
    c = audit.counts
    # the 5 ids inside the two typed arrays count too: they travelled through model text
    assert (c["ids_typed"], c["from_user"], c["from_tool"]) == (11, 1, 9)
    assert (c["altered"], c["invented"], c["ids_bound"], c["arrays_copied"]) == (3, 1, 1, 2)
    assert audit.verdict == (
        "leaky — 11 ids typed by the model (1 from user messages, 9 from tool results that could "
        "have been bound, 0 from the system prompt), 3 altered, 1 invented; 1 bound; 2 arrays "
        "typed (2 copied from results); 0 representation violations (0 runs restating results)"
    )


def test_values_that_are_no_near_copy_of_an_id_are_not_ids():
    h, _ = harness([
        reply.tool_call("get_user", id="u1", user_id="mia_li_3668"),
        reply.tool_call("use", value="economy"),
        reply.text("done"),
    ])  # fmt: skip
    df = hk.transport_audit(h.run("I am mia_li_3668")).frame()
    assert df.value.tolist() == ["mia_li_3668"]


def test_audit_of_a_clean_run_and_restatements():
    h, _ = harness([
        reply.tool_call("get_user", id="u1", user_id="mia_li_3668"),
        reply.tool_call("use", value={"$bind": "u1#/reservations/1"}),
        reply.text("done"),
    ])  # fmt: skip
    clean = hk.transport_audit(h.run("I am mia_li_3668"))
    assert clean.verdict.startswith(
        "clean — 1 ids typed by the model (1 from user messages, 0 from"
    )
    text = json.dumps(USERS["mia_li_3668"], ensure_ascii=False)
    h, _ = harness([
        reply.tool_call("get_user", id="u1", user_id="mia_li_3668"),
        reply.tool_calls(reply.call("use", value="x"), content="You are: " + text[:230]),
        reply.text("done"),
    ], transport=hk.TransportPolicy(on_violation="report"))  # fmt: skip
    restating = hk.transport_audit(h.run("I am mia_li_3668"))
    assert restating.counts["runs_restating"] == 1 and restating.violations[0]["ref"] == "call:u1"
    both = hk.data.TransportAudit.merge([clean, restating])
    assert both.counts["runs"] == 2 and both.verdict.startswith("leaky — 2 runs: 2 ids typed")
    assert len(both.frame()) == len(clean.rows) + len(restating.rows)


def test_audit_renders_as_escaped_html():
    h, _ = harness([reply.tool_call("use", value="<b>4WQ150</b> x"), reply.text("done")])
    audit = hk.transport_audit(h.run("cancel 4WQ150"))
    html = audit._repr_html_()
    assert ">clean — 0 ids typed" in html and "<td" in html  # a row: the id inside the text
    assert "4WQ150" in html and "<b>4WQ150" not in html
    assert repr(audit).startswith("<TransportAudit clean — 0 ids typed")


def test_a_number_under_another_prefix_is_a_mix_up():
    h, _ = harness([
        reply.tool_call("get_user", id="u1", user_id="mia_li_3668"),
        reply.tool_call("use", value="credit_card_77"),    # too short a number: not compared
        reply.tool_call("use", value="gift_card_4421"),    # the credit card's number, gift prefix
        reply.text("done"),
    ])  # fmt: skip
    rows = hk.transport_audit(h.run("I am mia_li_3668")).rows
    assert [(r["value"], r["status"], r["closest"], r["how"]) for r in rows[1:]] == [
        ("credit_card_77", "invented", None, "in no earlier message"),
        ("gift_card_4421", "altered", "credit_card_4421",
         "mixed up (same number, credit_card_… → gift_card_…)"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("number", "text", "held"),
    [
        ("150", "$150", True),
        ("150", "150.00 paid", True),
        ("150", "a 150, b", True),
        ("150", "$1500", False),
        ("150", "$1,150", False),
        ("150", "150.5", False),
        ("150", "2150", False),
        ("150.5", "150.50", True),
        ("150.5", "150.55", False),
    ],
)
def test_amount_occurs_only_as_a_whole_number(number, text, held):
    from harnesskit.data.idmatch import amount_occurs

    assert amount_occurs(number, text) is held


@pytest.mark.parametrize(
    ("token", "text", "held"),
    [("ABC12", "ABC123", False), ("ABC12", "X-ABC12", False), ("ABC12", "(ABC12).", True)],
)
def test_token_occurs_only_as_a_whole_token(token, text, held):
    from harnesskit.data.idmatch import token_occurs

    assert token_occurs(token, text) is held
