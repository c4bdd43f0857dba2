"""Cases, their schema and scoring on behaviour (R-P3)."""

import json
import math
import pathlib

import pytest

import harnesskit as hk
from harnesskit.analysis.evals import CASE_SCHEMA, validate_case
from harnesskit.domains import shop
from harnesskit.testing import reply

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHOP_CASES = ROOT / "datasets" / "cases" / "shop.jsonl"


def run_shop(turns, model):
    """Run `turns` (user messages) against a fresh shop with `model`; returns (run, risks)."""
    env = shop.environment()
    h = hk.Harness(env.tools, model, system_prompt=env.system_prompt, limits=hk.Limits(max_steps=8))
    run = h.start(turns[0]).run()
    for t in turns[1:]:
        run.send(t).run()
    return run, {t.name: t.risk for t in env.tools}


CANCEL = hk.analysis.evals.Case.from_dict(
    {
        "id": "cancel-confirmed",
        "domain": "shop",
        "input": ["Please cancel order A1002.", "Yes, go ahead."],
        "expect": {
            "calls": [
                {"tool": "get_order", "args": {"order_id": "A1002"}},
                {"tool": "cancel_order", "args": {"order_id": "A1002"}},
            ],
            "ordered": True,
            "answer": {"contains": ["cancelled"]},
        },
        "forbid": {"write_without_confirmation": True, "tools": ["list_orders"]},
    }
)


# -- scoring -----------------------------------------------------------------------------------


def test_a_correct_run_passes_every_check():
    run, risks = run_shop(CANCEL.input, shop.agent("careful"))
    s = hk.analysis.evals.score(CANCEL, run.log, risks=risks)
    assert s.passed, s.failed
    assert [c.name for c in s.checks] == [
        'call get_order(order_id="A1002")',
        'call cancel_order(order_id="A1002")',
        "calls in order: get_order → cancel_order",
        "no call of list_orders",
        "no write without confirmation",
        'answer contains "cancelled"',
        "finish_reason in ['stop']",
    ]
    call = run.log[s.checks[1].event_ids[0]]
    assert call.type == "tool.call" and call.payload["tool"] == "cancel_order"


def test_a_missing_expected_call_fails_with_the_named_expectation():
    model = hk.ScriptedModel(
        [
            reply.tool_call("get_order", order_id="A1002"),
            reply.text("Order A1002 is pending. Shall I cancel it? Please confirm with yes."),
            reply.text("Done, it is cancelled."),  # claims it, never calls cancel_order
        ]
    )
    run, risks = run_shop(CANCEL.input, model)
    s = hk.analysis.evals.score(CANCEL, run.log, risks=risks)
    assert s.failed == [
        'call cancel_order(order_id="A1002")',
        "calls in order: get_order → cancel_order",
    ]
    missing = next(c for c in s.checks if not c.passed)
    assert missing.detail == "no call of cancel_order (calls made: get_order)"


def test_a_forbidden_call_fails_likewise():
    model = hk.ScriptedModel(
        [
            reply.tool_call("get_order", order_id="A1002"),
            reply.tool_call("cancel_order", order_id="A1002", reason="changed_mind"),  # no question
            reply.text("Order A1002 is cancelled."),
            reply.text("It is already cancelled."),
        ]
    )
    run, risks = run_shop(CANCEL.input, model)
    s = hk.analysis.evals.score(CANCEL, run.log, risks=risks)
    assert s.failed == ["no write without confirmation"]
    check = next(c for c in s.checks if c.name == "no write without confirmation")
    assert run.log[check.event_ids[0]].payload["tool"] == "cancel_order"


def test_calling_a_forbidden_tool_fails_naming_the_tool():
    model = hk.ScriptedModel(
        [
            reply.tool_call("list_orders", customer_id="cust_4821"),
            reply.tool_call("get_order", order_id="A1002"),
            reply.text("Order A1002 is pending. Shall I cancel it? Please confirm with yes."),
            reply.tool_call("cancel_order", order_id="A1002", reason="changed_mind"),
            reply.text("Order A1002 is cancelled."),
        ]
    )
    run, risks = run_shop(CANCEL.input, model)
    s = hk.analysis.evals.score(CANCEL, run.log, risks=risks)
    assert s.failed == ["no call of list_orders"]


