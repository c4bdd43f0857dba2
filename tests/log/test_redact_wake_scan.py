"""Which texts wake a kind's regex: the planned scans answer as the plain trigger checks do.

A woken `redact` checked each kind's triggers with one substring scan each (~0.6 ms for a
4.5 KB request line); `_TriggerScan` plans them as `Redactor.needs` does. And `pass` followed
by a space wakes the password rule only where that rule can take it as a name (a separator,
a quote, `value`, a tag's `>`): harnesskit's own system prompt ("pass a value as ...") and
airline chats ("boarding pass is ready") woke a full scan of their lines in every run.
"""

from __future__ import annotations

import json
import random
import re

import pytest

import harnesskit as hk
from harnesskit.log import redact
from harnesskit.testing import reply


def _plain(kind: str, low: str, text: str) -> bool:
    """The check `_TriggerScan` stands for: each trigger and shape, one by one."""
    shapes = [re.compile(re.escape(a) + r) for a, r in redact._SHAPES.get(kind, ())]
    return (
        any(t in low for t in redact._TRIGGERS.get(kind, ()))
        or any(s.search(low) for s in shapes)
        or any(c in text for c in redact._CASED_TRIGGERS.get(kind, ()))
    )


def _corpus() -> list[str]:
    rng = random.Random(7)
    words = sorted({t for ts in redact._TRIGGERS.values() for t in ts} | {"pass", "x", " "})
    texts = ["", "plain words only", "пароль: x", "密码=1", "ASIA" + "A" * 16, "a:AAb"]
    for _ in range(3000):
        texts.append(
            "".join(rng.choice(words) + rng.choice(["", " ", "\n", "x"]) for _ in range(3))
        )
    return texts


@pytest.mark.parametrize("kind", sorted(redact._PATTERNS))
def test_the_planned_scan_answers_as_each_trigger_checked_alone(kind):
    scan = redact._wake(kind)
    if scan is None:
        pytest.skip(f"{kind} has no triggers: its regex always runs")
    for text in _corpus():
        assert scan(text.lower(), text) == _plain(kind, text.lower(), text), text


def test_a_scan_is_shared_by_copies_and_unpickled_redactors():
    import copy
    import pickle

    scan = redact._wake("password")
    assert pickle.loads(pickle.dumps(scan)) is scan and copy.deepcopy(scan) is scan


@pytest.mark.parametrize(
    "text",
    [
        'pass a value as {"$bind": "call_1#/id"}',
        "your boarding pass is ready at gate 4",
        "we will pass the request to an agent",
    ],
)
def test_english_pass_does_not_wake_the_scan(text):
    assert not redact.Redactor().needs(text)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("login bob pass : hunter2x", "hunter2x"),
        ("pass = hunter2x", "hunter2x"),
        ("pass, value: hunter2x", "hunter2x"),
        ('<pass type="x">hunter2xy</pass>', "hunter2xy"),
        ('{"pass" : "hunter2x"}', "hunter2x"),
    ],
)
def test_pass_as_a_name_still_wakes_it_and_is_redacted(text, secret):
    r = redact.Redactor()
    assert r.needs(text)
    out, counts = r.redact(text)
    assert secret not in out and counts


def test_a_run_with_the_default_system_prompt_redacts_nothing(tmp_path, monkeypatch):
    calls: list[str] = []
    original = redact.Redactor.redact

    def spy(self, text):
        calls.append(text[:60])
        return original(self, text)

    monkeypatch.setattr(redact.Redactor, "redact", spy)

    @hk.tool
    def lookup(ref: str) -> dict:
        """Look up a booking.

        Use for any booking question. Do not use to change it.

        Args:
            ref: the booking reference.

        Returns:
            The booking.
        """
        return {"ref": ref, "status": "confirmed"}

    model = hk.ScriptedModel([reply.tool_call("lookup", ref="ABC123"), "It is confirmed."])
    run = hk.Harness([lookup], model, log_dir=tmp_path).run("is ABC123 confirmed?")
    run.log.close()
    assert "pass a value" in run.harness.run_system_prompt  # the text that woke it
    assert calls == []
    assert json.loads((tmp_path / f"{run.state.run_id}.jsonl").read_text().splitlines()[0])
