"""Credential families the redactor missed (R-S1): structured values, vendor keys, pairs.

Each family has several members, checked on the text alone and through a real log file
written by a run with `log_dir` (a tool call's arguments are a nested object in its event
line; a tool's result is JSON-escaped text inside a string).
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.log import redact
from harnesskit.testing import reply

R = redact.Redactor()


@hk.tool(risk="read")
def configure(settings: dict) -> dict:
    """Apply settings.

    Use when asked to configure. Do not use otherwise.

    Args:
        settings: the settings to apply.

    Returns:
        The settings echoed back.
    """
    return {"ok": True, "echo": settings}


def _run_log(tmp_path, settings: dict) -> str:
    """The text of the log a run writes for one `configure` call with `settings`."""
    model = hk.ScriptedModel([reply.tool_call("configure", settings=settings), reply.text("ok")])
    hk.Harness([configure], model, log_dir=tmp_path).run("configure it")
    text = "".join(f.read_text("utf-8") for f in tmp_path.rglob("*.jsonl"))
    for line in text.splitlines():
        json.loads(line)  # every line stays valid JSON
    return text


# --- A. a credential whose value is a list or an object --------------------------------------

#: `(value, secrets)`: the value under a credential's name, and the strings in it that go.
CONTAINERS = [
    ({"password": ["PlantedList01"]}, ["PlantedList01"]),
    ({"password": {"value": "PlantedObj02"}}, ["PlantedObj02"]),
    ({"api_key": ["PlantedKeyA03", "PlantedKeyB03"]}, ["PlantedKeyA03", "PlantedKeyB03"]),
    ({"db": {"secret": {"inner": ["PlantedDeep04", {"v": "PlantedDeep05"}]}}}, ["PlantedDeep04", "PlantedDeep05"]),
    ({"token": [[1, "PlantedNest06"], {"pin": 424242}]}, ["PlantedNest06", "424242"]),
    ({"credentials": {"user": "Planted\"Quote07", "pw": "x"}}, ["Planted\\\"Quote07"]),
]  # fmt: skip


@pytest.mark.parametrize(("value", "secrets"), CONTAINERS)
def test_every_item_of_a_list_or_object_under_a_credential_name_is_redacted(value, secrets):
    text = json.dumps({"args": value})
    # as a JSON line, as escaped text inside a string, and escaped twice
    for form in (text, json.dumps({"t": text}), json.dumps({"t": json.dumps({"t": text})})):
        out, counts = R.redact(form)
        assert counts.get("password"), form
        for secret in secrets:
            assert secret not in out, out
        decoded = json.loads(out)
        while isinstance(decoded, dict) and "t" in decoded:  # unwrap: still JSON inside
            decoded = json.loads(decoded["t"])
        assert set(decoded["args"]) == set(value)  # the names stay, the shape is kept


@pytest.mark.parametrize(("value", "secrets"), CONTAINERS[:4])
def test_a_list_or_object_credential_in_tool_arguments_never_reaches_the_log(
    tmp_path, value, secrets
):
    text = _run_log(tmp_path, value)
    assert "[REDACTED:password]" in text
    for secret in secrets:
        assert secret not in text


def test_container_redaction_keeps_keys_literals_and_the_rest_of_the_line():
    text = '{"password": {"enabled": true, "hint": null, "v": ["x1"]}, "user": "bob", "n": [1]}'
    out, _ = R.redact(text)
    assert json.loads(out) == {
        "password": {"enabled": True, "hint": None, "v": ["[REDACTED:password]"]},
        "user": "bob",
        "n": [1],
    }
    # a Python repr and a cut-off list lose their items too
    assert "Planted" not in R.redact("{'password': ['Planted08', 'it\\'s']}")[0]
    assert "Planted09" not in R.redact('{"password": ["Planted09')[0]
    # look-alikes: names that are not credentials keep their lists
    for text in ('{"tokens": [1, 2]}', '{"passenger": ["a"]}', '{"keys": ["a", "b"]}'):
        assert R.redact(text) == (text, {})