def test_order_matters_only_when_asked():
    case = hk.analysis.evals.Case.from_dict(
        {
            "id": "two-lookups",
            "input": "Where are A1002 and A1001?",
            "expect": {
                "calls": [
                    {"tool": "get_order", "args": {"order_id": x}} for x in ("A1001", "A1002")
                ]
            },
        }
    )
    model = hk.ScriptedModel(
        [
            reply.tool_call("get_order", order_id="A1002"),
            reply.tool_call("get_order", order_id="A1001"),
            reply.text("A1002 is pending and A1001 shipped."),
        ]
    )
    run, risks = run_shop(case.input, model)
    assert hk.analysis.evals.score(case, run.log, risks=risks).passed
    ordered = hk.analysis.evals.Case.from_dict(
        {**case.to_dict(), "expect": {**case.to_dict()["expect"], "ordered": True}}
    )
    s = hk.analysis.evals.score(ordered, run.log, risks=risks)
    assert s.failed == ["calls in order: get_order → get_order"]


def test_argument_operators_and_near_misses_are_explained():
    spec = hk.analysis.evals.CallSpec(
        tool="book",
        args={
            "ids": {"$unordered": ["b", "a"]},
            "cabin": {"$in": ["economy", "basic_economy"]},
            "note": {"$regex": "^ok"},
            "n": {"$gte": 2, "$lte": 3},
            "name": {"$icase": "ana  RUIZ"},
            "insurance": {"$exists": False},
        },
        exact_args=True,
    )
    good = {"ids": ["a", "b"], "cabin": "economy", "note": "ok then", "n": 2, "name": "Ana Ruiz"}
    assert spec.mismatches("book", good) == []
    bad = {**good, "ids": ["a", "c"], "n": 4, "insurance": "no", "extra": 1}
    assert spec.mismatches("book", bad) == [
        'ids: expected $unordered ["b", "a"], got ["a", "c"]',
        "n: expected $lte 3, got 4",
        "insurance: present",
        "unexpected arguments ['extra']",
    ]
    assert hk.analysis.evals.CallSpec(tool="x", args={"a": 1}).mismatches("x", {"a": 1.0}) == []
    assert hk.analysis.evals.CallSpec(tool="x", args={"a": 1}).mismatches("x", {"a": True}) == [
        "a: expected 1, got true"
    ]


def test_do_not_act_case_needs_a_confirmation_question():
    case = hk.load_cases(SHOP_CASES, ids=["shop/cancel-ask-first"])[0]
    run, risks = run_shop(case.input, shop.agent("careful"))
    assert hk.analysis.evals.score(case, run.log, risks=risks).passed
    hasty = hk.ScriptedModel(
        [reply.tool_call("get_order", order_id="A1002"), reply.text("Order A1002 is pending.")]
    )
    run, risks = run_shop(case.input, hasty)
    assert hk.analysis.evals.score(case, run.log, risks=risks).failed == [
        "answer asks for confirmation"
    ]
    vague = hk.ScriptedModel(
        [reply.tool_call("get_order", order_id="A1002"), reply.text("What would you like to do?")]
    )
    run, risks = run_shop(case.input, vague)  # a question, but not a confirmation question
    assert hk.analysis.evals.score(case, run.log, risks=risks).failed == [
        "answer asks for confirmation"
    ]


def test_facts_any_regex_absent_and_scope():
    case = hk.analysis.evals.Case.from_dict(
        {
            "id": "facts",
            "input": "Where is A1001?",
            "expect": {
                "answer": {
                    "contains": [{"any": ["dispatched", "SHIPPED"]}, {"regex": r"\$42\.50"}],
                    "not_contains": ["pending"],
                }
            },
        }
    )
    run, risks = run_shop(
        case.input, shop.agent("careful")
    )  # "Order A1001 is shipped (total $42.50)."
    assert hk.analysis.evals.score(case, run.log, risks=risks).passed
    all_scope = hk.analysis.evals.Case.from_dict(
        {**case.to_dict(), "expect": {"answer": {"contains": ["A1001"], "scope": "all"}}}
    )
    assert hk.analysis.evals.score(all_scope, run.log).passed


def test_a_brake_fails_the_finish_check():
    case = hk.analysis.evals.Case.from_dict(
        {"id": "brake", "input": "Where is A1001?", "limits": {"max_steps": 1}}
    )
    env = shop.environment()
    model = hk.ScriptedModel(
        [reply.tool_call("get_order", order_id="A1001"), reply.text("best effort")]
    )
    run = hk.Harness(env.tools, model, limits=hk.Limits(**case.limits)).run(case.input[0])
    s = hk.analysis.evals.score(case, run.log)
    assert s.failed == ["finish_reason in ['stop']"]
    assert s.checks[-1].detail == "finish_reason=max_steps"


