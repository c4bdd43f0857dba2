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


# --- B. LLM and agent-tool vendor keys, `<VENDOR>_KEY=` env lines, a JSON `"key"` field ------

#: Each vendor's documented shape (prefix, length, characters), planted bare in text.
VENDOR_KEYS = [
    "gsk_" + "Ab3" * 17 + "x",  # Groq
    "xai-" + "Ab1" * 26 + "Z2",  # xAI
    "r8_" + "Ab3" * 12 + "x",  # Replicate
    "pplx-" + "Ab3" * 16,  # Perplexity
    "fw_" + "Ab3" * 8,  # Fireworks
    "nvapi-" + "A_b-" * 16,  # NVIDIA
    "lsv2_pt_" + "a1" * 16 + "_" + "b2" * 5,  # LangSmith personal
    "lsv2_sk_" + "c3" * 16 + "_" + "d4" * 5,  # LangSmith service
    "tvly-dev-" + "Fkp5" * 8,  # Tavily
    "pcsk_abc12_" + "Xy9" * 21,  # Pinecone
    "lin_api_" + "Ab3d" * 10,  # Linear
    "ATATT3" + "xF" * 90,  # Atlassian
    "PMAK-" + "0a" * 12 + "-" + "1b" * 17,  # Postman
    "sbp_" + "9f" * 20,  # Supabase
]


@pytest.mark.parametrize("key", VENDOR_KEYS)
def test_vendor_keys_are_redacted_bare_in_json_and_in_a_logged_result(tmp_path, key):
    for text in (f"The key you need is {key}.", json.dumps({"providers": {"x": {"key": key}}})):
        out, counts = R.redact(text)
        assert key not in out and counts == {"api_key": 1}, out
    log = _run_log(tmp_path, {"note": f"use {key} for it"})
    assert key not in log and "[REDACTED:api_key]" in log


@pytest.mark.parametrize(
    "text",
    ["MISTRAL_KEY=PlantedEnv01", "export OPENAI_KEY = 'PlantedEnv02'", "XAI_KEY=PlantedEnv03"],
)
def test_vendor_key_env_lines_are_redacted(text):
    out, counts = R.redact(text)
    assert "PlantedEnv" not in out and counts == {"password": 1}, out
    assert out.split("KEY")[0] == text.split("KEY")[0]  # the name stays


def test_a_json_key_field_holding_a_key_shaped_value_is_redacted():
    key = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    out, counts = R.redact(json.dumps({"key": key, "name": "x"}))
    assert key not in out and json.loads(out)["key"] == "[REDACTED:api_key]"
    out, _ = R.redact(json.dumps({"t": json.dumps({"key": key})}))  # escaped in a string
    assert key not in out


def test_vendor_key_look_alikes_stay():
    for text in (
        "fw_firmware_version_string_long",  # `fw_` starting a name, no digit
        "gsk_" + "a" * 20,  # too short for a Groq key
        "PUBLIC_KEY=abc123",
        "PRIMARY_KEY=id",
        "idempotency_key=abc123",
        "mistral_key=lower case is no env name",
        json.dumps({"idempotency_key": "abcdef0123456789abcdef01"}),
        json.dumps({"key": "abcdef0123456789abcdef0123456789abcd"}),  # a hex hash
        json.dumps({"key": "user_profile_settings_for_region"}),  # no digit, one case
    ):
        assert R.redact(text) == (text, {}), text
    assert not R.needs(json.dumps({"idempotency_key": "abcdef0123456789abcdef01", "n": 1}))


# --- C. pairs, tuples assigned to a credentials name, YAML lists, custom auth headers --------

#: `(text, secret)`: each a credential in a form the name grammar did not reach.
PAIRS = [
    ('[["password", "PlantedPair01"]]', "PlantedPair01"),
    ('data=[("password", "PlantedPair02")]', "PlantedPair02"),
    ("fields = [('db_token', 'PlantedPair03'), ('user', 'bob')]", "PlantedPair03"),
    ('creds = ("admin", "PlantedCreds04")', "PlantedCreds04"),
    ("credentials=('admin', 'PlantedCreds05')", "PlantedCreds05"),
    ('auth = ["admin", "PlantedCreds06"]', "PlantedCreds06"),
    ("password:\n  - PlantedYaml07\n  - PlantedYaml08\nuser: bob", "PlantedYaml0"),
    ("db:\n  api_key:\n    - PlantedYaml09 with words\n  host: x", "PlantedYaml09"),
    ('{"X-Custom-Auth": "PlantedHdr10"}', "PlantedHdr10"),
    ("X-Acme-Key: PlantedHdr11", "PlantedHdr11"),
    ("x-service-token: PlantedHdr12", "PlantedHdr12"),
    ('[["X-Custom-Auth", "PlantedHdr13"]]', "PlantedHdr13"),
]


@pytest.mark.parametrize(("text", "secret"), PAIRS)
def test_pairs_tuples_yaml_lists_and_custom_auth_headers_are_redacted(tmp_path, text, secret):
    for form in (text, json.dumps({"t": text}), json.dumps({"t": json.dumps({"t": text})})):
        out, counts = R.redact(form)
        assert secret not in out and counts, out
    log = _run_log(tmp_path, {"raw": text})  # in a tool call's arguments and its result
    assert secret not in log and "[REDACTED:" in log


def test_pair_tuple_yaml_and_header_look_alikes_keep_their_values():
    for text in (
        '[["passenger", "Ada"], ["seat", "12C"]]',
        '[["tokens", "1200"]]',
        "creds = load_credentials()",
        "items:\n  - apple\n  - pear",
        "X-Request-Id: 1234-abcd",
        "x-forwarded-for: 10.0.0.1",
        "a pre-authorized payment",
    ):
        assert R.redact(text) == (text, {}), text
    out, _ = R.redact("password:\n  - PlantedYaml14\nitems:\n  - apple")
    assert "PlantedYaml14" not in out and "- apple" in out  # the next key's list stays


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^[a-z0-9-]+$", "description": "the password"},
        {"anyOf": [{"type": "string", "minLength": 8}, {"type": "null"}]},
        {"type": "array", "items": {"type": "string"}},
    ],
    ids=["pattern", "any-of", "array"],
)
def test_a_parameter_schema_under_a_credential_name_is_kept(schema):
    spec = {"type": "object", "properties": {"password": schema, "user": {"type": "string"}}}
    for text in (json.dumps(spec), json.dumps({"tools": json.dumps(spec)})):
        assert redact.Redactor().redact(text) == (text, {})


def test_a_credential_object_with_a_type_that_is_no_schema_type_is_redacted():
    out, _ = redact.Redactor().redact('{"password": {"type": "plain", "value": "hunter3hunter3"}}')
    assert "hunter3hunter3" not in out
