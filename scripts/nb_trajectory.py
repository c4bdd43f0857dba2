"""Regenerate notebooks/05_trajectory.ipynb (executed, outputs stored).

Usage: PYTHONPATH=. python scripts/nb_trajectory.py
"""

from make_notebook import build

DESK = '''%%writefile $DESK_PY
"""A tiny order desk: a JSON-file database, one read tool and two write tools."""
import json, os, pathlib, sys, threading, time
import harnesskit as hk
from harnesskit.tools.idempotency import EffectCheck

ORDERS = {"A1": 120, "A2": 75, "A3": 310, "A4": 42}


def fresh_db(path):
    orders = {k: {"amount": v, "paid": None, "seat": None} for k, v in ORDERS.items()}
    db = {"orders": orders, "effects": []}
    pathlib.Path(path).write_text(json.dumps(db))


def pause_here(point):  # a kill point: announce it, then wait for SIGKILL
    if os.environ.get("KILL_AT") == point:
        print("AT", point, flush=True)
        time.sleep(120)


def tools(db_path):
    db_path, lock = pathlib.Path(db_path), threading.Lock()

    def change(fn, effect):
        with lock:
            db = json.loads(db_path.read_text())
            fn(db)
            db["effects"].append(effect)  # counted by the notebook: no write may act twice
            tmp = db_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(db))
            os.replace(tmp, db_path)  # atomic: a kill never leaves half a database

    @hk.tool
    def get_order(order_id: str) -> dict:
        """Look up an order.

        Args:
            order_id: the order, e.g. "A1".
        """
        return {"order_id": order_id, **json.loads(db_path.read_text())["orders"][order_id]}

    @hk.tool(risk="write", idempotency_fields=("reference",))
    def pay(order_id: str, amount: int, reference: str, ctx: hk.ToolContext) -> dict:
        """Charge an order; the reference is the payment's natural key.

        Args:
            order_id: the order.
            amount: euros.
            reference: unique per payment.
        """
        change(lambda db: db["orders"][order_id].update(paid=amount),
               {"tool": "pay", "order": order_id, "key": ctx.idempotency_key})
        pause_here(f"pay:{order_id}")  # the money moved, the result is not logged yet
        return {"order_id": order_id, "paid": amount, "reference": reference}

    @hk.tool(risk="write")
    def assign_seat(order_id: str, seat: str, ctx: hk.ToolContext) -> dict:
        """Give an order a seat.

        Args:
            order_id: the order.
            seat: e.g. "3A".
        """
        change(lambda db: db["orders"][order_id].update(seat=seat),
               {"tool": "assign_seat", "order": order_id, "key": ctx.idempotency_key})
        return {"order_id": order_id, "seat": seat}

    return [get_order, pay, assign_seat]


def confirmers(db_path):
    """How to tell, after a crash, whether a write took effect: look for its key in the books."""
    def confirm(record):
        effects = json.loads(pathlib.Path(db_path).read_text())["effects"]
        if not any(e["key"] == record.key for e in effects):
            return EffectCheck(applied=False, evidence="no effect with this key")
        a = record.arguments
        paid = {"order_id": a["order_id"], "paid": a["amount"], "reference": a["reference"]}
        value = paid if record.tool == "pay" else a
        return EffectCheck(applied=True, value=value, evidence=f"effect {record.key} in the books")
    return {"pay": confirm, "assign_seat": confirm}


def policy(messages, info):
    """Per order: look it up, pay it, seat it (one call per turn)."""
    results = [m for m in messages if m.role == "tool"]
    i, phase = divmod(len(results), 3)
    orders, n = list(ORDERS), len(results)
    if i == len(orders):
        return f"All {len(orders)} orders are paid and seated."
    if phase == 0:
        return hk.ToolCall(id=f"c{n}", name="get_order", arguments={"order_id": orders[i]})
    if phase == 1:
        amount = json.loads(results[-1].content)["amount"]
        args = {"order_id": orders[i], "amount": amount, "reference": f"PAY-{orders[i]}"}
        return hk.ToolCall(id=f"c{n}", name="pay", arguments=args)
    args = {"order_id": orders[i], "seat": f"{i + 1}A"}
    return hk.ToolCall(id=f"c{n}", name="assign_seat", arguments=args)


def harness(db_path, log_dir, revision="desk-v1"):
    return hk.Harness(tools(db_path), hk.FunctionModel(policy, name="desk-policy"),
                      system_prompt="You run the order desk.", log_dir=log_dir,
                      workspace_revision=revision, confirmers=confirmers(db_path),
                      clock=lambda: 1_700_000_000.0)


if __name__ == "__main__":
    h = harness(sys.argv[1], sys.argv[2])
    h.start("Settle all open orders.", run_id="desk").run()
'''

