r"""Secret scanning before anything is written (R-S1).

`Redactor` finds credentials in text — provider API keys (OpenAI-style `sk-`, Stripe
`sk_live_`/`whsec_`, GitHub `ghp_`/`github_pat_`, GitLab `glpat-` and its siblings, npm, PyPI,
RubyGems, Docker Hub, Vault, SendGrid, Shopify, DigitalOcean, Grafana, Hugging Face `hf_`, Slack,
AWS, Google `AIza`/`ya29.`/`GOCSPX-`, Mailgun, Databricks, Notion, age, Twilio `SK`, Telegram bot
tokens), a Sentry DSN's key, PuTTY private lines, Slack and Discord webhook URLs, a `key` query
parameter, bearer tokens and `Authorization` header values (the credential on the next line too),
`Cookie`/`Set-Cookie` and other sensitive header values (one list of names, in a list of `[name,
value]` pairs too), the values of cookie jars, JWTs (over several lines too), the value of any
password-like name (`password=`, `DB_PASS=`, `"passcode":`, `secret`, `token`, `accessKey`: one name
grammar for JSON keys, env names, YAML including every line of a block scalar, and markup
`<password>x</password>`) at any JSON escaping depth (a quoted value up to its real closing quote),
"my password is X", private keys (PEM, PGP, cut off), `user:password@` in URLs (an empty user, a
password holding `/` or `@`), `curl -u user:password`, `http -a user:password`, `mysql -pX` and
`sshpass -p X` (and more config and CLI forms: Kubernetes name/value pairs, `AccountKey=`,
`--password X`, `docker login -p X`, `.netrc`, signed URLs), every item of a list or object
under a credential's name (`{"password": ["x"]}`, a YAML `password:` list of `- x` items), a
`[name, value]` pair of any credential's name, `creds = ("user", "x")`, custom auth headers
(`X-Custom-Auth`, `X-Acme-Key`), `<VENDOR>_KEY=` env lines and LLM-vendor keys (Groq, xAI,
Replicate, Perplexity, NVIDIA, LangSmith, Tavily, Pinecone, ...) — and replaces each with a
`[REDACTED:<kind>]` marker. A credential written at the start of a line of JSON-escaped text (after
`\n`, `\r`, `\t` written as two characters, at any depth) starts a word as it does after a raw line
break: every pattern's word boundary also holds after such an escape (`(?<=\\[nrt])`). A provider
key also starts after a percent-encoded byte (`key%3Dsk-...`) or a non-ASCII letter, and one whose
prefix no word holds (`_STRONG_KEYS`: `ghp_`, `sk-proj-`, `AKIA`, ...) after `_` or a digit
(`op_ghp_...`). The event log
runs every line through it, `model.request` included, before the line is written. Personal data
(e-mail addresses, phone numbers) is not rewritten: `personal(text)` names its kinds and the event
is marked with them (`payload["personal_data"]`, e.g. `["email", "phone"]`), its data class
unchanged. The built-in patterns never match past a quote that ends a JSON string, and `redact`
checks that a JSON text keeps its structure (an `extra` pattern or literal may not): when it would
not, each string is redacted alone, so a JSON line always stays valid JSON of the same shape.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harnesskit._lazy import lazy_pattern
from harnesskit.errors import UsageError

__all__ = [
    "DEFAULT_KINDS",
    "PERSONAL_KINDS",
    "Redactor",
    "placeholders",
    "redact_fields",
    "scrub_literal",
]

#: After a JSON-escaped line break or tab (`\n`, `\r`, `\t` written as two characters, at any
#: depth): a word starts here, although the escape's letter is a word character. Every
#: pattern's word boundary (`\b`, `(?<![\w-])`) is written as "that, or `_ESC`".
_ESC = r"(?<=\\[nrt])"
# A JSON line may hold text escaped once (a string) or more (JSON inside a string): quotes
# are then preceded by one or more backslashes.
_Q = r"(?:\\*[\"'])?"


def _quoted_units(depth: int) -> str:
    r"""The units of a value opened by a quote escaped `depth` times (`"`, `\"`, `\\\"`, ...).

    At depth d the opening quote is written after k = 2**d - 1 backslashes. A later quote is
    part of the value when the backslashes before it number 2k+1 more than a multiple of
    2k+2 (it is escaped at the value's own level); any other quote closes the value or a string
    around it. A run of backslashes is taken whole with the character after it (or, escaped
    backslashes, just before the closing quote), so a value never ends inside an escape, and a
    JSON line stays valid JSON when it is replaced.
    """
    k = 2**depth - 1
    opener = "[^\\\\]" + "\\\\" * k + '"'
    inner_quote = rf'(?:\\{{{2 * k + 2}}})*\\{{{2 * k + 1}}}"'
    # escaped backslashes just before the closing quote belong to the value too
    last_backslashes = rf'(?:\\{{{2 * k + 2}}})+(?=\\{{{k}}}")'
    return rf'(?<={opener})(?:[^"\\\n]|\\+[^"\\\n]|{inner_quote}|{last_backslashes})'


#: A credential's value after its name and separator (`group 1` ends with its opening quote,
#: if any): a double-quoted value up to its real closing quote at escaping depths 0-4, a
#: single-quoted one up to the next quote, or a bare word (a quote inside it is taken when a
#: letter or digit follows: `ab"cd`; an escaped newline or tab ends it, and so does a `&` that
#: starts the next query parameter: `?access_token=X&x=1` keeps `&x=1`).
_QUOTED_VALUE = (
    "|".join(f"{_quoted_units(d)}{{4,}}" for d in range(5))
    + r"|(?<=')(?:[^'\"\\\n]|\\+[^'\"\\\n]){4,}"
)
_VALUE = (
    "(?:"
    + _QUOTED_VALUE
    + r"|(?:[^\s\"'\\,}&]|&(?!\w[\w.\-]*=))(?:[^\s\"'\\,}&]|&(?!\w[\w.\-]*=)"
    + r"|\\+[^\s\"'\\,}nrt]|\\*[\"'](?=[A-Za-z0-9])){3,}(?<!>))"  # `value=X>` keeps its `>`
)
#: A value in prose: quoted as `_VALUE`, or a bare word that ends before a curly closing quote
#: and leaves a sentence's closing punctuation (`my password was X.` keeps its `.`).
_PROSE_VALUE = (
    "(?:"
    + _QUOTED_VALUE
    + r"|(?:[^\s\"'\\,}&“”‘’«»]|&(?!\w[\w.\-]*=)|\\+[^\s\"'\\,}nrt“”‘’«»]"
    + r"|\\*[\"'](?=[A-Za-z0-9])){4,}(?<![.;:)>]))"
)
#: What a credential in prose is for (`the password for the admin account is X`): up to 60
#: characters, a `.` or `:` inside a name (`example.com`, `db:5432`) and quoted names included.
_WHAT = r"(?:[^\n.:;\"'`\\]|[.:](?=[^\s.:;\"'\\])|['`]|\\+\"){1,60}?"
#: A value said in prose with more words (`the token was X`) must look like a secret: a digit
#: or a symbol in its first 64 characters (after its opening quote, if any), so that `the
#: token is expired`, `the secret is out` keep their words, and a quote that closes a string
#: (`"password reset"`) does not open a value.
_SECRETISH = r"(?=(?:\\*[\"'“‘«„])?[^\s\"'\\<>]{0,63}[0-9!#$%^&*_+=~@])"
#: The value of an `Authorization` header (any scheme: Basic, Bearer, Digest, Token, ...):
#: quoted as above, else to the end of the line (a quoted word inside it is taken).
_HEADER_VALUE = (
    "(?:"
    + _QUOTED_VALUE
    + r"|[^\s\"'\\,}](?:[^\"'\\\r\n]|\\+[^\"'\\\r\nnrt]"
    + r"|\\*[\"'](?=[A-Za-z0-9/+]|,\s*[A-Za-z]+=)){3,})"
)
_OPENER = r"(?:\\*[\"'])?"
#: White space after a name's separator: raw, or written as JSON escapes (`\n`, `\\n`, `\t`),
#: so that a value on the next line of an escaped text is still the name's value.
_GAP = r"(?:\s|\\+[nrt])*"
#: Authorization schemes (RFC 9110 and common others), for a scheme alone at the end of a line.
_SCHEMES = (
    r"(?:bearer|basic|digest|token|negotiate|ntlm|oauth|apikey|api-key|jwt|dpop|hoba|mutual"
    r"|aws4-hmac-sha256|scram-sha-\d+)"
)
#: A line break between an `Authorization` header's scheme and its credential: raw or escaped.
_BREAK = r"(?:[ \t]|\\+t)*(?:\r?\n|\\+r\\+n|\\+n|\\+r)(?:\s|\\+[nrt])*"


#: A line break: raw or JSON-escaped (at any depth).
_NL = r"(?:\r?\n|\\+r\\+n|\\+n|\\+r)"
#: A YAML block scalar indicator (`|`, `>-`, `|2+`) after a name, its line break, any blank
#: lines, and the indentation of its first line (group 3 of the `password` pattern: the block's
#: lines all start with it).
_BLOCK = r"[|>][1-9]?[+\-]?[1-9]?(?:[ \t]|\\+t)*" + _NL + r"(?:[ \t]*" + _NL + r")*([ \t]+)"
#: The text of a block scalar's line (a quote that ends a JSON string ends it too; should one
#: be taken, `redact` finds the JSON's shape changed and redacts string by string instead).
_BLOCK_LINE = r"(?:[^\r\n\\\"]|\\+[^\r\n\\nr]|\"(?!\s*[,}\]:]|$))+"
#: A block scalar's value: its first line and every later line indented as deeply (blank lines
#: between them included); the first less indented line (the next key) ends it.
_BLOCK_VALUE = _BLOCK_LINE + r"(?:" + _NL + r"(?:[ \t]*" + _NL + r")*\3" + _BLOCK_LINE + r")*"
#: A credential's name given as the value of a `name` field (ending with it: `DB_PASSWORD`, not
#: `password_policy`), then its value as the `value` field after it: Kubernetes/ECS
#: `- name: DB_PASSWORD` / `value: X`, the JSON `{"name": "DB_PASSWORD", "value": "X"}` and
#: .NET `<add key="ApiKey" value="X"/>`.
_NAME_THEN_VALUE = (  # the space between them taken whole (atomic): no quadratic backtracking
    r"|" + _Q + r"(?>[ \t]*,?" + _GAP + r")(?:-[ \t]*)?\\*[\"']?value\\*[\"']?"
    + r"[ \t]*[:=]" + _GAP + _OPENER
)  # fmt: skip
#: A value after a `:` (YAML, INI, headers): quoted as `_VALUE`, else every word up to the end
#: of its line (`password: correct horse battery staple`), a comment (` #`) or a closing
#: bracket; a bare value after `=` (env, CLI, query) ends at its first space.
_LINE_VALUE = (
    "(?:" + _QUOTED_VALUE + r"|(?:[^\s\"'\\,}&]|&(?!\w[\w.\-]*=))"
    + r"(?:[^\s\"'\\}&]|&(?!\w[\w.\-]*=)|\\+[^\s\"'\\,}nrt]|\\*[\"'](?=[A-Za-z0-9])){3,}"
    + r"(?:[ \t]+(?!#)[^\s\"'\\}\]#]+)*)"
)  # fmt: skip
#: The word for password in other languages, as more alternatives of `_KEY_NAMES` (German,
#: Spanish, French, Portuguese, Dutch, Polish, Turkish, Russian, Chinese, Japanese, Korean).
_FOREIGN_NAMES = (
    r"|passwort|kennwort|contrase(?:ñ|n)a|mot[ _\-]de[ _\-]passe|senha|wachtwoord|has(?:ł|l)o"
    r"|şifre|пароль|密码|密碼|口令|パスワード|비밀번호"
)
#: An environment variable named `<VENDOR>_KEY` (`MISTRAL_KEY=`, `OPENAI_KEY =`): upper case and
#: an `=` only, so our own `idempotency_key` and a JSON `"key"` are no names; the keys that name
#: no secret (`PUBLIC_KEY`, `PRIMARY_KEY`, `CACHE_KEY`, `SORT_KEY`, ...) stay.
_ENV_KEY = (
    r"|(?-i:(?<=[A-Z0-9]_)KEY(?=[ \t]*=)(?<!PUBLIC_KEY)(?<!PUBLISHABLE_KEY)(?<!PRIMARY_KEY)"
    r"(?<!FOREIGN_KEY)(?<!SORT_KEY)(?<!PARTITION_KEY)(?<!CACHE_KEY)(?<!IDEMPOTENCY_KEY)"
    r"(?<!ROUTING_KEY)(?<!LOOKUP_KEY)(?<!GROUP_KEY)(?<!SHARD_KEY)(?<!HASH_KEY)(?<!RANGE_KEY)"
    r"(?<!DEDUP_KEY)(?<!PUB_KEY))"
)
#: Names whose value is a credential, one grammar for every form that names a value: JSON and
#: Python keys, `NAME=value` (env, CLI, query), YAML and INI `name: value`, markup
#: `<name>value</name>`. The match starts at the keyword, so a prefix (`aws_`, `DB_`, `client_`)
#: stays outside it and readable: `DB_PASS`, `MYSQL_ROOT_PASSWORD`, `VAULT_SECRET`, `accessKey`.
_KEY_NAMES = (
    r"(?:password|passwd|passphrase|passcode|(?:(?<![a-z])|" + _ESC + r")pass(?![a-z])|sshpass|pwd"
    r"|secret(?:[_-]?(?:access[_-]?)?key)?|api[_-]?key|access[_-]?key|subscription[_-]?key"
    r"|(?:encryption|master|signing|account|auth|session)[_-]?key"
    r"|(?:client[_-])?key[_-]data|(?:(?<![a-z\-])|"
    + _ESC
    + r")auth(?=\\*[\"'][ \t]*:)|[_-]pat(?![a-z])"
    r"|(?:auth|identity|refresh|access|session|api)token"
    r"|x-auth|private[_-]?key|(?:(?<![a-z])|"
    + _ESC
    + r")token|_token|(?-i:(?<=[a-z])Token)|credential"
    + _ENV_KEY
    # a custom header (`X-Custom-Auth`, `X-Acme-Key`; `X-*-Token` is a `token`)
    + r"|(?:(?<![\w\-])|"
    + _ESC
    + r")x-(?:[a-z0-9]+-){1,4}(?:auth|key)(?![\w\-])"
    + _FOREIGN_NAMES
    + r")s?"
    r"(?<!tokens)"
)
#: Sensitive HTTP header names, one list for every header form. `Name: value` and
#: `{"Name": "value"}` are found by their kind's name grammar (`authorization` by `bearer`,
#: `cookie`/`set-cookie` by `cookie`, the others by `_KEY_NAMES`); a pair in a list of headers,
#: `[["Set-Cookie", "sid=..."]]` or `(("X-Api-Key", "..."),)` (httpx, `requests`, ASGI
#: style), by the `header` kind.
_HEADER_NAMES: tuple[str, ...] = (
    "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key",
    "x-auth", "x-auth-token", "x-access-token", "x-vault-token", "ocp-apim-subscription-key",
    "private-token",
)  # fmt: skip
#: Space between the items of a list: raw or JSON-escaped (pretty-printed JSON in a string).
_ITEM_GAP = r"(?:\s|\\+[nrt])*"
#: A credential's value that is a list or an object (JSON, a Python or YAML flow collection):
#: an unquoted bracket, then (after any space) a quote, a bracket, a number or its end. The
#: `password` pattern leaves it to `_redact_containers`, which redacts every item in it.
_CONTAINER_START = r"(?<![\"'])[\[{(]" + _ITEM_GAP + r"(?:\\*[\"'\[{\]}]|-?\d)"


def _intl_phone(country: str) -> str:
    """An international number: `+`, `country`, then 8-15 digits in all, separated or 10+ bare."""
    return (
        r"\+(?=(?:[ .\-()]{0,2}\d){8,15}(?![ .\-()]{0,2}\d))(?=\d{10}|\d{1,3}[ .\-(])"
        + country
        + r"(?:[ .\-]?(?:\(\d{1,4}\)|\d{1,8})){1,6}(?!\d)"
    )


#: GitLab token types, each written `gl<type>-` before the token (personal, deploy, runner, ...).
_GITLAB_TYPES = (
    "pat", "dt", "rt", "rtr", "ptt", "ft", "imt", "agent", "oas", "soat", "cbt", "ffct", "wt",
)  # fmt: skip
#: Where a provider key may start: not right after an ASCII letter, digit or `_` (inside a word
#: or an id: `task-...`), or after a JSON escape (`_ESC`), or after a percent-encoded byte
#: (`key%3Dsk-...`, `%22ghp_...%22`, `%20AKIA...`: a key in a URL's query or a form body). The
#: boundary is ASCII's: a key written right after a non-ASCII letter (`密钥sk-...`, `éghp_...`)
#: starts there, as Chinese or Japanese text writes it without a space.
_KEY_START = r"(?:(?<![A-Za-z0-9_])|" + _ESC + r"|(?<=%[0-9A-Fa-f]{2}))"
#: Provider keys whose prefix no ordinary word or id holds, each in its documented shape (the
#: exact length where the provider fixes one): the `api_key` pattern also finds them after `_`
#: or a digit (a model-invented tool name `op_ghp_...`, `secret_sk-proj-...`, `1sk-ant-...`),
#: never right after an ASCII letter (`task-proj-...` is an id). Prefixes that are words or
#: common abbreviations (`sk-` alone, `key-`, `secret_`, `hf_`, `npm_`, `SK`, `fw_`, `r8_`,
#: `dapi`, `hvs.`, `ya29.`) keep `_KEY_START`.
_STRONG_KEYS = (
    r"(?:sk-(?:ant|proj)-[A-Za-z0-9_\-]{16,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{24,}|whsec_[A-Za-z0-9+/=]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}"
    r"|gl(?:" + "|".join(_GITLAB_TYPES) + r")-[A-Za-z0-9_\-]{20,}"
    r"|(?:xoxe\.)?xox[a-z]-[0-9]{1,16}-[A-Za-z0-9\-]{10,}|xapp-[0-9]-[A-Za-z0-9\-]{10,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35}|GOCSPX-[A-Za-z0-9_\-]{20,}"
    r"|pypi-AgE[A-Za-z0-9_\-]{50,}|rubygems_[0-9a-f]{48}|dckr_pat_[A-Za-z0-9_\-]{20,}"
    r"|SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}|shp(?:at|ss|ca|pa)_[A-Za-z0-9]{32,}"
    r"|do[por]_v1_[A-Za-z0-9]{40,}|glsa_[A-Za-z0-9_]{32,}|AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}"
    r"|gsk_[A-Za-z0-9]{52}|xai-[A-Za-z0-9]{80}|pplx-[A-Za-z0-9]{48}|nvapi-[A-Za-z0-9_\-]{64}"
    r"|lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}|tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}"
    r"|pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,}|lin_api_[A-Za-z0-9]{40}"
    r"|ATATT3[A-Za-z0-9_\-=]{150,}|PMAK-[0-9a-f]{24}-[0-9a-f]{34}"
    r"|xkeysib-[0-9a-f]{64}-[A-Za-z0-9]{16}|sbp_[0-9a-f]{40})"
)
#: The characters an `api_key` match can start with (a key's prefix, a Telegram bot id, `1//0`,
#: a webhook host, `?key=`/`&sig=`, a JSON `"key"`): the pattern looks ahead for one before
#: trying its branches, so most places of a line (spaces, punctuation, `e`, `a`, `o`, most
#: non-ASCII letters) cost one test. `tests/log/test_redact_key_boundaries.py` checks it
#: against the pattern's branches.
_KEY_FIRST = r"(?=[0-9?&dfghklnprstwxyAGKPS])"
_PATTERNS: dict[str, str] = {
    # First, so that nothing partial (a `private_key` name's value) eats the BEGIN line. A key
    # with no END line (cut off) is taken to the end of its string.
    "private_key": r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[^\"'\\\-]|\\+[nrt/]"
    r"|-(?!----))*(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)?"
    # a PuTTY key file's private lines (`Private-Lines: N`, then N lines of base64, raw or
    # JSON-escaped breaks); its header, public lines and MAC stay readable
    r"|(Private-Lines:[ \t]*\d+[ \t]*"
    + _NL
    + r")[A-Za-z0-9+/=]++(?=[\r\n\\\"']|$)(?:"
    + _NL
    + r"[A-Za-z0-9+/=]++(?=[\r\n\\\"']|$))*+",
    # Provider keys, each a fixed prefix and a long random body: OpenAI/Anthropic/DeepSeek style,
    # Stripe (secret, restricted, webhook signing secret), GitHub (classic and fine-grained),
    # GitLab (every `gl...-` token type), npm, PyPI, Hugging Face, Slack (every `xox?-` type,
    # rotating `xoxe.` and app-level `xapp-`), AWS access key ids, Google (API key, OAuth access
    # `ya29.`, refresh `1//0` and OAuth client secret `GOCSPX-` tokens), RubyGems, Docker Hub,
    # HashiCorp Vault (`hvs.`, `hvb.`, `hvr.`), SendGrid (`SG.<22>.<43>`), Shopify, DigitalOcean
    # and Grafana service-account tokens.
    # Every match starts at one of `_KEY_FIRST` (checked once per place, before any branch).
    "api_key": _KEY_FIRST
    + r"(?:"
    + _KEY_START
    + r"(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}"
    r"|whsec_[A-Za-z0-9+/=]{20,}|github_pat_[A-Za-z0-9_]{22,}|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|gl(?:" + "|".join(_GITLAB_TYPES) + r")-[A-Za-z0-9_\-]{20,}"
    r"|npm_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_\-]{50,}|hf_[A-Za-z0-9]{30,}"
    r"|(?:xoxe\.)?xox[a-z]-[A-Za-z0-9\-]{10,}|xapp-[A-Za-z0-9\-]{10,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35}|ya29\.[A-Za-z0-9_\-]{20,}"
    r"|GOCSPX-[A-Za-z0-9_\-]{20,}|rubygems_[A-Za-z0-9]{30,}|dckr_pat_[A-Za-z0-9_\-]{20,}"
    r"|hv[sbr]\.[A-Za-z0-9_\-]{20,}|SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}"
    r"|shp(?:at|ss|ca|pa)_[A-Za-z0-9]{32,}|do[por]_v1_[A-Za-z0-9]{40,}|glsa_[A-Za-z0-9_]{32,}"
    # Mailgun `key-`, Databricks `dapi`, Notion (`secret_`, `ntn_`), age secret keys (bech32),
    # Twilio API keys (`SK`; an `AC` account SID is an id, not a secret)
    r"|(?:key-[0-9a-f]{32}|dapi[0-9a-f]{32}(?:-\d+)?|secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{46}"
    r"|AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}|SK[0-9a-fA-F]{32}"
    # LLM and agent-tool vendors, each its documented shape: Groq `gsk_`, xAI `xai-`,
    # Replicate `r8_`, Perplexity `pplx-`, Fireworks `fw_` (a digit in it: `fw_` starts
    # names), NVIDIA `nvapi-`, LangSmith `lsv2_pt_`/`lsv2_sk_`, Tavily `tvly-`, Pinecone
    # `pcsk_`, Linear `lin_api_`, Atlassian `ATATT3`, Postman `PMAK-`, Brevo `xkeysib-`,
    # Supabase `sbp_`
    r"|gsk_[A-Za-z0-9]{52}|xai-[A-Za-z0-9]{80}|r8_[A-Za-z0-9]{37,40}|pplx-[A-Za-z0-9]{48}"
    r"|fw_(?=[A-Za-z]{0,40}[0-9])[A-Za-z0-9]{24,}|nvapi-[A-Za-z0-9_\-]{64}"
    r"|lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}|tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}"
    r"|pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,}|lin_api_[A-Za-z0-9]{40}"
    r"|ATATT3[A-Za-z0-9_\-=]{150,}|PMAK-[0-9a-f]{24}-[0-9a-f]{34}"
    r"|xkeysib-[0-9a-f]{64}-[A-Za-z0-9]{16}|sbp_[0-9a-f]{40})(?![A-Za-z0-9_]))"
    # a strongly-prefixed key right after `_` or a digit too (`_STRONG_KEYS`)
    r"|(?<=[0-9_])(?=[AGPSdglnprstwx])" + _STRONG_KEYS + r"(?![A-Za-z0-9])"
    # a Telegram bot token (`<bot id>:AA...`, in a `/bot<token>/` API path too)
    r"|(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])"
    r"|(?:(?<![A-Za-z0-9_/])|" + _ESC + r"|(?<=%[0-9A-Fa-f]{2}))1//0[A-Za-z0-9_\-]{30,}"
    # webhook URLs whose path is the secret (the host stays readable), and an API key given
    # as a `key` query parameter (16 characters or more)
    r"|((?:(?<![\w.])|" + _ESC + r")hooks\.slack\.com/(?:services|workflows|triggers)/"
    r"|(?:(?<![\w.])|" + _ESC + r")discord(?:app)?\.com/api/webhooks/|[?&]key="
    # a signed URL's signature (S3, GCS, Azure SAS `sig`) or an `auth` query parameter
    r"|[?&](?i:sig|signature|x-amz-signature|x-goog-signature|auth)="
    # a JSON `"key"` field whose value looks like a key: 32-200 letters, digits, `_`, `-`,
    # with upper and lower case letters and a digit (an id or a hex hash is not one)
    r"|(?<![\w\-])(?i:key)\\*\"[ \t]*:[ \t]*\\*\"(?=[A-Za-z0-9_\-]{32,200}\\*\")"
    r"(?=[a-z0-9_\-]{0,199}[A-Z])(?=[A-Z0-9_\-]{0,199}[a-z])(?=[A-Za-z_\-]{0,199}[0-9])"
    r")[A-Za-z0-9_/\-%+.]{16,})",
    # Bearer tokens; the value of an Authorization header, whatever its scheme (the header's
    # name stays readable).
    # A scheme alone at the end of a line takes the credential on the next one (`Bearer\n`
    # in a header written over two lines, raw or JSON-escaped).
    "bearer": r"(?i)(?:\b|"
    + _ESC
    + r")bearer(?:\s|\\+[nrt])+[A-Za-z0-9._~+/\-]{8,}=*|((?:(?:\b|"
    + _ESC
    + r")authorization"
    + _Q
    + r"[ \t\n]*[:=]"
    + _GAP
    + _OPENER
    + r"))(?!\[REDACTED)(?:"
    + _SCHEMES
    + _BREAK
    + r"[A-Za-z0-9._~+/\-]{4,}+=*+(?!:)|"
    + _HEADER_VALUE
    + ")",
    # A `Cookie` or `Set-Cookie` header's value (session ids and the like), whole: the name
    # stays readable. A JSON object or list after it (`"cookies": {...}`) is not a header: it
    # is a cookie jar, whose values `_redact_jars` redacts one by one (same kind).
    "cookie": r"(?i)((?:(?<![\w\-])|"
    + _ESC
    + r")(?:(?:set-)?cookies?"
    + _Q
    + r"[ \t]*[:=]"
    + _GAP
    + _OPENER
    + r"))(?!\[REDACTED)(?![\[{])"
    + _HEADER_VALUE,
    # JSON Web Tokens: three base64url parts, the first two JSON objects ("eyJ").
    # A token written over several lines (broken after a dot, raw or JSON-escaped) is one.
    "jwt": r"(?:\b|"
    + _ESC
    + r")eyJ[A-Za-z0-9_\-]{8,}\.(?:"
    + _BREAK
    + r")?eyJ[A-Za-z0-9_\-]{8,}\.(?:"
    + _BREAK
    + r")?[A-Za-z0-9_\-]{8,}",
    # "password": "...", password=..., aws_secret_access_key = ..., "token": "...",
    # "accessToken": "..." (the value only; the key stays readable), at any escaping depth.
    # The match starts at the keyword (a name's prefix such as `aws_` stays outside it and so
    # unchanged): a leading `\b[a-z0-9_-]*` would make the engine try every word of a line.
    # A quoted value is taken up to its real closing quote (spaces, commas and escaped quotes
    # included).
    # A YAML block scalar (`password: |` then the value on the next line) names one too, and
    # so does markup (`<password>x</password>`, group 2: the value is the element's text up
    # to a closing tag of a credential's name).
    "password": r"(?i)((?:"
    + _KEY_NAMES
    + r"(?:"
    + _Q
    + r"[ \t\n\u00a0\u202f\u3000]*(?:([:\uff1a])|[=\uff1d])"
    + _GAP
    + r"(?:"
    + _BLOCK
    + r"|"
    + _OPENER
    + r")|(?<!</)(?<=[\w\-])(?:\s[^<>\n]{0,100})?(>)"
    + _NAME_THEN_VALUE
    # a link is not a password ("reset your password: https://...")
    + r")))(?!\[REDACTED)(?!https?://)(?!"
    + _CONTAINER_START
    + r")(?(4)[^<>\r\n\"\\]{1,1024}(?=</[\w.:\-]*"
    + _KEY_NAMES
    + r">)|(?(3)"
    + _BLOCK_VALUE
    + r"|(?(2)"
    + _LINE_VALUE
    + r"|"
    + _VALUE
    + ")))",
    # A sensitive header's value in a `[name, value]` pair of a list of headers: the pair
    # opens with the name and closes after the value, so a list of header names stays.
    "header": r"(?i)([\[(]"
    + _ITEM_GAP
    + r"\\*[\"'](?:"
    + "|".join(re.escape(n) for n in _HEADER_NAMES)
    # or any credential's name (`[["password", "x"]]`, `data=[("db_token", "x")]`)
    + r"|[\w.\-]{0,40}?(?:"
    + _KEY_NAMES
    + r"))\\*[\"']"
    + _ITEM_GAP
    + ","
    + _ITEM_GAP
    + _OPENER
    + r")(?!\[REDACTED)"
    + _HEADER_VALUE
    + r"(?=\\*[\"']"
    + _ITEM_GAP
    + r"[\])])",
    # "my password is X", "the passcode was: X" (natural language).
    # "the password for the admin account is X", "my pw is X", "Password - X"; a `.netrc`
    # line (`login bob password X`) and PowerShell's `ConvertTo-SecureString 'X'`.
    # More verbs (`will be`, `has been changed to`, `'s`), names (`token`, `secret`, `api key`;
    # not a card's PIN, which the data-class probes plant as restricted data) and `set the
    # password to X`, `use password X`: their bare value must look like a secret (`_SECRETISH`).
    # Space is taken possessively (`\s++`): `password is` + 20,000 spaces took 27 s when each
    # split of the run between `\s*` and `\s*` was tried. `'s` follows a password's name only
    # (`password's X`, not `token's 3600s lifetime`). An HTML password field's `value` when its
    # `type` comes after it (`<input value="X" type="password">`; a `type` before it, `password`
    # finds).
    "password_phrase": r"(?i)((?:(?:\b|"
    + _ESC
    + r")(?:password|passphrase|passcode|pwd|pw)"
    + r"(?:\s++(?:for|of|to)\s++"
    + _WHAT
    + r")?\s++(?:is|was|-)\s*+:?\s*+"
    + r"|(?:\b|"
    + _ESC
    + r")(?:passwords?|passphrase|passcode|passkey|pwd|pw|secret|token|api[ _\-]?key"
    + r"|access[ _\-]?key)"
    + r"(?:\s++(?:for|of|to|on)\s++"
    + _WHAT
    + r")?(?:(?<=[de])'s|\s++(?:is|was|are|were|will\s++be|would\s++be|has\s++been"
    + r"|have\s++been|had\s++been"
    + r"|becomes|became)(?:\s++(?:now|still))?|(?:\s++(?:is|was|has\s++been|had\s++been))?"
    + r"\s++(?:set|changed|reset|updated)\s++to)\s*+:?\s*+"
    + _SECRETISH
    + r"|(?:\b|"
    + _ESC
    + r")(?:set|change|changed|reset|update|use|using|with|enter|type|try)\s++"
    + r"(?:(?:the|my|your|his|her|their|our|a|new|old)\s++){0,2}(?:[a-z0-9\-]+\s++)?"
    + r"(?:password|passphrase|passcode)\s++(?:to\s++)?"
    + _SECRETISH
    + r"|<input\b[^<>]{0,512}?\bvalue[ \t]*=[ \t]*"
    + r"(?=[^<>]{0,1024}?\btype[ \t]*=[ \t]*\\*[\"']?password\b)"
    + r"|(?:\b|"
    + _ESC
    + r")login[ \t]++[^\s\"'\\]++[ \t]++password[ \t]++"
    + r"|(?:\b|"
    + _ESC
    + r")convertto-securestring[ \t]++(?:-string[ \t]++)?)"
    + r"(?:\\*[\"'“‘«„])?"
    + r")(?!\[REDACTED)"
    + _PROSE_VALUE,
    # user:password@ in a URL (the password only; the user may be empty, `redis://:pw@host`).
    # The password may hold `/` and `@` as typed: it ends at the last `@` before the host (a
    # `?`, `#` or `//` ends the URL's authority, and `host:8080/path@x` is a port, not a
    # password); the places a password can span are bounded, so no line costs quadratic time.
    "url_credentials": r"(?i)(\b[a-z][a-z0-9+.\-]*://(?!\[REDACTED)[^\s/:@\"'\\]*:)"
    r"(?!\[REDACTED)(?!\d{1,5}/)(?:[^\s?#\"'\\/]|/(?!/))+(?=@[^\s/?#@\"'\\]*(?:[/?#\s\"'\\]|$))"
    # a key as the whole user part (a Sentry DSN, `https://<32 hex>@o1.ingest.sentry.io/2`)
    r"|(?<=://)[0-9a-f]{32,}(?=@)",
    # user:password given to a command line option (curl `-u`/`--user`/`--proxy-user`, httpie
    # `--auth` and, after the `http`/`https`/`httpie` command, `-a`), bare or quoted (the
    # password only; a user alone, `-u admin`, is no secret).
    # A MySQL/MariaDB client's `-pPASSWORD` (lower-case `p`, joined: `-P` is the port) and
    # `sshpass -p PASSWORD` (the password only).
    "basic_auth": r"(?i)((?:(?:(?<![\w\-])|"
    + _ESC
    + r")(?:-u|--user|--proxy-user|--auth)"
    + r"|(?:(?<![\w\-/.])|"
    + _ESC
    + r")(?:https?|httpie)[ \t][^\n\"'\\|;&]{0,256}?(?<=[ \t])-a)(?:[ \t]+|=)?"
    + _OPENER
    + r"(?!\[REDACTED)[^\s:\"'\\]*:"
    # a secret given to a long option after a space (`--password X`, `--token X`), or to a
    # client's short option: `docker login -p X`, `redis-cli -a X`, `ldapsearch -w X`,
    # `sqlcmd -P X`; requests' `auth=('user', 'X')`
    + r"|(?:(?<![\w\-])|"
    + _ESC
    + r")--(?:password|passwd|pass|token|api-key|apikey|secret|access-token"
    + r"|auth-token|with-token)[ \t]+"
    + _OPENER
    + r"|(?:(?<![\w\-])|"
    + _ESC
    + r")(?:(?:docker|podman|nerdctl)[ \t]+login|redis-cli|ldap(?:search|modify"
    + r"|add|delete|whoami|passwd)|sqlcmd)\b[^\n\"'\\|;&]{0,256}?[ \t]"
    + r"(?:(?<=login[ \t])|(?<=[ \t]))(?-i:-p|-a|-w|-P)[ \t]+"
    + _OPENER
    + r"|(?:\b|"
    + _ESC
    + r")(?:auth|creds?|credentials?)[ \t]*=[ \t]*[(\[][ \t]*\\*[\"'][^\"'\\\n]{0,64}\\*[\"']"
    + r"[ \t]*,[ \t]*"
    + _OPENER
    + r"|(?:(?<![\w\-])|"
    + _ESC
    + r")(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n\"'\\|;&]{0,256}?[ \t]"
    + r"(?-i:-p)(?=[^\s\-])"
    + r"|(?:(?<![\w\-])|"
    + _ESC
    + r")sshpass[ \t]+(?-i:-p)[ \t]*"
    + _OPENER
    + r")(?!\[REDACTED)(?:[^\s\"'\\]|\\+[^\s\"'\\nrt]){3,}",
    "email": r"\b[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63})*"
    r"\.[A-Za-z]{2,}\b",
    # Phone numbers: any `+` number (8-15 digits, with separators or 10+ bare) and a North
    # American number written with a dash before its last four digits (`415-555-0134`,
    # `(415) 555-0134`, `1-415-555-0134`: area code and exchange not starting with 0 or 1, so
    # `123-456-7890` and card or id groups are not phones) anywhere; any 3-3-4 number after
    # "phone" (a key such as `phone_number`, `telephone`, or "Phone:").
    "phone": r"(?<![\w+])"
    + _intl_phone(r"[1-9]\d{0,2}")
    + r"|(?<![\w+\-.])(?:1[ .\-])?(?:\([2-9]\d{2}\) ?|[2-9]\d{2}[ .\-])[2-9]\d{2}-\d{4}"
    r"(?![\w\-]|\.\d)"
    r"|(?i:(phone[^\d\n]{0,24}?))(?<![\w+])(?:"
    + _intl_phone(r"[1-9]\d{0,2}")
    + r"|(?:\(\d{3}\)[ .\-]?|\d{3}[ .\-])\d{3}[ .\-]\d{4}(?!\d))",
}
#: The words of `_FOREIGN_NAMES` (lower case), as triggers and anchors: the ASCII ones are
#: checked like any trigger, the others only in a text that is not ASCII (`Redactor.needs`).
_FOREIGN_WORDS = (
    "passwort", "kennwort", "contraseña", "contrasena", "mot de passe", "mot_de_passe",
    "mot-de-passe", "senha", "wachtwoord", "hasło", "haslo", "şifre", "пароль", "密码", "密碼",
    "口令", "パスワード", "비밀번호",
)  # fmt: skip
#: Invisible characters (soft hyphen, zero-width space, non-joiner and joiner, word joiner,
#: BOM) that can hide a credential's name from every pattern (`pass\u200bword=`): `redact`
#: also scans a text without them (`_INVISIBLE`), and any of them wakes `Redactor.needs`.
_INVISIBLE_CHARS = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
_INVISIBLE = lazy_pattern(f"[{_INVISIBLE_CHARS}]+")
#: A JSON `\uXXXX` escape, at any escaping depth (`\\u` too), of a character that is not
#: ASCII and not half of a surrogate pair: what a writer with `ensure_ascii` (Python's `json`
#: default, so many servers and tools) makes of `密码` or of a zero-width space. `redact` also
#: scans the text with these written as the characters themselves (`_unescaped`), which means
#: the same at every depth, and `Redactor.needs` wakes for the non-ASCII triggers in that view.
_NON_ASCII_ESCAPE = lazy_pattern(r"\\+u((?![0]{2}[0-7])(?![dD][89abAB])[0-9a-fA-F]{4})")


def _unescaped(text: str) -> str:
    """`text` with each `_NON_ASCII_ESCAPE` written as its character (`text` itself if none)."""
    return _NON_ASCII_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


# Cheap substring triggers: a kind's regex runs only when one of its triggers is in the text
# (lower-cased), which keeps the common case (no secret) to a few `in` checks per line.
_TRIGGERS: dict[str, tuple[str, ...]] = {
    "api_key": (
        "sk-", "sk_", "rk_", "whsec_", "github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
        *(f"gl{t}-" for t in _GITLAB_TYPES), "npm_", "pypi-", "hf_", "xox", "xapp-", "akia",
        "aiza", "ya29.", "1//0", "gocspx-", "rubygems_", "dckr_pat_", "hvs.", "hvb.",
        "hvr.", "sg.", "shpat_", "shpss_", "shpca_", "shppa_", "_v1_", "glsa_", "hooks.slack.com/",
        "/api/webhooks/", "?key=", "&key=", "sig=", "signature=", "?auth=", "&auth=", "key-",
        "dapi", "secret_", "ntn_", "age-secret-key-", "gsk_", "xai-", "r8_", "pplx-", "fw_",
        "nvapi-", "lsv2_", "tvly-", "pcsk_", "lin_api_", "pmak-", "xkeysib-", "sbp_",
    ),
    "bearer": ("bearer", "authorization"),
    "cookie": ("cookie",),
    # each name, or (names ending in `token`) a quote or backslash after `token`, as a pair
    # always has one
    # and the password rule's names (a pair of any credential's name), all in `needs` already
    "header": (
        *(n for n in _HEADER_NAMES if not n.endswith("token")), 'token"', "token'", "token\\",
        "passw", "passphrase", "passcode", "pwd", "secret", "api_key", "apikey", "credential",
        'pass"', "pass'", "pass\\", '-key"', "-key'", "-key\\", '-auth"', "-auth'", "-auth\\",
    ),
    "jwt": ("eyj",),
    "password": (
        "passw", "passphrase", "passcode", "pwd", "secret", "api_key", "apikey", "api-key",
        "access_key", "accesskey", "access-key", "subscription_key", "subscriptionkey",
        "subscription-key", "x-auth", "private_key", "privatekey", "private-key", "credential",
        # `<word>_key` names, `<word>token` joined, a JSON `"auth"` key, `GITHUB_PAT=`
        "sshpass", "encryption", "master_key", "master-key", "masterkey", "signing_key",
        "signing-key", "signingkey", "accountkey", "account_key", "account-key", "auth_key",
        "auth-key", "authkey", "session_key", "session-key", "sessionkey", "key_data",
        "key-data", 'auth"', "auth'", "auth\\", "_pat=", "_pat:", '_pat"', "_pat ", "-pat:",
        "-pat=", "authtoken", "identitytoken", "refreshtoken", "accesstoken", "sessiontoken",
        "apitoken", "_key=", "_key =", '-auth"', "-auth'", "-auth:", "-auth\\", '-key"', "-key'",
        "-key:", "-key\\", *_FOREIGN_WORDS,
        # a table's column header (`| API Key |`, `user,token`)
        "api key", "access key", "token|", "token,", "pass|", "pass,",
        # `pass` alone, as `token` below (never `passenger`): a quote, separator, tab, line
        # break or `>` (a space: the shape `_PASS_THEN_SEPARATOR`, never English's "pass a")
        'pass"', "pass'", "pass\\", "pass:", "pass=", "pass\t", "pass\n", "pass>",
        "token>",
        # a `token` key is followed by a quote, a separator or space (never `s` or `_`: our
        # own `prompt_tokens`, `token_estimate` must not wake the scan on every event)
        'token"', "token'", "token\\", "token:", "token=", "token ", "token\t", "token\n",
    ),
    "password_phrase": (
        "passw", "passphrase", "passcode", "pwd", "pw is", "pw was", "pw -", "securestring",
        "passkey", "secret", "token ", "token'", "api key", "api_key", "api-key", "apikey",
        "access key", "access_key", "access-key",
    ),
    "private_key": ("private key", "private-lines"),
    "url_credentials": ("://",),
    # `-u` (also in `--user`, `--proxy-user`) and `--auth`
    # `-p` for a MySQL client's `-pPASSWORD` and `sshpass -p`; httpie's command (its `-a`)
    "basic_auth": (
        "-u", "--auth", "-p", "http ", "http\t", "https ", "https\t", "httpie", "--token",
        "--api-key", "--apikey", "--secret", "--access-token", "--with-token", "redis-cli", "ldap",
        "sqlcmd",
        "auth=(", "auth =", "auth=[", "creds=", "creds =", "cred=", "cred =", "credential",
    ),
    "email": ("@",),
    # `+` and a digit, "phone" before a number; a dashed 3-3-4 number has a shape (below)
    "phone": ("+1", "+2", "+3", "+4", "+5", "+6", "+7", "+8", "+9", "phone"),
}  # fmt: skip
#: Triggers whose case is fixed (the pattern they wake is case-sensitive), tested against the
#: text itself, not its lower case, and only when their upper-case letter is in it (`memchr`
#: fast, and absent from most JSON lines): an AWS temporary key id `ASIA...` and a Telegram bot
#: token's `:AA`. Lower-cased, both were substring scans of every line.
_CASED_TRIGGERS: dict[str, tuple[str, ...]] = {"api_key": ("ASIA", ":AA", "ATATT")}
#: Triggers that are not one substring: `(anchor, regex)`, a kind's regex runs when `anchor`
#: followed by `regex` is found in the text (lower-cased): a 3-3-4 number's `ddd-dddd`.
#: `pass` then a space, where the password rule can take it as a name (`_KEY_NAMES`): a
#: separator (`:`, `=`, full-width ones, `,`, `-`, a table's `|`), a quote or backslash, or
#: `value`, after white space or escaped line breaks; or a `>` closing a tag on its line
#: (`<pass type="x">`). Plain "pass " woke a full scan of every line holding English such as
#: "pass a value" or "boarding pass " (harnesskit's own system prompt, airline chats).
_PASS_THEN_SEPARATOR = (
    "p",
    r"ass (?:\s|\\+[nrt])*(?:[:=\uff1a\uff1d|\"'\\,\-]|value)|ass [^<>\n]{0,100}>",
)
_SHAPES: dict[str, tuple[tuple[str, str], ...]] = {
    "password": (_PASS_THEN_SEPARATOR,),
    "phone": (("-", r"\d{4}(?!\d)(?<=\d{3}-\d{4})"),),
    # a Twilio API key: `sk` and 32 hex digits (`sk` alone is in `task`, `ask`, `desk`)
    # and a JSON `"key"` field holding 32 key characters (`idempotency_key` has a `_` before)
    "api_key": (
        ("k", r"[0-9a-f]{32}(?<=sk[0-9a-f]{32})"),
        ("k", r"ey\\*\"(?<![\w\-]key\")(?<![\w\-]key\\\")[ \t]*:[ \t]*\\*\"[a-z0-9_\-]{32}"),
    ),
}
#: Characters rare in log lines (JSON keys, ids, prose), rarest first. `Redactor.needs` looks
#: for each trigger that holds one of them from its rarest one: one `memchr`-fast test whether
#: that character is in the text, then, only when it is, one regex that starts at the character
#: and checks the rest of every such trigger around it. The last few (`g`, `p`, `c`) are in
#: most lines, but one regex from their few dozen places costs less than one substring scan of
#: the whole line per trigger (`sg.`, `glsa_`, `npm_`, `pass:`, `secret`, `credential`).
_RARE_CHARS = "@/+zjxvbwhk98-gpc"
#: Texts at least this long that `Redactor.needs_quoted` finds clean are remembered: shorter
#: ones cost less to scan again than to split a line around.
_REMEMBER_CHARS = 512
#: One check of `Redactor.needs`: `(prefix, search)`, the regex runs when `prefix` is in the text.
_Search = tuple[str, Callable[[str], object]]
#: One gated check of `Redactor.needs`: `(char, needle, search)`: when `char` is in the text,
#: `needle in text` (`search` is None) or `search(text)` (a regex that starts at `char`).
_Gate = tuple[str, str, Callable[[str], object] | None]

#: Credentials: rewritten to `[REDACTED:<kind>]` before anything is written (R-S1).
DEFAULT_KINDS: tuple[str, ...] = (
    "private_key",
    "api_key",
    "bearer",
    "jwt",
    "password",
    "password_phrase",
    "url_credentials",
    "cookie",
    "basic_auth",
    "header",
)
#: Personal data: kept exact and marked in `payload["personal_data"]` instead (R-S1).
PERSONAL_KINDS: tuple[str, ...] = ("email", "phone")


def _compile_extra(kind: object, pattern: object) -> re.Pattern[str]:
    """An `extra` pattern compiled, or a `UsageError` naming its kind and what is wrong."""
    if not isinstance(kind, str) or not isinstance(pattern, str):
        raise UsageError(
            f"Redactor extra: {kind!r}: {pattern!r} must map a kind name (str) to a regex (str)"
        )
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(
            f"Redactor extra pattern for {kind!r} is not a valid regex ({exc}): {pattern!r}; "
            "escape literal characters with re.escape()"
        ) from exc


@dataclass(slots=True)
class Redactor:
    """Replaces secrets in text with `[REDACTED:<kind>]`.

    Args:
        kinds: which built-in patterns rewrite text (default `DEFAULT_KINDS`, the credentials;
            add `"email"` to rewrite e-mail addresses too).
        extra: more `{kind: regex}` patterns (e.g. a customer id format).
        literals: exact strings to rewrite wherever they appear (e.g. a client's own API key),
            as `[REDACTED:secret]`.

    Raises:
        UsageError: `kinds` not a collection of names (e.g. one string) or an unknown kind; an
            `extra` pattern that is not a string or not a valid regular expression (the
            message names the kind and the regex error); `literals` given as one string rather
            than a tuple of strings; `None` for `literals` or `extra`.
    """

    kinds: Iterable[str] = DEFAULT_KINDS
    extra: dict[str, str] = field(default_factory=dict)
    literals: tuple[str, ...] = field(default=(), repr=False)  # secrets: never in a repr
    _compiled: list[tuple[str, re.Pattern[str], _Wake]] = field(init=False, repr=False)
    _triggers: tuple[str, ...] = field(init=False, repr=False)
    # the shaped triggers (`_SHAPES`) as regexes: `needs` wakes when one finds a match
    _shapes: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)
    # the checks `needs` makes (derived from the triggers; bound `search` methods compare by
    # identity, so they stay out of `==`, which a copy or an unpickled redactor must pass)
    _plain: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _searches: tuple[_Search, ...] = field(init=False, repr=False, compare=False)
    _gated: tuple[_Gate, ...] = field(init=False, repr=False, compare=False)
    # `_gated` split for `needs`: `(char, needle)` tested with `in`, `(char, search)` pairs
    _gated_in: tuple[tuple[str, str], ...] = field(init=False, repr=False, compare=False)
    _gated_re: tuple[tuple[str, Callable[[str], object]], ...] = field(
        init=False, repr=False, compare=False
    )
    # the triggers that are not ASCII, as one regex's `search`: run only on a non-ASCII text
    _foreign: Callable[[str], object] | None = field(init=False, repr=False, compare=False)
    # the cased triggers (`_CASED_TRIGGERS`), and as `(upper-case letter, triggers)` checks
    _cased: tuple[str, ...] = field(init=False, repr=False)
    _cased_gated: tuple[tuple[str, tuple[str, ...]], ...] = field(
        init=False, repr=False, compare=False
    )
    _personal: list[tuple[str, re.Pattern[str], _Wake]] = field(init=False, repr=False)
    _builtin: frozenset[str] = field(init=False, repr=False)
    _splits: bool = field(init=False, repr=False, compare=False)
    # each literal as `redact` rewrites it (raw, JSON-escaped once and twice)
    _literal_forms: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _quoted_clean: tuple[str, str] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if isinstance(self.kinds, str) or not isinstance(self.kinds, Iterable):
            raise UsageError(
                f"Redactor kinds must be a tuple of kind names, got {self.kinds!r:.60}; wrap a "
                f"single kind as ({self.kinds!r},) and keep the credentials: "
                "(*DEFAULT_KINDS, 'email')"
            )
        if self.literals is None or self.extra is None:
            raise UsageError("Redactor literals and extra take () and {} for none, not None")
        self.kinds = tuple(self.kinds)
        unknown = set(self.kinds) - set(_PATTERNS)
        if unknown:
            raise UsageError(
                f"unknown redaction kinds {sorted(unknown)}; known: {sorted(_PATTERNS)}"
            )
        if not isinstance(self.extra, Mapping):
            raise UsageError(
                f"Redactor extra must be a dict of {{kind: regex}}, not {type(self.extra).__name__}"
            )
        extra = {k: _compile_extra(k, p) for k, p in self.extra.items()}
        # built-in kinds in `_PATTERNS` order whatever the order asked (private keys first)
        patterns = {k: p for k, p in _PATTERNS.items() if k in self.kinds} | dict(self.extra)
        self._builtin = frozenset(k for k in self.kinds if k not in self.extra)
        self._compiled = [
            (k, extra[k] if k in extra else _builtin_pattern(k), _wake(k)) for k in patterns
        ]
        personal = [k for k in PERSONAL_KINDS if k not in patterns]
        # the pre-check wakes for personal data too: it is marked on every event (R-S1/R-S2),
        # not only on one that also holds a credential
        watched = [*patterns, *personal]
        # a trigger holding another one (`x-api-key` holds `api-key`) adds no answer: dropped
        triggers = {t for k in watched for t in _TRIGGERS.get(k, ())}
        if any(k in _PATTERNS for k in watched):  # a credential's name may hide behind them
            triggers.update(_INVISIBLE_CHARS)
        self._triggers = tuple(
            sorted(t for t in triggers if not any(o != t and o in t for o in triggers))
        )
        shapes = tuple(sorted({s for k in watched for s in _SHAPES.get(k, ())}))
        self._cased = tuple(sorted({c for k in watched for c in _CASED_TRIGGERS.get(k, ())}))
        gates: dict[str, list[str]] = {}
        for c in self._cased:  # each behind its first upper-case letter
            gates.setdefault(next(ch for ch in c if ch.isupper()), []).append(c)
        self._cased_gated = tuple((ch, tuple(group)) for ch, group in gates.items())
        self._shapes = tuple(_shape_pattern(s) for s in shapes)
        self._plain, self._searches, self._gated, self._foreign = _trigger_checks(
            self._triggers, shapes
        )
        self._gated_in = tuple((c, n) for c, n, f in self._gated if f is None)
        self._gated_re = tuple((c, f) for c, _, f in self._gated if f is not None)
        if isinstance(self.literals, str) or not all(isinstance(x, str) for x in self.literals):
            raise UsageError(
                f"Redactor literals must be a tuple of strings, not {self.literals!r:.60}; "
                "wrap a single secret as (secret,)"
            )
        self.literals = tuple(x for x in self.literals if x and len(x) >= 4)
        self._literal_forms = tuple(
            dict.fromkeys(f for x in self.literals for f in _escaped_forms(x))
        )
        self._personal = [(k, _builtin_pattern(k), _wake(k)) for k in personal]
        # a text holding a JSON string can be scanned around that string (`needs_except`) when
        # no trigger runs on past a quote: then none can start outside it and end inside (a
        # shape matches digits and dashes only)
        self._splits = all('"' not in t[:-1] for t in self._triggers) and all(
            '"' not in f for f in self._literal_forms
        )

    def needs(self, text: str) -> bool:
        """True when `text` may hold a secret or personal data (a trigger is in it).

        Exactly `any(t in low for t in triggers) or any(s.search(low) for s in shapes) or
        any(c in text for c in cased)` with `low = text.lower()` (`cased`: `_CASED_TRIGGERS`),
        in fewer scans of the text (see `_trigger_checks`), or a literal in any of the forms
        `redact` rewrites, or a non-ASCII trigger written as JSON escapes (`密码` escaped by an
        `ensure_ascii` writer: `_NON_ASCII_ESCAPE`); always True with `extra` patterns.

        Args:
            text: any text (a JSON line, a tool's result).

        Returns:
            Whether `redact` and `personal` must look at it.
        """
        if self.extra:
            return True
        for form in self._literal_forms:  # a client's own key: exact, never lower-cased
            if form in text:
                return True
        low = text.lower()
        for trigger in self._plain:  # a plain loop is ~2x faster than any()
            if trigger in low:
                return True
        for head, search in self._searches:  # triggers sharing a head: one scan for all
            if head in low and search(low) is not None:  # `in` finds the head faster
                return True
        for char, needle in self._gated_in:  # only when their rare character is in it
            if char in low and needle in low:
                return True
        for char, find in self._gated_re:  # a plain loop is faster than any()
            if char in low and find(low) is not None:
                return True
        for upper, needles in self._cased_gated:  # cased: in the text itself
            if upper in text:
                for needle in needles:
                    if needle in text:
                        return True
        # non-ASCII triggers (`пароль`, `密码`, an invisible character) can only be in a
        # non-ASCII text; `isascii` costs nothing (CPython keeps it as a flag)
        foreign = self._foreign
        if foreign is None:
            return False
        if not low.isascii() and foreign(low) is not None:
            return True
        # the same triggers written as JSON escapes (`\u5bc6\u7801`, `pass\u200bword`)
        return "\\u" in low and foreign(_unescaped(low)) is not None

    def redact(self, text: str) -> tuple[str, dict[str, int]]:
        """Rewrite every credential in `text`.

        JSON text keeps its structure: when a rewrite would change it (an `extra` pattern or a
        literal across a quote, a marker holding a quote), each string of the JSON (keys and
        values, a value with its key before it) is redacted on its own instead and written
        back as a JSON string, so the result is valid JSON of the same shape.

        Args:
            text: any text (a JSON line stays valid JSON with the same structure).

        Returns:
            `(redacted_text, {kind: count})`; `{}` when nothing was found.
        """
        out, counts = self._redact_checked(text)
        views = []
        if "\\u" in text:  # a name escaped as JSON (`\u5bc6\u7801`): the text unescaped too
            shown = _unescaped(text)
            if shown != text:
                views.append(shown)
                text = shown
        if not text.isascii() and _INVISIBLE.search(text) is not None:
            # a name hidden by invisible characters (`pass\u200bword=`): the text without them
            views.append(_INVISIBLE.sub("", text))
        # a view is used when it shows more credentials (escapes and invisible characters go)
        for view in views:
            shown, found = self._redact_checked(view)
            if sum(found.values()) > sum(counts.values()):
                out, counts = shown, found
        return out, counts

    def _redact_checked(self, text: str) -> tuple[str, dict[str, int]]:
        """`_redact_text`, then per JSON string when the rewrite changed a JSON text's shape."""
        out, counts = self._redact_text(text)
        if counts and out != text and _json_shape_changed(text, out):
            return self._redact_json_strings(text, out, counts)
        return out, counts

    def _redact_json_strings(
        self, text: str, out: str, counts: dict[str, int]
    ) -> tuple[str, dict[str, int]]:
        """`text` (JSON) with each string redacted alone; `(out, counts)` when not JSON."""
        try:
            json.loads(text)
        except ValueError:  # not JSON: the text has no structure to keep
            return out, counts
        total: dict[str, int] = {}
        parts: list[str] = []
        last = 0
        key: str | None = None  # the string before this one when a `:` alone separates them
        prev_end = -1
        for m in _JSON_STRING.finditer(text):
            start, end = m.span()
            token = m.group()
            value: str = json.loads(token)
            after_key = key if text[prev_end:start].strip() == ":" else None
            new, found = self._redact_value(value, after_key)
            for kind, n in found.items():
                total[kind] = total.get(kind, 0) + n
            if new != value:
                parts.append(text[last:start])
                parts.append(json.dumps(new, ensure_ascii=token.isascii()))
                last = end
            key, prev_end = value, end
        parts.append(text[last:])
        joined, items = _redact_containers("".join(parts))  # lists and objects under a name
        if items:
            total["password"] = total.get("password", 0) + items
        return joined, total

    def _redact_value(self, value: str, key: str | None) -> tuple[str, dict[str, int]]:
        """One JSON string redacted alone, then with its key before it (`"key": "value"`).

        A credential found only with the key (`"Authorization": "Basic ..."`) that cannot be
        cut out of the pair cleanly takes the whole value.
        """
        red, counts = self.redact(value) if self.needs(value) else (value, {})
        if key is None:
            return red, counts
        pair = json.dumps({key: red}, ensure_ascii=False)
        if not self.needs(pair):
            return red, counts
        out, found = self._redact_text(pair)
        if not found:
            return red, counts
        try:
            decoded = json.loads(out)
        except ValueError:
            decoded = None
        if isinstance(decoded, dict) and len(decoded) == 1:
            (new,) = decoded.values()
        else:
            new = _marker(next(iter(found)))
        if not isinstance(new, str):
            new = _marker(next(iter(found)))
        for kind, n in found.items():
            counts[kind] = counts.get(kind, 0) + n
        return new, counts

    def _redact_text(self, text: str) -> tuple[str, dict[str, int]]:
        """Every pattern and literal applied to `text` as a whole (`redact` without its check)."""
        counts: dict[str, int] = {}
        for literal in self.literals:
            for form in _escaped_forms(literal):
                if form in text:
                    counts["secret"] = counts.get("secret", 0) + text.count(form)
                    text = text.replace(form, _marker("secret"))
        low = text.lower()
        for kind, pattern, wake in self._compiled:
            if wake is not None and not wake(low, text):
                continue
            anchors = _ANCHORS.get(kind) if kind in self._builtin else None
            if anchors is not None:
                text, n = _anchored_subn(
                    pattern, text, low, anchors, _marker(kind), paths=kind == "password"
                )
                if kind == "password" and ", received " in text:  # a schema message (R-E1)
                    text, received = _redact_received(text)
                    n += received
                if kind == "password":  # and the cells under a credential's column header
                    text, cells = _redact_tables(text)
                    text, items = _redact_containers(text)
                    text, listed = _redact_yaml_items(text)
                    n += cells + items + listed
                low = text.lower()
            elif kind in self._builtin:
                repl = rf"\1{_marker(kind)}" if pattern.groups else _marker(kind)
                text, n = pattern.subn(repl, text)
                if kind == "cookie":  # and the values of a cookie jar (`"cookies": {...}`)
                    text, jars = _redact_jars(text)
                    n += jars
                if n:
                    low = text.lower()
            else:  # an `extra` pattern: an empty match (`a*` between letters) hides nothing
                text, n = _subn_nonempty(pattern, text, _marker(kind))
                if n:
                    low = text.lower()
            if n:
                counts[kind] = n
        return text, counts

    def needs_quoted(self, text: str) -> bool:
        r"""`needs` of `text` written as a JSON string (`json.dumps(text, ensure_ascii=False)`).

        True wherever `needs(text)` is (quoting keeps every trigger: `token"` becomes
        `token\"`), so it stands in for `needs` before `redact(text)`. A long text found
        clean is remembered (the last one, by identity): an event log that writes it (a tool's
        result) then scans its line around it (`needs_except`), so the text is scanned once.

        Args:
            text: a text that will be logged as a JSON string value.

        Returns:
            Whether `redact` must look at it.
        """
        if len(text) < _REMEMBER_CHARS:
            return self.needs(text)
        quoted = json.encoder.encode_basestring(text)
        if self.needs(quoted):
            return True
        if self._splits:
            self._quoted_clean = (text, quoted)  # one assignment: safe to read from any thread
        return False

    def needs_except(self, text: str, known: object) -> bool:
        """`needs(text)`, skipping the JSON string of `known` when `needs_quoted` found it clean.

        `text` holds `known` written as a JSON string (a log line holding a tool's result);
        when `known` is the text `needs_quoted` last remembered, only the parts of `text`
        before and after that string are scanned, each with the string's quote at its end:
        no trigger holds a quote before its last character (else nothing is remembered), so
        no trigger can start outside the string and end inside it, and the answer is
        exactly `needs(text)`.

        Args:
            text: the text to check (a JSON line).
            known: a value written in it (e.g. the payload's `content`), any object.

        Returns:
            `needs(text)`.
        """
        memo = self._quoted_clean
        if memo is None or memo[0] is not known:
            return self.needs(text)
        quoted = memo[1]
        i = text.find(quoted)
        if i < 0:  # written otherwise (e.g. cleaned of a lone surrogate): scan it all
            return self.needs(text)
        return self.needs(text[: i + 1]) or self.needs(text[i + len(quoted) - 1 :])

    def personal(self, text: str) -> tuple[str, ...]:
        """The personal-data kinds (e.g. `email`) in `text` that are kept exact, not rewritten.

        Args:
            text: any text.

        Returns:
            The kinds found, in `PERSONAL_KINDS` order; `()` when none.
        """
        low = text.lower()
        return tuple(
            k for k, pattern, wake in self._personal
            if (wake is None or wake(low, text)) and pattern.search(text)
        )  # fmt: skip


#: One JSON string token (valid escapes only), for the shape check and per-string redaction.
_JSON_STRING = lazy_pattern(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
#: A JSON number (outside strings, once they are blanked), for the shape check.
_JSON_NUMBER = lazy_pattern(r"-?\d+(?:\.\d+)?(?:[eE][+\-]?\d+)?")


def _json_shape_changed(before: str, after: str) -> bool:
    """True when `before` looks like JSON and `after` differs from it outside its strings.

    Every string of each text is blanked (`""`, valid escapes only): the texts keep their JSON
    shape when what is left is equal (then `after`, like `before`, is valid JSON when
    `before` is, with the same keys, items and nesting). Texts not starting with `{`, `[` or
    `"` are not JSON here, and neither are texts that do not parse (nothing to keep, and a
    string left open made the blanking quadratic: each later quote scanned to the end).
    Numbers are blanked as strings are: a number under a credential's name written as `0`
    (`_redact_containers`) keeps the shape.
    """
    if before.lstrip()[:1] not in ("{", "[", '"'):
        return False
    try:
        json.loads(before)
    except (ValueError, RecursionError):  # nested too deeply to parse: not kept either
        return False

    def blank(text: str) -> str:
        return _JSON_NUMBER.sub('""', _JSON_STRING.sub('""', text))

    return blank(before) != blank(after)


#: A cookie jar after a `cookie`/`cookies`/`cookie_jar` name: a mapping (`"cookies": {`,
#: `cookies={`), whose values are session ids and the like whatever their names (`sid`,
#: `csrftoken`), so every one is a credential; or a list of cookie objects (a browser's
#: `[{"name": "sid", "value": "..."}]`), whose `value`s are. Group 1 is the opening bracket.
_JAR = lazy_pattern(
    r"(?i)(?:(?<![\w\-])|"
    + _ESC
    + r")cookie(?:s|_?jar)?"
    + _Q
    + r"[ \t]*[:=]"
    + _GAP
    + r"(?:dict\()?(\{|\[)"
)
#: One `key: value` pair of a jar (JSON or a Python dict, at any escaping depth): group 1 up to
#: the value's opening quote, then the value up to its real closing quote (`_QUOTED_VALUE`).
_JAR_PAIR = lazy_pattern(
    r"(\\*[\"'][^\"'\\\n{}]{1,128}\\*[\"']" + _GAP + ":" + _GAP + r"\\*[\"'])"
    + r"(?!\[REDACTED)(?:" + _QUOTED_VALUE + ")"
)  # fmt: skip
#: A cookie object's `"value": "..."` pair, in a list of cookie objects.
_JAR_VALUE = lazy_pattern(
    r"(\\*[\"']value\\*[\"']" + _GAP + ":" + _GAP + r"\\*[\"'])"
    + r"(?!\[REDACTED)(?:" + _QUOTED_VALUE + ")"
)  # fmt: skip


def _redact_jars(text: str) -> tuple[str, int]:
    """`text` with every value of each cookie jar in it redacted; `(text, values redacted)`.

    A mapping ends at its first closing brace (jars are flat: `{name: value}`), a list of
    cookie objects at its first `]`; names and every other field (`domain`, `path`) stay.
    """
    if "{" not in text and "[" not in text:
        return text, 0
    out: list[str] = []
    last = n = 0
    for m in _JAR.finditer(text):
        start = m.end()
        if start < last:
            continue
        mapping = m.group(1) == "{"
        end = text.find("}" if mapping else "]", start)
        end = len(text) if end < 0 else end
        pair = _JAR_PAIR if mapping else _JAR_VALUE
        body, k = pair.subn(rf"\1{_marker('cookie')}", text[start:end])
        if k:
            out.append(text[last:start])
            out.append(body)
            last, n = end, n + k
    if not n:
        return text, 0
    out.append(text[last:])
    return "".join(out), n


#: A credential's name and separator before a list or an object (`_CONTAINER_START`): group 1
#: is the quote that closes the name (its backslashes give the escaping depth), if any.
_CONTAINER_OPEN = lazy_pattern(
    r"(?i)(?:" + _KEY_NAMES + r")(\\*[\"'])?[ \t\n]*[:=]" + _GAP
    + r"(?=" + _CONTAINER_START + ")"
)  # fmt: skip
#: A JSON Schema's `"type": "<type>"` (at any escaping depth): an object holding one under a
#: credential's name is a parameter's schema (a tool spec's `"password": {"type": "string",
#: "pattern": ...}`), not a credential; a credential-named key inside it is still redacted.
_SCHEMA_TYPE = lazy_pattern(
    r"\\*\"type\\*\"\s*:\s*\\*\"(?:string|integer|number|boolean|object|array|null)\\*\""
)
#: Where a bare item (a number, a YAML flow word) ends.
_BARE_END = frozenset(" \t\r\n,:[]{}()\"'\\")
#: Bare items that hold no secret.
_LITERALS = frozenset(("true", "false", "null", "none", "nan"))


def _string_end(text: str, start: int, quote: str, k: int) -> tuple[int, bool]:
    """Where the string opened before `start` by `quote` after `k` backslashes ends.

    Returns:
        `(end, closed)`: the end of its content (before the closing quote's backslashes) and
        whether that quote closes it at its own level (False: a string around it closes, or
        the text ends).
    """
    period = 2 * k + 2
    i = start
    while True:
        j = text.find(quote, i)
        if j < 0:
            return len(text), False
        n = 0
        while j - n > start and text[j - n - 1] == "\\":
            n += 1
        if n % period == 2 * k + 1:  # escaped at the string's own level: part of it
            i = j + 1
            continue
        if n >= k and (n - k) % period == 0:
            return j - k, True
        return j - n, False


def _container_items(text: str, pos: int, k: int | None) -> tuple[int, list[tuple[int, int, bool]]]:
    """The items of the list or object opened at `text[pos]`, keys left out.

    Strings are taken at the escaping depth of `k` backslashes before their quotes (the first
    quote's when `k` is None); a quote with other backslashes closes a string around the
    container, which then ends there (cut off). Linear in the container's length.

    Returns:
        `(end, items)`: where the container ends, and each item as `(start, end, quoted)`.
    """
    items: list[tuple[int, int, bool]] = []
    size = len(text)
    level = 0
    j = pos
    while j < size:
        c = text[j]
        if c in "[{(":
            level += 1
            j += 1
        elif c in "]})":
            level -= 1
            j += 1
            if level <= 0:
                break
        elif c in " \t\r\n,:":
            j += 1
        elif c == "\\" or c in "\"'":
            b = j
            while j < size and text[j] == "\\":
                j += 1
            if j >= size:
                break
            if text[j] not in "\"'":  # an escaped break or tab between items
                j += 1
                continue
            if k is None:
                k = j - b
            if j - b != k:  # the string around the container closes: it ends here
                break
            end, closed = _string_end(text, j + 1, text[j], k)
            if not closed:
                items.append((j + 1, end, True))
                j = end
                break
            if not _is_key(text, end + k + 1):
                items.append((j + 1, end, True))
            j = end + k + 1
        else:
            b = j
            while j < size and text[j] not in _BARE_END:
                j += 1
            if text[b:j].lower() not in _LITERALS and not _is_key(text, j):
                items.append((b, j, False))
    return j, items


def _is_key(text: str, pos: int) -> bool:
    """True when a `:` follows `pos` (after space): the string or word before it is a key."""
    size = len(text)
    while pos < size and text[pos] in " \t\r\n":
        pos += 1
    return pos < size and text[pos] == ":"


def _redact_containers(text: str) -> tuple[str, int]:
    """`text` with every item of a list or object under a credential's name redacted.

    `{"password": ["x"]}`, `{"api_key": {"value": "x"}}`, `password=['x', 'y']`, nested at
    any depth and at any escaping depth (JSON inside a string): each string inside becomes a
    marker and each number `0` (a bare word of a YAML or Python flow collection a quoted
    marker); keys, brackets, `true`/`false`/`null` stay, so JSON stays valid JSON of the same
    shape (the shape check blanks numbers: `0` for `424242` is no change of shape).
    Returns `(text, items redacted)`.
    """
    if "[" not in text and "{" not in text and "(" not in text:
        return text, 0
    low = text.lower()
    if len(low) == len(text):
        starts = sorted(_anchor_starts(low, _ANCHORS["password"]))
    else:
        starts = [m.start() for m in _CONTAINER_OPEN.finditer(text)]
    out: list[str] = []
    last = n = scanned = 0
    marker = _marker("password")
    for i in starts:
        if i < scanned:  # inside a container already redacted (or one cut off)
            continue
        m = _CONTAINER_OPEN.match(text, i)
        if m is None:
            continue
        closer = m.group(1)
        k = None if closer is None else len(closer) - 1
        end, items = _container_items(text, m.end(), k)
        if text.startswith("{", m.end()) and _SCHEMA_TYPE.search(text, m.end(), end):
            continue  # a parameter's JSON Schema, not a credential (`_SCHEMA_TYPE`)
        quote = ("\\" * k if k else "") + (closer[-1] if closer else '"')
        for start, stop, quoted in items:
            if text.startswith(marker, start) and stop - start == len(marker):
                continue
            out.append(text[last:start])
            if quoted:
                out.append(marker)
            elif _JSON_NUMBER.fullmatch(text, start, stop):  # a number stays a number
                out.append("0")
            else:
                out.append(quote + marker + quote)
            last, n = stop, n + 1
        scanned = end
    if not n:
        return text, 0
    out.append(text[last:])
    return "".join(out), n


#: A credential's name, `:` and a line break, then the indentation (group 1) of a YAML block
#: sequence's first `- ` item (`password:\n  - x`): raw or JSON-escaped breaks.
_YAML_SEQ_OPEN = lazy_pattern(
    r"(?i)(?:" + _KEY_NAMES + r")(?:\\*[\"'])?[ \t]*:[ \t]*" + _NL + r"(?:[ \t]*" + _NL
    + r")*([ \t]*)(?=-[ \t])"
)  # fmt: skip
#: One item of that sequence: `- ` (group 1) and its value to the end of its line (a quote
#: that ends a JSON string ends it too).
_YAML_ITEM = lazy_pattern(r"(-[ \t]+)(?!\[REDACTED)(?:[^\r\n\\\"]|\\+[^\r\n\\\"nrt])+")
#: The break before the next item, with its indentation (checked against the first item's).
_YAML_NEXT = lazy_pattern(r"[ \t]*" + _NL + r"([ \t]*)(?=-[ \t])")


def _redact_yaml_items(text: str) -> tuple[str, int]:
    r"""`text` with every item of a YAML block sequence under a credential's name redacted.

    `password:\n  - x\n  - y` (raw or JSON-escaped breaks): each item's value becomes a
    marker, up to the first line that is not an item indented as the first. Returns
    `(text, items redacted)`.
    """
    if "- " not in text and "-\t" not in text:
        return text, 0
    low = text.lower()
    if len(low) == len(text):
        starts = sorted(_anchor_starts(low, _ANCHORS["password"]))
    else:
        starts = [m.start() for m in _YAML_SEQ_OPEN.finditer(text)]
    out: list[str] = []
    last = n = 0
    marker = _marker("password")
    for i in starts:
        if i < last:
            continue
        m = _YAML_SEQ_OPEN.match(text, i)
        if m is None:
            continue
        indent, pos = m.group(1), m.end()
        while True:
            item = _YAML_ITEM.match(text, pos)
            if item is None:
                break
            out.append(text[last : item.end(1)])
            out.append(marker)
            last, n = item.end(), n + 1
            nxt = _YAML_NEXT.match(text, last)
            if nxt is None or nxt.group(1) != indent:
                break
            pos = nxt.end()
    if not n:
        return text, 0
    out.append(text[last:])
    return "".join(out), n


#: A table's line break: raw or JSON-escaped (at any depth).
_ROW_BREAK = lazy_pattern(r"\r?\n|\\+r\\+n|\\+n|\\+r|\r")
#: Where a table may have a header naming a credential: a `|`, `,` or tab (or a line's start)
#: and a cell of up to four words ending with a credential's name (`password`, `API key`,
#: `db_pass`, `Passwort`: group `name`), then the next `|`, `,` or tab or the line's end.
_TABLE_HINT = lazy_pattern(
    r"(?i)(?:[|,\t]|\\+t|^|(?<=\n)|(?<=\\[nr]))[ \t]*+[\"'`*\\]*+(?:[a-z0-9]++[ _\-.]){0,3}?"
    + "(?P<name>(?:"
    + _KEY_NAMES.replace("[_-]", "[ _-]")
    + r"))(?:[\"'`*]|\\+[\"'])*+[ \t]*+(?:[|,\t\r\n]|\\+[nrt]|$)",
    re.MULTILINE,
)
#: A header cell of a table: at most three words of letters, digits and `_-./()#`.
_HEADER_CELL = lazy_pattern(r"[\w\-./()#]+(?: [\w\-./()#]+){0,2}")
#: A header cell that names a credential, whole (lower case, spaces as `_`): up to three words
#: and a credential's name. `pass` alone is a "pass/fail" column, not a password.
_HEADER_NAME = lazy_pattern(r"(?i)(?:[a-z0-9]+[_\-.]){0,3}?(?:" + _KEY_NAMES + ")")
#: The opening quote of a JSON string value (after a key's `:` or a list's `[`), any depth.
_STRING_OPENER = lazy_pattern(r"[:\[][ \t]*\\*\"")
#: A markdown table's separator line (`|---|:--:|`).
_MD_SEPARATOR = lazy_pattern(r"[ \t]*\|?(?:[ \t]*:?-{2,}:?[ \t]*\|?)+[ \t]*")


def _cells(text: str, start: int, end: int, sep: str) -> list[tuple[int, int]]:
    """The spans of the cells of the row `text[start:end]`, split at `sep` (`|`, `,`, a tab).

    A markdown row's outer pipes open and close it (no empty first and last cell); a CSV cell
    that starts with a quote (raw or escaped) runs to its closing quote, so a `,` inside it
    does not split it.
    """
    spans: list[tuple[int, int]] = []
    if sep == "|":
        # a table written in a JSON string: the string's quotes before the first pipe and
        # after the last one are outside the row (`{"out": "| a | b |"}`)
        first, last = text.find("|", start, end), text.rfind("|", start, end)
        if text[start:first].rstrip().endswith('"'):
            start = first
        if text[last + 1 : end].lstrip(" \t\\").startswith('"'):
            end = last + 1
        row = text[start:end]
        lead = len(row) - len(row.lstrip())
        trail = len(row.rstrip())
        i, stop = start + lead, start + trail
        if text.startswith("|", i):
            i += 1
        if stop > i and text[stop - 1] == "|" and text[stop - 2 : stop - 1] != "\\":
            stop -= 1
        while True:
            j = text.find("|", i, stop)
            while j > 0 and text[j - 1] == "\\":  # an escaped pipe (`\|`) is text
                j = text.find("|", j + 1, stop)
            spans.append((i, stop if j < 0 else j))
            if j < 0:
                return spans
            i = j + 1
    i = start
    while True:
        j = i
        while j < end and text[j] in " \t":
            j += 1
        k = j
        while k < end and text[k] == "\\":
            k += 1
        search_from = i
        if k < end and text[k] == '"':  # a quoted cell: its commas are text
            quote = text[j : k + 1]
            close = text.find(quote, k + 1, end)
            while close >= 0 and text.startswith(quote, close + len(quote)):  # `""` is a quote
                close = text.find(quote, close + 2 * len(quote), end)
            search_from = end if close < 0 else close + len(quote)
        c = text.find(sep, search_from, end)
        q = text.find('"', search_from, end if c < 0 else c) if search_from == i else -1
        if q >= 0:  # a quote inside an unquoted cell ends the JSON string, and the row
            spans.append((i, q))
            return spans
        spans.append((i, end if c < 0 else c))
        if c < 0:
            return spans
        i = c + len(sep)


def _cell_value(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span of a cell's value inside its spaces, quotes, backticks or `**`; None if blank.

    In a cell that does not start with a quote, a quote ends the value (it ends the JSON
    string the table is written in).
    """
    while start < end and text[start] in " \t":
        start += 1
    quoted = text[start : start + 1] == '"' or text[start : start + 2] in ('\\"', "\\\\")
    while start < end and text[start] in " \t\"'`*\\":
        start += 1
    if not quoted:
        quote = text.find('"', start, end)
        end = end if quote < 0 else quote
    while end > start and text[end - 1] in " \t\"'`*\\":
        end -= 1
    value = text[start:end]
    if not any(ch.isalnum() for ch in value) or value.startswith("[REDACTED"):
        return None
    return start, end


def _header_columns(text: str, cells: list[tuple[int, int]]) -> list[int]:
    """The indexes of the header cells that name a credential; `[]` unless every cell is short.

    A cell's text after its last quote is its name (the first cell of a table written in a
    JSON string holds the string's opening: `{"out": "user`).
    """
    columns: list[int] = []
    for i, (a, b) in enumerate(cells):
        cell = re.split(r'\\*"', text[a:b].strip(" \t\"'`*\\"))[-1].strip(" \t'`*\\")
        if not cell:
            continue
        if _HEADER_CELL.fullmatch(cell) is None:
            return []
        name = "_".join(cell.lower().split())
        if name not in ("pass", "passes") and _HEADER_NAME.fullmatch(name):
            columns.append(i)
    return columns


def _line_at(text: str, pos: int) -> tuple[int, int]:
    r"""The span of the header line (raw or JSON-escaped breaks) holding `text[pos]`.

    The line starts after its break, or after the opening quote of the JSON string the table
    is written in (`{"content": "user,password\n...`), whichever is later; at most 4,096
    characters before `pos` are looked at (a header is short), so no text costs more than
    linear time however many header-like words it holds.
    """
    lo = max(0, pos - 4096)
    start = max(
        text.rfind("\n", lo, pos) + 1,
        text.rfind("\r", lo, pos) + 1,
        text.rfind("\\n", lo, pos) + 2 if text.rfind("\\n", lo, pos) >= 0 else 0,
        text.rfind("\\r", lo, pos) + 2 if text.rfind("\\r", lo, pos) >= 0 else 0,
        lo,
    )
    for opener in _STRING_OPENER.finditer(text, start, pos):
        start = max(start, opener.end())
    m = _ROW_BREAK.search(text, pos)
    return start, len(text) if m is None else m.start()


def _redact_tables(text: str) -> tuple[str, int]:
    """`text` with each cell under a credential's column header redacted; `(text, cells)`.

    A markdown table (`| user | password |`, an optional `|---|---|` line, then rows), a CSV
    one (`user,password`, then rows) or a tab-separated one whose header names a credential
    (every header cell short: at most three words), with raw or JSON-escaped line breaks: in
    every row after it the cell in that column is redacted, the other cells kept. The table
    ends at the first line with another number of cells (a blank line, the text after it).
    """
    if (
        not any(sep in text for sep in ("|", ",", "\t", "\\t"))
        or not any(brk in text for brk in ("\n", "\r", "\\n", "\\r"))  # one line: no table
        or _TABLE_HINT.search(text) is None
    ):
        return text, 0
    out: list[str] = []
    last = n = 0
    pos = 0
    while True:
        hint = _TABLE_HINT.search(text, pos)
        if hint is None:
            break
        start, end = _line_at(text, hint.start("name"))
        row = text[start:end]
        sep = next((c for c in ("|", "\t", "\\t") if c in row), ",")
        header = _cells(text, start, end, sep)
        columns = _header_columns(text, header)
        pos = max(end, hint.end(), pos + 1)
        if not columns or len(header) < 2:
            continue
        brk = _ROW_BREAK.match(text, end)
        first = True
        while brk is not None:
            start = brk.end()
            m = _ROW_BREAK.search(text, start)
            end = len(text) if m is None else m.start()
            if first and sep == "|" and _MD_SEPARATOR.fullmatch(text, start, end):
                first, brk = False, m
                continue
            first = False
            if sep not in text[start:end]:
                break
            cells = _cells(text, start, end, sep)
            if len(cells) != len(header):
                break
            for i in columns:
                span = _cell_value(text, *cells[i])
                if span is not None and span[0] >= last:
                    out.append(text[last : span[0]])
                    out.append(_marker("password"))
                    last, n = span[1], n + 1
            pos, brk = end, m
    if not n:
        return text, 0
    out.append(text[last:])
    return "".join(out), n


def _subn_nonempty(pattern: re.Pattern[str], text: str, marker: str) -> tuple[str, int]:
    """`pattern.subn(marker, text)` leaving empty matches alone; `(text, replaced)`."""
    n = 0

    def repl(m: re.Match[str]) -> str:
        nonlocal n
        if m.end() == m.start():
            return ""
        n += 1
        return marker

    out = pattern.sub(repl, text)
    return (out, n) if n else (text, 0)


def _builtin_pattern(kind: str) -> re.Pattern[str]:
    """The built-in pattern of `kind`, shared by every `Redactor` and compiled on first use."""
    pattern = _LAZY_PATTERNS.get(kind)
    if pattern is None:
        pattern = _LAZY_PATTERNS[kind] = lazy_pattern(_PATTERNS[kind])
    return pattern


_LAZY_PATTERNS: dict[str, re.Pattern[str]] = {}


class _TriggerScan:
    """Whether a text holds one of a kind's triggers, in the few scans `_trigger_checks` plans.

    Exactly `any(t in low for t in triggers) or any(shape matches low) or any(c in text for c
    in cased)`, as `Redactor.needs` answers for all kinds at once: a kind's regex runs only
    when this is true. Checking each trigger with its own substring scan cost a woken
    `redact` of a 4.5 KB request line ~0.6 ms; the planned checks cost a few scans.
    """

    __slots__ = ("cased", "foreign", "gated_in", "gated_re", "kind", "plain", "searches")

    def __init__(
        self,
        kind: str,
        triggers: tuple[str, ...],
        shapes: tuple[tuple[str, str], ...],
        cased: tuple[str, ...],
    ) -> None:
        self.kind = kind
        self.plain, self.searches, gated, self.foreign = _trigger_checks(triggers, shapes)
        self.gated_in = tuple((c, n) for c, n, f in gated if f is None)
        self.gated_re = tuple((c, f) for c, _, f in gated if f is not None)
        self.cased = cased

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _TriggerScan) and other.kind == self.kind

    def __hash__(self) -> int:
        return hash(self.kind)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return _wake, (self.kind,)  # copied or unpickled: the process's own scan of the kind

    def __call__(self, low: str, text: str) -> bool:
        """True when a trigger is in `low` (`text` lower-cased) or a cased one in `text`."""
        for trigger in self.plain:
            if trigger in low:
                return True
        for head, search in self.searches:
            if head in low and search(low) is not None:
                return True
        for char, needle in self.gated_in:
            if char in low and needle in low:
                return True
        for char, find in self.gated_re:
            if char in low and find(low) is not None:
                return True
        for needle in self.cased:
            if needle in text:
                return True
        foreign = self.foreign
        return foreign is not None and not low.isascii() and foreign(low) is not None


def _shape_pattern(shape: tuple[str, str]) -> re.Pattern[str]:
    """The regex of a shaped trigger `(anchor, regex)`: the anchor, then the regex."""
    anchor, rest = shape
    return lazy_pattern(re.escape(anchor) + rest)


#: What wakes one kind's regex (`None`: always runs).
_Wake = _TriggerScan | None
_SCANS: dict[str, _TriggerScan] = {}


def _wake(kind: str) -> _Wake:
    """What wakes `kind`'s regex (`None` for an `extra` kind without triggers: always)."""
    scan = _SCANS.get(kind)
    if scan is not None:
        return scan
    triggers, shapes = _TRIGGERS.get(kind, ()), _SHAPES.get(kind, ())
    cased = _CASED_TRIGGERS.get(kind, ())
    if not triggers and not shapes and not cased:
        return None
    scan = _SCANS[kind] = _TriggerScan(kind, tuple(triggers), tuple(shapes), tuple(cased))
    return scan


def _trigger_checks(
    triggers: tuple[str, ...], shapes: tuple[tuple[str, str], ...] = ()
) -> tuple[tuple[str, ...], tuple[_Search, ...], tuple[_Gate, ...], Callable[[str], object] | None]:
    """The checks `Redactor.needs` makes to find whether any of `triggers` is in a text.

    A trigger that holds a character of `_RARE_CHARS` is checked from the rarest one it holds
    (its anchor): one test whether the anchor is in the text (`memchr`-fast, and false in most
    log lines for most anchors), then, only when it is, one regex for every trigger with that
    anchor, `c(?:after(?<=before c after)|...)`, which the engine runs only at the places the
    anchor is (it scans for the literal `c`, compares the characters after it, first one
    first, and only then looks behind), instead of one scan of the text per trigger. A shape
    `(anchor, regex)` is one more branch of its anchor's regex. The other triggers (only
    common letters) are tested with `in`; those sharing their first two characters as one
    regex of their longest common prefix and the alternatives after it (`pass(?:code|phrase)`),
    run only when that prefix is in the text. Each trigger (and shape) is in exactly one
    check, and a check passes exactly when one of its triggers is in the text (or its shape
    matches), so a text passes the checks exactly when one of `triggers` is in it or one of
    `shapes` matches.

    Args:
        triggers: lower-case substrings.
        shapes: `(anchor, regex)` pairs; the anchor is one of `_RARE_CHARS`.

    Returns:
        `(plain, searches, gated, foreign)`: substrings to test with `in`, `(prefix, search)`
        pairs (the `search` method of a regex, run when `prefix` is in the text), `(anchor,
        needle, search)` triples: when `anchor` is in the text, `needle in text` if `search` is
        None (a group of one trigger), else `search(text)`; and one `search` for every trigger
        that is not ASCII (None when there is none), to run only on a text that is not ASCII.

    Raises:
        UsageError: a shape's anchor is not one of `_RARE_CHARS`.
    """
    anchored: dict[str, list[str]] = {}
    by_head: dict[str, list[str]] = {}
    shaped: dict[str, list[str]] = {}
    for char, rest in shapes:
        if char not in _RARE_CHARS:
            raise UsageError(f"a shaped trigger's anchor {char!r} is not in {_RARE_CHARS!r}")
        shaped.setdefault(char, []).append(rest)
    foreign = sorted((t for t in triggers if not t.isascii()), key=len, reverse=True)
    for t in triggers:
        if not t.isascii():
            continue
        anchor = next((c for c in _RARE_CHARS if c in t), None)
        if anchor is None:
            by_head.setdefault(t[:2], []).append(t)
        else:
            anchored.setdefault(anchor, []).append(t)
    plain: list[str] = []
    searches: list[_Search] = []
    for group in by_head.values():
        if len(group) == 1:
            plain.append(group[0])
        else:
            head = os.path.commonprefix(group)
            rests = sorted((t[len(head) :] for t in group), key=len, reverse=True)
            alternatives = "|".join(re.escape(r) for r in rests)
            searches.append((head, re.compile(f"{re.escape(head)}(?:{alternatives})").search))
    gated: list[_Gate] = []
    for anchor in _RARE_CHARS:  # rarest first: the likeliest to end a clean text's checks early
        members = anchored.get(anchor, [])
        extra = shaped.get(anchor, [])
        if not members and not extra:
            continue
        if len(members) == 1 and not extra:
            gated.append((anchor, members[0], None))
            continue
        # the characters after the anchor as a tree (one branch per next character), each
        # trigger's lookbehind where it ends: the engine tries a branch that starts with a
        # literal only when that literal is the next character, so most places of a common
        # anchor cost one comparison or two
        pairs = [(t[t.index(anchor) + 1 :], t) for t in members]
        branches = [_after_tree(pairs, anchor)] if pairs else []
        branches += [f"(?:{rest})" for rest in extra]
        regex = re.compile(f"{re.escape(anchor)}(?:{'|'.join(branches)})")
        gated.append((anchor, anchor, regex.search))
    search = re.compile("|".join(re.escape(t) for t in foreign)).search if foreign else None
    return tuple(plain), tuple(searches), tuple(gated), search


def _after_tree(pairs: list[tuple[str, str]], seen: str) -> str:
    """The regex after an anchor matching exactly where one of `pairs`' triggers is.

    Args:
        pairs: `(after, whole)`: what a trigger holds after the text matched so far, and the
            whole trigger (its lookbehind where it ends; none when it starts with `seen`).
        seen: the text matched so far (the anchor and the characters after it, lower case).

    Returns:
        A regex (alternatives, one per next character), to follow `seen`.
    """
    alternatives: list[str] = []
    ends = [whole for after, whole in pairs if not after]
    if ends:
        if any(whole == seen for whole in ends):  # this trigger is the text matched so far
            return ""
        behind = "|".join(f"(?<={re.escape(w)})" for w in sorted(set(ends)))
        if len(set(ends)) > 1:  # one test of the character before their common ending first
            # (`token` for `accesstoken`, `--token`, ...: `prompt_tokens` fails at its `_`)
            common = os.path.commonprefix([w[::-1] for w in ends])[::-1]
            if any(len(w) == len(common) for w in ends):  # one is the ending itself
                common = seen
            before = "".join(sorted({re.escape(w[-len(common) - 1]) for w in ends}))
            behind = f"(?<=[{before}]{re.escape(common)})(?:{behind})"
        alternatives.append(behind)
    by_next: dict[str, list[tuple[str, str]]] = {}
    for after, whole in pairs:
        if after:
            by_next.setdefault(after[0], []).append((after[1:], whole))
    for char, group in by_next.items():
        rest = _after_tree(group, seen + char)
        alternatives.append(re.escape(char) + (f"(?:{rest})" if rest else ""))
    return "|".join(alternatives)


#: Kinds whose every match starts at one of these (lower-case) words: `redact` looks for the
#: words with `str.find` and tries the pattern only there, instead of at every position of a
#: line (the same matches, ~20x cheaper on a typical event line).
_ANCHORS: dict[str, tuple[str, ...]] = {
    "password": (
        "password", "passwd", "passphrase", "pwd", "secret", "apikey", "api_key", "api-key",
        "access_key", "private_key", "privatekey", "private-key", "token", "credential",
        "pass", "accesskey", "access-key", "subscription", "x-auth", "encryption", "master",
        "signing", "account", "auth", "session", "key_data", "key-data", "_pat", "-pat",
        "identity", "refresh", "access", "apitoken", "sshpass", "_key", "x-", *_FOREIGN_WORDS,
    ),
    # each alternative's first word (`pass` for `password`, `passphrase`, ...; `pw` for `pwd`)
    "password_phrase": (
        "pass", "pw", "secret", "token", "api", "access", "set", "reset", "change", "update",
        "use", "using", "with", "enter", "type", "try", "<input", "login", "convertto",
    ),
}  # fmt: skip


def _anchor_starts(low: str, anchors: tuple[str, ...]) -> set[int]:
    """Each place of an anchor in `low`, and the place before it (`_token`).

    For an anchor starting with `_`, the place after its `_` too (`MISTRAL_KEY`).
    """
    starts: set[int] = set()
    for word in anchors:
        i = low.find(word)
        while i >= 0:
            starts.add(i)
            if i:
                starts.add(i - 1)
            if word[0] == "_":  # `<VENDOR>_KEY=`: the name starts after the `_`
                starts.add(i + 1)
            i = low.find(word, i + 1)
    return starts


def _anchored_subn(
    pattern: re.Pattern[str],
    text: str,
    low: str,
    anchors: tuple[str, ...],
    marker: str,
    *,
    paths: bool = False,
) -> tuple[str, int]:
    """What `pattern.subn` with group 1 plus `marker` gives, trying only the anchors' places.

    `low` is `text.lower()`; a match may also start one character before an anchor (`_token`).
    Text whose lower case has another length (a few non-ASCII letters) takes `subn` itself.
    With `paths` (the `password` kind only: its group 2 is the `:` separator), a match that
    is a JSONPath or JSON pointer in a message (`_names_a_path`) is left as it is.
    """
    if len(low) != len(text):
        return pattern.subn(
            lambda m: m.group(0) if paths and _names_a_path(text, m) else m.group(1) + marker,
            text,
        )
    starts = _anchor_starts(low, anchors)
    if not starts:
        return text, 0
    out: list[str] = []
    last = n = 0
    for i in sorted(starts):
        if i < last:
            continue
        m = pattern.match(text, i)
        if m is None or (paths and _names_a_path(text, m)):
            continue
        out.append(text[last : m.start()])
        out.append(m.group(1) + marker)
        last = m.end()
        n += 1
    if not n:
        return text, 0
    out.append(text[last:])
    return "".join(out), n


def _names_a_path(text: str, m: re.Match[str]) -> bool:
    """Whether a `name: value` match of the `password` kind is a path in a message instead.

    A JSONPath (`$.password`, `$.user.api_key`, `$[0].token`) or a JSON pointer
    (`/password`, `/auth/token`) followed by `: ` names an argument in a schema or binding
    message (`at $.password: expected a string matching ^[a-z0-9-]+$, received ...`), not
    a YAML or INI line: what follows is the message, and taking it as the password cut the
    schema's pattern at its `]`. The value the model sent is redacted by `_redact_received`.
    A quoted key (`{"$.password": "x"}`) and a dotted name not rooted at `$` or `/`
    (`spring.datasource.password: x`) stay credentials.
    """
    if m.group(2) is None or not text.startswith(":", m.start(2)) or m.start(2) < 1:
        return False
    if not (text[m.start(2) - 1].isalnum() or text[m.start(2) - 1] in "_-"):
        return False  # a quote or bracket before the colon: a key, not a path's last name
    k = m.start()
    while k > 0 and not text[k - 1].isspace() and text[k - 1] not in _PATH_STOPS:
        k -= 1
    if k > 0 and text[k - 1] in "\"'\\":
        return False
    token = text[k : m.start()]
    return token[:2] in ("$.", "$[") or token.startswith("/")


#: Characters a JSONPath or JSON pointer in a message does not hold: where it starts.
_PATH_STOPS = "\"'\\(,:=<>{}"

#: The value an executor schema message quotes for a credential-named argument (R-E1):
#: `at $.password: expected <what>, received <value> (<jsonschema's message>)`. The path
#: names the argument (`_names_a_path`), so the pattern takes what the model sent: the
#: `received` value, quoted at any escaping depth or bare.
_RECEIVED = lazy_pattern(
    r"(?i)((?<![^\s(])(?:\$[.\[]|/)[^\s:'\"\\]{0,200}?"
    + _KEY_NAMES
    + r"[\w\-]*:[ ]expected[ ][^\n]{1,600}?,[ ]received[ ]"
    + _OPENER
    + r")(?!\[REDACTED)(?!(?:null|true|false)\b)"
    + _VALUE
)
#: jsonschema's message after a redacted `received` value starts with the same value as
#: Python writes it (`'Hunter 2!' does not match ...`): taken whole, with its quotes.
_RECEIVED_REPR = lazy_pattern(
    r"(\[REDACTED:password\]\\*[\"']?[ ]\()"
    + r"(?:'(?:[^'\\\n]|\\+[^'\\\n])+'|\\*\"(?:[^\"\\\n]|\\+[^\"\\\n])+?\\*\")"
)


def _redact_received(text: str) -> tuple[str, int]:
    """Redact the value a schema message quotes for a credential-named argument.

    Returns:
        `(text, n)`: the text with each such value (and jsonschema's repr of it) replaced by
        `[REDACTED:password]`, and how many messages were.
    """
    marker = _marker("password")
    text, n = _RECEIVED.subn(lambda m: m.group(1) + marker, text)
    if n:
        text = _RECEIVED_REPR.sub(lambda m: m.group(1) + marker, text)
    return text, n


def scrub_literal(text: str, *secrets: str | None) -> str:
    """`text` with each exact secret (and its JSON-escaped forms) replaced by a marker.

    Args:
        text: an error message, hint, body or repr.
        *secrets: the exact values to hide (e.g. the client's API key); `None`/short ones skip.

    Returns:
        The text with `[REDACTED:secret]` for each occurrence.
    """
    for secret in secrets:
        if secret and len(secret) >= 4:
            for form in _escaped_forms(secret):
                text = text.replace(form, _marker("secret"))
    return text


def redact_fields(
    redactor: Redactor | None, data: Mapping[str, Any], *, keep: Iterable[str] = ()
) -> dict[str, Any]:
    """A copy of the JSON-ready object `data` with each value redacted alone (R-S1).

    As a log line's payload is: the names stay, and so do the values under `keep` (names the
    runtime matches on, such as a case id or a run id) and numbers, booleans and null; every
    other value (text, and the lists and objects holding text) is redacted with its structure.

    Args:
        redactor: the scanner (the one the run's logs use); `None` copies `data` unchanged.
        data: a JSON-ready object (a results row, a case, a manifest).
        keep: field names whose values are written exactly.

    Returns:
        The redacted copy (`data` itself is never changed).
    """
    out = dict(data)
    if redactor is None:
        return out
    exact = frozenset(keep)
    for name, value in data.items():
        if name in exact or not isinstance(value, str | dict | list):
            continue
        text = json.dumps(value, ensure_ascii=False, default=str)
        if redactor.needs(text):
            redacted, counts = redactor.redact(text)
            if counts:
                out[name] = json.loads(redacted)
    return out


def _escaped_forms(secret: str) -> tuple[str, ...]:
    """The secret as written raw and JSON-escaped once and twice (distinct forms only)."""
    import json

    once = json.dumps(secret)[1:-1]
    twice = json.dumps(once)[1:-1]
    return tuple(dict.fromkeys((secret, once, twice)))


def _marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


#: A redaction placeholder as `_marker` writes it (an `extra` kind's name included).
_PLACEHOLDER = lazy_pattern(r"\[REDACTED:[^\]\s]{1,64}\]")


def placeholders(value: Any) -> tuple[str, ...]:
    """The redaction placeholders (`[REDACTED:password]`, ...) anywhere in a JSON value.

    A value read back from a redacted log holds a placeholder where the clear text was; the
    clear text is not on disk, so such a value must never be acted on as if it were the real
    one (a `$bind`, a resumed or replayed tool call).

    Args:
        value: a decoded JSON value (strings, dicts with their keys, lists); other values hold
            none.

    Returns:
        Each placeholder found, once, in the order first seen; empty when there is none.
    """
    found: dict[str, None] = {}
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "[REDACTED:" in item:
                found.update(dict.fromkeys(_PLACEHOLDER.findall(item)))
        elif isinstance(item, dict):
            stack.extend(reversed([*item.values(), *item.keys()]))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
    return tuple(found)
