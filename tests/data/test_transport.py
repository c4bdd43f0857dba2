"""Forced externalization in a run (R-A1, R-A2, R-A4): what the model is sent, and what is kept."""

import json

import pytest

import harnesskit as hk
from harnesskit.data.bindings import BINDINGS_NOTE
from harnesskit.testing import reply

FLIGHTS = [
    {"flight_number": f"HAT{i:03d}", "origin": "JFK", "destination": "SEA",
     "prices": {"economy": 120 + i, "business": 480 + 3 * i}}
    for i in range(30)
]  # fmt: skip


@hk.tool
def search_flights(origin: str, destination: str, limit: int = 30) -> list:
    """Search direct flights.

    Use this when the user wants flights. Do not use it to book.

    Args:
        origin: IATA code.
        destination: IATA code.
        limit: how many flights at most.

    Returns:
        The flights as JSON.
    """
    return FLIGHTS[:limit]


@hk.tool(max_result_chars=1000)
def read_log(lines: int) -> str:
    """Read the service log.

    Use this when debugging. Do not use it for bookings.

    Args:
        lines: how many lines.

    Returns:
        The log text.
    """
    return "\n".join(f"2024-05-20 10:{i % 60:02d} INFO request {i} served" for i in range(lines))


def run_with(turns, **kw):
    model = hk.ScriptedModel(turns)
    h = hk.Harness([search_flights, read_log], model, **kw)
    return h.start("Flights JFK to SEA?", run_id="r1").run(), model


