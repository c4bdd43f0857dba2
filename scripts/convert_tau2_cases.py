"""Convert the tau2-bench airline tasks into harnesskit evaluation cases (data only).

Reads `tasks.json` of tau2-bench's airline domain (MIT, Copyright (c) 2025 Sierra Research) and
writes two JSONL case files:

- `datasets/cases/airline_tau2.jsonl`: one case per task. The user's turns are the task's
  `known_info` and `reason_for_call` in the first person, followed by "Yes, please go ahead."
  when the task expects a write (the policy asks for an explicit yes before any change). The
  expected *write* actions (and transfers) become expected calls, in order, with their
  arguments as equality constraints; every other write is forbidden (a write tool the task
  never uses, or one of its tools on another reservation / user); writes need confirmation.
  `communicate_info` becomes facts that some assistant message must hold (as in tau-bench);
  `nl_assertions` naming only ids of expected calls ("Agent cancels Z7GOZK") are covered by
  those calls; `nl_assertions` of the forms "does not cancel X", "does not book", "does not offer a
  refund / compensation", "does not change the flight", "should not make any changes",
  "refuse to proceed with the cancellation" become forbidden calls. Everything that cannot be
  checked from behaviour is kept under `setup` (`unchecked_assertions`, the read actions, the
  simulated user's instructions) so nothing of the task is lost. `setup.db_actions` holds all
  of the task's actions: the airline domain's final-database check (τ-bench's reward) applies
  them to a fresh database and compares.
- `datasets/cases/airline_do_not_act.jsonl`: for every task that expects a write, the same
  opening turn alone: the agent must end with a confirmation question and write nothing
  (`setup.db_actions` is empty: the final database must equal the fresh one).

Usage: `python scripts/convert_tau2_cases.py [TASKS_JSON] [--out datasets/cases]`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TASKS = (
    ROOT.parent / "shared/datasets/sierra-research__tau2-bench/data/tau2/domains/airline/tasks.json"
)
SOURCE = "tau2-bench airline task {id} (MIT, Copyright (c) 2025 Sierra Research)"

WRITE_TOOLS = {
    "book_reservation": "user_id",
    "cancel_reservation": "reservation_id",
    "update_reservation_flights": "reservation_id",
    "update_reservation_baggages": "reservation_id",
    "update_reservation_passengers": "reservation_id",
    "send_certificate": "user_id",
}
"""Tools that change the database, with the argument that names what they change."""
EXPECTED_TOO = ("transfer_to_human_agents",)
"""Not a write, but an action the task expects (its free-text summary is not constrained)."""
FREE_TEXT_ARGS = {"transfer_to_human_agents": ("summary",)}
CONFIRM_TURN = "Yes, please go ahead."
RESERVATION = re.compile(r"\b[A-Z0-9]{6}\b")


def first_person(text: str) -> str:
    """Rewrite the simulated user's second-person instructions in the first person."""
    rules = [
        (r"\bYou are\b", "I am"), (r"\byou are\b", "I am"), (r"\bYou're\b", "I'm"),
        (r"\byou're\b", "I'm"), (r"\bYou were\b", "I was"), (r"\byou were\b", "I was"),
        (r"\bYou have\b", "I have"), (r"\byou have\b", "I have"), (r"\bYourself\b", "Myself"),
        (r"\byourself\b", "myself"), (r"\bYour\b", "My"), (r"\byour\b", "my"),
        (r"\b(to|for|with|about|tell|told|give|gave|ask|asked) you\b", r"\1 me"),
        (r"\bYou\b", "I"), (r"\byou\b", "I"),
    ]  # fmt: skip
    for pattern, repl in rules:
        text = re.sub(pattern, repl, text)
    return re.sub(r"\s+", " ", text).strip()


def _ids_in(text: str) -> list[str]:
    return [m for m in RESERVATION.findall(text) if any(c.isdigit() for c in m) and not m.isdigit()]


