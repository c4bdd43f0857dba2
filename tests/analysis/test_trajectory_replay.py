import json
import pathlib
import sys

import pytest

import harnesskit as hk
from harnesskit.testing import reply

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "support"))
import orders_domain as od


def untimed(log):
    return [
        {**e.to_dict(), "payload": {k: v for k, v in e.payload.items() if k != "seconds"}}
        for e in log
    ]


@pytest.fixture
def recorded(tmp_path):
    db = od.fresh_db(tmp_path / "db.json")
    run = od.make_harness(db, tmp_path / "logs").start(od.TASK, run_id=od.RUN_ID).run()
    return tmp_path / "logs" / f"{od.RUN_ID}.jsonl", run


def test_replay_on_recorded_responses_reproduces_every_request_call_and_result(tmp_path, recorded):
    path, _ = recorded
    fresh = od.fresh_db(tmp_path / "fresh.json")
    report = hk.replay(path, od.make_harness(fresh, None))
    assert report.identical and report.steps == report.replayed_steps == 13
    assert report.frame().empty
    again = hk.replay(path, od.make_harness(od.fresh_db(tmp_path / "again.json"), None))
    assert untimed(again.run.log) == untimed(report.run.log)  # deterministic but for durations
    assert od.business_state(fresh) == od.business_state(tmp_path / "db.json")


def test_replay_reports_where_a_changed_world_diverges(tmp_path, recorded):
    path, _ = recorded
    changed = od.fresh_db(tmp_path / "changed.json")
    data = json.loads(changed.read_text())
    data["orders"]["A3"]["amount"] = 311
    changed.write_text(json.dumps(data))
    report = hk.replay(path, od.make_harness(changed, None))
    rows = report.frame()[["step", "what"]].values.tolist()
    assert rows == [[5, "tool_result"], [6, "request"]]  # once where it starts, not at every step
    first = report.divergences[0]
    assert '"amount": 310' in first.recorded[1] and '"amount": 311' in first.replayed[1]


def test_replay_with_recorded_tools_acts_on_nothing(tmp_path, recorded):
    path, _ = recorded
    untouched = od.fresh_db(tmp_path / "untouched.json")
    before = untouched.read_text()
    report = hk.replay(path, od.make_harness(untouched, None), tools="recorded")
    assert report.identical and untouched.read_text() == before


def test_a_resumed_run_replays_like_the_uninterrupted_one(tmp_path, recorded):
    path, _ = recorded
    db = od.fresh_db(tmp_path / "partial.json")
    run = od.make_harness(db, tmp_path / "p").start(od.TASK, run_id=od.RUN_ID)
    for _ in range(5):
        run.step()
    run.log.close()
    od.make_harness(db, tmp_path / "p").resume(tmp_path / "p" / f"{od.RUN_ID}.jsonl").run()
    report = hk.replay(
        tmp_path / "p" / f"{od.RUN_ID}.jsonl",
        od.make_harness(od.fresh_db(tmp_path / "x.json"), None),
    )
    assert report.identical
    original = hk.EventLog.read(path)
    resumed = hk.EventLog.read(tmp_path / "p" / f"{od.RUN_ID}.jsonl")
    texts = [
        [log.request_text(e.event_id) for e in log.of_type("model.request")]
        for log in (original, resumed)
    ]
    assert texts[0] == texts[1]


def test_replay_reports_a_recording_that_runs_out():
    run = hk.Harness([], hk.ScriptedModel([reply.text("hi")])).start("hello").run()
    too_short = hk.Harness([], "scripted", limits=hk.Limits(max_steps=3))
    run.log.append("user.message", {"content": "and again?"})  # a turn never answered
    report = hk.replay(run.log, too_short)
    assert [d.what for d in report.divergences] == ["length"]


class LastTurns:
    """A context builder that keeps the system prompt and the last `n` messages."""

    def __init__(self, n):
        self.n = n
        self.inner = hk.context.ContextBuilder("full-history")

    def build(self, log, *, branch_id="main", extra=()):
        full = self.inner.build(log, branch_id=branch_id)
        pairs = list(zip(full.messages, full.selected, strict=True))
        keep = pairs[:1] + pairs[1:][-self.n :]
        # never start on a tool message whose call was cut off
        while len(keep) > 1 and keep[1][0].role == "tool":
            keep.pop(1)
        messages = tuple(m for m, _ in keep)
        return hk.context.Prompt(
            messages=messages,
            selected=tuple(i for _, i in keep),
            token_estimate=sum(hk.context.TokenEstimator().count_message(m) for m in messages),
        )


def test_counterfactual_shows_what_another_policy_would_have_sent_side_by_side(recorded):
    path, _ = recorded
    same = hk.counterfactual(path, "full-history")
    assert (same["recorded_ids"] == same["ids"]).all() and (
        same["recorded_tokens"] == same["tokens"]
    ).all()
    cf = hk.counterfactual(path, LastTurns(4))
    assert len(cf) == 13 and list(cf["step"]) == list(range(1, 14))
    last = cf.iloc[-1]
    assert len(last["ids"]) <= 5 and last["tokens"] < last["recorded_tokens"]
    assert set(last["only_recorded"]) == set(last["recorded_ids"]) - set(last["ids"])
    assert last["messages"][0]["role"] == "system"
    assert cf.iloc[0]["only_recorded"] == () and cf.iloc[0]["policy"] == "LastTurns"


def test_counterfactual_respects_branches(tmp_path):
    model = hk.ScriptedModel([reply.tool_call("noop"), reply.text("main")])

    @hk.tool
    def noop() -> str:
        """Do nothing."""
        return "nothing"

    run = hk.Harness([noop], model).start("root").run()
    side = run.fork(
        run.log.of_type("tool.result")[0].event_id,
        "side",
        harness=hk.Harness([noop], hk.ScriptedModel(["side answer"])),
    )
    side.run()
    cf = hk.counterfactual(run.log, "full-history", branch_id="side")
    assert len(cf) == 1
    main_answer = run.log.of_type("model.response", branch_id="main")[-1].event_id
    assert main_answer not in cf.iloc[0]["ids"] and cf.iloc[0]["ids"] == cf.iloc[0]["recorded_ids"]
