"""Regenerate notebooks/07_ecosystem.ipynb (executed, outputs stored).

Run from the repository root with the worktree first on the path:
`PYTHONPATH=$PWD python scripts/nb_ecosystem.py`. Each part needs one optional extra
(`[mcp]`, `[otel]`, `[parquet]`) and says so and skips when it is missing, so the notebook
passes nbval on a plain install too; the Phoenix part runs only when `HK_PHOENIX_URL` points at
a running Phoenix (`make phoenix` starts one).
"""

from make_notebook import build

cells = [
    (
        "md",
        """# Meeting the ecosystem: MCP tools, OpenTelemetry traces, Parquet, live tokens

harnesskit plugs into what agent researchers already use:

1. **MCP**: the tools of any Model Context Protocol server become registry tools, and every
   call goes through the same gate, executor, timeouts and log as a Python tool.
2. **OpenTelemetry**: the event log becomes spans in the GenAI semantic conventions, for
   Phoenix, Langfuse, Logfire or any OTLP collector.
3. **Parquet**: every frame writes to Parquet and reads back equal; many runs make one dataset.
4. **Streaming**: text and tool-call arguments show in the cell as they are generated.

Each part needs an optional extra (`pip install 'harnesskit[mcp,otel,parquet]'`) and skips
with the reason when it is missing. Everything runs offline with a scripted model.""",
    ),
    (
        "code",
        """import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

import harnesskit as hk
from harnesskit.testing import reply

def have(module):
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False

HAVE = {"mcp": have("mcp"), "opentelemetry": have("opentelemetry.sdk"), "pyarrow": have("pyarrow")}
def skip(extra, why):
    print(f"skipped: {why} needs the [{extra}] extra (pip install 'harnesskit[{extra}]')")""",
    ),
    (
        "md",
        """## 1. An MCP server's tools in a run

A small MCP server written with the official SDK: one read-only tool and one destructive one,
annotated as such. harnesskit starts it over stdio, lists its tools with their JSON Schemas,
and takes each tool's risk from its annotations (`readOnlyHint` → read, `destructiveHint` →
destructive, otherwise write).""",
    ),
    (
        "code",
        '''SERVER = """
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("orders")
ORDERS = {"A1": {"id": "A1", "status": "open", "total": 12.5}}

@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def get_order(order_id: str) -> dict:
    \\"\\"\\"Look up one order by id. Returns the order.\\"\\"\\"
    return ORDERS[order_id]

@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def delete_order(order_id: str) -> str:
    \\"\\"\\"Delete an order for good.\\"\\"\\"
    ORDERS.pop(order_id, None)
    return "deleted " + order_id

server.run("stdio")
"""
workdir = Path(tempfile.mkdtemp(prefix="hk-ecosystem-"))
_ = (workdir / "orders_server.py").write_text(SERVER)''',
    ),
    (
        "code",
        """# NBVAL_IGNORE_OUTPUT  (depends on the [mcp] extra; the asserts check it)
if HAVE["mcp"]:
    conn = hk.tools.MCPConnection([sys.executable, str(workdir / "orders_server.py")])
    mcp_tools = conn.tools()
    for t in mcp_tools:
        print(t.name, t.risk, json.dumps(t.parameters["properties"]))
    risks = [(t.name, t.risk) for t in mcp_tools]
    assert risks == [("get_order", "read"), ("delete_order", "destructive")]
else:
    skip("mcp", "the MCP part")""",
    ),
    (
        "md",
        """The model looks an order up, then tries to delete it. The destructive call asks the
gate's confirmation callback, which says no here (a notebook would show `hk.ApprovalPrompt()`),
so the server never sees it; the run goes on and finishes.""",
    ),
    (
        "code",
        """# NBVAL_IGNORE_OUTPUT  (depends on the [mcp] extra; the asserts check it)
if HAVE["mcp"]:
    asked = []
    def confirm(request):
        asked.append(f"{request.tool} ({request.risk})")
        return False
    model = hk.ScriptedModel([
        reply.tool_call("get_order", order_id="A1"),
        reply.tool_call("delete_order", order_id="A1"),
        reply.text("I looked the order up; deleting it was not approved."),
    ], name="scripted")
    h = hk.Harness(tools=mcp_tools, model=model, gate=hk.Gate(confirm=confirm))
    run = h.start("delete order A1", run_id="ecosystem-mcp").run()
    print("asked to confirm:", asked)
    for e in run.log.of_type(hk.log.ToolResultEvent):
        print(e.tool, "ok" if e.ok else e.error_type)
    print(run.finish_reason, "-", run.final_text)
    assert asked == ["delete_order (destructive)"] and run.finish_reason == "stop"
    conn.close()
else:
    skip("mcp", "the MCP part")""",
    ),
    (
        "md",
        """## 2. The trace, as OpenTelemetry spans

`hk.notebook.export_otlp` turns a logged run into spans — one per run (`invoke_agent`), per model
request (`chat`, with `gen_ai.usage.*` token counts) and per tool call (`execute_tool`) — and
sends them to an OTLP/HTTP endpoint or appends them as OTLP/JSON lines to a file. Here the file
is read back as a span table. (A live `hk.Harness(..., tracer=provider)` records the same spans as
the run goes.)""",
    ),
    (
        "code",
        """# NBVAL_IGNORE_OUTPUT  (depends on the [otel] extra; the asserts check it)
if HAVE["opentelemetry"]:
    traced = hk.Harness(
        tools=[],
        model=hk.ScriptedModel([reply.text("hello")], name="scripted"),
    ).start("hi", run_id="ecosystem-trace").run()
    source = run if HAVE["mcp"] else traced
    trace_file = workdir / "trace.jsonl"
    print(hk.notebook.export_otlp(source, path=trace_file), "spans written")
    request = json.loads(trace_file.read_text().splitlines()[0])
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    names = {s["spanId"]: s["name"] for s in spans}
    for s in sorted(spans, key=lambda s: s["startTimeUnixNano"]):
        attrs = {a["key"]: list(a["value"].values())[0] for a in s.get("attributes", [])}
        tokens = attrs.get("gen_ai.usage.input_tokens", "")
        parent = names.get(s.get("parentSpanId"), "-")
        print(f"{s['name']:<26} parent={parent:<26} input_tokens={tokens}")
    roots = [s for s in spans if "parentSpanId" not in s]
    children = [s for s in spans if s is not roots[0]]
    assert len(roots) == 1 and all(s["parentSpanId"] == roots[0]["spanId"] for s in children)
else:
    skip("otel", "the OpenTelemetry part")""",
    ),
    (
        "md",
        """### In Phoenix

With a Phoenix running (`make phoenix` starts one on 127.0.0.1:6006 and prints
`HK_PHOENIX_URL`), the same spans go to its OTLP endpoint and its span table reads back with the
right nesting and token counts. Without one, the cell says so and skips.""",
    ),
    (
        "code",
        """# NBVAL_IGNORE_OUTPUT
phoenix = os.environ.get("HK_PHOENIX_URL")
if not HAVE["opentelemetry"]:
    skip("otel", "the Phoenix part")
elif not phoenix:
    print("skipped: no Phoenix running (set HK_PHOENIX_URL, e.g. after `make phoenix`)")
else:
    import httpx
    hk.notebook.export_otlp(source, endpoint=f"{phoenix}/v1/traces")
    table = httpx.get(f"{phoenix}/v1/projects/default/spans", params={"limit": 100}).json()["data"]
    print([(s["name"], s["attributes"].get("llm.token_count.prompt")) for s in table])""",
    ),
    (
        "md",
        """## 3. Parquet

`hk.frame(...)` has typed columns for every kind (an event's payload is its JSON text, optional
integers are `Int64`), so `.to_parquet` works directly and reads back equal.
`hk.notebook.export_parquet` writes the events and budget tables of many runs into one folder.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
import pandas as pd

runs = {}
for i in range(3):
    turns = [reply.text(f"answer {i}")]
    h = hk.Harness(tools=[], model=hk.ScriptedModel(turns))
    runs[f"run-{i}"] = h.start("q", run_id=f"run-{i}").run()
df = hk.frame(runs["run-0"])
print("object columns:", [c for c in df if df[c].dtype == object])""",
    ),
    (
        "code",
        """# NBVAL_IGNORE_OUTPUT  (depends on the [parquet] extra; the asserts check it)
if HAVE["pyarrow"]:
    df.to_parquet(workdir / "events.parquet")
    print("round trip equal:", pd.read_parquet(workdir / "events.parquet").equals(df))
    written = hk.notebook.export_parquet(runs, workdir / "dataset")
    events = hk.notebook.read_parquet(workdir / "dataset")
    n_runs = events["run_id"].nunique()
    print(sorted(p.name for p in written.values()), len(events), "events of", n_runs, "runs")
    assert pd.read_parquet(workdir / "events.parquet").equals(df) and n_runs == 3
else:
    skip("parquet", "the Parquet part")""",
    ),
    (
        "md",
        """## 4. Tokens streaming into the cell

`Harness(on_delta=hk.notebook.live_stream())` shows the answer as it arrives: text and each tool
call's arguments, in one output area updated in place. With a real model, ask it to stream
(`settings={"stream": True}`); the scripted model plays its turns the same way. The logged
message is byte-identical to a non-streamed one.""",
    ),
    (
        "code",
        """# NBVAL_IGNORE_OUTPUT
live = hk.notebook.live_stream()
model = hk.ScriptedModel([reply.text("Streaming: each fragment lands in this cell as it comes.")])
streamed = hk.Harness(tools=[], model=model, on_delta=live).run("stream something")""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
print(live.text == streamed.final_text, live.attempts)""",
    ),
]

build("notebooks/07_ecosystem.ipynb", cells)
