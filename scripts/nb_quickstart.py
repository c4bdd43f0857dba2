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
was sent at every step. The agent is the airline customer-service agent of
`harnesskit.domains.airline`, on a private copy of the τ-bench airline database. Everything runs
offline: the model is the domain's embedded agent, a Python policy (`hk.FunctionModel`) standing
in for an LLM, so the notebook needs no network and no keys.""",
    ),
    (
        "parameters",
        """# Parameters (papermill: -p name value)
task_name = "book-cheapest-one-stop"  # one of airline.DEMO_TASKS
max_steps = 30""",
    ),
    (
        "code",
        """import harnesskit as hk
from harnesskit.domains import airline

hk.__version__""",
    ),
    (
        "md",
        """## 1. Tools

A tool is a Python function plus the spec the model sees, derived from its type hints and
docstring. The airline domain has 14, in groups, working on one database copy per run (the
shipped files never change). The registry renders as a table.""",
    ),
    ("code", "db = airline.load_database()\ntools = airline.tools(db)\ntools"),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
print(len(tools), "tools;", "lint issues:", hk.lint(tools))  # the four-part description template
tools.groups()""",
    ),
    (
        "md",
        """One tool in full: its description (what it does, when to use it, when not, what it
returns) and its parameters. `cancel_reservation` is `destructive`, so the permission gate
asks before it runs.""",
    ),
    ("code", 'tools["cancel_reservation"]'),
    (
        "md",
        """## 2. A model and a task

`airline.agent_model()` reads the conversation the way an LLM would and answers with a tool
call or text. Any `hk.models.Model` fits here: `hk.get_model("openai-compat:...")` for a real
one.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
task = next(t for t in airline.DEMO_TASKS if t.name == task_name)
print(task.user_message)""",
    ),
    (
        "md",
        """## 3. A harness, stepped cell by cell

The harness holds the tools, the model, the permission gate, the context policy and the
brakes. Here the gate approves confirm-level calls itself (section 6 asks a human instead).
`run.step()` advances one model turn and its tool calls; the cell shows the run.""",
    ),
    (
        "code",
        """h = hk.Harness(
    tools,
    airline.agent_model(),
    system_prompt=airline.POLICY,
    gate=hk.Gate(confirm=hk.allow_all),
    limits=hk.Limits(max_steps=max_steps, max_tokens=100_000),
)
run = h.start(task.user_message, run_id="quickstart-1")
run.step()""",
    ),
    ("code", "# NBVAL_CHECK_OUTPUT\nrun.state.step, run.finish_reason, run.state.tool_history"),
    ("code", "run.step()"),
    ("code", "# NBVAL_CHECK_OUTPUT\nrun.run()\nprint(run)\nprint(run.final_text)"),
    (
        "md",
        """## 4. The trace

The event log is the trace: one row per event, with every request sent, every response, tool
call and result. `hk.frame(run, kind="budget")` sums it per step.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
hk.frame(run)[["event_id", "step", "type", "source", "tool", "ok", "summary"]]""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
budget = hk.frame(run, kind="budget")
budget[
    ["step", "prompt_tokens", "completion_tokens", "cum_tokens", "tool_calls", "tool_errors"]
]""",
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
        """What filled each prompt? `hk.frame(run, kind="composition")` rebuilds every request
exactly as it was sent and counts its tokens by category. In the first three requests the 14
tool specs are the largest part, nearly four times the policy in the system prompt. The one-stop
flight search of step 3 returns 37 itineraries (25 kB): too large to send, so the harness
stores it as an artifact and the prompt gets a bounded summary (see `03_data_transport`).
From step 4 the six `artifact_*` inspection tools join the tool list, and the tool results grow
page by page as the agent reads back only the fields its choice needs.""",
    ),
    ("code", '# NBVAL_CHECK_OUTPUT\nhk.frame(run, kind="composition")'),
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
explorer.slider.value = 3  # what the slider does
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

Now the gate asks a human before a destructive call. `hk.ApprovalPrompt` is the gate's
confirm callback and `hk.StepControls` drives the run with buttons. Steps run on a worker
thread, so when the cancellation comes up the step waits while the kernel stays free for your
click on **Approve** or **Deny**; the prompt shows the call's arguments (and a dry-run preview
for tools that have one). Here the cells below press the buttons in code, the same as a
click.""",
    ),
    (
        "code",
        """# NBVAL_IGNORE_OUTPUT
cancel = next(t for t in airline.DEMO_TASKS if t.name == "cancel-business")
prompt = hk.ApprovalPrompt()
h2 = hk.Harness(
    airline.tools(airline.load_database()),
    airline.agent_model(),
    system_prompt=airline.POLICY,
    gate=hk.Gate(confirm=prompt),
    limits=hk.Limits(max_steps=max_steps),
)
run2 = h2.start(cancel.user_message, run_id="quickstart-2")
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
prompt.snapshot()  # what the prompt above shows now: the call and its arguments""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
print(prompt.pending)
print(prompt.pending.arguments)""",
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
h3 = hk.Harness(
    airline.tools(airline.load_database()),
    airline.agent_model(),
    system_prompt=airline.POLICY,
    gate=hk.Gate(confirm=hk.allow_all),
    limits=hk.Limits(max_steps=3, max_tokens=20_000),
    progress=hk.TqdmProgress("braked"),
)
run3 = h3.run(task.user_message, run_id="quickstart-3")""",
    ),
    ("code", "# NBVAL_CHECK_OUTPUT\nprint(run3)\nrun3.state.incomplete, run3.state.tool_history"),
    ("code", "hk.plot_budget(run3)"),
]

build("notebooks/01_quickstart.ipynb", cells)