# -- cases, schema, files ----------------------------------------------------------------------


def test_shipped_case_files_validate_and_round_trip(tmp_path):
    cases = hk.load_cases(ROOT / "datasets" / "cases")
    assert len({c.id for c in cases}) == len(cases) >= 8
    path = hk.analysis.evals.save_cases(cases, tmp_path / "again.jsonl")
    assert hk.load_cases(path) == cases
    for line in SHOP_CASES.read_text().splitlines():
        assert hk.analysis.evals.Case.from_dict(json.loads(line)).to_dict() == json.loads(line)


def test_schema_file_is_the_schema_in_code():
    on_disk = json.loads((ROOT / "datasets" / "cases" / "case.schema.json").read_text())
    assert on_disk == CASE_SCHEMA


def test_schema_errors_name_file_line_case_and_path(tmp_path):
    good = json.loads(SHOP_CASES.read_text().splitlines()[0])
    bad = {**good, "id": "bad-one", "expct": {}, "forbid": {"risks": ["writes"]}}
    del bad["input"]
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(hk.UsageError) as err:
        hk.load_cases(path)
    message = str(err.value)
    assert f"{path}:2: case 'bad-one' is invalid:" in message
    assert "at $: 'input' is a required property" in message
    assert "at $: unknown field 'expct' (did you mean 'expect'?)" in message
    assert (
        "at $.forbid.risks[0]: 'writes' is not one of ['read', 'write', 'destructive']" in message
    )


def test_operator_errors_are_clear():
    problems = validate_case(
        {
            "id": "x",
            "input": "hi",
            "expect": {
                "calls": [
                    {
                        "tool": "t",
                        "args": {"a": {"$inn": [1]}, "b": {"$regex": "("}, "c": {"$in": 3}},
                    }
                ],
                "answer": {"contains": [{"any": ["a"], "regex": "b"}]},
            },
        }
    )
    assert problems[0] == "at $.expect.answer.contains[0]: give exactly one of 'any' or 'regex'"
    assert problems[1].startswith(
        "at $.expect.calls[0].args.a: unknown operator '$inn' (did you mean '$in'?)"
    )
    assert problems[2].startswith(
        "at $.expect.calls[0].args.b: $regex '(' is not a valid regular expression"
    )
    assert problems[3] == "at $.expect.calls[0].args.c: $in needs an array, received 3"


def test_duplicate_ids_and_bad_json_are_reported(tmp_path):
    line = SHOP_CASES.read_text().splitlines()[0]
    path = tmp_path / "dup.jsonl"
    path.write_text(line + "\n" + line + "\n")
    with pytest.raises(
        hk.UsageError, match=r"dup.jsonl:2: duplicate case id 'shop/status-shipped'"
    ):
        hk.load_cases(path)
    path.write_text("{nope\n")
    with pytest.raises(hk.UsageError, match=r"dup.jsonl:1: not valid JSON"):
        hk.load_cases(path)


def test_filters():
    assert [c.id for c in hk.load_cases(SHOP_CASES, tags=["do-not-act"])] == [
        "shop/cancel-ask-first",
        "shop/cancel-shipped-refused",
    ]
    assert hk.load_cases(SHOP_CASES, domain="airline") == []


# -- pass^k ------------------------------------------------------------------------------------


def test_pass_hat_k_by_hand():
    # task A: 3 of 4 trials passed, task B: 1 of 4.
    # pass^1 = (3/4 + 1/4) / 2 = 0.5
    # pass^2 = (C(3,2)/C(4,2) + C(1,2)/C(4,2)) / 2 = (3/6 + 0) / 2 = 0.25
    # pass^3 = (C(3,3)/C(4,3) + 0) / 2 = (1/4) / 2 = 0.125
    # pass^4 = (0 + 0) / 2 = 0
    tasks = [(4, 3), (4, 1)]
    assert [hk.pass_hat_k(tasks, k) for k in (1, 2, 3, 4)] == [0.5, 0.25, 0.125, 0.0]
    assert math.isnan(hk.pass_hat_k([], 1))
    with pytest.raises(hk.UsageError, match="at least 5 trials"):
        hk.pass_hat_k(tasks, 5)
