"""Single representation (R-A5): one source, one form per prompt; refused before the model call."""

import dataclasses
import hashlib
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import harnesskit as hk
from harnesskit.data import representation as rep
from harnesskit.data.artifacts import summarize
from harnesskit.log.events import EventLog
from harnesskit.messages import grown_tuple
from harnesskit.testing import reply

FLIGHTS = [
    {"flight_number": f"HAT{i:03d}", "origin": "JFK", "destination": "SEA",
     "departure": f"2024-05-20T{6 + i % 12:02d}:00:00", "price": 100 + i}
    for i in range(30)
]  # fmt: skip


def M(role, content, call_id=None):
    return hk.Message(role=role, content=content, tool_call_id=call_id)


@pytest.fixture
def art():
    store = hk.ArtifactStore()
    ref = store.put(FLIGHTS)
    return store, ref, store.read(ref.id)


def forms(store, messages, **kw):
    # the run's transport registers every artifact it creates; here we say so explicitly
    sources = {r.id: store.read(r.id) for r in store} if store is not None else None
    out = hk.data.check_representation(messages, store=store, sources=sources, **kw)
    return [(v.ref, v.first.form, v.second.form) for v in out], out


def test_each_pair_of_forms_is_a_violation(art):
    store, ref, text = art
    summary = M("tool", json.dumps(summarize(ref, reason="r")), "c1")
    preview = M("system", json.dumps({"artifact_ref": ref.id, "form": "preview",
                                      **ref.preview.to_dict()}))  # fmt: skip
    full = M("user", "Here is everything again: " + text)
    cut_a = M("tool", text[:1000] + f"\n[truncated: 1000 of {len(text)} chars shown]", "c2")
    cut_b = M("system", text[:500] + "…")
    restated = M("assistant", "To recap: " + text[100:350] + " and so on.")
    user = M("user", "Find me a flight from JFK to SEA.")
    cases = {
        "full + summary": ([user, summary, full], ("summary", "full")),
        "summary + preview": ([user, summary, preview], ("summary", "preview")),
        "two truncations": ([user, cut_a, cut_b], ("truncation", "truncation")),
        "summary + restatement": ([user, summary, restated], ("summary", "restatement")),
        "full + restatement": ([full, restated], ("full", "restatement")),
    }
    for name, (messages, pair) in cases.items():
        found, violations = forms(store, messages)
        assert found == [(ref.id, *pair)], name
        assert ref.id in violations[0].message and "R-A5" in violations[0].message
    _, (v,) = forms(store, [user, cut_a, cut_b])
    assert (v.first.span, v.second.span) == ((0, 1000), (0, 500))
    assert v.message.startswith(
        f"{ref.id} appears in two forms in one prompt: truncation chars 0–999 (message 1, tool) "
        "and truncation chars 0–499 (message 2, system)"
    )


def test_one_form_and_inspection_answers_are_fine(art):
    store, ref, text = art
    summary = M("tool", json.dumps(summarize(ref, reason="r")), "c1")
    excerpts = [
        M("tool", json.dumps(store.slice(ref.id, "", 0)), "c2"),
        M("tool", json.dumps(store.head(ref.id, 2000)), "c3"),
        M("tool", json.dumps(store.search(ref.id, "HAT012")), "c4"),
    ]
    same_again = M("tool", json.dumps(summarize(ref, reason="r")), "c5")
    short = M("assistant", "Cheapest: " + text[100:299])  # 199 chars: below the threshold
    assert forms(store, [summary, *excerpts, same_again, short])[0] == []
    # the threshold is a parameter; None switches restatement checks off
    assert forms(store, [summary, short], restate_chars=150)[0] == [
        (ref.id, "summary", "restatement")
    ]
    longer = M("assistant", text[100:400])
    assert forms(store, [summary, longer], restate_chars=None)[0] == []


def test_inline_tool_results_are_sources_too():
    result = json.dumps({"reservation_id": "4WQ150", "flights": FLIGHTS[:3], "insurance": "no"})
    messages = [
        {"role": "user", "content": "cancel 4WQ150"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c9", "type": "function", "function": {"name": "get", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c9", "content": result},
        {"role": "assistant", "content": "Your reservation: " + result[:260]},
    ]  # fmt: skip
    found, (v,) = forms(None, messages)
    assert found == [("call:c9", "full", "restatement")]
    assert v.second.span == (0, 260) and v.second.message_index == 3


# --- in a run: refused at assembly, before the model is called -------------------------------


