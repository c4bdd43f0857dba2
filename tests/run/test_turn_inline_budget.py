"""One turn's results together stay within the prompt budget (R-A1 for a turn, case 26 family).

Many parallel results, each under the 8000-character inline limit, used to go inline together
and overflow the window: `run()` raised `ContextError` under every policy but `default`. The
transport now stores the largest of a turn's results as artifacts (compact summaries sharing the
turn's budget) before they are logged, so every policy sees the same and the request fits.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

import harnesskit as hk
from harnesskit.data.artifacts import summarize
from harnesskit.data.transport import Transport, TransportPolicy
from harnesskit.log import ArtifactCreatedEvent, ContextInjectedEvent, ToolResultEvent
from harnesskit.messages import ToolCall, ToolResult
from harnesskit.tools.executor import Executed

POLICIES = ["full-history", "default", "window", "summary"]


class WindowedModel(hk.ScriptedModel):
    """A scripted model that declares a 32,000-token window and 1,000 output tokens."""

    context_window = 32_000
    max_output_tokens = 1_000


def doc(i: int) -> str:
    return f"word{i} " * 1300  # 7,800+ chars: under the 8,000-char inline limit


def record(i: int) -> dict[str, Any]:
    return {"id": f"DOC-{i:04d}", "body": f"text {i} " * 1100}  # JSON, just under 8,000


@hk.tool
def fetch(i: int) -> str:
    """Fetch a document.

    Use to read. Do not use to write.

    Args:
        i: index.

    Returns:
        Text.
    """
    return doc(i)


@hk.tool
def lookup(i: int) -> dict[str, Any]:
    """Look a record up.

    Use to read. Do not use to write.

    Args:
        i: index.

    Returns:
        The record.
    """
    return record(i)


def turns(n_turns: int, per_turn: int, tool: str = "fetch") -> list[Any]:
    out: list[Any] = []
    for t in range(n_turns):
        out.append(
            [
                ToolCall(id=f"c{t}_{i}", name=tool, arguments={"i": t * per_turn + i})
                for i in range(per_turn)
            ]
        )
    return [*out, "all read"]


def full_text(tool: str, i: int) -> str:
    return doc(i) if tool == "fetch" else json.dumps(record(i), ensure_ascii=False)


def assert_fits_and_lossless(
    run: Any, store: hk.ArtifactStore, tool: str, n: int, per_turn: int
) -> None:
    assert run.finish_reason == "stop", run.error
    for ctx in run.log.of_type(ContextInjectedEvent):
        assert ctx.payload["request_tokens"] <= ctx.payload["input_budget"] == 31_000
    results = list(run.log.of_type(ToolResultEvent))
    assert len(results) == n and all(r.ok for r in results)
    created = {e.tool_call_id: e for e in run.log.of_type(ArtifactCreatedEvent)}
    assert created, "a turn over the budget stores results as artifacts"
    for r in results:
        t, j = map(int, r.tool_call_id[1:].split("_"))
        original = full_text(tool, t * per_turn + j)
        if r.tool_call_id not in created:
            assert r.content == original  # inline: the whole result
            continue
        art = created[r.tool_call_id]
        assert art.artifact_id in r.content and art.payload["reason"]
        assert len(r.content) <= 2000  # a bounded summary, never the result
        full = store.read(art.artifact_id)
        assert full == original  # nothing lost: the whole result reads back
        assert hashlib.sha256(full.encode()).hexdigest() == art.sha256
        preview = json.loads(r.content).get("preview")
        if preview:  # R-A3: byte-exact
            assert full[preview["start"] : preview["end"]] == preview["text"]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    ("n_turns", "per_turn", "tool"),
    [(1, 80, "fetch"), (3, 80, "fetch"), (8, 20, "fetch"), (2, 40, "lookup")],
    ids=["one-turn-of-80", "three-turns-of-80", "eight-turns-of-20", "two-turns-of-40-json"],
)
def test_many_mid_size_results_fit_under_every_policy(policy, n_turns, per_turn, tool):
    store = hk.ArtifactStore()
    model = WindowedModel(turns(n_turns, per_turn, tool))
    every = hk.Limits(max_calls_per_turn=None)  # the transport under test, not the call cap
    h = hk.Harness([fetch, lookup], model, policy=policy, artifacts=store, limits=every)
    run = h.run("read them all")
    assert_fits_and_lossless(run, store, tool, n_turns * per_turn, per_turn)


def test_a_turn_of_two_small_results_is_untouched():
    model = WindowedModel([[ToolCall(id="a_0", name="fetch", arguments={"i": 1})] * 1, "done"])
    store = hk.ArtifactStore()
    run = hk.Harness([fetch], model, artifacts=store).run("read one")
    assert run.finish_reason == "stop"
    (r,) = run.log.of_type(ToolResultEvent)
    assert r.content == doc(1) and not list(run.log.of_type(ArtifactCreatedEvent))


def test_without_a_window_the_turn_cap_still_applies():
    model = hk.ScriptedModel(turns(1, 20))  # no declared window: only max_turn_inline_chars
    store = hk.ArtifactStore()
    policy = TransportPolicy(max_turn_inline_chars=40_000)
    run = hk.Harness([fetch], model, artifacts=store, transport=policy).run("read them")
    assert run.finish_reason == "stop"
    contents = [r.content for r in run.log.of_type(ToolResultEvent)]
    assert sum(map(len, contents)) <= 40_000 < 20 * len(doc(0))
    inline = [c for c in contents if not c.startswith("{")]
    assert inline and all(c in {doc(i) for i in range(20)} for c in inline)  # smaller ones stay


def test_when_even_refs_cannot_fit_the_run_stops_with_a_clear_error():
    class Tiny(hk.ScriptedModel):
        context_window = 3_000
        max_output_tokens = 500

    model = Tiny(turns(1, 80))
    run = hk.Harness([fetch], model, policy="full-history").start("read them")
    with pytest.raises(hk.errors.ContextError, match="declare a larger window"):
        run.run()
    # the results were still moved: nothing large was logged inline
    assert all(len(r.content) < 400 for r in run.log.of_type(ToolResultEvent))


def executed(i: int, text: str) -> Executed:
    call = ToolCall(id=f"c{i}", name="fetch", arguments={"i": i})
    result = ToolResult(tool_call_id=f"c{i}", name="fetch", ok=True, content=text, value=text)
    return Executed(call=call, tool=fetch, result=result, arguments={"i": i})


def test_fit_turn_stores_the_largest_first_and_keeps_the_rest_inline():
    store = hk.ArtifactStore()
    transport = Transport(store, TransportPolicy(max_turn_inline_chars=20_000))
    turn = [executed(0, "a" * 7_900), executed(1, "b" * 7_000), executed(2, "c" * 6_000)]
    for ex in turn:
        ex.result = transport.postprocess(ex)
    transport.fit_turn(turn)
    assert turn[2].result.content == "c" * 6_000 and turn[1].result.content == "b" * 7_000
    ref = turn[0].result.meta["artifact"]
    assert store.read(ref) == "a" * 7_900
    assert sum(len(ex.result.content) for ex in turn) <= 20_000
    assert [k for k, _ in turn[0].emitted] == ["artifact.created"]


def test_fit_turn_leaves_a_turn_within_its_budget_alone():
    transport = Transport(hk.ArtifactStore(), TransportPolicy())
    turn = [executed(0, "a" * 7_900), executed(1, "b" * 7_900)]
    transport.fit_turn(turn, room_chars=None)
    assert [ex.result.content for ex in turn] == ["a" * 7_900, "b" * 7_900]
    assert not transport.holds_artifacts


def test_compact_summary_keeps_ref_and_size_at_any_bound():
    store = hk.ArtifactStore()
    ref = store.put("x" * 9_000, source={"tool": "fetch"})
    for bound in (2000, 600, 300, 50):
        out = summarize(ref, reason="a test", max_chars=bound, compact=True)
        assert out["artifact_ref"] == ref.id and out.get("sha256", ref.sha256) == ref.sha256
        assert out["size_chars"] == 9_000 and out["complete"] is False
        assert len(json.dumps(out)) <= max(bound, 110)  # the least a ref needs: ~100 chars
        assert bound < 300 or out["sha256"] == ref.sha256
        if "preview" in out and out["preview"]:
            p = out["preview"]
            assert ("x" * 9_000)[p["start"] : p["end"]] == p["text"]
    full = summarize(ref, reason="a test", max_chars=300)  # not compact: unchanged behaviour
    assert "read_more" in full


def test_max_turn_inline_chars_is_validated():
    with pytest.raises(hk.errors.UsageError, match="max_turn_inline_chars"):
        TransportPolicy(max_turn_inline_chars=10)
    assert TransportPolicy(max_turn_inline_chars=None).max_turn_inline_chars is None


def test_the_facts_index_of_a_summary_is_its_ref_and_preview_values_not_its_sha():
    from harnesskit.data._values import tool_values

    store = hk.ArtifactStore()
    ref = store.put(json.dumps(record(7)), source={"tool": "lookup"})
    full = json.dumps(summarize(ref, reason="a test", max_chars=2000, ids=["DOC-0007"]))
    values = {v: k for k, v in tool_values(full)}
    assert values[ref.id] == "artifact_ref" and values["DOC-0007"] in ("ids", "preview")
    assert ref.sha256 not in values  # it describes the artifact: no model types it
    plain = {v: k for k, v in tool_values(json.dumps({"sha256": ref.sha256}))}
    assert ref.sha256 in plain  # any other result's values are indexed as before


def test_fit_turn_keeps_the_id_index_when_it_is_on():
    transport = Transport(
        hk.ArtifactStore(), TransportPolicy(max_turn_inline_chars=10_000, id_index=True)
    )
    texts = [json.dumps(record(i)) for i in range(3)]
    turn = [executed(i, t) for i, t in enumerate(texts)]
    for ex in turn:
        ex.result = transport.postprocess(ex)
    transport.fit_turn(turn)
    stored = [ex for ex in turn if "artifact" in ex.result.meta]
    assert stored
    for ex in stored:
        assert f"DOC-{ex.call.arguments['i']:04d}" in json.loads(ex.result.content)["ids"]
