"""One status fold and one branch view: `Trajectory` and context building agree (issue 13)."""

import json

import pytest

import harnesskit as hk
from harnesskit.context.builder import ContextBuilder
from harnesskit.testing import reply

CANARY = "ORDER-42 SHIPPED FROM WAREHOUSE B"


def echo(text: str) -> str:
    """Echo the text back.

    Args:
        text: what to echo.
    """
    return text


def clock():
    t = [1_700_000_000.0]

    def tick():
        t[0] += 1.0
        return t[0]

    return tick


def _log_with_fact_7():
    """Events 1..8 on main, event 7 a tool fact holding the canary; then a branch with evidence."""
    log = hk.EventLog(clock=clock())
    log.append("task.contract", {"system_prompt": "You track orders.", "task": {"task_id": "T"}})
    log.append("user.message", {"content": "Where is order 42?"}, source="user")  # 2
    for i in range(2):  # 3..6: two earlier calls and results
        log.append("tool.call", {"tool": "echo", "tool_call_id": f"c{i}", "arguments": {}})
        log.append(
            "tool.result",
            {"tool": "echo", "tool_call_id": f"c{i}", "ok": True, "content": f"lookup {i}"},
            source="tool",
        )
    log.append(  # 7: the fact the merge will supersede
        "tool.result",
        {"tool": "echo", "tool_call_id": "c1", "ok": True, "content": CANARY},
        source="tool",
    )
    log.append("user.message", {"content": "Check again, please."}, source="user")  # 8
    assert log[7].content == CANARY
    tr = hk.Trajectory(log)
    tr.fork(8, "b", frozen={})
    check = log.append(
        "tool.result", {"tool": "pytest", "ok": True, "content": "1 passed"}, branch_id="b"
    )
    decision = log.append(
        "human.decision", {"approved": True, "by": "alice"}, branch_id="b", source="human"
    )
    evidence = hk.log.Evidence(
        sample=check.event_id, check=check.event_id, revision="r1", decision=decision.event_id
    )
    return log, tr, evidence


def _prompt_text(prompt) -> str:
    """The exact JSON of the messages a prompt sends."""
    return json.dumps([m.to_openai() for m in prompt.messages], ensure_ascii=False)


@pytest.mark.parametrize("how", ["merge", "supersede"])
def test_a_merge_that_supersedes_7_drops_it_from_the_default_prompt(how):
    log, tr, evidence = _log_with_fact_7()
    builder = ContextBuilder("default")
    before = builder.build(log)
    assert CANARY in _prompt_text(before) and 7 in before.selected
    if how == "merge":
        ev = tr.merge("b", evidence=evidence, conclusion="it moved", supersedes=[7])
        assert isinstance(ev, hk.log.BranchMergeEvent) and ev.replaces == [7]
        assert ev.reference_only is False
    else:
        tr.supersede(7, reason="it moved")
    assert tr.status(7) == "superseded"
    # the same builder reading on (as a run does), and a fresh one reading the whole log
    for prompt in (builder.build(log), ContextBuilder("default").build(log)):
        assert CANARY not in _prompt_text(prompt)
        assert prompt.excluded[7].startswith("status.superseded")


def test_after_the_merge_the_next_request_of_a_run_no_longer_holds_7():
    run = hk.Harness(
        [echo],
        hk.ScriptedModel(
            [
                reply.tool_call("echo", text=CANARY),
                reply.text("It shipped from B."),
                reply.text("Noted: it moved."),
            ]
        ),
        policy="default",
        clock=clock(),
    )
    run = run.start("Where is order 42?").run()
    fact = run.log.of_type(hk.log.ToolResultEvent)[0]
    assert CANARY in fact.content
    tr = hk.Trajectory(run.log)
    tr.fork(run.log[-1].event_id, "b", frozen={})
    check = run.log.append(
        "tool.result", {"tool": "pytest", "ok": True, "content": "1 passed"}, branch_id="b"
    )
    decision = run.log.append(
        "human.decision", {"approved": True, "by": "alice"}, branch_id="b", source="human"
    )
    tr.merge(
        "b",
        evidence=hk.log.Evidence(
            sample=check.event_id, check=check.event_id, revision="r1", decision=decision.event_id
        ),
        conclusion="it moved",
        supersedes=[fact.event_id],
    )
    assert tr.status(fact.event_id) == "superseded"
    run.send("What changed?").run()
    request = run.log.last(hk.log.ModelRequestEvent)
    sent = json.dumps(run.log.request_messages(request.event_id), ensure_ascii=False)
    assert "What changed?" in sent
    # the tool call's arguments still carry the text (the model typed it); the fact does not
    results = [m for m in run.log.request_messages(request.event_id) if m["role"] == "tool"]
    assert all(CANARY not in (m.get("content") or "") for m in results)


