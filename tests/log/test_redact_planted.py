"""Planted-secret families the redactor missed (R-S1), each with several members.

Every case plants a secret in the text a tool or model could return and checks, through a
real log file where it matters, that the secret is gone and the text around it is kept.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.log import redact

R = redact.Redactor()


def _logged(tmp_path, content: str) -> str:
    """The line a real event log writes for a tool result holding `content`."""
    log = hk.EventLog(tmp_path / "r.jsonl")
    log.append("tool.result", {"tool": "t", "content": content})
    log.close()
    return (tmp_path / "r.jsonl").read_text(encoding="utf-8")


# --- 1. a credential at the start of a line of JSON-escaped text ---------------------------

#: `(line, secret)`: a credential written alone on its line; its letters start right after the
#: `n`, `r` or `t` of an escaped break, which a word boundary took for part of the word.
LINE_STARTS = [
    ("pass=PlantedLine01", "PlantedLine01"),
    ("token=PlantedLine02", "PlantedLine02"),
    ("token: PlantedLine03", "PlantedLine03"),
    ("password is PlantedLine04", "PlantedLine04"),
    ("login bob password PlantedLine05", "PlantedLine05"),
    ("--password PlantedLine06", "PlantedLine06"),
    ("-u admin:PlantedLine07", "PlantedLine07"),
    ("mysql -pPlantedLine08", "PlantedLine08"),
    ("sshpass -p PlantedLine09", "PlantedLine09"),
    ("Bearer PlantedLine10abcdef", "PlantedLine10"),
    ("Cookie: sid=PlantedLine11", "PlantedLine11"),
    ("sk-PlantedLine12abcdefghij", "PlantedLine12"),
    ("ghp_PlantedLine13abcdefghijklmnopqrstuvw", "PlantedLine13"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.PlantedLine14", "PlantedLine14"),
    ("AKIAPLANTEDLINE15XYZ", "PLANTEDLINE15"),
]


@pytest.mark.parametrize("sep", ["\n", "\r\n", "\r", "\t"])
@pytest.mark.parametrize(("line", "secret"), LINE_STARTS)
def test_a_credential_after_an_escaped_line_break_is_redacted_and_the_next_line_kept(
    line, secret, sep
):
    inner = json.dumps({"log": f"boot ok{sep}{line}{sep}ready"})
    for text in (inner, json.dumps({"outer": inner})):  # `\n` once and `\\n` twice escaped
        out, counts = R.redact(text)
        assert secret not in out, out
        assert counts, text
        assert "boot ok" in out and "ready" in out, out
        json.loads(out)


def test_a_credential_line_in_a_logged_tool_result_is_redacted(tmp_path):
    content = "boot ok\npassword=PlantedLog1\ntoken: PlantedLog2\npass=PlantedLog3\nready"
    data = _logged(tmp_path, content)
    assert "PlantedLog" not in data
    assert json.loads(data)["payload"]["content"].endswith("\nready")


# --- 5. provider tokens with fixed shapes ---------------------------------------------------

_HEX = "0123456789abcdef"
_B32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"  # bech32's alphabet
_B64 = "AAAAC3NzaC1lZDI1NTE5AAAAIHq4m0vXkR2pLbQ+Wf/9sT"

#: `(text, secret)`: each provider's token in a sentence, a URL or a config line.
PROVIDER_TOKENS = [
    (
        "TELEGRAM_BOT=123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw9",
        "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw9",
    ),
    (
        "GET https://api.telegram.org/bot7012345678:AAF-x_Yq9LmN3bV0pQrStUvWxYz0123_456/getMe",
        "AAF-x_Yq9LmN3bV0pQrStUvWxYz0123_456",
    ),
    ("mailgun api key-" + _HEX * 2 + " (sandbox)", "key-" + _HEX * 2),
    ("MAILGUN_KEY=key-" + _HEX[::-1] * 2, "key-" + _HEX[::-1] * 2),
    ("token dapi" + _HEX * 2, "dapi" + _HEX * 2),
    ("DATABRICKS_TOKEN=dapi" + _HEX[::-1] * 2 + "-2", "dapi" + _HEX[::-1] * 2),
    ("notion: secret_" + "Ab3" * 14 + "Z", "secret_" + "Ab3" * 14 + "Z"),
    ("NOTION=ntn_" + "x9Y" * 15 + "Q", "ntn_" + "x9Y" * 15 + "Q"),
    ("AGE-SECRET-KEY-1" + (_B32 * 2)[:58], "AGE-SECRET-KEY-1" + (_B32 * 2)[:58]),
    ("# age key\nAGE-SECRET-KEY-1" + (_B32[::-1] * 2)[:58] + "\n", _B32[::-1][:20]),
    ("twilio key SK" + _HEX * 2 + " for AC" + _HEX[::-1] * 2, "SK" + _HEX * 2),
    ("SENTRY_DSN=https://" + _HEX * 2 + "@o123.ingest.sentry.io/456", _HEX * 2),
    ('{"dsn": "https://' + _HEX[::-1] * 2 + '@sentry.example.com/7"}', _HEX[::-1] * 2),
    (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me\nPublic-Lines: 2\n"
        f"{_B64}\nPublicTail==\nPrivate-Lines: 2\nPlantedPuTTYv3Line1+/\nPlantedPuTTYv3Line2=\n"
        "Private-MAC: " + _HEX * 4 + "\n",
        "PlantedPuTTYv3",
    ),
    (
        "PuTTY-User-Key-File-2: ssh-rsa\r\nEncryption: none\r\nPublic-Lines: 1\r\n"
        f"{_B64}\r\nPrivate-Lines: 1\r\nPlantedPuTTYv2Line1==\r\nPrivate-MAC: {_HEX}",
        "PlantedPuTTYv2",
    ),
]


@pytest.mark.parametrize(("text", "secret"), PROVIDER_TOKENS)
def test_provider_tokens_with_fixed_shapes_are_redacted(tmp_path, text, secret):
    data = _logged(tmp_path, text)
    assert secret not in data, data
    assert "[REDACTED:" in data
    out, counts = R.redact(text)
    assert secret not in out and counts, out


def test_provider_token_look_alikes_and_readable_parts_stay():
    kept = [
        "AC" + _HEX * 2,  # a Twilio account SID
        "a key-value store, key-" + _HEX,  # too short for a Mailgun key
        "dapi is the Databricks API prefix; secret_sauce; ntn_total",
        "task" + _HEX * 2,  # `sk` inside a word
        "https://user@example.com/x and https://abc123@host/",  # a user, not a key
        "at 12:30:AA and 123456789:AAshort",
    ]
    for text in kept:
        assert R.redact(text) == (text, {}), text
    dsn = "https://" + _HEX * 2 + "@o123.ingest.sentry.io/456"
    assert R.redact(dsn)[0] == "https://[REDACTED:url_credentials]@o123.ingest.sentry.io/456"
    putty = PROVIDER_TOKENS[-2][0]
    out = R.redact(putty)[0]
    assert out.startswith("PuTTY-User-Key-File-3: ssh-ed25519\n") and "PublicTail==" in out
    assert "Private-Lines: 2\n[REDACTED:private_key]\nPrivate-MAC: " in out


# --- 3. credential names in other languages, and invisible characters in a name -----------

#: `(text, secret)`: the word for password in other languages, with their separators (a
#: full-width colon or equals sign, a space or no-break space before a French colon).
FOREIGN_NAMES = [
    ("contraseña: PlantedIntl01", "PlantedIntl01"),
    ("Contrasena=PlantedIntl02", "PlantedIntl02"),
    ("Passwort=PlantedIntl03", "PlantedIntl03"),
    ("Kennwort: PlantedIntl04", "PlantedIntl04"),
    ("mot de passe : PlantedIntl05", "PlantedIntl05"),
    ("Mot de passe\u00a0: PlantedIntl06", "PlantedIntl06"),
    ("senha=PlantedIntl07", "PlantedIntl07"),
    ("wachtwoord: PlantedIntl08", "PlantedIntl08"),
    ("hasło: PlantedIntl09", "PlantedIntl09"),
    ("пароль: PlantedIntl10", "PlantedIntl10"),
    ("Пароль = PlantedIntl11", "PlantedIntl11"),
    ("密码：PlantedIntl12", "PlantedIntl12"),
    ("密碼: PlantedIntl13", "PlantedIntl13"),
    ("口令：PlantedIntl14", "PlantedIntl14"),
    ("パスワード：PlantedIntl15", "PlantedIntl15"),
    ("비밀번호: PlantedIntl16", "PlantedIntl16"),
    ("密码＝PlantedIntl17", "PlantedIntl17"),
    ('{"пароль": "PlantedIntl18"}', "PlantedIntl18"),
]

#: Invisible characters inside a credential's name or before its separator.
INVISIBLE_NAMES = [
    ("pass\u200bword=PlantedHidden1", "PlantedHidden1"),
    ("pass\u00adword: PlantedHidden2", "PlantedHidden2"),
    ("pass\u200dword=PlantedHidden3", "PlantedHidden3"),
    ("password\u200b=PlantedHidden4", "PlantedHidden4"),
    ("pa\u00ads\u00adsword: PlantedHidden5", "PlantedHidden5"),
    ("api\u2060_key=PlantedHidden6", "PlantedHidden6"),
    ('{"to\ufeffken": "PlantedHidden7"}', "PlantedHidden7"),
    ("Пар\u200bоль: PlantedHidden8", "PlantedHidden8"),
]


@pytest.mark.parametrize(("text", "secret"), FOREIGN_NAMES + INVISIBLE_NAMES)
def test_a_credential_named_in_another_language_or_with_invisible_characters_is_redacted(
    tmp_path, text, secret
):
    assert R.needs(text)
    out, counts = R.redact(text)
    assert secret not in out and counts.get("password") == 1, out
    data = _logged(tmp_path, f"config:\n{text}\nnext line")
    assert secret not in data, data
    assert json.loads(data)["payload"]["content"].endswith("\nnext line")


def test_foreign_look_alikes_and_invisible_characters_without_a_secret_stay():
    kept = [
        "Passwortänderung erfolgreich",  # "password change succeeded"
        "mot de passe oublié ? senha incorreta, пароль неверный",
        "family \U0001f468\u200d\U0001f469\u200d\U0001f467 and a soft\u00adhyphen",
        "\ufeffBOM first, zero\u200bwidth space",
    ]
    for text in kept:
        assert R.redact(text) == (text, {}), text
    # a text whose secret needs no help keeps its invisible characters
    text = "\U0001f468\u200d\U0001f469 password=PlantedKeep1"
    assert R.redact(text) == (
        "\U0001f468\u200d\U0001f469 password=[REDACTED:password]",
        {"password": 1},
    )


# --- 4. credentials in prose and in HTML ----------------------------------------------------

#: `(text, secret, kept)`: the secret goes, `kept` (the words and punctuation around it) stays.
PROSE = [
    ('<input type="password" value="PlantedHtml1!">', "PlantedHtml1", '<input type="password"'),
    ('<input value="PlantedHtml2!" type="password">', "PlantedHtml2", '" type="password">'),
    ("<INPUT VALUE='PlantedHtml3' NAME=pw TYPE='PASSWORD'/>", "PlantedHtml3", "' NAME=pw"),
    ("<input type=password value=PlantedHtml4>", "PlantedHtml4", "value=[REDACTED:password]>"),
    ('<input class="f" value="PlantedHtml5" id="p" type=password>', "PlantedHtml5", 'id="p"'),
    ('the password is "PlantedProse1"', "PlantedProse1", 'is "[REDACTED:password_phrase]"'),
    ("my password was PlantedProse2.", "PlantedProse2", "[REDACTED:password_phrase]."),
    ("The new password will be PlantedProse3. Keep it safe.", "PlantedProse3", ". Keep it"),
    ("Your password has been changed to PlantedProse4; log in.", "PlantedProse4", "; log in."),
    ("my password is now PlantedProse5", "PlantedProse5", "my password is now"),
    ("the wifi password is “PlantedProse6”.", "PlantedProse6", "“[REDACTED:password_phrase]”."),
    ("Passwords are PlantedProse7 and more.", "PlantedProse7", "and more."),
    ("the password for admin@example.com is PlantedProse8.", "PlantedProse8", "example.com is"),
    ("the password for the 'prod' db is PlantedProse9", "PlantedProse9", "'prod' db"),
    ("I set the password to PlantedProse10!", "PlantedProse10", "I set the password to"),
    ("use password PlantedProse11 to log in", "PlantedProse11", "to log in"),
    ("the token was PlantedProse12xyz, then", "PlantedProse12", ", then"),
    ("my secret is PlantedProse13.", "PlantedProse13", "my secret is"),
    ("the API key is PlantedProse14abc (rotated)", "PlantedProse14", "(rotated)"),
    ("the password's PlantedProse15", "PlantedProse15", "the password's"),
]


@pytest.mark.parametrize(("text", "secret", "kept"), PROSE)
def test_a_credential_in_prose_or_an_html_password_field_is_redacted(tmp_path, text, secret, kept):
    out, counts = R.redact(text)
    assert secret not in out and counts, out
    assert kept in out, out
    assert secret not in _logged(tmp_path, text)


def test_prose_about_passwords_and_tokens_keeps_its_words():
    kept = [
        "password reset",
        "passport number",
        "Click here to reset your password: https://example.com/reset?x=1",
        "the token is expired; the secret is out; the api key is missing",
        "Your password has been reset. The new password will be sent to your email.",
        "the token's 3600s lifetime, 2 tokens were used",
        "use the password manager, enter your password 2 times",
        "the password is too short",
        '<input value="" type="password"> <input value="visible" type="text">',
        '{"description": "Content of a fake email for password reset", "default": "Click 12"}',
    ]
    for text in kept:
        assert R.redact(text) == (text, {}), text


# --- 2. tables: the column under a credential's header -------------------------------------

#: `(table, secrets, kept)`: every secret goes, every kept cell stays.
TABLES = [
    (
        "| user | password |\n|------|----------|\n| bob | PlantedMd1 |\n| amy | PlantedMd2! |\n"
        "\nbob and amy are fine.",
        ["PlantedMd1", "PlantedMd2"],
        ["| user | password |", "| bob |", "| amy |", "bob and amy are fine."],
    ),
    (
        "| Service | API Key | Owner |\n| :-- | :-: | --: |\n| stripe | PlantedMd3 | ops |\n"
        "| `mail` | `PlantedMd4` | dev |",
        ["PlantedMd3", "PlantedMd4"],
        ["| stripe |", "| ops |", "| `mail` |", "| dev |"],
    ),
    (
        "Name | Token\n--- | ---\nci | PlantedMd5\ndeploy | PlantedMd6",
        ["PlantedMd5", "PlantedMd6"],
        ["ci | ", "deploy | "],
    ),
    (
        "user,password\nbob,PlantedCsv1\namy,PlantedCsv2",
        ["PlantedCsv1", "PlantedCsv2"],
        ["user,password\nbob,", "amy,"],
    ),
    (
        'id,username,password,email\n1,bob,PlantedCsv3,bob@x.com\n2,amy,"Planted,Csv4""q",amy@x.com'
        "\n3,joe,,joe@x.com",
        ["PlantedCsv3", "Planted,Csv4"],
        ["1,bob,", ",bob@x.com", "2,amy,", ",amy@x.com", "3,joe,,joe@x.com"],
    ),
    (
        '"host","db_pass"\n"db1","PlantedCsv5"\n"db2","PlantedCsv6"',
        ["PlantedCsv5", "PlantedCsv6"],
        ['"db1",', '"db2",'],
    ),
    ("user\tsecret\nbob\tPlantedTsv1\namy\tPlantedTsv2", ["PlantedTsv1", "PlantedTsv2"], ["amy\t"]),
]


@pytest.mark.parametrize(("table", "secrets", "kept"), TABLES)
def test_the_column_under_a_credential_header_is_redacted_in_every_row(
    tmp_path, table, secrets, kept
):
    out, counts = R.redact(table)
    for secret in secrets:
        assert secret not in out, out
    for cell in kept:
        assert cell in out, (cell, out)
    assert counts.get("password", 0) >= len(secrets)
    for text in (json.dumps({"out": table}), json.dumps({"o": json.dumps({"out": table})})):
        escaped = R.redact(text)[0]
        assert not [s for s in secrets if s in escaped], escaped
        json.loads(escaped)
    data = _logged(tmp_path, table)
    assert not [s for s in secrets if s in data], data
    content = json.loads(data)["payload"]["content"]
    assert all(cell in content for cell in kept), content


def test_tables_without_a_credential_column_keep_every_cell():
    kept = [
        "model,tokens,cost\ngpt,1234,0.1",
        "student,pass\nbob,yes\namy,no",  # a pass/fail column
        "a, password reset, b\nc, d, e",
        "Please enter your email, password\nand then click, ok",
        "| step | password policy |\n|---|---|\n| 1 | strict |",
        '{"a": 1, "token": "x"}\n{"a": 2, "token": "y"}',
    ]
    for text in kept:
        assert R.redact(text) == (text, {}), text