@hk.tool
def search_flights(origin: str, destination: str) -> list:
    """Search flights between two airports.

    Use this when the user wants flights. Do not use it to book.

    Args:
        origin: IATA code.
        destination: IATA code.

    Returns:
        The flights as JSON.
    """
    return FLIGHTS


@hk.tool
def book(flight_number: str) -> dict:
    """Book one flight.

    Use this when the user picked a flight. Do not use it to search.

    Args:
        flight_number: the flight.

    Returns:
        The booking as JSON.
    """
    return {"booked": flight_number}


class Tweaked(hk.context.ContextBuilder):
    """A (deliberately broken) context policy that adds a second form of every artifact."""

    def __init__(self, store, how):
        super().__init__()
        self.store, self.how = store, how

    def build(self, log, **kw):
        prompt = super().build(log, **kw)
        out = []
        for m in prompt.messages:
            data = json.loads(m.content) if m.role == "tool" and m.content.startswith("{") else {}
            ref = data.get("artifact_ref") if data.get("form") == "summary" else None
            if ref is None:
                out.append(m)
            elif self.how == "preview":
                out += [m, M("system", json.dumps({"artifact_ref": ref, "form": "preview",
                                                   **data["preview"]}))]  # fmt: skip
            else:  # two different truncations
                text = self.store.read(ref)
                out += [M("tool", text[:1500] + "…", m.tool_call_id), M("system", text[:700] + "…")]
        return dataclasses.replace(prompt, messages=tuple(out))


def first_step(tmp_path, turns, **kw):
    model = hk.ScriptedModel([reply.tool_call("search_flights", origin="JFK", destination="SEA"),
                              *turns])  # fmt: skip
    h = hk.Harness([search_flights, book], model, log_dir=tmp_path, **kw)
    run = h.start("Flights JFK to SEA please.", run_id="r1")
    run.step()
    (ref_id,) = run.transport.created
    return run, model, ref_id


def assert_refused(run, model, ref_id, pair, tmp_path):
    before = len(model.requests)
    with pytest.raises(hk.errors.RepresentationError) as info:
        run.step()
    assert len(model.requests) == before  # the model was not called
    err = info.value
    assert err.ref == ref_id and [f.split(" ")[0] for f in err.forms] == list(pair)
    assert isinstance(err, hk.errors.ContextError) and ref_id in str(err)
    alert = run.log.last("alert.representation")
    assert alert.payload["ref"] == ref_id and alert.payload["refused"] is True
    assert [f["form"] for f in alert.payload["forms"]] == list(pair)
    assert not [
        e for e in run.log.events if e.event_id > alert.event_id and e.type == "model.request"
    ]
    # nothing was sent after it: the run ends with the error (no request, no response)
    assert [e.type for e in run.log.events[-2:]] == ["alert.representation", "run.finished"]
    finished = run.log.events[-1].payload
    assert finished["finish_reason"] == "error" and "RepresentationError" in finished["error"]
    assert run.finish_reason == "error" and run.error is err
    on_disk = EventLog.read(tmp_path / "r1.jsonl")  # flushed before the error left step()
    assert on_disk.events[-2].type == "alert.representation"
    return err


def test_run_refuses_full_plus_summary(tmp_path):
    run, model, ref_id = first_step(tmp_path, [reply.text("ok")])
    run.send("I pasted the list myself: " + run.transport.store.read(ref_id))
    assert_refused(run, model, ref_id, ("summary", "full"), tmp_path)


def test_run_refuses_summary_plus_preview(tmp_path):
    run, model, ref_id = first_step(tmp_path, [reply.text("ok")])
    run.context = Tweaked(run.transport.store, "preview")
    assert_refused(run, model, ref_id, ("summary", "preview"), tmp_path)


def test_run_refuses_two_truncations(tmp_path):
    run, model, ref_id = first_step(tmp_path, [reply.text("ok")])
    run.context = Tweaked(run.transport.store, "cuts")
    err = assert_refused(run, model, ref_id, ("truncation", "truncation"), tmp_path)
    assert "chars 0–1499" in str(err) and "chars 0–699" in str(err)


def restating_turns(text):
    s = text.index('{"flight_number": "HAT012"')
    recap = "Here are the options: " + text[s : s + 240]
    ref_id = "art_" + hashlib.sha256(text.encode()).hexdigest()[:12]  # content-addressed
    return [
        reply.tool_call("artifact_slice", ref=ref_id, pointer="", start=10, stop=20),
        reply.tool_calls(reply.call("book", flight_number="HAT012"), content=recap),
        reply.text("Booked HAT012."),
    ]


