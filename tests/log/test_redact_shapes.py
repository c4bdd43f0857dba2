"""Credentials the fresh-user test found in clear, and redaction that kept JSON lines whole.

Quoted values are redacted up to their real closing quote (JSON escapes honoured, at escaping
depths 0-4); GCP service-account keys, PGP blocks, cut-off PEM keys, camelCase tokens and any
`Authorization` value are found; a rewrite never changes a JSON line's structure (keys and
values are redacted, the line stays valid JSON, the run goes on); phone numbers are marked
as personal data. Every run writes real files, which are grepped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import harnesskit as hk
from harnesskit.log import redact
from harnesskit.testing import reply

PASSWORDS = [
    'ab"cdefghijk',
    'abcdef"ghijkl',
    "p'ssw0rd-secret",
    "ab\\cdefghijk",
    'pa\'ss"wo\\rd\\"x',
    "tail-backslash\\",
    'x" , "y": "z',  # looks like JSON structure inside the value
    "two words, and more",
]


def _files(root: Path) -> str:
    return "\n".join(
        p.read_bytes().decode(errors="replace") for p in root.rglob("*") if p.is_file()
    )


@pytest.mark.parametrize("password", PASSWORDS)
def test_a_quoted_password_is_redacted_to_its_real_closing_quote(password):
    r = redact.Redactor()
    core = password.strip("\\").split('"')[-1][-5:] or password
    once = json.dumps({"password": password, "n": 1})
    twice = json.dumps({"content": once})
    thrice = json.dumps({"content": twice})
    for line in (once, twice, thrice):
        out, counts = r.redact(line)
        assert counts.get("password") == 1, line
        assert core not in out
        assert json.loads(out).keys() == json.loads(line).keys()
    assert json.loads(r.redact(once)[0]) == {"password": "[REDACTED:password]", "n": 1}
    inner = json.loads(json.loads(json.loads(r.redact(thrice)[0])["content"])["content"])
    assert inner == {"password": "[REDACTED:password]", "n": 1}


def test_quoted_passwords_in_prose_and_arguments_never_reach_the_log_or_the_ledger(tmp_path):
    @hk.tool(risk="write")
    def save_login(user: str, password: str) -> str:
        """Save a login.

        Args:
            user: the user name.
            password: the password.
        """
        return "saved"

    model = hk.ScriptedModel([
        reply.tool_call("save_login", user="bob", password='ab"LEAKQ1\\xyz'),
        reply.text('done: password="cd\'LEAKQ2 \\"x"'),
    ])  # fmt: skip
    h = hk.Harness([save_login], model, log_dir=tmp_path, gate=hk.Gate(confirm=hk.allow_all))
    run = h.run('my password: "pa\'ss-LEAKQ3-123"')
    assert run.finish_reason == "stop"
    files = _files(tmp_path)
    assert Path(str(run.log.path) + ".idem").is_file()
    for leak in ("LEAKQ1", "LEAKQ2", "LEAKQ3"):
        assert leak not in files
    for line in Path(run.log.path).read_text().splitlines():
        json.loads(line)


GCP_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7GCPLEAKBODY"


def test_a_service_account_key_file_in_a_tool_result_is_not_written(tmp_path):
    @hk.tool
    def read_config(name: str) -> dict:
        """Read a config file.

        Args:
            name: the file name.
        """
        return {
            "type": "service_account",
            "private_key_id": "0123abcd",
            "private_key": f"-----BEGIN PRIVATE KEY-----\n{GCP_BODY}\n-----END PRIVATE KEY-----\n",
            "client_email": "svc@proj.iam.gserviceaccount.com",
        }

    model = hk.ScriptedModel([reply.tool_call("read_config", name="sa.json"), "done"])
    run = hk.Harness([read_config], model, log_dir=tmp_path).run("show the config")
    text = _files(tmp_path)
    assert "GCPLEAKBODY" not in text and "[REDACTED:private_key]" in text
    content = json.loads(run.log.of_type("tool.result")[0].content)
    assert content["client_email"] == "svc@proj.iam.gserviceaccount.com"  # the rest is kept


KEY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7SHAPELEAK"


@pytest.mark.parametrize(
    "value",
    [
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{KEY}\n-----END PGP PRIVATE KEY BLOCK-----",
        f"-----BEGIN RSA PRIVATE KEY-----\n{KEY}",  # cut off: no END line
        f"-----BEGIN ENCRYPTED PRIVATE KEY-----\r\n{KEY}\r\n-----END ENCRYPTED PRIVATE KEY-----",
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY}\n-----END OPENSSH PRIVATE KEY-----\n",
        f"prefix -----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n{KEY}",
    ],
)
def test_private_key_shapes_are_redacted_whole(value):
    r = redact.Redactor()
    for text in (
        value,
        json.dumps({"t": value}),
        json.dumps({"private_key": value}),
        json.dumps({"c": json.dumps({"secret": value})}),
    ):
        out, counts = r.redact(text)
        assert "SHAPELEAK" not in out and counts, text
        if text.startswith("{"):
            json.loads(out)
    # a cut-off key in a value ends at that value: the next one is kept
    out, _ = r.redact(json.dumps({"k": f"-----BEGIN PRIVATE KEY-----\n{KEY}", "next": "kept"}))
    assert json.loads(out) == {"k": "[REDACTED:private_key]", "next": "kept"}


@pytest.mark.parametrize(
    "name",
    ["accessToken", "refreshToken", "sessionToken", "idToken", "access_token",
     "refresh_token", "client_secret", "SessionToken"],
)  # fmt: skip
def test_token_and_secret_names_in_any_case_style(name):
    line = json.dumps({name: "abcd1234efgh5678ijkl", "prompt_tokens": 12, "maxTokens": 3000})
    out, counts = redact.Redactor().redact(line)
    assert json.loads(out) == {
        name: "[REDACTED:password]", "prompt_tokens": 12, "maxTokens": 3000
    }  # fmt: skip
    assert counts == {"password": 1}


@pytest.mark.parametrize(
    "value",
    [
        "Token abcd1234efgh5678",
        "Basic dXNlcjpwYXNzd29yZA==",
        "Bearer abcd1234efgh5678",
        'Digest username="Mufasa", realm="x", response="6629fae49393a05397450978507c4ef1"',
        "AWS4-HMAC-SHA256 Credential=AKID/20240101, Signature=fe5f80f77d5fa3beca038a248ff027",
        "abcd1234efgh5678",
    ],
)
def test_any_authorization_value_is_redacted_and_the_header_name_kept(value):
    r = redact.Redactor()
    secret = value.split()[-1][-8:]
    line = json.dumps({"headers": {"Authorization": value, "Accept": "*/*"}})
    out, counts = r.redact(line)
    assert json.loads(out) == {"headers": {"Authorization": "[REDACTED:bearer]", "Accept": "*/*"}}
    assert counts == {"bearer": 1}
    raw, _ = r.redact(f"GET / HTTP/1.1\nAuthorization: {value}\nAccept: */*")
    assert secret not in raw and raw.endswith("\nAccept: */*")
    assert raw.startswith("GET / HTTP/1.1\nAuthorization: [REDACTED:bearer]")


def test_authorization_words_that_are_not_a_header_value_stay():
    r = redact.Redactor()
    for text in (
        json.dumps({"authorization_status": "pending", "authorized": True}),
        "the authorization flow",
        json.dumps({"authorization": "ok"}),  # too short to be a credential
    ):
        assert r.redact(text) == (text, {})


def test_a_basic_auth_tool_argument_keeps_the_log_valid_and_the_run_going(tmp_path):
    @hk.tool
    def call_api(url: str, headers: dict) -> dict:
        """Call an API.

        Args:
            url: the URL.
            headers: the request headers.
        """
        return {"status": 200, "echo": headers}

    headers = {"Authorization": "Basic dXNlcjpCQVNJQ0xFQUs=", "X-Trace": "t1"}
    model = hk.ScriptedModel([reply.tool_call("call_api", url="https://x", headers=headers), "ok"])
    run = hk.Harness([call_api], model, log_dir=tmp_path).run("go")
    assert run.finish_reason == "stop"
    text = Path(run.log.path).read_text()
    assert "dXNlcjpCQVNJQ0xFQUs" not in text
    lines = [json.loads(x) for x in text.splitlines()]
    calls = [x for x in lines if x["type"] == "tool.call"]
    assert calls[0]["payload"]["arguments"]["headers"] == {
        "Authorization": "[REDACTED:bearer]", "X-Trace": "t1"
    }  # fmt: skip
    assert len(hk.EventLog.read(run.log.path).events) == len(lines)


def test_a_match_across_two_strings_keeps_the_line_whole():
    r = redact.Redactor()
    line = '{"a": {"k": "-----BEGIN PRIVATE KEY-----"}, "b": "-----END PRIVATE KEY-----"}'
    out, counts = r.redact(line)
    assert json.loads(out) == {
        "a": {"k": "[REDACTED:private_key]"}, "b": "-----END PRIVATE KEY-----"
    }  # fmt: skip
    assert counts == {"private_key": 1}


@pytest.mark.parametrize(
    "extra",
    [
        {"x": "a*"},
        {"cust": r"CUST-\d+"},
        {"odd": r"[:,]\s*\""},
        {'q"uote': "LEAKX"},
        {"n": r"\d+"},
        {"lit": "ul|ru|ls"},  # inside null, true, false
        {"word": "internal|null"},  # the log's own data_class and supersedes values
    ],
)
def test_any_extra_pattern_keeps_every_line_valid_json_and_the_run_going(tmp_path, extra):
    @hk.tool(risk="write")
    def note(text: str) -> dict:
        """Keep a note.

        Args:
            text: the note.
        """
        return {"kept": text, "id": "CUST-123", "n": 5}

    model = hk.ScriptedModel([reply.tool_call("note", text="LEAKX and CUST-991 a"), "done"])
    h = hk.Harness(
        [note],
        model,
        log_dir=tmp_path,
        redactor=redact.Redactor(extra=extra),
        gate=hk.Gate(confirm=hk.allow_all),
    )
    run = h.run("note it")
    assert run.finish_reason == "stop"
    for path in (Path(run.log.path), Path(str(run.log.path) + ".idem")):
        for line in path.read_text().splitlines():
            json.loads(line)
    # the log's own fields are never rewritten: the file reads back with every event's class
    assert [e.data_class for e in hk.EventLog.read(run.log.path).events] == [
        e.data_class for e in run.log.events
    ]
    if 'q"uote' in extra or "cust" in extra:
        leak = "LEAKX" if 'q"uote' in extra else "CUST-991"
        assert leak not in _files(tmp_path)


JSON_TEXT = st.recursive(
    st.none() | st.integers() | st.text(max_size=12) | st.sampled_from(
        ["Basic dXNlcjpwYXNz", "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----",
         "password", "Authorization", "sk-proj-abcdefghijklmnopqrstuv", 'a"b\\c', "token",
         "Bearer\n", "Bearer\\nabcdefgh1", "Cookie: a=b", "cookie", "-u a:b", "curl -u", " x:y",
         "glpat-abcdefghij0123456789", "\n", "415-555-0134", "+49 30 1234567"]
    ),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(["Authorization", "password", "k", "token", "a\"b", "Set-Cookie", "-u"])
        | st.text(max_size=4),
        inner,
        max_size=3,
    ),
    max_leaves=8,
)  # fmt: skip
REDACTORS = [
    redact.Redactor(),
    redact.Redactor(extra={"x": "a*"}),
    redact.Redactor(extra={"s": r'[\s"\\:,{}\[\]]+'}),
    redact.Redactor(literals=('": "', "abc")),
]


@settings(max_examples=300, deadline=None)
@given(JSON_TEXT, st.booleans())
@example({",": None, "\r": None}, False)  # two keys that one extra pattern rewrites alike
def test_redacting_any_json_keeps_its_shape(value, nested):
    text = json.dumps(value)
    if nested:
        text = json.dumps({"content": text, "n": 1})
    shape = _shape(_pairs(text))
    for r in REDACTORS:
        out, _ = r.redact(text)
        assert _shape(_pairs(out)) == shape


def _pairs(text):
    # Two keys redacted to one placeholder are still two members: keep every pair.
    return json.loads(text, object_pairs_hook=lambda pairs: {"": [v for _, v in pairs]})


def _shape(value):
    if isinstance(value, dict):
        members = value[""]
        return ("dict", len(members), sorted(repr(_shape(v)) for v in members))
    if isinstance(value, list):
        return ("list", [_shape(v) for v in value])
    return type(value).__name__


@pytest.mark.parametrize(
    "text",
    [
        "Call me at +1 (415) 555-0132",
        "Phone: +44 20 7946 0958",
        json.dumps({"phone_number": "+49 30 12345678"}),
        "+14155550132",
        json.dumps({"phone": "(415) 555-0132"}),
        json.dumps({"phoneNumber": "415.555.0132"}),
        "Phone 415 555 0132",
        # no "phone" near: any `+` number, a dashed North American one
        "+49 30 1234567",
        "+33 1 23 45 67 89",
        "+44 20 7946 0958",
        "reach me on +1 415-555-0134 after six",
        "415-555-0134",
        "(415) 555-0134",
        "(415)555-0134",
        "1-415-555-0134",
        json.dumps({"contact": "call (415) 555-0134"}),
    ],
)
def test_phone_numbers_are_marked_personal_not_rewritten(text):
    r = redact.Redactor()
    assert r.needs(text)
    assert r.personal(text) == ("phone",)
    assert r.redact(text) == (text, {})
    rewritten, counts = redact.Redactor(kinds=("phone",)).redact(text)
    assert counts == {"phone": 1} and "555" not in rewritten and "7946" not in rewritten


@pytest.mark.parametrize(
    "text",
    [
        "flight HAT170 on 2024-05-20, reservation 4WQ150, order A1010",
        "total $1,234.56 (+12.50 tax), 2024-05-20T10:00:00+05:30",
        "ids 1764433683, 123-456-7890 and 4111-1111-1111-1111",
        "score +12345678 and version 1.234.567.8901",
        json.dumps({"amount": "+120.00", "date": "2026-12-03", "user_id": "mia_li_3668"}),
        "uuid 123e4567-e89b-12d3-a456-426614174000, ip 192.168.100.200",
        "+1 500 000 users",
        # not marked without "phone": a 3-3-4 number with spaces or dots only, a local number
        "tel: 415 555 0132, fax 415.555.0132, ext. 555-0134",
        "ssn 123-45-6789, isbn 978-3-16-148410-0, card 4111 1111 1111 1111, +0 800 and +05:30",
        "2024-05-20 10:00:00-05:00, order #W2378156, 2024-05-20T10:00:00.000-0500",
        "range 1000-2000-3000, tracking 415-555-01345, code 1415-555-0134 and 415-555-0134-2",
    ],
)
def test_ids_dates_and_amounts_are_not_phone_numbers(text):
    assert "phone" not in redact.Redactor().personal(text)


def test_a_phone_number_marks_the_events_that_hold_it(tmp_path):
    @hk.tool
    def find_user(email: str) -> dict:
        """Find a user.

        Args:
            email: the e-mail.
        """
        return {"name": "Ann", "phone": "+1 (415) 555-0132"}

    model = hk.ScriptedModel([reply.tool_call("find_user", email="ann@example.com"), "found"])
    run = hk.Harness([find_user], model, log_dir=tmp_path).run("Call me at +1 415-555-0199")
    lines = [json.loads(x) for x in Path(run.log.path).read_text().splitlines()]
    by_type = {x["type"]: x["payload"].get("personal_data") for x in lines}
    assert by_type["user.message"] == ["phone"]
    assert by_type["tool.result"] == ["phone"]
    assert by_type["tool.call"] == ["email"]
    assert "+1 (415) 555-0132" in Path(run.log.path).read_text()  # kept exact


def test_phone_numbers_without_the_word_phone_mark_the_events_of_a_real_run(tmp_path):
    @hk.tool
    def find_contact(name: str) -> dict:
        """Find a contact.

        Args:
            name: who.
        """
        return {"name": name, "office": "+49 30 1234567", "desk": "(415) 555-0134"}

    model = hk.ScriptedModel([reply.tool_call("find_contact", name="Ann"), "Ann: 415-555-0134"])
    text = "Reach me on +44 20 7946 0958, flight HAT170 on 2024-05-20, order #W2378156"
    run = hk.Harness([find_contact], model, log_dir=tmp_path).run(text)
    written = Path(run.log.path).read_text(encoding="utf-8")
    lines = [json.loads(x) for x in written.splitlines()]
    by_type = {x["type"]: x["payload"].get("personal_data") for x in lines}
    assert by_type["user.message"] == ["phone"]
    assert by_type["tool.result"] == ["phone"]
    assert by_type["model.response"] == ["phone"]
    assert by_type["tool.call"] is None  # "Ann", no number
    for number in ("+49 30 1234567", "(415) 555-0134", "+44 20 7946 0958"):
        assert number in written  # kept exact, not rewritten