def test_a_large_array_reaches_the_model_only_as_ref_and_bounded_summary(tmp_path):
    run, _ = run_with(
        [reply.tool_call("search_flights", id="c1", origin="JFK", destination="SEA"),
         reply.text("There are 30 flights.")],
        log_dir=tmp_path,
    )  # fmt: skip
    requests = run.log.of_type("model.request")
    sent = run.log.request_messages(requests[1].event_id)  # exactly what the model received
    tool_msg = sent[-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "c1"
    summary = json.loads(tool_msg["content"])
    store = run.transport.store
    ref = store.ref(summary["artifact_ref"])
    assert summary["form"] == "summary" and summary["complete"] is False
    assert "array of 30 items at the top level (inline limit 10)" in summary["why"]
    assert summary["items"] == 30 and summary["shape"]["item"]["keys"]["prices"]["type"] == "object"
    assert len(tool_msg["content"]) <= 2000
    assert store.verify_preview(ref.id, summary["preview"])
    assert summary["preview"]["text"] == json.dumps(FLIGHTS[0])
    assert any(c.startswith("artifact_slice(") for c in summary["read_more"])
    # the array itself is not in the request: no flight after the preview's first one
    request_text = run.log.request_text(requests[1].event_id)
    assert "HAT000" in request_text and not any(f"HAT{i:03d}" in request_text for i in range(1, 30))
    # the whole is on disk, byte for byte, under the default store <log_dir>/artifacts
    assert store.root == tmp_path / "artifacts"
    assert store.read(ref.id) == json.dumps(FLIGHTS, ensure_ascii=False)
    # the log keeps the summary and a hash, not the payload
    result = run.log.last("tool.result").payload
    assert result["artifact"] == ref.id and result["sha256"] == ref.sha256
    assert "HAT029" not in (tmp_path / "r1.jsonl").read_text()


def test_artifact_created_event_carries_the_r_a2_metadata():
    run, _ = run_with(
        [
            reply.tool_call("search_flights", id="c1", origin="JFK", destination="SEA"),
            reply.text("ok"),
        ]
    )
    event = run.log.last("artifact.created")
    p = event.payload
    assert event.parent_id == run.log.of_type("tool.call")[0].event_id and event.source == "tool"
    assert p["id"].startswith("art_") and len(p["sha256"]) == 64
    assert (
        p["size_chars"] == len(json.dumps(FLIGHTS)) and p["items"] == 30 and p["arrays"] == {"": 30}
    )
    assert p["source"] == {"run_id": "r1", "branch_id": "main", "step": 1,
                           "tool": "search_flights", "tool_call_id": "c1"}  # fmt: skip
    assert p["data_class"] == "internal" and p["created"] and p["expires"] is None
    assert (p["truncated"], p["summary"], p["incomplete"]) == (False, False, False)
    assert p["shape"]["type"] == "array" and p["reason"].startswith("it holds an array of 30")
    assert p["store"] == "memory" and p["step"] == 1 and p["tool_call_id"] == "c1"


def test_thresholds_are_parameters_and_small_results_stay_inline():
    ten = [reply.tool_call("search_flights", id="c1", origin="A", destination="B", limit=10),
           reply.text("ok")]  # fmt: skip
    run, model = run_with(ten)
    assert json.loads(model.requests[1].messages[-1].content) == FLIGHTS[:10]  # 10 items: inline
    assert not run.transport.holds_artifacts
    thirty = [reply.tool_call("search_flights", id="c1", origin="A", destination="B"),
              reply.text("ok")]  # fmt: skip
    _, model = run_with(thirty, transport=hk.TransportPolicy(max_inline_items=30))
    assert json.loads(model.requests[1].messages[-1].content) == FLIGHTS
    _, model = run_with(ten, transport=hk.TransportPolicy(max_inline_chars=500))
    assert "inline limit 500" in json.loads(model.requests[1].messages[-1].content)["why"]
    with pytest.raises(hk.UsageError, match="max_inline_items must be >= 1"):
        hk.TransportPolicy(max_inline_items=0)


def test_long_text_is_stored_whole_even_when_the_tool_caps_its_output():
    run, model = run_with([reply.tool_call("read_log", id="c1", lines=400), reply.text("ok")])
    summary = json.loads(model.requests[1].messages[-1].content)
    text = run.transport.store.read(summary["artifact_ref"])
    assert summary["kind"] == "text" and "chars (inline limit 8000)" in summary["why"]
    assert text.count("\n") == 399 and len(text) > 8000  # not the tool's 1000-char cut
    assert summary["preview"] == {"start": 0, "end": 400, "of_chars": len(text), "cut": True,
                                  "text": text[:400]}  # fmt: skip


def test_inspection_tools_are_offered_only_once_the_run_holds_artifacts():
    turns = [reply.tool_call("search_flights", id="c1", origin="A", destination="B", limit=3),
             reply.tool_call("search_flights", id="c2", origin="A", destination="B"),
             reply.text("ok")]  # fmt: skip
    _, model = run_with(turns)
    names = [r.tool_names for r in model.requests]
    assert names[0] == names[1] == ["search_flights", "read_log"]
    assert names[2] == ["search_flights", "read_log", *hk.data.INSPECTION_TOOLS]
    assert hk.lint(hk.ToolRegistry(hk.data.Transport(hk.ArtifactStore())._tools)) == []


def test_the_model_reads_an_artifact_through_the_tools_and_binds_from_it():
    picked = []

    @hk.tool
    def book(flight: dict) -> str:
        """Book a flight.

        Use this when the user chose. Do not use it to search.

        Args:
            flight: the flight.

        Returns:
            A confirmation.
        """
        picked.append(flight)
        return "booked"

    def policy(messages, info):
        last = messages[-1]
        if info.step == 1:
            return reply.tool_call("search_flights", id="c1", origin="JFK", destination="SEA")
        if last.content == "booked":
            return reply.text("Booked HAT023.")
        body = json.loads(last.content)
        if body.get("form") == "summary":
            return reply.tool_call("artifact_search", ref=body["artifact_ref"], query="HAT023")
        if body.get("op") == "search":
            ptr = body["hits"][0]["pointer"].rsplit("/", 1)[0]  # /23/flight_number -> /23
            return reply.tool_call("book", flight={"$bind": f"{body['artifact_ref']}#{ptr}"})
        raise AssertionError(body)

    h = hk.Harness([search_flights, book], hk.FunctionModel(policy))
    run = h.run("Book HAT023 from JFK to SEA.")
    assert run.final_text == "Booked HAT023." and picked == [FLIGHTS[23]]
    search = json.loads(run.log.of_type("tool.result")[1].payload["content"])
    assert search["part"] == "hits 0–0 of 1" and search["form"] == "excerpt"
    assert hk.transport_audit(run).counts["ids_bound"] == 1


def test_an_expired_artifact_answers_not_found_and_says_why():
    class Clock:
        t = 1_700_000_000.0

        def __call__(self):
            return self.t

    clock = Clock()
    store = hk.ArtifactStore(ttl_seconds=60, clock=clock)

    def policy(messages, info):
        if info.step == 1:
            return reply.tool_call("search_flights", id="c1", origin="JFK", destination="SEA")
        if info.step == 2:
            clock.t += 3600
            ref = json.loads(messages[-1].content)["artifact_ref"]
            return reply.tool_call("artifact_slice", ref=ref, pointer="", start=0)
        return reply.text("gone")

    run = hk.Harness([search_flights], hk.FunctionModel(policy), artifacts=store).run("x")
    body = json.loads(run.log.last("tool.result").payload["content"])
    assert body["error_type"] == "not_found"
    assert "is expired: expired at 2023-11-14T22:14:20+00:00 (lifetime 60 s)" in body["message"]
    assert body["hint"].startswith("re-run the tool")


def test_where_the_store_lives(tmp_path):
    assert hk.Harness([search_flights]).artifacts.root is None  # no log_dir: in memory
    assert hk.Harness([search_flights], log_dir=tmp_path).artifacts.root == tmp_path / "artifacts"
    assert hk.Harness([search_flights], artifacts=tmp_path / "x").artifacts.root == tmp_path / "x"
    shared = hk.ArtifactStore(tmp_path / "shared")
    assert hk.Harness([search_flights], artifacts=shared).artifacts is shared
    assert not (tmp_path / "artifacts").exists()  # created on the first artifact only


def test_the_model_is_told_about_bindings():
    _, model = run_with([reply.text("hi")])
    system = model.requests[0].messages[0]
    assert system.role == "system" and system.content == BINDINGS_NOTE and "$bind" in system.content
    h = hk.Harness([search_flights], hk.ScriptedModel([reply.text("hi")]), system_prompt="Be kind.")
    assert h.run("x").log[1].payload["system_prompt"] == "Be kind.\n\n" + BINDINGS_NOTE
    off = hk.TransportPolicy(describe_bindings=False)
    h = hk.Harness([search_flights], hk.ScriptedModel([reply.text("hi")]), transport=off)
    assert h.run("x").log[1].payload["system_prompt"] == ""
    h = hk.Harness([], hk.ScriptedModel([reply.text("hi")]))  # no tools: nothing to bind
    assert h.run("x").log[1].payload["system_prompt"] == ""


def test_inspection_tool_names_must_not_clash():
    @hk.tool(name="artifact_slice")
    def mine(x: str) -> str:
        """Mine. Use this when. Do not use it. Returns: x."""
        return x

    with pytest.raises(hk.UsageError, match="artifact_slice"):
        hk.Harness([mine]).start("x")


def test_secrets_never_reach_artifacts_in_clear(tmp_path):
    @hk.tool
    def list_users() -> list:
        """List users.

        Use this when asked. Do not use it to change users.

        Returns:
            The users.
        """
        return [
            {"id": i, "email": f"user{i}@example.com", "token": "sk-" + "a1B2" * 8}
            for i in range(40)  # large enough that a summary pays (else it stays inline)
        ]

    model = hk.ScriptedModel([reply.tool_call("list_users"), reply.text("ok")])
    run = hk.Harness([list_users], model, log_dir=tmp_path).run("users?")
    ref = run.transport.store.ref(run.log.last("tool.result").payload["artifact"])
    text = run.transport.store.read(ref.id)
    assert "sk-a1B2" not in text and text.count("[REDACTED:api_key]") == 40
    # e-mail addresses are personal data: kept exact and marked (R-S1), not rewritten
    assert json.loads(text)[3] == {
        "id": 3,
        "email": "user3@example.com",
        "token": "[REDACTED:api_key]",
    }
    on_disk = "".join(p.read_text() for p in (tmp_path / "artifacts").rglob("*.txt"))
    assert "sk-a1B2" not in on_disk and "[REDACTED:api_key]" in on_disk


def test_a_resumed_run_knows_its_artifacts(tmp_path):
    turns = [reply.tool_call("search_flights", id="c1", origin="JFK", destination="SEA"),
             reply.text("ok")]  # fmt: skip
    h = hk.Harness([search_flights], hk.ScriptedModel(turns), log_dir=tmp_path)
    first = h.start("Flights JFK to SEA?", run_id="r1")
    first.step()  # the search is stored; then the process "dies"
    (ref_id,) = first.transport.created
    first.log.close()
    model = hk.ScriptedModel([reply.text("ok")])
    again = hk.Harness([search_flights], model, log_dir=tmp_path)
    resumed = again.resume(tmp_path / "r1.jsonl")
    assert resumed.transport.holds_artifacts and ref_id in resumed.transport.created
    resumed.send("Here they are: " + json.dumps(FLIGHTS))  # a second form of the stored result
    with pytest.raises(hk.errors.RepresentationError) as info:
        resumed.step()
    assert info.value.ref == ref_id and model.requests == []


def test_a_result_over_the_item_limit_stays_inline_when_a_summary_would_not_pay():
    @hk.tool
    def codes() -> list:
        """List short codes.

        Use this when asked.

        Returns:
            The codes.
        """
        return [f"C{i:02d}" for i in range(12)]  # 12 items, ~80 chars: a summary is larger

    model = hk.ScriptedModel([reply.tool_call("codes"), reply.text("ok")])
    run = hk.Harness([codes], model).run("codes?")
    result = run.log.last("tool.result")
    assert "artifact" not in result.payload and not run.log.of_type("artifact.created")
    assert json.loads(result.payload["content"]) == [f"C{i:02d}" for i in range(12)]
    big = hk.TransportPolicy(max_summary_share=1.0)
    assert big.max_summary_share == 1.0 and big.max_inline_items == 10