cells = [
    (
        "md",
        """# Trajectories: fork, merge, kill-and-resume, replay

The event log is append-only: nothing in it is ever rewritten. This notebook shows what is
derived from it (`hk.Trajectory`):

1. **Statuses** come from later events (supersede, reject, expire); an interpretation never
   overrides a fact.
2. **Fork and merge**: a branch starts from a frozen point and never sees a sibling; a merge
   brings back an evidence package, and without complete evidence it is only a reference.
3. **Kill and resume**: an agent is SIGKILLed in the middle of a payment; resume checks six
   things, settles the unknown write through its idempotency record, and finishes without
   paying twice. A changed workspace makes resume refuse, naming the check.
4. **Replay**: re-run a recorded run on its recorded model responses and report divergences;
   see what another context policy would have sent.""",
    ),
    (
        "code",
        """import json, os, pathlib, signal, subprocess, sys, tempfile
import harnesskit as hk
from harnesskit.testing import reply

WORK = pathlib.Path(tempfile.mkdtemp(prefix="hk-trajectory-"))
DESK_PY = str(WORK / "desk.py")
sys.path.insert(0, str(WORK))

def ticking(start=1_700_000_000.0):  # a fixed clock: the log is the same on every run
    t = [start]
    def tick():
        t[0] += 1
        return t[0]
    return tick""",
    ),
    ("md", "## 1. Statuses: later events decide, facts outrank interpretations"),
    (
        "code",
        '''# NBVAL_CHECK_OUTPUT
@hk.tool
def run_tests(suite: str) -> dict:
    """Run a test suite.

    Args:
        suite: the suite name.
    """
    return {"suite": suite, "exit_code": 1, "failed": ["test_local_assertion"]}

model = hk.ScriptedModel([reply.tool_call("run_tests", suite="payments"),
                          reply.text("The failure is probably the network.")])
h = hk.Harness([run_tests], model, clock=ticking())
run = h.start("Why do the payment tests fail?", run_id="tests").run()
tr = hk.Trajectory(run.log)
fact = run.log.last("tool.result").event_id
guess = run.log.last("model.response").event_id
refused = tr.supersede(fact, by=guess, reason="the model blames the network")
print(refused.type, "-", refused.payload["rule"])
tr.reject(guess, reason="a human read the log: a local assertion failed")
tr.frame()[["event_id", "type", "kind", "status", "summary"]]''',
    ),
    (
        "md",
        """## 2. Fork and merge

A payment service books some orders twice. Two hypotheses are tested on two branches that
share the confirmed root facts but never each other's guesses: the queue redelivers (`queue`),
or the idempotency key differs for old clients (`idem-key`). Each branch freezes its start
(workspace revision, tool versions, permissions, policy).""",
    ),
    (
        "code",
        '''# NBVAL_CHECK_OUTPUT
@hk.tool
def inspect(what: str) -> str:
    """Inspect a part of the system.

    Args:
        what: the part to inspect.
    """
    return {"orders": "order 42 was booked twice at 10:02:07",
            "queue": "QUEUE-LOG: one delivery for order 42, acknowledged",
            "keys": "KEY-DIFF: old client v1 sends key without the order id"}[what]

turns = [reply.tool_call("inspect", what="orders"), reply.text("Two hypotheses.")]
root = hk.Harness([inspect], hk.ScriptedModel(turns), workspace_revision="git:7d31a9c",
                  clock=ticking())
main = root.start("Order 42 was charged twice. Find out why.", run_id="pay-dup")
main.step()
shared = main.log.last("tool.result").event_id

def branch_harness(what, conclusion):
    model = hk.ScriptedModel([reply.tool_call("inspect", what=what), reply.text(conclusion)])
    clock = ticking(1_700_000_100)
    return hk.Harness([inspect], model, workspace_revision="git:7d31a9c", clock=clock)

queue = main.fork(shared, "queue", reason="the queue redelivers",
                  harness=branch_harness("queue", "No redelivery seen: evidence insufficient."))
keys = main.fork(shared, "idem-key", reason="the idempotency key differs",
                 harness=branch_harness("keys", "Old clients send a different key: reproduced."))
queue.run(); keys.run()

log = main.log
for branch in ("queue", "idem-key"):
    sent = [log.request_text(e.event_id) for e in log.of_type("model.request", branch_id=branch)]
    root_fact = all("booked twice" in t for t in sent)
    queue_log, key_diff = (any(mark in t for t in sent) for mark in ("QUEUE-LOG", "KEY-DIFF"))
    print(f"{branch:9} requests={len(sent)}  sees root fact: {root_fact}  "
          f"sees QUEUE-LOG: {queue_log}  sees KEY-DIFF: {key_diff}")
print(log.of_type("branch.fork")[0].payload["frozen"]["workspace_revision"])''',
    ),
    (
        "md",
        """The merge gate wants four pieces of evidence: a reproducible sample, a deterministic
check, a code revision and a human decision. `idem-key` brings all four and becomes a fact on
`main`; `queue` lacks a check and a decision, so its merge is reference-only and changes no
fact.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
tr = hk.Trajectory(log)
passed = {"tool": "pytest", "ok": True, "content": "test_old_client_key: 1 passed"}
check = log.append("tool.result", passed, branch_id="idem-key")
approval = log.append("human.decision", {"approved": True, "by": "alice"}, branch_id="idem-key",
                      source="human")
full = tr.merge("idem-key", conclusion="old clients build the key without the order id",
                evidence=hk.log.Evidence(
                    sample=log.of_type("tool.result", branch_id="idem-key")[0].event_id,
                    check=check.event_id, revision="git:7d31a9c", decision=approval.event_id))
partial = tr.merge("queue", conclusion="the queue may redeliver",
                   evidence={"sample": {"hash": "9f2c"}, "revision": "git:7d31a9c"})
for ev in (full, partial):
    print(ev.payload["branch"], "->", ev.branch_id, "| kind:", tr.kind(ev),
          "| missing:", ev.payload["missing"])
main_view = {e.event_id for e in hk.log.visible_events(log, "main")}
print("main sees the branch history:", check.event_id in main_view,
      "| main sees the merges:", {full.event_id, partial.event_id} <= main_view)""",
    ),
    (
        "md",
        """## 3. Kill and resume

The desk agent pays and seats four orders, one call per turn. It runs in its own process; we
SIGKILL it right after the money for order A2 moved but before the result reached the log. Write
calls are flushed to the log before they act, and every write is recorded in an idempotency ledger
before and after it runs.""",
    ),
    ("code", DESK),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
import desk

db, logs = WORK / "desk.json", WORK / "logs"
desk.fresh_db(db)
env = dict(os.environ, KILL_AT="pay:A2", PYTHONPATH=os.pathsep.join(sys.path))
proc = subprocess.Popen([sys.executable, DESK_PY, str(db), str(logs)], stdout=subprocess.PIPE,
                        text=True, env=env)
print(proc.stdout.readline().strip())
os.kill(proc.pid, signal.SIGKILL)
proc.wait(); proc.stdout.close()
books = json.loads(db.read_text())["effects"]
print("effects in the books:", [(e["tool"], e["order"]) for e in books])""",
    ),
    (
        "md",
        """Before going on, the six resume checks. The payment of A2 has no result in the log; its
ledger record says it started, and the desk's confirmer finds its key in the books, so the
side effect is confirmed instead of being guessed or retried.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
path = logs / "desk.jsonl"
report = hk.check_resume(desk.harness(db, logs), path)
print(report)
report.frame()[["name", "ok", "detail"]]""",
    ),
    (
        "md",
        "A changed workspace (say, someone deployed a new revision meanwhile) makes resume refuse, "
        "naming the check and offering restart or fork:",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
try:
    desk.harness(db, logs, revision="desk-v2").resume(path)
except hk.ResumeError as err:
    print(err.failed, err.options)""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
run = desk.harness(db, logs).resume(path).run()
print(run.finish_reason, "-", run.final_text)
effects = json.loads(db.read_text())["effects"]
from collections import Counter
acted = Counter((e["tool"], e["order"]) for e in effects)
print("writes that acted more than once:", [k for k, n in acted.items() if n > 1])
print("orders:", json.loads(db.read_text())["orders"])
resumed = hk.EventLog.read(path)
print(resumed.last("run.resume").summary)
paid = next(e for e in resumed.of_type("tool.result")
            if e.payload["tool"] == "pay" and "A2" in e.payload["content"])
print(paid.label, paid.payload["content"], "| from the ledger, not paid again:",
      paid.payload.get("duplicate"))""",
    ),
    (
        "md",
        """## 4. Replay and counterfactual context

Replay runs the recorded model responses again against a fresh database and compares every
request, call, result and finish reason. With an unchanged world it is identical; with a
changed price it says where the world diverged (once, where it starts).""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
fresh = WORK / "fresh.json"; desk.fresh_db(fresh)
print(hk.replay(path, desk.harness(fresh, None)))
changed = WORK / "changed.json"; desk.fresh_db(changed)
data = json.loads(changed.read_text())
data["orders"]["A3"]["amount"] = 320
changed.write_text(json.dumps(data))
divergent = hk.replay(path, desk.harness(changed, None))
divergent.frame()""",
    ),
    (
        "md",
        """What would the model have seen under a policy that keeps only the system prompt, the task
and the last four messages? Event ids and token estimates, step by step, beside what was sent:""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
class LastTurns:
    def __init__(self, n):
        self.n, self.inner = n, hk.context.ContextBuilder()
    def build(self, log, *, branch_id="main", extra=()):
        full = self.inner.build(log, branch_id=branch_id)
        pairs = list(zip(full.messages, full.selected))
        head, tail = pairs[:2], pairs[2:][-self.n:]  # system prompt and task, then the last n
        while tail and tail[0][0].role == "tool":  # never start on an orphan tool result
            tail.pop(0)
        keep = head + tail
        msgs = tuple(m for m, _ in keep)
        return hk.context.Prompt(messages=msgs, selected=tuple(i for _, i in keep),
                         token_estimate=sum(map(hk.context.TokenEstimator().count_message, msgs)))

cf = hk.counterfactual(path, LastTurns(4))
cf[["step", "recorded_tokens", "tokens", "recorded_ids", "ids"]]""",
    ),
    (
        "md",
        """## 5. Search

`Trajectory.search(text=, type=, branch=, status=, since=, until=)` returns a DataFrame. The
index is built once and grows with the log; on a 100k-event log a query takes tens of
milliseconds (`benchmarks/trajectory_search.py`).""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
found = hk.Trajectory(log).search("key", status="active")
found[["event_id", "branch_id", "type", "kind", "summary"]]""",
    ),
]

build("notebooks/05_trajectory.ipynb", cells)