def test_run_refuses_an_assistant_restating_an_artifact(tmp_path):
    text = json.dumps(FLIGHTS)
    run, model, ref_id = first_step(tmp_path, restating_turns(text))
    run.step()  # the slice answer is an excerpt: fine
    assert run.log.last("tool.result").payload["ok"] is True
    run.step()  # the model restates 240+ chars of the artifact while booking
    assert_refused(run, model, ref_id, ("summary", "restatement"), tmp_path)


def test_replay_reports_instead_of_refusing(tmp_path):
    text = json.dumps(FLIGHTS)
    recorded = [reply.tool_call("search_flights", origin="JFK", destination="SEA"),
                *restating_turns(text)]  # fmt: skip
    h = hk.Harness([search_flights, book], hk.ReplayModel(recorded), log_dir=tmp_path)
    run = h.run("Flights JFK to SEA please.")
    assert run.finish_reason == "stop" and run.final_text == "Booked HAT012."
    alerts = run.log.of_type("alert.representation")
    assert len(alerts) == 1 and alerts[0].payload["refused"] is False  # reported once
    assert alerts[0].payload["forms"][1]["form"] == "restatement"
    # and a policy can ask for reports explicitly under any model
    h = hk.Harness([search_flights, book], hk.ScriptedModel(recorded),
                   transport=hk.TransportPolicy(on_violation="report"))  # fmt: skip
    assert h.run("again").finish_reason == "stop"


def _turns(n):
    """`n` clean tool turns: an assistant call (no text) and a distinct result of 300+ chars."""
    out = [M("system", "You are an airline agent."), M("user", "Sort out my trip.")]
    for i in range(n):
        out.append(M("assistant", None))
        rows = [{"flight": f"HAT{i:04d}-{j}", "price": 100 + i + j} for j in range(8)]
        out.append(M("tool", json.dumps(rows), f"call_{i}"))
    return out


def _verdict(violations):
    return [(v.ref, v.first.describe(), v.second.describe()) for v in violations]


def test_a_violation_after_many_clean_turns_is_caught_by_the_step_check():
    checker = hk.data.RepresentationChecker()
    messages = _turns(0)
    for i in range(120):  # each prompt extends the last: only its new messages are scanned
        messages += _turns(i + 1)[-2:]
        assert checker.check(tuple(messages)) == []
    early = messages[5].content  # the result of call_1
    cut = M("tool", early[:250] + "\n[truncated: 250 shown]", "call_x")
    restated = M("assistant", "As I said: " + messages[9].content[20:260])
    got = _verdict(checker.check((*messages, cut)))
    assert got == [
        ("call:call_1", "full (message 5, tool)", "truncation chars 0–249 (message 242, tool)")
    ]
    got = _verdict(checker.check((*messages, cut, restated)))
    assert got == [
        ("call:call_1", "full (message 5, tool)", "truncation chars 0–249 (message 242, tool)"),
        (
            "call:call_3",
            "full (message 9, tool)",
            "restatement chars 20–259 (message 243, assistant)",
        ),
    ]
    # the same prompts checked whole by a fresh checker: the same verdicts
    assert _verdict(hk.data.check_representation((*messages, cut, restated))) == got


def test_an_artifact_registered_late_is_found_in_earlier_messages(art):
    store, ref, text = art
    checker = hk.data.RepresentationChecker(lambda i: store.read(i, include_archived=True))
    messages = [*_turns(30), M("user", "Here is everything again: " + text)]
    assert checker.check(tuple(messages)) == []  # not a tracked source yet
    summary = M("tool", json.dumps(summarize(ref, reason="r")), "c1")
    (v,) = checker.check((*messages, summary))  # the summary names it: the old copy counts
    assert (v.ref, v.first.form, v.first.message_index, v.second.form) == (
        ref.id, "full", 62, "summary"
    )  # fmt: skip


def test_step_checks_agree_with_whole_prompt_checks_when_prompts_change(art):
    store, ref, text = art
    checker = hk.data.RepresentationChecker()
    base = _turns(40)
    cut = M("system", base[3].content[:220] + "…")
    prompts = [
        base[:20],
        base,  # extends
        [*base[:10], *base[12:]],  # an earlier message dropped: not an extension
        [*base, cut],
        [*base[:3], *base[4:], cut],  # the source gone: the cut is a single form again
    ]
    for prompt in prompts:
        assert _verdict(checker.check(tuple(prompt))) == _verdict(
            hk.data.check_representation(prompt)
        )
    assert _verdict(checker.check(tuple(prompts[3]))) == [
        ("call:call_0", "full (message 3, tool)", "truncation chars 0–218 (message 82, system)")
    ]


