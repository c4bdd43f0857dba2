"""Credential families the second fresh-user test found in clear (R-S1), through real log files.

One list of sensitive header names serves every header form (`Name: value`, a JSON object, a
`[name, value]` pair in a list of headers, compact or pretty-printed, a Python repr); a query
parameter after a redacted token survives; and the look-alikes of each new family (a port
before an `@` in a path, a list of header names, `passengers`, a MySQL port `-P`) stay as
they are.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.log import redact


def _write(tmp_path, payload: dict) -> str:
    log = hk.EventLog(tmp_path / "r.jsonl")
    log.append("tool.result", {"tool": "t", "content": "ok", **payload})
    log.close()
    return (tmp_path / "r.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", redact._HEADER_NAMES)
def test_every_sensitive_header_name_is_redacted_in_every_header_form(tmp_path, name):
    title = "-".join(part.capitalize() for part in name.split("-"))
    forms = {
        "line": f"{title}: PlantedHdrLine1",
        "object": json.dumps({title: "PlantedHdrObject2"}),
        "pair": json.dumps([[title, "PlantedHdrPair3"], ["Accept", "text/plain"]]),
        "pretty pair": json.dumps({"headers": [[name, "PlantedHdrPretty4"]]}, indent=2),
        "repr": str([(title, "PlantedHdrRepr5")]),
    }
    payload = {
        "forms": forms,
        "headers": [[title, "PlantedHdrNested6"]],  # a real pair in the payload's structure
        "by_name": {name: "PlantedHdrNested7"},
    }
    data = _write(tmp_path, payload)
    assert "PlantedHdr" not in data, [x for x in data.split('"') if "PlantedHdr" in x]
    assert json.loads(data)["payload"]["forms"].keys() == forms.keys()


def test_a_query_parameter_after_a_redacted_token_is_kept(tmp_path):
    url = "https://api.example.com/v1?access_token=PlantedAccess1&page=2&x=1"
    data = _write(tmp_path, {"url": url, "text": f"GET {url} 200"})
    assert "PlantedAccess1" not in data
    assert data.count("access_token=[REDACTED:password]&page=2&x=1") == 2


STAY = [
    "https://example.com:8080/users/@alice",
    "see https://x.org/a:b@c and http://u@host/p",
    "boarding pass for 2 passengers, bypass: yes, compass=north",
    '{"redact_headers": ["authorization", "cookie", "x-api-key", "set-cookie"]}',
    "mysql -h db -P 3306 -u app -p",
    "msg.content, sg.items, npm_config, hvs_total",
    "a closing tag </password> then text </x>",
    "<passage>pass it on</passage>",
    '{"key": "value", "monkey=banana": 1, "?keyword=x": 2}',
    "eyJhbGciOiJIUzI1NiJ9.\n\nplain text",
    "ls -a user:group /srv; see http://h -a x",
    "password: |\nnot indented, so no block\n",
    '{"cookies_enabled": true, "cookie_policy": "strict", "cookies": [], "value": "kept"}',
    '{"cookies": [{"name": "sid", "domain": ".example.com"}], "value": "kept after the jar"}',
    '{"file_path": "/srv/x", "oauth": "enabled", "primary_key": "id", "idempotency_key": "k1"}',
    "docker login registry.example.com; redis-cli -h cache ping; git log -p --all",
    "please login to the portal; --token-file /etc/x; sig=short",
    '{"prompt_tokens": 12, "cached_tokens": 3, "token_estimate": 4}',
    "Click on this link to reset your password: https://www.example.com/reset-password",
    '{"name": "seat_password_policy", "value": "strict"}',
]


@pytest.mark.parametrize("text", STAY)
def test_look_alikes_of_the_new_families_stay(tmp_path, text):
    assert redact.Redactor().redact(text) == (text, {})
    data = _write(tmp_path, {"note": text})
    assert json.loads(data)["payload"]["note"] == text and "[REDACTED:" not in data


def test_the_password_ends_at_the_last_at_sign_before_the_host():
    r = redact.Redactor()
    cases = {
        "https://bob:p@ss/w@rd@host.example/x?next=a@b.org": (
            "https://bob:[REDACTED:url_credentials]@host.example/x?next=a@b.org"
        ),
        "redis://:pw1234@cache:6379/0": "redis://:[REDACTED:url_credentials]@cache:6379/0",
        "mongodb+srv://app:pa:ss@c0.example.net/?w=1": (
            "mongodb+srv://app:[REDACTED:url_credentials]@c0.example.net/?w=1"
        ),
        # a `//` ends a password: URLs joined without spaces are each their own
        "http://a:1,http://b:pw2@h/x": "http://a:1,http://b:[REDACTED:url_credentials]@h/x",
    }
    for text, expected in cases.items():
        assert r.redact(text)[0] == expected


def test_a_block_scalar_is_redacted_whole_and_the_next_key_stays(tmp_path):
    text = "db:\n  password: |\n    Planted one\n\n    Planted two\n  host: db.local\nport: 5432"
    expected = "db:\n  password: |\n    [REDACTED:password]\n  host: db.local\nport: 5432"
    r = redact.Redactor()
    assert r.redact(text) == (expected, {"password": 1})
    # in an event, escaped once (a tool's text) and twice (JSON inside it): valid JSON, the
    # whole block gone, the keys after it kept
    data = _write(tmp_path, {"note": text, "raw": json.dumps({"config": text})})
    payload = json.loads(data)["payload"]
    assert payload["note"] == expected
    assert json.loads(payload["raw"]) == {"config": expected}
