"""Issue 13, part 7: identical inputs, clock, timer and run id give byte-identical logs."""

import itertools
import json

import harnesskit as hk
from harnesskit.run._ids import unique_call_ids
from harnesskit.testing import reply


@hk.tool
def lookup(key: str) -> dict:
    """Look a key up."""
    return {"key": key, "value": len(key)}


@hk.tool(risk="write")
def save(note: str) -> dict:
    """Save a note."""
    return {"saved": note}


def turns():
    call = hk.ToolCall
    return [
        reply.tool_calls(  # an empty id and a repeated id: both get replacement ids
            call(id="", name="lookup", arguments={"key": "a"}),
            call(id="dup", name="lookup", arguments={"key": "bb"}),
            call(id="dup", name="lookup", arguments={"key": "ccc"}),
        ),
        reply.tool_calls(call(id="dup", name="save", arguments={"note": "n"})),
        reply.text("done"),
    ]


def write_run(folder):
    ticks = itertools.count(1_700_000_000, 0.25)
    timer = itertools.count(0, 0.125)
    h = hk.Harness(
        [lookup, save],
        hk.ScriptedModel(turns()),
        log_dir=folder,
        clock=lambda: next(ticks),
        timer=lambda: next(timer),
    )
    run = h.run("go", run_id="run-fixed")
    assert run.finish_reason == "stop"
    return (folder / "run-fixed.jsonl").read_bytes(), run


def test_two_identical_runs_write_the_same_bytes(tmp_path):
    first, run = write_run(tmp_path / "a")
    second, _ = write_run(tmp_path / "b")
    assert first == second
    ids = [e.payload["tool_call_id"] for e in run.log.of_type("tool.call")]
    assert len(set(ids)) == 4 and ids[1] == "dup"  # the first "dup" is kept, the rest replaced
    replaced = {}
    for e in run.log.of_type("model.response"):
        replaced |= e.payload["id_replacements"]
    assert sorted(replaced.values()) == ["", "dup", "dup"]
    assert all(new.startswith("call_") for new in replaced)
    results = [json.loads(e.payload["content"]) for e in run.log.of_type("tool.result")]
    assert results[-1] == {"saved": "n"}


def test_replacement_ids_differ_between_runs_and_branches():
    def ids(run_id, branch):
        st = hk.run.RunState(run_id=run_id, branch_id=branch, step=1, call_ids={"x"})
        message = hk.Message(role="assistant", tool_calls=(hk.ToolCall(id="x", name="t"),))
        return unique_call_ids(message, st).tool_calls[0].id

    assert ids("r1", "main") == ids("r1", "main")
    assert len({ids("r1", "main"), ids("r2", "main"), ids("r1", "side")}) == 3
