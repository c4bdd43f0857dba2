"""Less common public calls with wrong-typed arguments raise `UsageError`, not raw errors."""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.errors import BrakeTripped
from harnesskit.testing import reply


def _run():
    return hk.Harness([], hk.ScriptedModel([reply.text("a")])).run("hi")


@pytest.mark.parametrize(
    ("patterns", "said"),
    [
        ({"x": "("}, "is not a valid regex"),
        ({"x": 5}, "takes \\(kind, regex\\) pairs"),
        (5, "takes \\(kind, regex\\) pairs"),
        ([("x",)], "takes \\(kind, regex\\) pairs"),
    ],
)
def test_transport_audit_patterns_are_checked(patterns, said):
    with pytest.raises(hk.UsageError, match=said):
        hk.transport_audit(_run(), patterns=patterns)


def test_transport_audit_with_good_patterns_still_works():
    assert hk.transport_audit(_run(), patterns={"order": r"ORD-\d+"}) is not None


@pytest.mark.parametrize("harness", [None, 5, "h"])
def test_replay_needs_a_harness(harness):
    with pytest.raises(hk.UsageError, match=r"replay\(log, harness\) needs the Harness"):
        hk.replay(_run().log, harness)


def test_register_domain_needs_a_domain():
    with pytest.raises(hk.UsageError, match="register_domain takes a Domain"):
        hk.register_domain(5)


def test_brake_tripped_needs_a_number():
    with pytest.raises(hk.UsageError, match="BrakeTripped value must be a number"):
        BrakeTripped("max_steps", value="a", limit=3, unit="steps")
    assert BrakeTripped("max_steps", value=3, limit=3, unit="steps").value == 3


@pytest.mark.parametrize("dry_run", ["yes", "no", 1, None])
def test_gate_dry_run_must_be_a_bool(dry_run):
    with pytest.raises(hk.UsageError, match=r"Gate\(dry_run=\.\.\.\) takes True or False"):
        hk.Gate(dry_run=dry_run)
