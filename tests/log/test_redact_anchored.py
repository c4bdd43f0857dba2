"""The redactor's fast paths: the anchored password scan finds exactly what the pattern's own
`subn` finds; the pre-check wakes exactly when a trigger is in the text."""

from hypothesis import given, settings
from hypothesis import strategies as st

from harnesskit.log import redact

PIECES = [
    "password", "Passwd", "PWD", "secret", "api_key", "apiKey", "token", "_token", "tokens",
    "x", "aws_secret_access_key", "credential", ":", "=", '"', "'", '\\"', "  ", "abcd1234",
    "hunter22", "[REDACTED:password]", ",", "}", "İ", "é", "\n", "prompt_tokens",
    "accessToken", "Token", "sessionToken", "maxTokens", '\\\\\\"', "\\\\", "a",
]  # fmt: skip
PATTERN = next(p for k, p, _ in redact.Redactor()._compiled if k == "password")


def _plain_check(r: redact.Redactor, text: str) -> bool:
    """The pre-check's definition: a trigger is in the lower-cased text or a shape matches it,
    or a cased trigger is in the text itself."""
    low = text.lower()
    return (
        any(t in low for t in r._triggers)
        or any(s.search(low) for s in r._shapes)
        or any(c in text for c in r._cased)
    )


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
    "@", "://", "x", "é", "tokens", "prompt_tokens", "akia", "AKI", "asia", "aiz", "a", "eyJ",
    "ey", "xo", "hf", "rk", "bear", "er", "github", "_pat_", "credential", "secret", "pw", "d",
    "z", "j", "b", "v", "w", "/", "İ", "ghs_", "phrase",
    "+", "1", "4", "9", "(", "phone", "Phone", "tel", "tel:", "fax", "call", " me", " us",
    "text", "whatsapp", "sms", "mobile", "authorization", "Token", "-----BEGIN PGP ",
    "cookie", "Set-", "-u", "--auth", "gl", "pat-", "npm_", "pypi-", "whsec_", "ya29.", "1//0",
    "xapp-", "555", "0134", "-", "2024-05-20", "(415) ", "+4", "+0", "4155550134",
    "pass", "passenger", "sg.", "msg", "glsa_", "-p", "x-auth", "token>", "_v1_", "?key=", "&key",
    "subscription-key", "hooks.slack.com/", "/api/webhooks/", "g", "p", "c", "hvs.", "gocspx-",
]  # fmt: skip
KIND_SETS = [
    redact.DEFAULT_KINDS,
    ("password",),
    (*redact.DEFAULT_KINDS, "email"),
    ("api_key", "jwt"),
    ("bearer", "url_credentials", "private_key"),
    ("phone",),
    (*redact.DEFAULT_KINDS, "email", "phone"),
    ("cookie", "basic_auth"),
    ("header",),
    ("password", "header", "jwt"),
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TRIGGER_PIECES), max_size=20).map("".join))
def test_the_pre_check_wakes_exactly_when_a_trigger_is_in_the_text(text):
    for kinds in KIND_SETS:
        r = redact.Redactor(kinds=kinds)
        assert r.needs(text) == _plain_check(r, text)


def test_the_pre_check_finds_every_trigger_and_nothing_one_character_off():
    # the grouped checks (a regex per shared head, a rare character first) against the plain
    # definition: each trigger alone, inside text, and each with one character dropped
    filler = '{"step":3,"prompt_tokens":12,"token_estimate":9,"flight":"HAT1"} '
    for kinds in KIND_SETS:
        r = redact.Redactor(kinds=kinds)
        for t in r._triggers:
            variants = [t, t.upper(), filler + t + filler, filler + t.upper()]
            variants += [t[:i] + t[i + 1 :] for i in range(len(t))]
            variants += [filler + t[:i] + "|" + t[i:] + filler for i in range(1, len(t))]
            for text in variants:
                assert r.needs(text) == _plain_check(r, text), (kinds, text)
            assert r.needs(filler + t + filler)


def test_a_copied_or_unpickled_redactor_equals_and_checks_as_the_original():
    import copy
    import pickle

    r = redact.Redactor(kinds=("api_key", "password"))
    texts = ["sk-" + "a" * 20, "token: x", "plain words", "ghp_" + "b" * 30]
    for other in (copy.deepcopy(r), pickle.loads(pickle.dumps(r))):
        assert other == r
        assert [other.needs(t) for t in texts] == [r.needs(t) for t in texts]
    assert redact.Redactor(kinds=("api_key",)) != r


def _trigger_fragments() -> list[str]:
    # every trigger of every kind cut at every place, so that texts join triggers across pieces,
    # overlap them (`tokentoken:`, `akakia`, `ppasswd`) and miss them by one character
    out: set[str] = set()
    r = redact.Redactor(kinds=(*redact.DEFAULT_KINDS, "email"))
    for t in (*r._triggers, *r._cased):
        for i in range(len(t) + 1):
            out.update((t[:i], t[i:], t[:i].upper()))
    return sorted(x for x in out if x)


FRAGMENTS = _trigger_fragments() + ["k", "h", "w", "x", "v", "j", "z", "b", "@", "/", "K", "İ"]
FRAGMENTS += ["+", "9", "-", "1", "415", "555", "0134", "12345", "(", ") ", "a", "_"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join))
def test_the_anchored_pre_check_wakes_exactly_when_a_trigger_is_in_the_text(text):
    # the checks from a trigger's rarest character (a test for the character, then one regex
    # looking behind and ahead of it) against the plain definition
    for kinds in KIND_SETS:
        r = redact.Redactor(kinds=kinds)
        assert r.needs(text) == _plain_check(r, text), (kinds, text)


def test_every_trigger_is_checked_once_from_its_rarest_character():
    r = redact.Redactor(kinds=(*redact.DEFAULT_KINDS, "email"))
    plain, searches, gated, foreign = redact._trigger_checks(r._triggers)
    anchors = [c for c, _, _ in gated]
    assert anchors == [c for c in redact._RARE_CHARS if c in anchors]  # rarest first, once each
    assert foreign is not None  # `пароль`, `密码`, the invisible characters
    for t in r._triggers:
        found = [c for c, needle, search in gated if (search or needle.__eq__)(t)]
        found += [t] * (t in plain) + [h for h, s in searches if s(t)]
        found += ["foreign"] * (not t.isascii() and foreign(t) is not None)
        assert len(found) == 1, (t, found)


WAKE_SAMPLES = [
    '{"accessToken": "abcd1234efgh5678ijkl"}',
    '{"headers": {"Authorization": "Token abcd1234efgh5678"}}',
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\nxyz",
    '{"password": "ab\\"cdefghijk"}',
    "Call me at +1 (415) 555-0132",
    "+14155550132",
    "Phone: 415-555-0132",
    "call me at (415) 555-0132",  # not a phone form here: no "phone", no +1
]


def test_each_new_form_wakes_the_pre_check_where_its_pattern_would_act():
    for kinds in KIND_SETS:
        r = redact.Redactor(kinds=kinds)
        for text in WAKE_SAMPLES:
            acts = bool(r.redact(text)[1]) or bool(r.personal(text))
            if acts:
                assert r.needs(text), (kinds, text)
            assert r.needs(text) == _plain_check(r, text)
