"""Regenerate notebooks/01_quickstart.ipynb (executed, outputs stored).

Run from the repository root with the worktree first on the path:
`PYTHONPATH=$PWD python scripts/nb_quickstart.py`.
"""

from make_notebook import build

cells = [
    (
        "md",
        """# harnesskit quickstart

Build a harness around a model, step a run cell by cell, and read what happened: the trace as
a DataFrame, the token budget as a chart, and an explorer that shows the exact request the model
was sent at every step. Everything runs offline: the "model" here is a small Python policy
(`hk.FunctionModel`) standing in for an LLM, so the notebook needs no network and no keys.""",
    ),
    (
        "parameters",
        """# Parameters (papermill: -p name value)
customer_id = "C7"
order_id = "B2"
max_steps = 8""",
    ),
    (
        "code",
        """import json
import re

import harnesskit as hk

hk.__version__""",
    ),
    (
        "md",
        """## 1. Tools

A tool is a Python function plus the spec the model sees, derived from its type hints and
docstring. This small shop has two: `list_orders` (read) and `cancel_order` (destructive, with a
dry run that says what it *would* do). The registry renders as a table.""",
    ),
    (
        "code",
        '''ORDERS = {
    f"{letter}{n}": {
        "order_id": f"{letter}{n}",
        "customer_id": "C7" if n % 2 == 0 else "C9",
        "item": ["shirt", "boots", "scarf", "jacket"][n % 4],
        "price_usd": 20 + 7 * n,
        "status": "shipped" if letter == "A" else "processing",
    }
    for letter in "AB"
    for n in range(2, 26)
}


@hk.tool
def list_orders(customer_id: str) -> list[dict]:
    """List every order of one customer, newest first.

    Use this when the user talks about their orders and you need an order's status or price.
    Do not use it to change an order.

    Args:
        customer_id: the customer's id, e.g. "C7".

    Returns:
        A list of orders: order_id, item, price_usd, status.
    """
    return [o for o in ORDERS.values() if o["customer_id"] == customer_id]


@hk.tool(risk="destructive")
def cancel_order(order_id: str, dry_run: bool = False) -> dict:
    """Cancel one order that has not shipped and refund it.

    Use this when the user asks to cancel an order whose status is "processing".
    Do not use it for shipped orders: those are returned, not cancelled.

    Args:
        order_id: the order to cancel, as listed by list_orders.

    Returns:
        The order id, its new status and the refund in USD.
    """
    order = ORDERS[order_id]
    if order["status"] != "processing":
        raise hk.ToolError(f"order {order_id} is {order['status']}; only processing orders cancel")
    if dry_run:
        return {"order_id": order_id, "would_refund_usd": order["price_usd"]}
    order["status"] = "cancelled"
    return {"order_id": order_id, "status": "cancelled", "refund_usd": order["price_usd"]}


tools = hk.ToolRegistry([list_orders, cancel_order])
tools''',
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
hk.lint(tools)  # the four-part description template: what / when / when NOT / returns""",
    ),
    (
        "md",
        """## 2. A model

`agent` reads the conversation the way an LLM would and answers with a tool call or text. Any
`hk.Model` fits here: `hk.get_model("openai-compat:...")` for a real one.""",
    ),
    (
        "code",
        """def agent(messages, info):
    \"\"\"List the customer's orders, cancel the one named if it is processing, then answer.\"\"\"
    user = next(m.content for m in reversed(messages) if m.role == "user")
    customer, order = re.search(r"\\bC\\d+\\b", user).group(), re.search(r"\\b[AB]\\d+\\b", user).group()
    last = messages[-1]
    if info.final:  # a brake tripped: one tool-less request for the best answer so far
        return f"I ran out of steps before finishing with order {order}."
    if last.role == "user":
        return hk.ToolCall(id="", name="list_orders", arguments={"customer_id": customer})
    result = json.loads(last.content)
    if isinstance(result, list):
        mine = {o["order_id"]: o for o in result}
        if order not in mine:
            return f"I found no order {order} for customer {customer}."
        if mine[order]["status"] != "processing":
            return f"Order {order} has {mine[order]['status']}; it can be returned, not cancelled."
        return hk.ToolCall(id="", name="cancel_order", arguments={"order_id": order})
    if result.get("ok") is False:
        return f"I could not cancel order {order}: {result['message']}"
    return f"Order {order} is cancelled; {result['refund_usd']} USD will be refunded."


model = hk.FunctionModel(agent, name="shop-agent")""",
    ),
    (
        "md",
        """## 3. A harness, stepped cell by cell

The harness holds the tools, the model, the permission gate, the context policy and the
brakes. Here the gate lets destructive tools run (section 6 asks a human instead).
`run.step()` advances one model turn and its tool calls; the cell shows the run.""",
    ),
    (
        "code",
        """h = hk.Harness(
    tools,
    model,
    system_prompt="You are the shop's support agent. Cancel only processing orders.",
    gate=hk.Gate(policy={"destructive": "allow"}),
    limits=hk.Limits(max_steps=max_steps, max_tokens=20_000),
)
run = h.start(f"Hi, I'm customer {customer_id}. Please cancel my order {order_id}, wrong size.",
              run_id="quickstart-1")
run.step()""",
    ),
    ("code", "# NBVAL_CHECK_OUTPUT\nrun.state.step, run.finish_reason, run.state.tool_history"),
    ("code", "run.step()"),
    ("code", "# NBVAL_CHECK_OUTPUT\nrun.run()\nprint(run)\nprint(run.final_text)"),
    (
        "md",
        """## 4. The trace

The event log is the trace: one row per event, with every request sent, every response, tool
call and result. `hk.budget_frame` sums it per step.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
hk.frame(run)[["event_id", "step", "type", "source", "tool", "ok", "summary"]]""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
budget = hk.budget_frame(run)
budget[["step", "prompt_tokens", "completion_tokens", "cum_tokens", "tool_calls", "tool_errors"]]""",
    ),
    (
        "md",
        """Token counts here are the harness's estimates (the offline model reports no usage); a
real provider's counts replace them. The chart puts them against the brakes: the
`max_tokens` budget and the `max_steps` brake (a limit far from what the run used is named in
the legend instead of drawn).""",
    ),
    ("code", "hk.plot_budget(run)"),
    (
        "md",
        """Which parts of the prompt grew? `hk.plot_composition` rebuilds every request exactly as
it was sent and counts its tokens by category: the order list (a tool result) dominates from
step 2 on.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
hk.composition_frame(run)""",
    ),
    ("code", "hk.plot_composition(run)"),
    (
        "md",
        """## 5. The trace explorer

Move the slider to a step: the table lists its events, and the detail pane shows the exact
request the model was sent (every message, the tool list). Pick any event in the dropdown to
see it. Widgets need a running kernel: where there is none (GitHub, an HTML export) their
output stays empty, so the notebook also shows a static `snapshot()` of the view.""",
    ),
    ("code", "# NBVAL_IGNORE_OUTPUT\nexplorer = hk.TraceExplorer(run)\nexplorer"),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
explorer.slider.value = 2  # what the slider does
[label for label, _ in explorer.events.options]""",
    ),
    (
        "code",
        """# NBVAL_IGNORE_OUTPUT
explorer.snapshot()  # a static copy of the view: readers without a kernel see it too""",
    ),
    (
        "md",
        """## 6. Step controls and a human approval

Now the gate asks before a destructive call. `hk.ApprovalPrompt` is the gate's confirm
callback and `hk.StepControls` drives the run with buttons. Steps run on a worker thread, so
when the cancellation comes up the step waits while the kernel stays free for your click on
**Approve** or **Deny**; the prompt shows the arguments and the dry-run preview. (Here the
cells below press the buttons in code, the same as a click.)""",
    ),
    (
        "code",
        """# NBVAL_IGNORE_OUTPUT
ORDERS[order_id]["status"] = "processing"  # the first run cancelled it; undo for this demo
prompt = hk.ApprovalPrompt()
h2 = hk.Harness(tools, model, gate=hk.Gate(confirm=prompt), limits=hk.Limits(max_steps=max_steps))
run2 = h2.start(f"I'm {customer_id}: cancel {order_id} please.", run_id="quickstart-2")
controls = hk.StepControls(run2)
controls""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
controls.run_button.click()  # "Run to end"
controls.wait()              # returns when the run is idle or a call waits for approval""",
    ),
    (
        "code",
        """# NBVAL_IGNORE_OUTPUT
prompt.snapshot()  # what the prompt above shows now: the call, its arguments, the dry-run preview""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
print(prompt.pending)
print(json.dumps(prompt.pending.preview))""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
prompt.approve_button.click()
controls.wait(), run2.finish_reason, run2.final_text, prompt.history""",
    ),
    ("code", "run2"),
    (
        "md",
        """## 7. Progress bars and brakes

`hk.TqdmProgress()` draws the harness's progress stream as a bar (a widget here, text in a
terminal). A tight step brake shows the other end of the budget chart: the run stops at
`max_steps`, and one tool-less closing request (hatched, `*`) asks for the best answer so far.""",
    ),
    (
        "code",
        """# NBVAL_IGNORE_OUTPUT
ORDERS[order_id]["status"] = "processing"
h3 = hk.Harness(tools, model, gate=hk.Gate(policy={"destructive": "allow"}),
                limits=hk.Limits(max_steps=1, max_tokens=2_000), progress=hk.TqdmProgress("braked"))
run3 = h3.run(f"I'm {customer_id}: cancel {order_id}.", run_id="quickstart-3")""",
    ),
    ("code", "# NBVAL_CHECK_OUTPUT\nprint(run3)\nprint(run3.final_text)"),
    ("code", "hk.plot_budget(run3)"),
]

build("notebooks/01_quickstart.ipynb", cells)
