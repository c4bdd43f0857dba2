import collections
import dataclasses
import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import pytest

import harnesskit as hk
from harnesskit.testing import reply
from harnesskit.tools.idempotency import IdempotencyLedger, ledger_path

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "support"))
import orders_domain as od

DOMAIN = pathlib.Path(od.__file__)
LOG = f"{od.RUN_ID}.jsonl"


def start_killed(tmp, point, *, mode="start"):
    """Run the order desk in a subprocess until it reaches `point`, then SIGKILL it."""
    db = tmp / "db.json"
    if mode == "start":
        od.fresh_db(db)
    env = dict(os.environ, HK_KILL_AT=point, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen(
        [sys.executable, str(DOMAIN), str(db), str(tmp / "logs"), mode],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    line = proc.stdout.readline()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    assert line.strip() == f"AT {point}", f"the run never reached {point}: {line!r}"
    return db


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted run: its final database, answer, and event count."""
    tmp = tmp_path_factory.mktemp("reference")
    db = od.fresh_db(tmp / "db.json")
    run = od.make_harness(db, tmp / "logs").start(od.TASK, run_id=od.RUN_ID).run()
    effects = json.loads(db.read_text())["effects"]
    return {
        "db": od.business_state(db),
        "text": run.final_text,
        "events": len(run.log),
        "effects": effects,
    }


def effect_counts(db):
    return collections.Counter(
        (e["tool"], e["order"]) for e in json.loads(db.read_text())["effects"]
    )


# The uninterrupted run has 78 events in 13 steps, with two parallel writes per order. The
# airline crash test (test_resume_airline.py) covers 24 points of the real domain; these cover
# the phases of a step with parallel writes: before the request, after the response, between
# the calls and their results, after a write reached the database but before its result was
# logged, the final answer and the finish record.
EVENT_POINTS = [3, 7, 12, 24, 25, 26, 44, 58, 77, 78]
TOOL_POINTS = [
    "tool:pay:A2:before",
    "tool:pay:A2:after",
    "tool:assign_seat:A3:before",
    "tool:assign_seat:A3:after",
    "tool:pay:A6:after",
]


@pytest.mark.parametrize("point", [f"event:{n}" for n in EVENT_POINTS] + TOOL_POINTS)
def test_sigkill_anywhere_then_resume_reaches_the_same_end_and_no_write_acts_twice(
    tmp_path, point, reference
):
    db = start_killed(tmp_path, point)
    path = tmp_path / "logs" / LOG
    run = od.make_harness(db, tmp_path / "logs").resume(path).run()
    assert run.finish_reason == "stop" and run.final_text == reference["text"]
    assert od.business_state(db) == reference["db"]
    counts = effect_counts(db)
    assert set(counts.values()) == {1} and len(counts) == 2 * len(od.ORDERS), counts
    effects = json.loads(db.read_text())["effects"]  # the same writes under the same keys
    assert sorted(map(json.dumps, effects)) == sorted(map(json.dumps, reference["effects"]))
    back = hk.EventLog.read(path)
    assert len(back.of_type("run.resume")) == 1 and back.incomplete_tail is None
    calls = {e.payload["tool_call_id"] for e in back.of_type("tool.call")}
    assert calls == {e.payload["tool_call_id"] for e in back.of_type("tool.result")}
    if point.endswith(":after"):  # the write was done but its result lost: replayed from the ledger
        assert any(e.payload.get("duplicate") for e in back.of_type("tool.result"))


@pytest.mark.parametrize(
    ("first", "second"), [("event:20", "tool:pay:A4:after"), ("tool:pay:A2:after", "event:40")]
)
def test_a_resumed_run_killed_again_still_ends_the_same(tmp_path, first, second, reference):
    db = start_killed(tmp_path, first)
    start_killed(tmp_path, second, mode="resume")
    run = od.make_harness(db, tmp_path / "logs").resume(tmp_path / "logs" / LOG).run()
    assert od.business_state(db) == reference["db"] and set(effect_counts(db).values()) == {1}
    assert len(hk.EventLog.read(tmp_path / "logs" / LOG).of_type("run.resume")) == 2
    assert run.final_text == reference["text"]


def test_a_write_whose_effect_cannot_be_confirmed_blocks_resume_until_settled(tmp_path, reference):
    db = start_killed(tmp_path, "tool:pay:A2:after")
    path = tmp_path / "logs" / LOG
    blind = od.make_harness(db, tmp_path / "logs", confirmers={})
    before = path.read_bytes()
    with pytest.raises(hk.ResumeError) as info:
        blind.resume(path)
    assert info.value.failed == ("tool_calls",) and info.value.options == ("restart", "fork")
    assert "pay" in str(info.value) and "restart" in str(info.value)
    assert path.read_bytes() == before  # a refused resume writes nothing
    # a human reconciles with the books: the payment went through (the seat maybe, maybe not)
    ledger = IdempotencyLedger.open(ledger_path(path))
    unsettled = {r.tool: r for r in ledger.unsettled()}
    assert "pay" in unsettled
    books = {e["key"] for e in json.loads(db.read_text())["effects"]}
    for record in unsettled.values():
        value = (
            {"order_id": "A2", "paid": 75, "reference": "PAY-A2"}
            if record.tool == "pay"
            else {"order_id": "A2", "seat": "2A"}
        )
        ledger.settle(
            record.key,
            hk.tools.EffectCheck(applied=record.key in books, value=value),
            by="human:alice",
        )
    assert not ledger.unsettled()
    blind.resume(path).run()
    assert od.business_state(db) == reference["db"] and set(effect_counts(db).values()) == {1}


def partial_run(tmp_path, steps=3, **kw):
    db = od.fresh_db(tmp_path / "db.json")
    run = od.make_harness(db, tmp_path / "logs", **kw).start(od.TASK, run_id=od.RUN_ID)
    for _ in range(steps):
        run.step()
    run.log.close()
    return db, tmp_path / "logs" / LOG


def _bump_pay(tools):
    return [dataclasses.replace(t, version="2") if t.name == "pay" else t for t in tools]


@pytest.mark.parametrize(
    ("change", "failed"),
    [
        ({"workspace_revision": "orders-v2"}, ("workspace_revision",)),
        ({"tools": _bump_pay}, ("tool_versions",)),
        ({"policy": {"name": "window", "version": "3"}}, ("policy",)),
        ({"gate": hk.Gate(policy={"write": "confirm"})}, ("permissions",)),
        ({"system_prompt": "You run the order desk. Refund everything."}, ("task_contract",)),
        ({"limits": hk.Limits(max_steps=5)}, ("task_contract",)),
    ],
)
def test_resume_refuses_naming_the_check_that_failed(tmp_path, change, failed):
    db, path = partial_run(tmp_path)
    before = path.read_bytes()
    tools = od.make_tools(db)
    if "tools" in change:
        tools = change.pop("tools")(tools)
    h = od.make_harness(db, tmp_path / "logs", **change)
    h.tools = hk.ToolRegistry(tools)
    report = hk.check_resume(h, path)
    assert report.failed == failed and report.options == ("restart", "fork")
    with pytest.raises(hk.ResumeError) as info:
        h.resume(path)
    assert info.value.failed == failed
    assert path.read_bytes() == before
    assert set(report.frame()["name"]) == {
        "workspace_revision", "tool_calls", "checkpoint", "permissions", "tool_versions", "policy", "task_contract",
    }  # fmt: skip


def test_a_human_approval_is_void_once_the_workspace_moved(tmp_path):
    db, path = partial_run(tmp_path)
    log = hk.EventLog.open_existing(path)
    hk.Trajectory(log).checkpoint(
        "human-approved", note="ok to pay", workspace_revision="orders-v1"
    )
    log.close()
    h = od.make_harness(db, tmp_path / "logs", workspace_revision="orders-v2")
    assert hk.check_resume(h, path).failed == ("workspace_revision", "checkpoint")
    same = od.make_harness(db, tmp_path / "logs")
    report = hk.check_resume(same, path)
    assert report.ok and "human-approved" in report.checks[2].detail


def test_an_expired_permission_lease_fails_the_permissions_check(tmp_path):
    db, path = partial_run(tmp_path)
    log = hk.EventLog.open_existing(path)
    log.append(
        "human.decision",
        {"grant": "pay", "expires_at": "2023-01-01T00:00:00+00:00"},
        source="human",
    )
    log.close()
    report = hk.check_resume(od.make_harness(db, tmp_path / "logs"), path)
    assert report.failed == ("permissions",) and "HUMAN-" in report.checks[3].detail


def test_restart_keeps_the_old_attempt_and_natural_keys_still_stop_double_payments(
    tmp_path, reference
):
    db, path = partial_run(tmp_path, steps=4)  # A1 and A2 settled
    changed = od.make_harness(db, tmp_path / "logs")
    changed.tools = hk.ToolRegistry(_bump_pay(od.make_tools(db)))
    with pytest.raises(hk.ResumeError):
        changed.resume(path)
    run = changed.restart(path, reason="pay v2 deployed")
    assert run.state.branch_id == "main.restart1" and run.state.step == 0
    run.run()
    assert od.business_state(db) == reference["db"]
    counts = effect_counts(db)
    assert all(
        counts[("pay", o)] == 1 for o in od.ORDERS
    )  # reference PAY-A1/A2 caught as duplicates
    assert counts[("assign_seat", "A1")] == 2  # seats have no natural key: the restart re-did them
    log = hk.EventLog.read(path)
    assert [e.type for e in log.of_type("branch.fork", "run.restart")] == [
        "branch.fork",
        "run.restart",
    ]
    main_events = [e for e in log if e.branch_id == "main"]
    assert main_events and all(
        e.event_id < log.of_type("branch.fork")[0].event_id for e in main_events
    )
    (note,) = [e for e in log.of_type("user.message") if e.payload.get("committed_writes")]
    assert note.branch_id == "main.restart1" and "PAY-A1" in note.content  # a fact it is told
    for req in log.of_type(
        "model.request", branch_id="main.restart1"
    ):  # otherwise the old attempt is evidence only
        text = log.request_text(req.event_id)
        text = text.replace(note.content, "").replace(json.dumps(note.content)[1:-1], "")
        assert "PAY-A1" not in text or req.payload["step"] >= 2


def test_a_torn_last_line_is_ended_and_skipped_when_resuming(tmp_path, reference):
    db, path = partial_run(tmp_path)
    with open(path, "a") as fh:
        fh.write('{"v":2,"event_id":99,"type":"model.requ')  # cut off mid-write by a kill
    run = od.make_harness(db, tmp_path / "logs").resume(path).run()
    assert od.business_state(db) == reference["db"]
    back = hk.EventLog.read(path)
    assert back.torn_lines and back.incomplete_tail is None
    assert [e.event_id for e in back] == list(range(1, len(back) + 1))
    assert back.events[-1] == run.log.events[-1]


def test_resume_goes_on_on_the_branch_it_stopped_on(tmp_path):
    db, path = partial_run(tmp_path, steps=2)
    log = hk.EventLog.open_existing(path)
    at = log.last("tool.result").event_id
    log.close()
    h = od.make_harness(db, tmp_path / "logs")
    main = h.resume(path)
    branch = main.fork(at, "retry")
    branch.step()
    branch.log.close()
    run = od.make_harness(db, tmp_path / "logs").resume(path)
    run.log.close()
    assert run.state.branch_id == "retry" and run.state.step == 3


# -- idempotent writes inside one run (R-E5) ---------------------------------------------------------


class Bank:
    def __init__(self):
        self.charges = []
        self.lock = threading.Lock()

    def tools(self, *, timeout=30.0, delay=0.0):
        @hk.tool(risk="write", idempotency_fields=("reference",), timeout_seconds=timeout)
        def charge(amount: int, reference: str) -> dict:
            """Charge a card."""
            time.sleep(delay)
            with self.lock:
                self.charges.append((amount, reference))
            return {"charged": amount, "reference": reference}

        @hk.tool(risk="write")
        def note(text: str) -> str:
            """Write a note."""
            with self.lock:
                self.charges.append(("note", text))
            return "noted"

        return [charge, note]


def test_a_repeated_write_in_one_turn_acts_once_and_logs_the_duplicate():
    bank = Bank()
    call = reply.call("note", text="hello")
    twin = hk.ToolCall(id="twin", name="note", arguments={"text": "hello"})
    model = hk.ScriptedModel([reply.tool_calls(call, twin), reply.text("done")])
    run = hk.Harness(bank.tools(), model).start("go").run()
    assert bank.charges == [("note", "hello")]
    results = run.log.of_type("tool.result")
    assert [r.payload.get("duplicate") for r in results] == [None, True]
    assert results[1].payload["duplicate_of"] == call.id


def test_a_natural_key_makes_a_later_repeat_a_duplicate_with_the_recorded_result():
    bank = Bank()
    model = hk.ScriptedModel(
        [
            reply.tool_call("charge", amount=50, reference="P-7"),
            reply.tool_call("note", text="charged"),
            reply.tool_call("charge", amount=50, reference="P-7"),  # the model retries
            reply.tool_call("note", text="charged"),  # same arguments: the same write (no step)
            reply.text("done"),
        ]
    )
    run = hk.Harness(bank.tools(), model).start("go").run()
    assert bank.charges == [(50, "P-7"), ("note", "charged")]
    first, note, again, note_again = run.log.of_type("tool.result")
    assert again.payload["duplicate"] and again.payload["content"] == first.payload["content"]
    assert note_again.payload["duplicate"] and note_again.payload["content"] == note.content
    assert "natural_key" not in note_again.payload


def test_a_write_whose_outcome_is_unknown_is_reported_and_not_retried(tmp_path):
    bank = Bank()
    model = hk.ScriptedModel(
        [
            reply.tool_call("charge", amount=80, reference="P-9"),
            reply.tool_call("charge", amount=80, reference="P-9"),
            reply.text("done"),
        ]
    )
    h = hk.Harness(bank.tools(timeout=0.2, delay=1.0), model, log_dir=tmp_path)
    run = h.start("go", run_id="r").run()
    timed_out, retried = run.log.of_type("tool.result")
    assert timed_out.payload["error_type"] == "timeout" and timed_out.payload["outcome_unknown"]
    assert retried.payload["outcome_unknown"] and "not retried" in retried.payload["content"]
    ledger_file = tmp_path / "r.jsonl.idem"
    for _ in range(100):  # the first call finishes in its thread; then its record settles
        if len(ledger_file.read_text().splitlines()) == 3:
            break
        time.sleep(0.05)
    assert bank.charges == [(80, "P-9")]  # acted once: the retry never reached the tool
    lines = [json.loads(line) for line in ledger_file.read_text().splitlines()]
    assert [(x["state"], x["note"]) for x in lines] == [
        ("started", ""),
        ("unknown", "timed out: the call may still complete"),
        ("done", "finished late"),
    ]


def test_the_ledger_records_each_write_before_and_after(tmp_path):
    bank = Bank()
    model = hk.ScriptedModel(
        [reply.tool_call("charge", amount=5, reference="P-1"), reply.text("ok")]
    )
    hk.Harness(bank.tools(), model, log_dir=tmp_path).start("go", run_id="r").run()
    lines = [json.loads(x) for x in (tmp_path / "r.jsonl.idem").read_text().splitlines()]
    assert [(x["state"], x["tool"], x["step"]) for x in lines] == [
        ("started", "charge", 1),
        ("done", "charge", 1),
    ]
    assert json.loads(lines[1]["result"]["content"]) == {"charged": 5, "reference": "P-1"}
    contract = hk.EventLog.read(tmp_path / "r.jsonl").of_type("task.contract")[0]
    assert contract.payload["idempotency"] == {"ledger": "r.jsonl.idem"}


def test_the_ledger_is_redacted_like_the_log(tmp_path):
    secret = "sk-" + "a1B2" * 10
    bank = Bank()
    model = hk.ScriptedModel([reply.tool_call("note", text=f"api key {secret}"), reply.text("ok")])
    hk.Harness(bank.tools(), model, log_dir=tmp_path).start("go", run_id="r").run()
    assert bank.charges == [("note", f"api key {secret}")]  # the tool got the real value
    assert secret not in (tmp_path / "r.jsonl.idem").read_text()
    assert secret not in (tmp_path / "r.jsonl").read_text()


def test_a_resume_report_renders_its_checks(tmp_path):
    db, path = partial_run(tmp_path)
    report = hk.check_resume(
        od.make_harness(db, tmp_path / "logs", workspace_revision="<v2>"), path
    )
    html = report._repr_html_()
    assert "FAILED" in html and "&lt;v2&gt;" in html and "<v2>" not in html


def test_a_restart_is_told_the_writes_the_earlier_attempt_committed(tmp_path):
    bank = Bank()
    model = hk.ScriptedModel(
        [
            reply.tool_call("note", text="shipped"),
            reply.tool_call("note", text="half"),
            reply.text("stopped"),
        ]
    )
    h = hk.Harness(bank.tools(), model, log_dir=tmp_path, limits=hk.Limits(max_steps=2))
    h.start("ship it", run_id="rs").run()
    again = hk.ScriptedModel([reply.text("already shipped")])
    h2 = hk.Harness(bank.tools(), again, log_dir=tmp_path)
    run = h2.restart(tmp_path / "rs.jsonl", reason="model changed")
    run.run()
    prompt = "\n".join(m.text for m in again.requests[0].messages)
    assert "already committed" in prompt
    assert 'note({"text": "shipped"})' in prompt and 'note({"text": "half"})' in prompt
    assert bank.charges == [("note", "shipped"), ("note", "half")]  # nothing repeated
