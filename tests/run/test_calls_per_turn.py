"""`Limits(max_calls_per_turn=64)`: one reply's calls beyond the cap are answered, never run.

A reply with 10,000 parallel calls ran all 10,000 (10,000 writes too) and flooded the next
prompt. Now the first `max_calls_per_turn` run; each call beyond them gets a "not run" result
saying why, and the run goes on.
"""

import json

import pytest

import harnesskit as hk
from harnesskit.testing import reply

DONE: list[int] = []


@hk.tool(risk="write")
def put(i: int) -> str:
    """Store a number.

    Args:
        i: the number.

    Returns:
        ok.
    """
    DONE.append(i)
    return "ok"


@pytest.mark.parametrize(("cap", "made"), [(3, 10), (64, 200), (1, 2)])
def test_calls_beyond_the_cap_are_answered_not_run_and_writes_never_act(cap, made):
    DONE.clear()
    calls = reply.tool_calls(*[reply.call("put", i=i) for i in range(made)])
    model = hk.ScriptedModel([calls, reply.text("done")])
    h = hk.Harness([put], model, limits=hk.Limits(max_calls_per_turn=cap))
    run = h.run("store them")
    assert run.finish_reason == "stop" and run.final_text == "done"
    assert sorted(DONE) == list(range(cap))
    results = run.log.of_type(hk.log.ToolResultEvent)
    assert len(results) == made  # every call has a result: the next prompt is valid
    unrun = [r for r in results if not r.ok]
    assert len(unrun) == made - cap
    body = json.loads(unrun[0].content)
    assert body["message"].startswith("not run") and "max_calls_per_turn" in body["message"]
    assert str(made) in body["message"] and str(cap) in body["message"]
    ledger_calls = {r.tool_call_id for r in results if r.ok}
    assert len(ledger_calls) == cap


def test_the_default_cap_is_64_and_none_runs_every_call():
    assert hk.Limits().max_calls_per_turn == 64
    DONE.clear()
    calls = reply.tool_calls(*[reply.call("put", i=i) for i in range(70)])
    model = hk.ScriptedModel([calls, reply.text("done")])
    hk.Harness([put], model, limits=hk.Limits(max_calls_per_turn=None)).run("store")
    assert len(DONE) == 70


def test_a_cap_of_zero_is_refused():
    with pytest.raises(hk.UsageError, match="max_calls_per_turn must be >= 1"):
        hk.Limits(max_calls_per_turn=0)


def test_a_run_killed_before_its_not_run_answers_resumes_without_running_them(tmp_path):
    DONE.clear()
    calls = reply.tool_calls(*[reply.call("put", i=i) for i in range(5)])
    model = hk.ScriptedModel([calls, reply.text("done"), reply.text("done")])
    h = hk.Harness([put], model, log_dir=tmp_path, limits=hk.Limits(max_calls_per_turn=2))
    run = h.run("store them")
    path = run.log.path
    run.log.close()
    lines = path.read_bytes().splitlines(keepends=True)
    types = [json.loads(x)["type"] for x in lines]
    path.write_bytes(b"".join(lines[: types.index("model.response") + 1]))  # killed at once
    DONE.clear()
    resumed = h.resume(path)
    assert DONE == []  # 0 and 1 answer from the ledger; the calls beyond the cap never run
    results = resumed.log.of_type(hk.log.ToolResultEvent)
    assert len(results) == 5 and sum(not r.ok for r in results) == 3
    resumed.run()
    assert resumed.finish_reason == "stop"
