# ruff: noqa: E501  (the cells are notebook code inside strings)
"""Regenerate notebooks/03_data_transport.ipynb (executed, outputs stored).

Run from the repository root: `PYTHONPATH=$PWD python scripts/nb_data_transport.py`.
"""

from make_notebook import build

cells = [
    (
        "md",
        """# Data transport: let the system move the bytes

The model understands intent; the runtime carries identifiers, arrays and previews exactly.
This notebook shows harnesskit's data transport (DESIGN.md R-A1–R-A8) on the airline domain
(τ-bench's database, harnesskit's tools), offline with scripted models:

1. **forced externalization** — a result over 8000 chars or with an array over 10 items goes to
   an `ArtifactStore`; the prompt gets a ref and a bounded summary;
2. **exact previews** — every preview is a substring of the stored text, with its offsets;
3. **inspection** — `artifact_slice` & co. read parts, each saying which part of the whole it is;
4. **bindings** — `{"$bind": "<ref or call id>#/pointer"}` passes a value without retyping it;
5. **single representation** — a prompt holding one source in two forms is refused before
   the model is called;
6. **the transport audit** — which ids the model typed, where they came from, what got
   altered — on our runs and on the 200 recorded GPT-4o runs;
7. **lifecycle** — expiry and archival.""",
    ),
    (
        "code",
        """import hashlib, json
from pathlib import Path
import harnesskit as hk
from harnesskit.domains import airline
from harnesskit.testing import reply

CLOCK = lambda: 1_715_800_000.0  # a fixed clock: timestamps in this notebook never change
ROUTE = {"origin": "ATL", "destination": "PHX", "date": "2024-05-20"}

def harness(model, **kw):
    \"\"\"A harness over a fresh copy of the airline database.\"\"\"
    return hk.Harness(airline.tools(airline.load_database()), model, system_prompt=airline.POLICY,
                      gate=hk.Gate(confirm=hk.allow_all), clock=CLOCK, **kw)

# what the one-stop search returns, called directly (no harness): 37 itineraries, 25 kB
FULL = json.loads(airline.tools(airline.load_database())["search_onestop_flight"].fn(**ROUTE))
len(FULL), len(json.dumps(FULL))""",
    ),
    (
        "md",
        """## 1. Forced externalization

A scripted model searches one-stop flights from ATL to PHX. The result has 37 itineraries —
more than 10 items and more than 8000 characters — so it never enters the prompt. We read the
*exact* request the model received next from the event log (`request_messages`): it holds the
ref and a bounded summary, not the array.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
model = hk.ScriptedModel([reply.tool_call("search_onestop_flight", id="call_search", **ROUTE),
                          reply.text("There are 37 itineraries.")])
run = harness(model).run("One-stop flights from ATL to PHX on May 20, please.", run_id="externalize")
second = run.log.of_type("model.request")[1]
sent = run.log.request_messages(second.event_id)
tool_message = sent[-1]
summary = json.loads(tool_message["content"])
print(len(tool_message["content"]), "chars sent instead of", len(json.dumps(FULL)))
text = run.log.request_text(second.event_id)
print("itineraries in the request:", sum(json.dumps(pair) in text for pair in FULL))
print(json.dumps({k: summary[k] for k in ("artifact_ref", "form", "complete", "why", "items")}, indent=1))""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
print(json.dumps(summary["shape"])[:300])
print(json.dumps({k: v for k, v in summary["preview"].items() if k != "text"}))
print(summary["preview"]["text"][:160], "…")
print(*summary["read_more"], sep="\\n")
print(summary["bind"])""",
    ),
    (
        "md",
        """The store keeps the whole text, content-addressed (`art_` + sha256 prefix), with the R-A2
metadata; an `artifact.created` event records it in the log. By default the store lives in
`<log_dir>/artifacts/` (in memory without a `log_dir`); pass `artifacts=` to choose.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
store = run.transport.store
ref = store.ref(summary["artifact_ref"])
created = run.log.last("artifact.created").payload
print(ref)
print({k: created[k] for k in ("sha256", "size_chars", "items", "source", "data_class",
                               "truncated", "summary", "incomplete")})
print("the store holds exactly what the tool returned:", store.value(ref.id) == FULL)""",
    ),
    ("code", "ref  # renders as a table in Jupyter"),
    (
        "md",
        """## 2. Exact previews

A preview is `stored[start:end]` — never rewritten by a model. `verify_preview` proves it; one
changed character fails.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
p = summary["preview"]
tampered = {**p, "text": p["text"].replace("HAT010", "HAT01O")}
print("preview verifies:", store.verify_preview(ref.id, p))
print("tampered verifies:", store.verify_preview(ref.id, tampered))""",
    ),
    (
        "md",
        """## 3. Inspection tools

Once a run holds an artifact, six read-only tools join the tool list: `artifact_outline`,
`artifact_search`, `artifact_context`, `artifact_head`, `artifact_tail`, `artifact_slice`.
Every answer is bounded (4000 chars) and names its part of the whole. Reading the 37
itineraries back page by page loses nothing and reorders nothing:""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
print("tools before:", model.requests[0].tool_names[-3:])
print("tools after: ", model.requests[1].tool_names[-6:])
pages, items, start = [], [], 0
while True:
    answer = store.slice(ref.id, "", start)
    pages.append(answer["part"]); items += answer["items"]
    if "next" not in answer:
        break
    start = answer["stop"]
digest = lambda v: hashlib.sha256(json.dumps(v, sort_keys=True).encode()).hexdigest()[:16]
print(pages)
print("hash-equal to the tool's own output:", digest(items) == digest(FULL))""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
hit = store.search(ref.id, "HAT102")
print(hit["part"], [h["pointer"] for h in hit["hits"]])
print(json.dumps(store.outline(ref.id, "/6")["shape"])[:200])""",
    ),
    (
        "md",
        """## 4. Bindings

The model says *which* value; the runtime supplies it. Every id in this booking is bound:
flights from the stored search (`art_…#/6/0/flight_number`), the passenger and the payment
ids from the profile call (`u1#/name/first_name`, …). Bindings are resolved before the
arguments are validated, so `book_reservation` receives the stored values exactly. The
bindings note is in the system prompt of every run with tools.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
art, u = ref.id, "u1"
leg = lambda i: {"flight_number": {"$bind": f"{art}#/6/{i}/flight_number"}, "date": {"$bind": f"{art}#/6/{i}/date"}}
booking = hk.ScriptedModel([
    reply.tool_call("get_user_details", id=u, user_id="mei_hernandez_8984"),
    reply.tool_call("search_onestop_flight", id="s1", **ROUTE),
    reply.tool_call("artifact_slice", ref=art, pointer="", start=6, stop=7),
    reply.tool_call("book_reservation", user_id="mei_hernandez_8984", origin="ATL", destination="PHX",
        flight_type="one_way", cabin="economy", flights=[leg(0), leg(1)],
        passengers=[{"first_name": {"$bind": f"{u}#/name/first_name"}, "last_name": {"$bind": f"{u}#/name/last_name"},
                     "dob": {"$bind": f"{u}#/dob"}}],
        payment_methods=[{"payment_id": {"$bind": f"{u}#/payment_methods/gift_card_5309492/id"}, "amount": 98},
                         {"payment_id": {"$bind": f"{u}#/payment_methods/credit_card_2140654/id"}, "amount": 113}],
        total_baggages=2, nonfree_baggages=0, insurance="no"),
    reply.tool_call("get_reservation_details", reservation_id={"$bind": f"{art}#/6/9/flight_number"}),
    reply.text("Booked."),
])
bound = harness(booking).run("I'm mei_hernandez_8984: the cheapest one-stop ATL to PHX on 2024-05-20.", run_id="bind")
results = bound.log.of_type("tool.result")
print(json.loads(results[2].payload["content"])["part"])
booked = json.loads(results[3].payload["content"])
print(booked["reservation_id"], [(f["flight_number"], f["date"]) for f in booked["flights"]], booked["passengers"])
bad = json.loads(results[4].payload["content"])
print(bad["error_type"]); print(bad["message"])
system_prompt = bound.log[1].payload["system_prompt"]
print(system_prompt[system_prompt.index("Never retype"):])""",
    ),
    (
        "md",
        """## 5. Single representation

Within one prompt a source appears in exactly one form. Here the customer pastes the whole
search result back while its summary is already in the prompt: assembly fails with
`RepresentationError` naming the ref and both forms, an `alert.representation` event is
logged, and the model is **not** called. Other pairs are refused the same way: summary +
preview, two different truncations, an assistant message restating ≥ 200 characters of a
result.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
model = hk.ScriptedModel([reply.tool_call("search_onestop_flight", **ROUTE), reply.text("ok")])
run = harness(model).start("One-stop flights ATL to PHX on May 20?", run_id="two-forms")
run.step()
run.send("Here is the list again: " + store.read(ref.id))
try:
    run.step()
except hk.errors.RepresentationError as err:
    print(type(err).__name__, err.ref, err.forms)
print("model requests:", len(model.requests))
alert = run.log.last("alert.representation")
print(alert.type, [f["form"] for f in alert.payload["forms"]], "refused:", alert.payload["refused"])""",
    ),
    (
        "md",
        """A recorded run replayed with `ReplayModel` is reported, not refused (the recording already
happened). This recorded model restated part of an inspection answer in its reply:""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
stored = store.read(ref.id)
s = stored.index('"flight_number": "HAT102"')
recorded = [reply.tool_call("search_onestop_flight", **ROUTE),
            reply.tool_call("artifact_slice", ref=ref.id, pointer="", start=5, stop=8),
            reply.tool_calls(reply.call("get_reservation_details", reservation_id="H8Q05L"),
                             content="Your options: " + stored[s:s + 260]),
            reply.text("Done.")]
replayed = harness(hk.ReplayModel(recorded)).run("Options ATL to PHX?", run_id="replay")
print(replayed.finish_reason, [(e.payload["forms"][0]["form"], e.payload["forms"][1]["form"], e.payload["refused"])
                               for e in replayed.log.of_type("alert.representation")])""",
    ),
    (
        "md",
        """## 6. The transport audit

`hk.transport_audit(run)` lists every identifier-like value and array the model typed into
tool arguments: where it first appeared (system prompt, which user message, which tool result;
nowhere = invented) and whether it arrived altered. The embedded offline agent reads the stored
search page by page and *types* the ids it found into `book_reservation`; the bound booking
above typed only the user id the customer gave.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
task = next(t for t in airline.DEMO_TASKS if t.name == "book-cheapest-one-stop")
typed = harness(airline.agent_model(), limits=hk.Limits(max_steps=20)).run(task.user_message, run_id="agent")
audits = {"offline agent (types)": hk.transport_audit(typed), "scripted (binds)": hk.transport_audit(bound)}
for name, audit in audits.items():
    print(f"{name}: {audit.verdict}")""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
df = audits["offline agent (types)"].frame()
df[df.tool == "book_reservation"][["path", "kind", "value", "status", "source"]]""",
    ),
    (
        "md",
        """### The 200 recorded GPT-4o runs

The τ-bench airline recording (`../shared`) is replayed through the harness
(`airline.replay_run`, with redaction off so the audit sees what the model saw: GPT-4o derived
user ids from e-mail addresses). `LIMIT` runs are audited here;
`scripts/audit_recorded_runs.py` runs all 200 (≈ 1 minute). On all 200: 1346 ids typed
(361 from user messages, 983 from tool results that could have been bound), 2 altered (a gift
card's number typed as a credit card), 2 invented (a card id composed from "ending in 7334"),
0 bound; 0 runs restate a tool result verbatim (not even 50 characters: GPT-4o reformats rather
than copies, which a verbatim check cannot see).""",
    ),
    ("parameters", "LIMIT = 40"),
    (
        "code",
        """# NBVAL_IGNORE_OUTPUT
RECORDED = Path("..").resolve().parent / "shared/datasets/sierra-research__tau-bench/historical_trajectories/gpt-4o-airline.json"
if not RECORDED.is_file():  # a clone without ../shared beside it: nothing to audit here
    print(f"skipped: the recorded runs are not at {RECORDED}")
else:
    recorded = airline.load_recorded_runs(RECORDED, limit=LIMIT)
    gpt4o = hk.data.TransportAudit.merge(hk.transport_audit(airline.replay_run(r, redact=False).log) for r in recorded)
    c = gpt4o.counts
    assert c["runs"] == LIMIT and c["ids_bound"] == 0 and c["ids_typed"] == c["from_user"] + c["from_tool"] + c["invented"] + c["from_system"]
    print(gpt4o.verdict)
    g = gpt4o.frame()
    display(g[g.status.isin(["altered", "invented"]) & ~g.in_text][["run_id", "tool", "path", "value", "status", "closest", "how"]])""",
    ),
    (
        "md",
        """## 7. Lifecycle

Artifacts can expire (`ttl_seconds`) or be archived. An expired ref answers `not_found` and says
why — to the model through the inspection tools and bindings, to you through the store.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
now = [1_715_800_000.0]
short = hk.ArtifactStore(ttl_seconds=3600, clock=lambda: now[0])
a = short.put(FULL)
now[0] += 2 * 3600
try:
    short.slice(a.id, "", 0)
except hk.errors.ArtifactNotFoundError as err:
    print(err)
b = short.put(FULL[:20], ttl_seconds=10 * 3600)
short.archive(b.id)
print(short.status(b.id), "->", short.restore(b.id).status, short.value(b.id, "/19/0/flight_number"))""",
    ),
]

build("notebooks/03_data_transport.ipynb", cells)
