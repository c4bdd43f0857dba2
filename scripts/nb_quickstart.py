"""Regenerate notebooks/01_quickstart.ipynb (executed, outputs stored)."""

from make_notebook import build

cells = [
    ("md", "# harnesskit quickstart\n\nBuild a harness, step a run cell by cell, read the trace."),
    ("code", "import harnesskit as hk\nfrom harnesskit.testing import reply\nhk.__version__ != ''"),
    ("code", '''@hk.tool
def lookup_order(order_id: str) -> dict:
    """Look up one order by id.

    Use this when the user names an order. Do not use it to change an order.

    Args:
        order_id: the order's id, e.g. "A1".

    Returns:
        The order as JSON.
    """
    return {"order_id": order_id, "status": "shipped"}

tools = hk.ToolRegistry([lookup_order])
hk.lint(tools)'''),
    ("code", '''# NBVAL_CHECK_OUTPUT
model = hk.ScriptedModel([reply.tool_call("lookup_order", order_id="A1"), reply.text("Order A1 has shipped.")])
h = hk.Harness(tools, model, limits=hk.Limits(max_steps=5))
run = h.start("Where is my order A1?")
run.step()
print(run.state.step, run.finish_reason)'''),
    ("code", "# NBVAL_CHECK_OUTPUT\nrun.run()\nprint(run.finish_reason, run.final_text)"),
    ("code", "# NBVAL_CHECK_OUTPUT\nrun.log.frame()[['event_id', 'type', 'tool', 'ok']]"),
]

build("notebooks/01_quickstart.ipynb", cells)
