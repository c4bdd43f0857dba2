"""A call/result group (an assistant message with tool calls and the results answering it) is
never split by a context policy (case 14's family): whatever rule drops one member (budget,
max_events, the window edge, a summary cut) drops the whole group, recorded with one shared
reason that names the pair; a group carried by its results is recorded as such."""

import json

import harnesskit as hk
from harnesskit.context import ContextBuilder, ContextPolicy, injection_records


def turn(log, calls, text=None):
    """One model turn: a response making `calls` [(id, tool, args, content)], then each result."""
    msg = {"role": "assistant", "content": text, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}
        for cid, tool, args, _ in calls]}  # fmt: skip
    response = log.append("model.response", {"message": msg}, source="model")
    results = []
    for cid, tool, args, content in calls:
        call = log.append(
            "tool.call",
            {"tool": tool, "tool_call_id": cid, "arguments": args},
            source="model",
            parent_id=response.event_id,
        )
        results.append(
            log.append(
                "tool.result",
                {"tool": tool, "tool_call_id": cid, "ok": True, "content": content},
                source="tool",
                parent_id=call.event_id,
            )
        )
    return response, results


def policy(**limits):
    doc = {"name": "pairs", "version": "1", "include": ["*"], "exclude": [], "summary": False}
    doc["limits"] = {"recent_turns": 1, **limits}
    return doc


def groups(log):
    """`(response, [results])` of every response that made tool calls."""
    out = []
    for r in log.of_type("model.response"):
        ids = [c["id"] for c in (r.message or {}).get("tool_calls") or ()]
        if ids:
            res = [e for e in log.of_type("tool.result") if e.tool_call_id in ids]
            out.append((r, res))
    return out


def assert_pairs(log, prompt):
    """The invariant: each group is sent whole, carried by its results, or dropped whole."""
    open_ids = []
    for m in prompt.messages:  # chat-completions pairing holds
        if m.role == "tool":
            assert m.tool_call_id in open_ids, f"orphan tool message {m.tool_call_id}"
            open_ids.remove(m.tool_call_id)
            continue
        assert not open_ids, open_ids
        if m.role == "assistant" and m.tool_calls:
            open_ids = [c.id for c in m.tool_calls]
    assert not open_ids
    sent_calls = {c.id for m in prompt.messages for c in m.tool_calls}
    fates = []
    for r, results in groups(log):
        if r.event_id not in prompt.excluded:  # its assistant message is in the window
            assert {e.tool_call_id for e in results} <= sent_calls
            fates.append("sent")
            continue
        why = prompt.excluded[r.event_id]
        shown = [e for e in results if e.event_id not in prompt.excluded]
        if shown:
            for e in shown:
                assert e.event_id in (*prompt.selected, *prompt.summarized)
            assert "its calls are shown with" in why and shown[0].label in why, why
            fates.append("carried")
            continue
        for e in results:  # dropped together: one reason, naming every member
            assert prompt.excluded[e.event_id] == why, prompt.excluded
            assert e.label in why
        assert r.label in why and "dropped together" in why, why
        fates.append(f"dropped:{why.split(':')[0]}")
    return fates


def test_a_budget_drops_a_tool_calls_only_pair_with_one_reason():
    log = hk.EventLog()
    log.append("user.message", {"content": "why did the nightly job fail?"}, source="user")
    r1, (t1,) = turn(log, [("t1", "read_log", {"name": "n.log"}, "log line " * 700)])
    r2, (t2,) = turn(log, [("t2", "grep", {"pattern": "ERROR"}, "ERROR disk quota exceeded")])
    log.append("model.response", {"message": {"role": "assistant", "content": "quota"}})
    log.append("user.message", {"content": "how do we prevent it?"}, source="user")
    prompt = ContextBuilder(policy(max_prompt_tokens=600)).build(log)
    assert prompt.token_estimate <= 600
    assert assert_pairs(log, prompt) == ["dropped:budget.fact", "carried"]
    why = prompt.excluded[t1.event_id]
    assert why.startswith("budget.fact: ") and f"{r1.label} + {t1.label}, call t1" in why
    assert t2.event_id in prompt.selected


def test_parallel_results_leave_together_under_the_budget():
    log = hk.EventLog()
    log.append("user.message", {"content": "totals please"}, source="user")
    calls = [(f"p{i}", "get", {"i": i}, f"value-{i} " + "pad " * 150) for i in range(3)]
    r, results = turn(log, calls)
    log.append("model.response", {"message": {"role": "assistant", "content": "done"}})
    log.append("user.message", {"content": "and now?"}, source="user")
    # dropping the oldest result alone would fit; the batch goes as a unit instead
    prompt = ContextBuilder(policy(max_prompt_tokens=420)).build(log)
    assert assert_pairs(log, prompt) == ["dropped:budget.fact"]
    text = "\n".join(m.text for m in prompt.messages)
    assert not any(f"value-{i}" in text for i in range(3))
    assert len({prompt.excluded[e.event_id] for e in (r, *results)}) == 1


