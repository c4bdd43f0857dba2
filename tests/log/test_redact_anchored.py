"""The anchored password scan finds exactly what the pattern's own `subn` finds."""

from hypothesis import given, settings
from hypothesis import strategies as st

from harnesskit.log import redact

PIECES = [
    "password", "Passwd", "PWD", "secret", "api_key", "apiKey", "token", "_token", "tokens",
    "x", "aws_secret_access_key", "credential", ":", "=", '"', "'", '\\"', "  ", "abcd1234",
    "hunter22", "[REDACTED:password]", ",", "}", "İ", "é", "\n", "prompt_tokens",
]  # fmt: skip
PATTERN = next(p for k, p, _ in redact.Redactor()._compiled if k == "password")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_anchored_scan_equals_subn(text):
    expected = PATTERN.subn(lambda m: m.group(1) + "[R]", text)
    got = redact._anchored_subn(PATTERN, text, text.lower(), redact._ANCHORS["password"], "[R]")
    assert got == expected


def test_a_key_named_with_a_prefix_keeps_its_name_and_loses_its_value():
    line = '{"aws_secret_access_key": "AbCdEfGh12345678", "prompt_tokens": 12}'
    out, counts = redact.Redactor().redact(line)
    assert out == '{"aws_secret_access_key": "[REDACTED:password]", "prompt_tokens": 12}'
    assert counts == {"password": 1}


TRIGGER_PIECES = [
    "token", "TOKEN", "pass", "Passw", "passcode", "private", "private key", "private_key",
    "sk", "-", "_", "gh", "o", "p", "api", "key", ":", "=", '"', "'", "\\", " ", "\t", "\n",
    "@", "://", "x", "é", "tokens", "prompt_tokens",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TRIGGER_PIECES), max_size=20).map("".join))
def test_the_pre_check_wakes_exactly_when_a_trigger_is_in_the_text(text):
    for kinds in (redact.DEFAULT_KINDS, ("password",), (*redact.DEFAULT_KINDS, "email")):
        r = redact.Redactor(kinds=kinds)
        assert r.needs(text) == any(t in text.lower() for t in r._triggers)