def test_trajectory_and_context_share_one_branch_view():
    log = hk.EventLog()
    for i in range(3):
        log.append("user.message", {"content": f"main {i}"})  # 1..3
    # a fork written by hand (payload names the branch and the point, no parent_id)
    log.append("branch.fork", {"branch_id": "a", "from_event": 2}, branch_id="a", parent_id=None)
    log.append("user.message", {"content": "on a"}, branch_id="a")  # 5
    log.append("user.message", {"content": "main 3"})  # 6
    seen = [e.event_id for e in hk.log.visible_events(log, "a")]
    assert seen == [1, 2, 4, 5]
    prompt = ContextBuilder("full-history").build(log, branch_id="a")
    assert list(prompt.selected) == [1, 2, 5]
    assert prompt.excluded[3].startswith("branch.other") and prompt.excluded[6]


def test_an_interpretation_cannot_supersede_a_fact_in_either_reader():
    log = hk.EventLog()
    log.append("user.message", {"content": "hi"}, source="user")
    log.append("tool.result", {"tool_call_id": "c", "content": CANARY, "ok": True}, source="tool")
    log.append("status.supersede", {"target": 2, "reason": "I think not"}, source="model")
    assert hk.Trajectory(log).status(2) == "active"
    prompt = ContextBuilder("default").build(log)
    assert 2 not in prompt.excluded


def test_the_fold_fast_path_equals_feeding_every_event():
    """`Trajectory` feeds the fold only the events the log indexed as able to change a status
    (or, for events put in by hand, those `folds` names); feeding all gives the same."""
    import random

    from harnesskit.log._fold import StatusFold

    rng = random.Random(7)
    log = hk.EventLog(None, run_id="r", clock=lambda: 0.0)
    kept = hk.Trajectory(log)  # folds incrementally as the log grows
    for k in range(600):
        n = len(log.events)
        x = rng.random()
        if n > 3 and x < 0.2:
            kind = rng.choice(["status.supersede", "status.reject", "status.expire"])
            target = rng.choice([rng.randint(1, n), [rng.randint(1, n), 0], "x", n + 5])
            log.append(kind, {"target": target}, source=rng.choice(["system", "model"]))
        elif n > 3 and x < 0.25:
            log.append(
                "branch.merge",
                {"supersedes": [rng.randint(1, n)], "reference_only": rng.random() < 0.5},
            )
        elif x < 0.6:
            log.append(
                "tool.result",
                {"content": str(k)},
                status=rng.choice(["active"] * 5 + ["audit-only"]),
                supersedes=rng.randint(1, n) if n and rng.random() < 0.1 else None,
            )
        else:
            log.append("model.response", {"message": {"role": "assistant", "content": "x"}})
        if k % 37 == 0:
            traj = hk.Trajectory(log)
            fold = StatusFold()
            want = {e.event_id: e.status for e in log.events}
            for e in log.events:
                for t in fold.add(e, log.events):
                    want[t] = fold.statuses[t][0]
            assert traj.statuses() == want
            assert traj.refused == fold.refused
            assert kept.statuses() == want and kept.refused == fold.refused
            hand = hk.EventLog(None)  # events put in by hand: the log's index does not know
            hand.events.extend(log.events)
            assert hk.Trajectory(hand).statuses() == want