def test_max_events_never_cuts_a_parallel_batch_in_two():
    log = hk.EventLog()
    log.append("user.message", {"content": "look up three orders"}, source="user")
    turn(log, [(f"o{i}", "order", {"id": i}, f"ORD-000{i}") for i in range(3)])
    log.append("model.response", {"message": {"role": "assistant", "content": "found them"}})
    prompt = ContextBuilder(policy(max_events=4)).build(log)
    assert assert_pairs(log, prompt) == ["dropped:limit.max_events"]
    text = "\n".join(m.text for m in prompt.messages)
    assert "ORD-000" not in text


def test_the_window_edge_drops_a_pair_with_one_reason():
    log = hk.EventLog()
    log.append("user.message", {"content": "first"}, source="user")
    turn(log, [("w1", "read", {"p": "a"}, "A-TEXT")])
    for k in range(5):  # later turns push the pair out of the window
        log.append("user.message", {"content": f"again {k}"}, source="user")
        log.append("model.response", {"message": {"role": "assistant", "content": f"ok {k}"}})
    prompt = ContextBuilder("window").build(log)
    (fate,) = assert_pairs(log, prompt)
    assert fate == "dropped:include"
    assert "A-TEXT" not in "\n".join(m.text for m in prompt.messages)


def test_an_old_turn_dropped_under_pressure_takes_its_pair_whole():
    log = hk.EventLog()
    log.append("user.message", {"content": "read it"}, source="user")
    turn(log, [("d1", "read", {"p": "a"}, "B " * 900)])
    log.append("model.response", {"message": {"role": "assistant", "content": "read"}})
    log.append("user.message", {"content": "next"}, source="user")
    doc = policy(max_prompt_tokens=300)
    doc["limits"]["recent_turns"] = 3  # the pair's turn is in the window: step 5 drops it
    prompt = ContextBuilder(doc).build(log)
    assert assert_pairs(log, prompt) == ["dropped:budget.window"]


def test_a_summary_cut_names_the_pair_carried_by_the_summary():
    log = hk.EventLog()
    log.append("user.message", {"content": "check every shard"}, source="user")
    for i in range(14):
        turn(log, [(f"s{i}", "shard", {"n": i}, json.dumps({"shard": f"SH-{i:03d}"}))])
    log.append("model.response", {"message": {"role": "assistant", "content": "all checked"}})
    log.append("user.message", {"content": "summary?"}, source="user")
    doc = ContextPolicy.resolve("summary").to_dict()
    doc.update(name="summary-only", facts_index=False)  # no values index: the summary alone
    prompt = ContextBuilder(doc).build(log)
    fates = assert_pairs(log, prompt)
    assert set(fates) <= {"carried", "dropped:limit.max_events"}
    summed = [r for r, res in groups(log) if res[0].event_id in prompt.summarized]
    assert summed, "max_events left some results only in the summary"
    for r in summed:
        assert prompt.excluded[r.event_id].endswith("in the summary]")


def test_an_interpretation_dropped_first_names_the_results_that_carry_its_calls():
    log = hk.EventLog()
    log.append("user.message", {"content": "go"}, source="user")
    r, (t,) = turn(log, [("i1", "probe", {}, "PROBE-OK")], text="I think " + "hmm " * 300)
    log.append("model.response", {"message": {"role": "assistant", "content": "fine"}})
    prompt = ContextBuilder(policy(max_prompt_tokens=300)).build(log)
    assert assert_pairs(log, prompt) == ["carried"]
    assert prompt.excluded[r.event_id].startswith("budget.interpretation: ")
    assert "PROBE-OK" in "\n".join(m.text for m in prompt.messages)


def test_the_record_follows_a_pair_from_carried_to_dropped_across_deltas():
    log = hk.EventLog()
    log.append("user.message", {"content": "start"}, source="user")
    r, (t,) = turn(log, [("x1", "read", {}, "X " * 400)])
    log.append("model.response", {"message": {"role": "assistant", "content": "ok"}})
    builder = ContextBuilder(policy(max_prompt_tokens=700))
    prompts = []
    for k in range(6):  # each turn adds an excluded id; the budget drops the pair at some point
        prompts.append(builder.build(log))
        assert_pairs(log, prompts[-1])
        builder.record(log, prompts[-1])
        log.append("user.message", {"content": f"more {k} " + "w " * 150}, source="user")
        log.append("model.response", {"message": {"role": "assistant", "content": f"r{k}"}})
    records = injection_records(log)
    reasons = [rec.excluded.get(r.event_id, "") for rec in records]
    assert "shown with" in reasons[0] and "dropped together" in reasons[-1], reasons
    assert any("delta_of" in log[rec.event_id].payload for rec in records)
    for rec, prompt in zip(records, prompts, strict=True):  # deltas rebuild the exact map
        assert rec.excluded == prompt.excluded
    assert records[-1].excluded[t.event_id] == reasons[-1]
