"""Schema validation messages about a credential argument, through real log files (R-S1, R-E1).

`at $.password: expected a string matching ^[a-z0-9-]+$, received "..."` names the argument
by its JSON path, not as a `password: value` line: the redactor took the words after the
colon as the password and stopped at the pattern's `]`, leaving `[REDACTED:password]]+$`.
The path and the schema's pattern now stay readable, and the value the model sent (the
`received` value and the instance jsonschema quotes) is what is redacted.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.log import redact
from harnesskit.testing import reply

PATTERN = "^[a-z0-9-]+$"
SECRET = "Hunter 2 Secret!"


def login_tool(schema):
    @hk.tool(risk="write", parameters=schema)
    def login(user: str, password: str) -> str:
        """Log a user in.

        Args:
            user: the user.
            password: the password.
        """
        return "in"

    return login


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string", "pattern": PATTERN},
        {"type": "string", "pattern": "^[A-Za-z0-9_]{8,}$"},
        {"type": "string", "maxLength": 4},
        {"type": "string", "enum": ["alpha-1", "beta-2"]},
    ],
    ids=["pattern", "pattern with braces", "maxLength", "enum"],
)
def test_a_schema_message_keeps_its_path_and_schema_and_loses_the_secret(tmp_path, prop):
    schema = {
        "type": "object",
        "properties": {"user": {"type": "string"}, "password": prop},
        "required": ["user", "password"],
    }
    turns = [reply.tool_call("login", user="bob", password=SECRET), reply.text("sorry")]
    h = hk.Harness(tools=[login_tool(schema)], model=hk.ScriptedModel(turns), log_dir=tmp_path)
    run = h.start("log me in", run_id="schema").run()
    exact = json.loads(run.log.exact(run.log.last("tool.result")).payload["content"])["message"]
    assert exact.startswith("at $.password: expected ")  # what the model saw, in clear
    text = (tmp_path / "schema.jsonl").read_text()
    assert SECRET not in text
    logged = hk.EventLog.read(tmp_path / "schema.jsonl").last("tool.result")
    message = json.loads(logged.payload["content"])["message"]
    expected = exact.split(", received ")[0]
    assert message.startswith(expected + ', received "[REDACTED:password]" ([REDACTED:'), message
    assert "]]" not in message
    assert logged.summary.startswith("invalid_argument: at $.password: expected ")


@pytest.mark.parametrize(
    "text",
    [
        "at $.password: expected a string matching ^[a-z0-9-]+$, received 3 (3 is not of type)",
        "at $.user.api_key: expected type string, received null (None is not of type 'string')",
        "argument /password: $bind 'call_1#/password' does not resolve: no such member",
        'argument /auth/token: a binding is exactly {"$bind": "<source>#<pointer>"}',
    ],
)
def test_a_path_to_a_credential_is_not_a_credential_line(text):
    assert redact.Redactor().redact(text) == (text, {})


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password: expected-but-real-secret", "expected-but-real-secret"),
        ("spring.datasource.password: s3cr3t-value", "s3cr3t-value"),
        ('{"$.password": "s3cr3t-value"}', "s3cr3t-value"),
        ("db_password: correct horse battery staple", "correct horse battery staple"),
        ("at $.password: expected a string, received \"s3cr3t-value\"", "s3cr3t-value"),
        ("at $.password: expected type integer, received \"s3cr3t-value\" ('s3cr3t-value' is "
         "not of type 'integer')", "s3cr3t-value"),
    ],
)  # fmt: skip
def test_real_secrets_near_such_paths_are_still_redacted(text, secret):
    redacted, counts = redact.Redactor().redact(text)
    assert secret not in redacted and counts == {"password": counts["password"]}