def test_marked_prompts_get_the_verdicts_of_whole_prompt_checks():
    # the builder's growing prompts (`grown_tuple`) skip the prefix comparison; a prompt that
    # ended with an extra message, or one made from a new list, is no extension all the same
    checker = hk.data.RepresentationChecker()
    base = _turns(40)
    cut = M("system", base[3].content[:220] + "…")  # a second form of call_0's result
    spine = list(base[:20])
    prompts = [grown_tuple(spine)]
    spine += base[20:]
    prompts += [grown_tuple(spine), grown_tuple(spine, (cut,)), grown_tuple(spine)]
    spine.append(M("user", "And the return flight?"))
    prompts.append(grown_tuple(spine))
    prompts.append(grown_tuple([*base[:3], *base[4:], cut]))  # a new list: the source gone
    prompts.append(grown_tuple([*base, cut]))
    for prompt in prompts:
        assert _verdict(checker.check(prompt)) == _verdict(
            hk.data.check_representation(list(prompt))
        )
    assert _verdict(checker.check(prompts[2])) != []  # the cut is caught...
    assert _verdict(checker.check(prompts[3])) == []  # ...and gone with the closing message


class _EveryTextAgain(hk.data.RepresentationChecker):
    """The checker deciding whether an inline result is a known source the way it used to:
    every source tried on it again, before (and apart from) the scan of its message."""

    def _known(self, role, content):
        ends = self._ends_of(content)
        return any(self._contained(content, ends, src) for src in self._order)


_ROWS = [
    json.dumps([{"flight": f"HAT{i:03d}-{j}", "price": 100 + j} for j in range(9)])
    for i in range(4)
]
_TEXTS = [
    *_ROWS,
    _ROWS[0][:230] + "\n[truncated: 230 shown]",  # a cut of a result
    "…" + _ROWS[1][-240:],  # a cut from the end
    "x" * 40 + _ROWS[2] + " and more",  # a result inside a longer one
    _ROWS[3][:120],  # too short to be a source
    "",
]


@given(
    steps=st.lists(
        st.lists(
            st.tuples(st.sampled_from(["tool", "assistant", "user"]), st.sampled_from(_TEXTS)),
            min_size=1,
            max_size=3,
        ),
        min_size=1,
        max_size=14,
    ),
    extend=st.lists(st.booleans(), min_size=14, max_size=14),
    min_chars=st.sampled_from([0, 1, 200]),
)
@settings(max_examples=150, deadline=None)
def test_the_known_source_decision_reuses_the_scan_without_changing_a_verdict(
    steps, extend, min_chars
):
    # a result is a source of its own unless a known source is in it; deciding that by the
    # message's own scan (through the ends index, once) finds the same pieces and verdicts
    fast = hk.data.RepresentationChecker(min_source_chars=min_chars, restate_chars=200)
    slow = _EveryTextAgain(min_source_chars=min_chars, restate_chars=200)
    prompt: list[hk.Message] = [M("system", "You are an airline agent.")]
    n = 0
    for step, (new, grow) in enumerate(zip(steps, extend, strict=False)):
        if not grow:  # not an extension of the last prompt: checked whole
            prompt = prompt[: len(prompt) // 2]
        for role, text in new:
            n += 1
            prompt.append(M(role, text, f"c{n}") if role == "tool" else M(role, text))
        got, want = fast.check(tuple(prompt)), slow.check(tuple(prompt))
        assert _verdict(got) == _verdict(want), step
        assert [(s.ref, s.birth) for s in fast._order] == [(s.ref, s.birth) for s in slow._order]
    assert fast.pieces(prompt) == slow.pieces(prompt)


_MARKER_BITS = [
    "…",
    "...",
    "..",
    "[truncated: 5 shown]",
    "[…]",
    "[...",
    "[x]",
    "]",
    "[",
    " ",
    "\n",
    "\u2003",
    "a",
    '{"a": [1]}',
    "truncated",
]


@given(st.lists(st.sampled_from(_MARKER_BITS), max_size=8).map("".join))
@example("x [truncated]  ")
@example("  … rest")
@example("[...] and [x]")
def test_the_marker_pre_checks_never_change_what_the_patterns_strip(text):
    assert rep._strip_end_marker(text) == rep._MARKERS_END.sub("", text)
    assert rep._strip_start_marker(text) == rep._MARKERS_START.sub("", text)