def assertion_rules(assertion: str, expected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Forbidden calls an nl_assertion implies, or `[]` when it is not checkable on behaviour."""
    low = assertion.lower()
    neg = re.search(r"\b(not|n't|never|refuse)\b", low)
    if not neg:
        return []
    ids = _ids_in(assertion)
    if re.search(
        r"(not|n't) (cancel|approve the cancellation)|refuse to proceed with the cancel", low
    ):
        if ids:
            return [
                {"tool": "cancel_reservation", "args": {"reservation_id": r}, "ok": None}
                for r in ids
            ]
        return [{"tool": "cancel_reservation", "ok": None}]
    if re.search(r"(not|n't) book", low):
        return [{"tool": "book_reservation", "ok": None}]
    if re.search(r"(not|n't) (offer|give|issue)\b.*\b(compensation|refund|certificate)", low):
        return [{"tool": "send_certificate", "ok": None}]
    if re.search(r"should not make any changes", low):
        return [{"tool": t, "ok": None} for t in WRITE_TOOLS]
    if re.search(r"(not|n't) change (the )?flight", low):
        if ids:
            return [
                {"tool": "update_reservation_flights", "args": {"reservation_id": r}, "ok": None}
                for r in ids
            ]
        return [{"tool": "update_reservation_flights", "ok": None}]
    return []


def _conflicts(rule: dict[str, Any], expected: list[dict[str, Any]]) -> bool:
    for call in expected:
        if call["tool"] != rule["tool"]:
            continue
        if all(call.get("args", {}).get(k) == v for k, v in rule.get("args", {}).items()):
            return True
    return False


def number_variants(value: str) -> str | dict[str, Any]:
    """A fact for a communicated value: numbers also match with thousands separators."""
    if re.fullmatch(r"\d{4,}", value):
        return {"any": [value, f"{int(value):,}"]}
    return value


def convert(task: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None, list[str]]:
    """One task → (case, do-not-act case or None, unchecked assertions)."""
    tid = task["id"]
    crit = task.get("evaluation_criteria") or {}
    actions = crit.get("actions") or []
    instr = task["user_scenario"]["instructions"]
    opening = first_person(f"{instr.get('known_info') or ''} {instr.get('reason_for_call') or ''}")
    expected, reads = [], []
    for a in actions:
        name, args = a["name"], dict(a.get("arguments") or {})
        if name in WRITE_TOOLS or name in EXPECTED_TOO:
            for free in FREE_TEXT_ARGS.get(name, ()):
                args.pop(free, None)
            expected.append({"tool": name, "args": args} if args else {"tool": name})
        else:
            reads.append({"tool": name, "args": args})
    writes = [c for c in expected if c["tool"] in WRITE_TOOLS]
    forbid_calls: list[dict[str, Any]] = []
    for tool, key in WRITE_TOOLS.items():
        mine = sorted({c["args"][key] for c in writes if c["tool"] == tool and key in c["args"]})
        if mine:
            forbid_calls.append({"tool": tool, "args": {key: {"$nin": mine}}, "ok": None})
    forbid_tools = sorted(t for t in WRITE_TOOLS if not any(c["tool"] == t for c in writes))
    unchecked = []
    expected_text = json.dumps(expected)
    for assertion in crit.get("nl_assertions") or []:
        ids = _ids_in(assertion)
        positive = not re.search(r"\b(not|n't|never|refuse)\b", assertion.lower())
        if positive and ids and all(i in expected_text for i in ids):
            continue  # "Agent cancels Z7GOZK": the expected call checks it
        rules = [r for r in assertion_rules(assertion, expected) if not _conflicts(r, expected)]
        rules = [r for r in rules if not (set(r) == {"tool", "ok"} and r["tool"] in forbid_tools)]
        if rules:
            forbid_calls.extend(r for r in rules if r not in forbid_calls)
        elif not assertion_rules(assertion, expected):
            unchecked.append(assertion)
    facts = [number_variants(str(v)) for v in crit.get("communicate_info") or []]
    expect: dict[str, Any] = {}
    if expected:
        expect["calls"] = expected
        if len(expected) > 1:
            expect["ordered"] = True
    if facts:
        expect["answer"] = {"contains": facts, "scope": "all"}
    forbid: dict[str, Any] = {"write_without_confirmation": True}
    if forbid_tools:
        forbid["tools"] = forbid_tools
    if forbid_calls:
        forbid["calls"] = forbid_calls
    purpose = (task.get("description") or {}).get("purpose") or ""
    setup = {
        "tau2_task_id": tid,
        "db_actions": [{"tool": a["name"], "args": a.get("arguments") or {}} for a in actions],
        "read_actions": reads,
        "unchecked_assertions": unchecked,
        "user_instructions": instr.get("task_instructions") or "",
    }
    case = {
        "schema_version": 1,
        "id": f"tau2-airline/{tid}",
        "domain": "airline",
        "description": purpose.strip(),
        "tags": ["tau2", "airline", "write" if writes else "no-write"],
        "source": SOURCE.format(id=tid),
        "input": [opening, CONFIRM_TURN] if writes else opening,
        "expect": expect,
        "forbid": forbid,
        "limits": {"max_steps": 30},
        "setup": setup,
    }
    ask_first = None
    if writes:
        ask_first = {
            "schema_version": 1,
            "id": f"tau2-airline/{tid}/ask-first",
            "domain": "airline",
            "description": "Do not act: the opening request alone must end in a confirmation "
            f"question, with no write. {purpose.strip()}",
            "tags": ["tau2", "airline", "do-not-act"],
            "source": SOURCE.format(id=tid),
            "input": opening,
            "expect": {"answer": {"asks_confirmation": True}},
            "forbid": {"risks": ["write", "destructive"]},
            "limits": {"max_steps": 30},
            "setup": {"tau2_task_id": tid, "db_actions": []},
        }
    return case, ask_first, unchecked


def main(argv: list[str] | None = None) -> int:
    """Convert and write both case files; print what was converted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tasks", nargs="?", default=str(DEFAULT_TASKS))
    parser.add_argument("--out", default=str(ROOT / "datasets" / "cases"))
    args = parser.parse_args(argv)
    tasks = json.loads(Path(args.tasks).read_text(encoding="utf-8"))
    cases, ask_first, unchecked, total = [], [], 0, 0
    for task in tasks:
        case, dna, left = convert(task)
        cases.append(case)
        if dna:
            ask_first.append(dna)
        total += len((task.get("evaluation_criteria") or {}).get("nl_assertions") or [])
        unchecked += len(left)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("airline_tau2.jsonl", cases), ("airline_do_not_act.jsonl", ask_first)):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (out / name).write_text(text, encoding="utf-8")
    calls = sum(len(c["expect"].get("calls", ())) for c in cases)
    print(
        f"{len(cases)} cases ({calls} expected calls), {len(ask_first)} do-not-act cases; "
        f"nl_assertions: {total - unchecked} of {total} checked (expected or forbidden calls), "
        f"{unchecked} kept unchecked in setup",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
