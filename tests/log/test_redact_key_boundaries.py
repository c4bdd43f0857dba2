"""Provider keys glued to what comes before them (R-S1): a percent-encoded byte, `_`, a digit.

A key in a URL's query or a form body follows a percent-encoded byte (`key%3Dsk-proj-...`,
`%22ghp_...%22`), a model-invented tool name glues one to a word (`op_ghp_...`), and Chinese
or Japanese text writes one without a space (`密钥sk-...`). Each family is found there, a
weak prefix (`key-`, `sk-` alone) still needs a real boundary, and ordinary ids and the real
data beside the checkout (τ-bench, AgentDojo, ...) keep every word.
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.log import redact

API = "[REDACTED:api_key]"


def _alnum(n: int, seed: int = 7) -> str:
    chars = string.ascii_letters + string.digits
    return "".join(chars[(i * 31 + seed * 17 + i * i) % len(chars)] for i in range(n))


def _hex(n: int) -> str:
    return "".join("0123456789abcdef"[(i * 7 + 3) % 16] for i in range(n))


BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
#: One key of every strongly-prefixed family (`redact._STRONG_KEYS`), in its documented shape.
STRONG = {
    "openai project": "sk-proj-" + _alnum(48),
    "anthropic": "sk-ant-api03-" + _alnum(40),
    "openai legacy": "sk-" + _alnum(20) + "T3BlbkFJ" + _alnum(20, 3),
    "stripe live": "sk_live_" + _alnum(24),
    "stripe restricted": "rk_test_" + _alnum(30),
    "stripe webhook": "whsec_" + _alnum(32),
    "github classic": "ghp_" + _alnum(36),
    "github oauth": "gho_" + _alnum(36),
    "github user": "ghu_" + _alnum(36),
    "github server": "ghs_" + _alnum(36),
    "github refresh": "ghr_" + _alnum(36),
    "github fine-grained": "github_pat_" + _alnum(22) + "_" + _alnum(59, 2),
    "gitlab personal": "glpat-" + _alnum(20),
    "gitlab runner": "glrt-" + _alnum(24),
    "slack bot": "xoxb-1234567890-9876543210-" + _alnum(24),
    "slack refresh": "xoxe.xoxp-1-" + _alnum(40),
    "slack app": "xapp-1-A0123456789-" + _alnum(20),
    "aws key id": "AKIA" + "QX7Z2M4N6P8R0T1V",
    "aws temporary id": "ASIA" + "QX7Z2M4N6P8R0T1V",
    "google api": "AIza" + _alnum(35),
    "google client secret": "GOCSPX-" + _alnum(28),
    "pypi": "pypi-AgEIcHlwaS5vcmc" + _alnum(60),
    "rubygems": "rubygems_" + _hex(48),
    "docker hub": "dckr_pat_" + _alnum(27),
    "sendgrid": "SG." + _alnum(22) + "." + _alnum(43, 5),
    "shopify": "shpat_" + _hex(32),
    "digitalocean": "dop_v1_" + _hex(64),
    "grafana": "glsa_" + _alnum(32) + "_" + _hex(8),
    "age": "AGE-SECRET-KEY-1" + BECH32 + BECH32[:26],
    "groq": "gsk_" + _alnum(52),
    "xai": "xai-" + _alnum(80),
    "perplexity": "pplx-" + _alnum(48),
    "nvidia": "nvapi-" + _alnum(64),
    "langsmith": "lsv2_pt_" + _hex(32) + "_" + _hex(10),
    "tavily": "tvly-dev-" + _alnum(32),
    "pinecone": "pcsk_" + _alnum(6) + "_" + _alnum(50),
    "linear": "lin_api_" + _alnum(40),
    "atlassian": "ATATT3" + _alnum(180),
    "postman": "PMAK-" + _hex(24) + "-" + _hex(34),
    "brevo": "xkeysib-" + _hex(64) + "-" + _alnum(16),
    "supabase": "sbp_" + _hex(40),
}
#: Keys whose prefix is a word or an abbreviation: found after a boundary or a percent-encoded
#: byte, never glued to a word or an id.
WEAK = {
    "openai legacy, any body": "sk-" + _alnum(32),
    "mailgun": "key-" + _hex(32),
    "databricks": "dapi" + _hex(32),
    "notion": "secret_" + _alnum(43),
    "hugging face": "hf_" + _alnum(34),
    "npm": "npm_" + _alnum(36),
    "vault": "hvs." + _alnum(90),
    "google oauth": "ya29." + _alnum(60),
    "twilio": "SK" + _hex(32),
    "replicate": "r8_" + _alnum(38),
    "fireworks": "fw_" + _alnum(30),
    "google refresh": "1//0" + _alnum(40),
}
ALL = {**STRONG, **WEAK}


def _check(text: str, key: str) -> str:
    r = redact.Redactor()
    assert r.needs(text), text  # the pre-check wakes the scan for this form
    scan = redact._wake("api_key")
    assert scan is not None and scan(text.lower(), text)
    out, counts = r.redact(text)
    assert key not in out and counts.get("api_key") == 1, out
    return out


@pytest.mark.parametrize("before", ["%3D", "key%3D", "%22", "%20", "%3A", "token%3d", "x%2F"])
@pytest.mark.parametrize("name", sorted(ALL))
def test_every_key_after_a_percent_encoded_byte_is_redacted(name, before):
    key = ALL[name]
    out = _check(f"https://x.example/cb?{before}{key}%22&x=1", key)
    assert out.startswith(f"https://x.example/cb?{before}") and out.endswith("%22&x=1")


@pytest.mark.parametrize("before", ["op_", "secret_", "1", "v2_", "é", "密钥", "ключ_"])
@pytest.mark.parametrize("name", sorted(STRONG))
def test_a_strongly_prefixed_key_glued_to_a_word_or_id_is_redacted(name, before):
    key = STRONG[name]
    out = _check(f'{{"tool": "{before}{key}", "n": 1}}', key)
    assert out == f'{{"tool": "{before}{API}", "n": 1}}'


@pytest.mark.parametrize("before", ["é", "密钥是", "ключ "])
@pytest.mark.parametrize("name", sorted(WEAK))
def test_any_key_after_a_non_ascii_letter_is_redacted(name, before):
    _check(f"{before}{WEAK[name]}", WEAK[name])


@pytest.mark.parametrize(
    "text",
    [
        "task-proj-" + _alnum(30),  # an id ending in a key's prefix after a letter
        "desk_test_" + _alnum(30),
        "cache_key-" + _hex(32),  # an md5 under a name ending in `key`
        "run_" + "sk-" + _alnum(32),  # `sk-` alone is a weak prefix
        "model_hf_" + _alnum(34),
        "load_npm_" + _alnum(36),
        "v2_hvs." + _alnum(40),
        "test_github_pat_is_redacted_in_every_log_line",
        "user_xoxo-gossip-girl-fan-club",
        "ID_AKIA" + "QX7Z2M4N6P8R0T1V" + "EXTRA",  # longer than an AWS key id
        "a_ghp_" + _alnum(30),  # shorter than a GitHub token
        "a%2F" + "task-proj-" + _alnum(30),  # after a percent-encoded byte, still a word
    ],
)
def test_ordinary_ids_keep_their_words(text):
    out, counts = redact.Redactor().redact(text)
    assert (out, counts.get("api_key")) == (text, None)


def test_the_key_first_characters_cover_every_branch():
    # `_KEY_FIRST` lets a place through only when a branch could start there: derived from the
    # pattern's own parse, a new prefix that starts with another character fails here
    parser = pytest.importorskip("re._parser")
    constants = pytest.importorskip("re._constants")

    def first(items: list) -> tuple[set[str], bool]:
        out: set[str] = set()
        for op, av in items:
            chars, empty = one(op, av)
            out |= chars
            if not empty:
                return out, False
        return out, True

    def one(op, av) -> tuple[set[str], bool]:
        c = constants
        if op is c.LITERAL:
            return {chr(av)}, False
        if op is c.IN:
            chars: set[str] = set()
            for o, a in av:
                assert o in (c.LITERAL, c.RANGE), o
                chars |= {chr(a)} if o is c.LITERAL else {chr(x) for x in range(a[0], a[1] + 1)}
            return chars, False
        if op in (c.ASSERT, c.ASSERT_NOT, c.AT):
            return set(), True
        if op is c.SUBPATTERN:
            chars, empty = first(list(av[3]))
            if av[1] & re.IGNORECASE:  # `(?i:key)`
                chars |= {x.upper() for x in chars} | {x.lower() for x in chars}
            return chars, empty
        if op is c.BRANCH:
            parts = [first(list(b)) for b in av[1]]
            return set().union(*(p[0] for p in parts)), any(p[1] for p in parts)
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            chars, empty = first(list(av[2]))
            return chars, empty or av[0] == 0
        raise AssertionError(f"an api_key branch starts with {op}: extend this test")

    pattern = redact._PATTERNS["api_key"]
    assert pattern.startswith(redact._KEY_FIRST)
    starts, empty = first(list(parser.parse(pattern[len(redact._KEY_FIRST) :])))
    allowed = set(re.fullmatch(r"\(\?=\[(.*)\]\)", redact._KEY_FIRST).group(1).replace("0-9", ""))
    allowed |= set(string.digits)
    assert not empty and starts <= allowed, sorted(starts - allowed)


def test_a_glued_key_never_reaches_the_log_or_the_ledger(tmp_path):
    from harnesskit.testing import reply

    tool_name = "op_" + STRONG["github classic"]
    form = "token%3D" + STRONG["openai project"]

    @hk.tool(risk="write")  # a write: its call goes to the `.idem` ledger too
    def post(body: str) -> str:
        """Post a form body."""
        return "posted " + body

    model = hk.ScriptedModel([
        reply.tool_call(tool_name, id="c1"),
        reply.tool_call("post", id="c2", body=form),
        reply.text("done"),
    ])  # fmt: skip
    run = hk.Harness([post], model, log_dir=tmp_path).run("post it")
    assert run.finish_reason == "stop"
    files = [p for p in Path(tmp_path).rglob("*") if p.is_file()]
    assert {p.suffix for p in files} >= {".jsonl", ".idem"}
    on_disk = "\n".join(p.read_text("utf-8", errors="replace") for p in files)
    assert STRONG["github classic"] not in on_disk and STRONG["openai project"] not in on_disk
    assert "op_" + API in on_disk and "token%3D" + API in on_disk


def _texts(root: Path) -> list[tuple[str, str]]:
    """Each record of the real data (a JSON file's items, a JSONL line, a YAML file) as text."""
    out: list[tuple[str, str]] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = path.relative_to(root).as_posix()
        text = path.read_text("utf-8", errors="replace")
        if path.suffix == ".json":
            data = json.loads(text)
            items = data.items() if isinstance(data, dict) else enumerate(data)
            out += [(f"{name}[{k}]", json.dumps(v, ensure_ascii=False)) for k, v in items]
        elif path.suffix == ".jsonl":
            out += [(f"{name}:{i}", line) for i, line in enumerate(text.splitlines())]
        else:
            out.append((name, text))
    return out


def test_the_real_data_holds_no_api_key(shared_datasets):
    # ids, dates, prices, snake_case names and mail of τ-bench, τ²-bench, AgentDojo and
    # pydantic-ai examples: nothing in them is a provider key, so nothing may be taken as one
    texts = _texts(shared_datasets)
    assert len(texts) > 2500
    r = redact.Redactor(kinds=("api_key",))
    found = [(name, out[:120]) for name, t in texts if API in (out := r.redact(t)[0])]
    assert found == []
