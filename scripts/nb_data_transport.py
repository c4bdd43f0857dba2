"""Regenerate notebooks/03_data_transport.ipynb (executed, outputs stored).

Run from the repository root: `PYTHONPATH=$PWD python scripts/nb_data_transport.py`.
"""

from make_notebook import build

cells = [
    (
        "md",
        """# Data transport: let the system move the bytes

The model understands intent; the runtime carries identifiers, arrays and previews exactly.
This notebook shows harnesskit's data transport (DESIGN.md R-A1–R-A8) on a small flight-search
domain, offline with scripted models:

1. **forced externalization** — a result over 8000 chars or with an array over 10 items goes to
   an `ArtifactStore`; the prompt gets a ref and a bounded summary;
2. **exact previews** — every preview is a substring of the stored text, with its offsets;
3. **inspection** — `artifact_slice` & co. read parts, each saying which part of the whole it is;
4. **bindings** — `{"$bind": "<ref or call id>#/pointer"}` passes a value without retyping it;
5. **single representation** — a prompt holding one source in two forms is refused before
   the model is called;
6. **the transport audit** — which ids the model typed, where they came from, what got altered;
7. **lifecycle** — expiry and archival.""",
    ),
    (
        "code",
        """import hashlib, json
import harnesskit as hk
from harnesskit.testing import reply

CLOCK = lambda: 1_716_200_000.0  # a fixed clock: timestamps in this notebook never change

FLIGHTS = [
    {"flight_number": f"HAT{i:03d}", "origin": "JFK", "destination": "SEA",
     "departure": f"2024-05-20T{6 + i // 3:02d}:{(i % 3) * 20:02d}:00",
     "seats_left": {"economy": (7 * i) % 11, "business": i % 4},
     "price": {"economy": 110 + (37 * i) % 90, "business": 420 + (53 * i) % 300}}
    for i in range(30)
]

@hk.tool
def search_flights(origin: str, destination: str) -> list:
    \"\"\"Search direct flights between two airports on 2024-05-20.

    Use this when the user wants to fly. Do not use it to book.

    Args:
        origin: IATA code of the departure airport, e.g. JFK.
        destination: IATA code of the arrival airport, e.g. SEA.

    Returns:
        The flights as a JSON array.
    \"\"\"
    return FLIGHTS

BOOKED = []

@hk.tool(risk="write")
def book_flight(flight: dict, cabin: str) -> dict:
    \"\"\"Book one flight for the user.

    Use this when the user chose a flight. Do not use it to search.

    Args:
        flight: the flight object exactly as search_flights returned it.
        cabin: economy or business.

    Returns:
        The booking.
    \"\"\"
    BOOKED.append(flight)
    return {"booking": "BK" + flight["flight_number"][3:], "flight": flight["flight_number"],
            "cabin": cabin, "price": flight["price"][cabin]}

tools = hk.ToolRegistry([search_flights, book_flight])
len(json.dumps(FLIGHTS)), len(FLIGHTS)""",
    ),
    (
        "md",
        """## 1. Forced externalization

A scripted model searches once. The search returns 30 flights: more than 10 items, so the
result never enters the prompt. We read the *exact* request the model received from the event
log (`request_messages`) — it holds the ref and a bounded summary, not the array.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
model = hk.ScriptedModel([reply.tool_call("search_flights", id="call_search", origin="JFK", destination="SEA"),
                          reply.text("There are 30 flights.")])
h = hk.Harness(tools, model, clock=CLOCK)
run = h.run("Which flights go from JFK to SEA on May 20?", run_id="externalize")
second = run.log.of_type("model.request")[1]
sent = run.log.request_messages(second.event_id)
tool_message = sent[-1]
summary = json.loads(tool_message["content"])
print(len(tool_message["content"]), "chars sent instead of", len(json.dumps(FLIGHTS)))
print("flights in the request:", sum(f["flight_number"] in run.log.request_text(second.event_id) for f in FLIGHTS))
print(json.dumps({k: summary[k] for k in ("artifact_ref", "form", "complete", "why", "items")}, indent=1))""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
print(json.dumps(summary["preview"], indent=1))
print(*summary["read_more"], sep="\\n")
print(summary["bind"])""",
    ),
    (
        "md",
        """The store keeps the whole text, content-addressed (`art_` + sha256 prefix), with the R-A2
metadata; an `artifact.created` event records it in the log.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
store = run.transport.store
ref = store.ref(summary["artifact_ref"])
created = run.log.last("artifact.created").payload
print(ref)
print({k: created[k] for k in ("sha256", "size_chars", "items", "source", "data_class", "truncated", "summary", "incomplete")})""",
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
tampered = {**p, "text": p["text"].replace("HAT000", "HAT00O")}
print("preview verifies:", store.verify_preview(ref.id, p))
print("tampered verifies:", store.verify_preview(ref.id, tampered))""",
    ),
    (
        "md",
        """## 3. Inspection tools

Once a run holds an artifact, six read-only tools join the tool list: `artifact_outline`,
`artifact_search`, `artifact_context`, `artifact_head`, `artifact_tail`, `artifact_slice`.
Every answer is bounded and names its part of the whole. Reading the 30 flights back in pages of
seven loses nothing and reorders nothing:""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
print("tools before:", model.requests[0].tool_names)
print("tools after: ", model.requests[1].tool_names)
pages, items, start = [], [], 0
while True:
    answer = store.slice(ref.id, "", start, start + 7)
    pages.append(answer["part"]); items += answer["items"]
    if "next" not in answer:
        break
    start = answer["stop"]
digest = lambda v: hashlib.sha256(json.dumps(v, sort_keys=True).encode()).hexdigest()[:16]
print(pages)
print("hash-equal to the original:", digest(items) == digest(FLIGHTS))""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
hit = store.search(ref.id, "HAT023")
print(hit["part"], hit["hits"][0]["pointer"], hit["hits"][0]["offset"])
print(json.dumps(store.outline(ref.id)["shape"]["item"]["keys"]["price"]))""",
    ),
    (
        "md",
        """## 4. Bindings

The model says *which* value; the runtime supplies it. The argument
`{"$bind": "<ref>#/23"}` is resolved from the store before validation, so `book_flight`
receives the stored object exactly. A pointer that does not resolve is an `invalid_argument`
result naming the pointer and what exists there. The bindings note is in the system prompt.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
def binding_model(messages, info):
    last = json.loads(messages[-1].content) if messages[-1].role == "tool" else {}
    if info.step == 1:
        return reply.tool_call("search_flights", origin="JFK", destination="SEA")
    if last.get("form") == "summary":
        return reply.tool_call("artifact_search", ref=last["artifact_ref"], query="HAT023")
    if last.get("op") == "search":
        item = last["hits"][0]["pointer"].rsplit("/", 1)[0]
        return reply.tool_calls(
            reply.call("book_flight", flight={"$bind": f"{last['artifact_ref']}#{item}"}, cabin="economy"),
            reply.call("book_flight", flight={"$bind": f"{last['artifact_ref']}#{item}/flightnumber"}, cabin="economy"))
    return reply.text("Booked HAT023 in economy.")

BOOKED.clear()
bound = hk.Harness(tools, hk.FunctionModel(binding_model), clock=CLOCK).run("Book HAT023, JFK to SEA.", run_id="bind")
print("tool received the exact stored object:", BOOKED == [FLIGHTS[23]])
bad = json.loads(bound.log.of_type("tool.result")[-1].payload["content"])
print(bad["error_type"]); print(bad["message"])
print(bound.log[1].payload["system_prompt"][:120], "…")""",
    ),
    (
        "md",
        """## 5. Single representation

Within one prompt a source appears in exactly one form. Here the user pastes the whole result
back while its summary is already in the prompt: assembly fails with `RepresentationError`
naming the ref and both forms, an `alert.representation` event is logged, and the model is
**not** called. Other pairs are refused the same way: summary + preview, two different
truncations, an assistant message restating ≥ 200 characters of a result.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
model = hk.ScriptedModel([reply.tool_call("search_flights", origin="JFK", destination="SEA"), reply.text("ok")])
run = hk.Harness(tools, model, clock=CLOCK).start("Flights JFK to SEA?", run_id="two-forms")
run.step()
run.send("Here is the list again: " + json.dumps(FLIGHTS))
try:
    run.step()
except hk.RepresentationError as err:
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
text = json.dumps(FLIGHTS)
ref_id = "art_" + hashlib.sha256(text.encode()).hexdigest()[:12]
s = text.index('{"flight_number": "HAT012"')
recorded = [reply.tool_call("search_flights", origin="JFK", destination="SEA"),
            reply.tool_call("artifact_slice", ref=ref_id, pointer="", start=10, stop=15),
            reply.tool_calls(reply.call("book_flight", flight={"$bind": f"{ref_id}#/12"}, cabin="economy"),
                             content="Options: " + text[s:s + 260]),
            reply.text("Booked HAT012.")]
replayed = hk.Harness(tools, hk.ReplayModel(recorded), clock=CLOCK).run("Book me something", run_id="replay")
print(replayed.finish_reason, [(e.payload["forms"][0]["form"], e.payload["forms"][1]["form"], e.payload["refused"])
                               for e in replayed.log.of_type("alert.representation")])""",
    ),
    (
        "md",
        """## 6. The transport audit

`hk.transport_audit(run)` lists every identifier-like value and array the model typed into
tool arguments: where it first appeared (system prompt, which user message, which tool result;
nowhere = invented) and whether it arrived altered. Compare a model that copies ids by hand
with one that binds them.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
@hk.tool
def flight_status(flight_number: str) -> dict:
    \"\"\"Status of one flight.

    Use this when the user asks whether a flight is on time. Do not use it to book.

    Args:
        flight_number: e.g. HAT001.

    Returns:
        The status.
    \"\"\"
    return {"flight_number": flight_number, "status": "on time"}

few = [reply.tool_call("search_flights", id="s1", origin="JFK", destination="SEA")]
copying = few + [reply.tool_call("artifact_slice", ref=ref_id, pointer="", start=0, stop=5),
                 reply.tool_call("flight_status", flight_number="HAT003"),   # copied from the slice
                 reply.tool_call("flight_status", flight_number="HAT0O4"),   # mixed up
                 reply.tool_call("flight_status", flight_number="HAT777"),   # invented
                 reply.text("done")]
binding = few + [reply.tool_call("flight_status", flight_number={"$bind": f"{ref_id}#/3/flight_number"}),
                 reply.tool_call("flight_status", flight_number={"$bind": "s1#/4/flight_number"}),
                 reply.text("done")]
audits = {}
for name, turns in {"copying": copying, "binding": binding}.items():
    r = hk.Harness([search_flights, flight_status], hk.ScriptedModel(turns), clock=CLOCK).run("Status of the early flights?", run_id=name)
    audits[name] = hk.transport_audit(r)
    print(name, "->", audits[name].verdict)""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
audits["copying"].frame()[["step", "tool", "path", "value", "transport", "status", "source", "closest", "how"]]""",
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
now = [1_716_200_000.0]
store = hk.ArtifactStore(ttl_seconds=3600, clock=lambda: now[0])
a = store.put(FLIGHTS)
now[0] += 2 * 3600
try:
    store.slice(a.id, "", 0)
except hk.ArtifactNotFoundError as err:
    print(err)
b = store.put(FLIGHTS[:20], ttl_seconds=10 * 3600)
store.archive(b.id)
print(store.status(b.id), "->", store.restore(b.id).status, store.value(b.id, "/19/flight_number"))""",
    ),
]

build("notebooks/03_data_transport.ipynb", cells)
