"""Regenerate notebooks/02_tool_descriptions.ipynb (executed, outputs stored).

Run from the repository root with the worktree first on the path:
`PYTHONPATH=$PWD python scripts/nb_tool_descriptions.py`.
"""

from make_notebook import build

cells = [
    (
        "md",
        """# Tool descriptions are prompts

A model calls a tool from what its spec says: the description, the parameter names, their types
and formats. This notebook writes a tool, lints its description, fixes it, and compares the two
versions on the same cases.

The comparison needs a model that reads the spec. Offline, `schema_reader` below stands in for
one: it is deterministic and does exactly what the spec lets it do, no more. When a parameter
has an `enum` it picks the listed value that matches the user's words; when it is a free string
it copies the user's words. When a string has `format: date` it writes an ISO date; otherwise it
writes the date as the user said it. After an error it reads the hint and tries once more. Real
models are less predictable, and the same experiment runs on them by swapping the model.""",
    ),
    (
        "parameters",
        """# Parameters (papermill: -p name value)
max_steps = 6""",
    ),
    (
        "code",
        """import datetime as dt
import json
from typing import Literal

import harnesskit as hk

SEATINGS = ("indoor", "patio", "bar")
BOOKINGS = []


def book(restaurant, day, party_size, seating):
    \"\"\"The booking system behind both versions of the tool: strict about its inputs.\"\"\"
    try:
        day = dt.date.fromisoformat(str(day))
    except ValueError:
        raise hk.ToolArgumentsError(
            f"day {day!r} is not a date", hint="write the day as YYYY-MM-DD, e.g. 2024-06-14"
        ) from None
    if seating not in SEATINGS:
        raise hk.ToolArgumentsError(
            f"unknown seating {seating!r}", hint=f"seating is one of {', '.join(SEATINGS)}"
        )
    BOOKINGS.append((restaurant, day.isoformat(), party_size, seating))
    booked = {"booked": restaurant, "day": day.isoformat(), "party_size": party_size}
    return {**booked, "seating": seating}""",
    ),
    (
        "md",
        """## 1. A first version

Written in a hurry: one line of description, every parameter a free string.""",
    ),
    (
        "code",
        '''@hk.tool(name="book_table", risk="write")
def book_table_v1(restaurant: str, day: str, party_size: int, seating: str) -> dict:
    """Books a table."""
    return book(restaurant, day, party_size, seating)


book_table_v1''',
    ),
    (
        "md",
        """## 2. Lint it

`hk.lint` checks the four-part template (what it does / when to use / when NOT to use / what it
returns), free strings that look like a fixed set of values, dates without a format, and
parameters without descriptions.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
hk.frame(hk.lint(book_table_v1))[["code", "param", "message"]]""",
    ),
    (
        "md",
        """## 3. Fix it

The fix is in the types as much as in the words: `Literal[...]` becomes an `enum`,
`datetime.date` becomes `format: date`, and the docstring's `Args:` become parameter
descriptions.""",
    ),
    (
        "code",
        '''@hk.tool(name="book_table", risk="write")
def book_table_v2(
    restaurant: str,
    day: dt.date,
    party_size: int,
    seating: Literal["indoor", "patio", "bar"],
) -> dict:
    """Book a table at a restaurant for one day.

    Use this when the user asks to reserve a table and has said where, when and for how many.
    Do not use it to change or cancel a booking, or to check opening hours.

    Args:
        restaurant: the restaurant's name as the user wrote it.
        day: the day of the booking.
        party_size: number of guests, including the user.
        seating: where to sit.

    Returns:
        The booking: restaurant, day (YYYY-MM-DD), party_size and seating.
    """
    return book(restaurant, day, party_size, seating)


book_table_v2''',
    ),
    ("code", "# NBVAL_CHECK_OUTPUT\nhk.lint(book_table_v2)"),
    (
        "md",
        """## 4. Compare the two versions on the same cases

Each case is a user request; the simulated model fills the arguments from the spec it is
shown. Same cases, same model, same harness: only the tool description differs.""",
    ),
    (
        "code",
        """# What the user wrote, and what they mean: understanding the request is the model's job;
# the question here is only how it writes those values into the call the spec asks for.
CASES = [
    dict(text="Table for 4 at Luigi's on June 14 2024, on the Patio please.",
         restaurant="Luigi's", party_size=4, day_said="June 14 2024", day="2024-06-14",
         seating_said="Patio"),
    dict(text="Book Sakura for 2 on 2024-06-20, bar seats.",
         restaurant="Sakura", party_size=2, day_said="2024-06-20", day="2024-06-20",
         seating_said="bar"),
    dict(text="We are 6 for Chez Anne next Friday (2024-06-21), inside.",
         restaurant="Chez Anne", party_size=6, day_said="next Friday", day="2024-06-21",
         seating_said="inside"),
    dict(text="Dinner for 3 at Nonna's on 2024-07-01, patio.",
         restaurant="Nonna's", party_size=3, day_said="2024-07-01", day="2024-07-01",
         seating_said="patio"),
]
SYNONYMS = {"inside": "indoor", "outside": "patio"}


def schema_reader(messages, info):
    \"\"\"A deterministic stand-in for a model that reads the tool spec (see the intro).\"\"\"
    text = next(m.content for m in messages if m.role == "user")
    case = next(c for c in CASES if c["text"] == text)
    if info.final:
        return "I could not complete the booking."
    tool_replies = [json.loads(m.content) for m in messages if m.role == "tool"]
    if tool_replies and tool_replies[-1].get("ok") is not False:
        return f"Booked: {json.dumps(tool_replies[-1])}"
    if len(tool_replies) >= 3:
        return "I could not complete the booking."
    hints = " ".join(r.get("hint") or "" for r in tool_replies)  # what the errors taught it
    props = info.tools[0]["function"]["parameters"]["properties"]
    iso = props["day"].get("format") == "date" or "YYYY-MM-DD" in hints
    options = props["seating"].get("enum") or [s for s in SEATINGS if s in hints]
    seating = case["seating_said"]
    if options:  # a list to choose from: map the user's words onto it
        wanted = SYNONYMS.get(seating.lower(), seating.lower())
        seating = wanted if wanted in options else options[0]
    args = {
        "restaurant": case["restaurant"],
        "day": case["day"] if iso else case["day_said"],
        "party_size": case["party_size"],
        "seating": seating,
    }
    return hk.ToolCall(id="", name="book_table", arguments=args)


def run_cases(tool, label):
    runs = {}
    for i, case in enumerate(CASES, 1):
        limits = hk.Limits(max_steps=max_steps)
        h = hk.Harness([tool], hk.FunctionModel(schema_reader), limits=limits)
        runs[f"{label} case {i}"] = h.run(case["text"], run_id=f"{label}-{i}")
    return runs


BOOKINGS.clear()
runs = {**run_cases(book_table_v1, "v1"), **run_cases(book_table_v2, "v2")}
table = hk.frame(runs, kind="comparison")
table["booked_right_day"] = [
    any(e.payload.get("ok") and json.loads(e.payload["content"])["day"] == CASES[i % 4]["day"]
        for e in run.log.of_type("tool.result"))
    for i, run in enumerate(runs.values())
]""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
table[
    ["steps", "tool_calls", "tool_errors", "prompt_tokens", "finish_reason", "booked_right_day"]
]""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
summary = table.groupby(table.index.str[:2]).agg(
    cases=("steps", "size"),
    booked=("booked_right_day", "sum"),
    tool_errors=("tool_errors", "sum"),
    mean_steps=("steps", "mean"),
    prompt_tokens=("prompt_tokens", "sum"),
)
summary""",
    ),
    (
        "md",
        """With v1 the model wrote the day as the user said it ("June 14 2024", "next Friday")
and copied the seating word ("Patio", "inside"). The booking system refused, and each refusal's
hint taught the model the format or the allowed values, at the price of a step: two of the four
cases needed two retries (4 tool errors, 3 steps on average against 2). v2 states the format and
the values up front, so every case books on the first call. Its longer description travels with
every request, yet v2 used no more prompt tokens in total than v1, whose retries cost extra
requests.

Lint caught the date but not `seating`: nothing in the name says it is a fixed set of values.
Only the comparison showed it.

The first case under both descriptions, request by request (prompt size per request):""",
    ),
    ("code", 'hk.plot_comparison({"v1": runs["v1 case 1"], "v2": runs["v2 case 1"]})'),
    (
        "md",
        """And the exact request behind v1's retry: the error the booking system returned, as the
model saw it.""",
    ),
    (
        "code",
        """# NBVAL_CHECK_OUTPUT
log = runs["v1 case 1"].log
retry = log.of_type("model.request")[1]
for m in log.request_messages(retry.event_id)[-2:]:
    print(m["role"], "|", m["content"] or m["tool_calls"][0]["function"]["arguments"])""",
    ),
]

build("notebooks/02_tool_descriptions.ipynb", cells)
