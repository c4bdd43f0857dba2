"""Private: checking the HTTP model client's options when it is built, not at its first request.

`check_client_options(given)` refuses each wrong type or value with a `UsageError` that names
the option, says what it takes with an example, and shows what came: a string `"5"` for a
timeout, a truthy `"no"` for `stream`, a `headers="x"` would otherwise fail (or misbehave)
only once the run is under way.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from harnesskit.errors import UsageError
from harnesskit.messages import CLIENT_OPTIONS, RUNTIME_FIELDS, reserved_field

__all__ = [
    "MAX_SECONDS",
    "check_callback",
    "check_client_options",
    "secret_forms",
    "shown_url",
    "url_secrets",
]

_WHO = "OpenAICompatModel"

#: The longest `timeout_seconds` / `max_wait_seconds` accepted (seconds): one day. Larger values
#: overflow the socket layer (`1e300` was a raw `OverflowError` at the first request) and no
#: single model request should be waited on longer.
MAX_SECONDS = 86_400.0
#: An HTTP field name (RFC 9110 section 5.1: a token).
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: What an HTTP field value may not hold as httpx sends it: anything but visible ASCII, space
#: and tab (CR, LF and NUL would split or end the header; httpx encodes values as ASCII).
_BAD_VALUE_CHAR = re.compile(r"[^\t\x20-\x7e]")


def _bad(name: str, takes: str, value: Any) -> UsageError:
    return UsageError(f"{_WHO}({name}=...) takes {takes}; got {value!r:.80}")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _seconds(name: str, value: Any, example: str) -> None:
    if not _number(value) or not math.isfinite(value) or value <= 0 or value > MAX_SECONDS:
        raise _bad(
            name,
            f"a finite number of seconds > 0 and at most {MAX_SECONDS:g} (one day; e.g. "
            f"{name}={example})",
            value,
        )


def check_callback(owner: str, name: str, fn: Any, args: tuple[Any, ...], shape: str) -> None:
    """Refuse a callback that is not callable or cannot be called with `args`.

    Args:
        owner: who takes the callback, for the message (e.g. `"FunctionModel"`).
        name: the argument's name (e.g. `"fn"`).
        fn: the callback given.
        args: stand-ins for the positional arguments it will be called with.
        shape: how the callback is called, for the message (e.g. `"(messages, info) -> turn"`).

    Raises:
        UsageError: `fn` is not callable, or its signature does not take `len(args)`
            positional arguments. A callable without a readable signature is trusted.
    """
    if not callable(fn):
        raise UsageError(f"{owner}({name}=...) takes a function {shape}; got {fn!r:.80}")
    try:
        inspect.signature(fn).bind(*args)
    except TypeError:
        label = getattr(fn, "__qualname__", None) or repr(fn)
        count = f"{len(args)} argument{'s' * (len(args) != 1)}"
        raise UsageError(
            f"{owner}({name}=...) is called with {count}, {shape}, but {label} does not take "
            f"{'it' if len(args) == 1 else 'them'}; pass a function of that shape"
        ) from None
    except ValueError:  # no signature to read (some builtins): trust the callable
        pass


def check_client_options(given: Mapping[str, Any]) -> None:
    """Refuse wrong types and values of `OpenAICompatModel`'s options before anything is sent.

    Args:
        given: option name → value, as passed (a missing name is not checked).

    Raises:
        UsageError: naming the option, what it takes and what came.
    """
    for name in ("model", "provider"):
        if name in given and not isinstance(given[name], str):
            raise _bad(name, "a str", given[name])
    url = given.get("base_url")
    if url is not None:
        if not isinstance(url, str):
            raise _bad("base_url", "the server URL as a str, e.g. 'http://localhost:8080/v1'", url)
        from urllib.parse import urlsplit

        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise _bad(
                "base_url",
                "an http:// or https:// URL with a host, e.g. 'http://localhost:8080/v1'",
                shown_url(url),
            )
    for name in ("api_key", "api_key_env"):
        value = given.get(name)
        if value is not None and not isinstance(value, str):
            raise _bad(name, "a str or None", type(value).__name__)  # never show a key
    key = given.get("api_key")
    if isinstance(key, str) and (bad := _BAD_VALUE_CHAR.search(key)) is not None:
        raise UsageError(  # sent as a header value; the key itself is never shown
            f"{_WHO}(api_key=...) holds {_char_kind(bad.group())} at position {bad.start()}; "
            "an API key is sent in the Authorization header and must be visible ASCII"
        )
    client = given.get("http_client")
    if client is not None:
        import httpx

        if not isinstance(client, httpx.Client):
            raise _bad(
                "http_client", "an httpx.Client or None (async clients are not used)", client
            )
    if "timeout_seconds" in given:
        _seconds("timeout_seconds", given["timeout_seconds"], "60")
    if given.get("max_wait_seconds") is not None:
        _seconds("max_wait_seconds", given["max_wait_seconds"], "120")
    for name in ("stream", "stream_usage"):
        if name in given and not isinstance(given[name], bool):  # "no" would switch it on
            raise _bad(name, "True or False", given[name])
    retry = given.get("retry")
    if retry is not None:
        from harnesskit.models._retry import RetryPolicy

        if not isinstance(retry, RetryPolicy):
            raise _bad("retry", "a RetryPolicy or None, e.g. RetryPolicy(max_retries=1)", retry)
    for name in ("headers", "extra_body"):
        _mapping(name, given.get(name))
    seed = given.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise _bad("seed", "an int or None", seed)
    cap = given.get("max_response_bytes")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap <= 0):
        raise _bad("max_response_bytes", "an int of bytes > 0 or None", cap)
    for name in ("context_window", "max_output_tokens"):
        value = given.get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value <= 0
        ):
            raise _bad(name, "a positive int of tokens or None", value)
    callbacks: dict[str, tuple[tuple[Any, ...], str]] = {
        "on_attempt": ((None,), "(attempt)"),
        "id_factory": ((), "() -> str"),
        "sleep": ((0.0,), "(seconds)"),
        "clock": ((), "() -> seconds"),
    }
    for name, (args, shape) in callbacks.items():
        if given.get(name) is not None:
            check_callback(_WHO, name, given[name], args, shape)


def _mapping(name: str, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, Mapping):
        example = "{'x-client': 'notebook'}" if name == "headers" else "{'top_k': 20}"
        raise _bad(name, f"a dict or None, e.g. {example}", value)
    if name == "headers":
        for k, v in value.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise _bad(name, "a dict of str names to str values", f"{k!r}: {v!r:.40}")
            _header(k, v)
        return
    if not all(isinstance(k, str) for k in value):
        raise _bad(name, "a dict with str keys, e.g. {'top_k': 20}", value)
    for key in value:  # case variants too: some servers read "Messages" as "messages"
        low = key.lower()
        case = "" if key == low else f" (read as {low!r} by servers that ignore case)"
        if (field := reserved_field(key)) is not None:
            raise UsageError(
                f"{_WHO}(extra_body=...) holds {key!r}, a request field the runtime sets{case}; "
                f"extra_body is for provider fields such as top_k: {RUNTIME_FIELDS[field]}"
            )
        if low == "stream":
            raise UsageError(
                f"{_WHO}(extra_body=...) holds {key!r}, which the client sets itself{case}; "
                f"pass {_WHO}(stream=True) or settings={{'stream': True}} instead"
            )
        if low == "extra_body":
            raise UsageError(
                f"{_WHO}(extra_body=...) holds {key!r}: extra_body's own fields are already "
                "sent at the top level of the request body (a proxy that merges a nested "
                "extra_body would let it replace the fields the runtime sets); put its fields "
                "directly in extra_body, e.g. extra_body={'top_k': 20}"
            )
        if low in CLIENT_OPTIONS or low == "max_wait_seconds":
            raise UsageError(
                f"{_WHO}(extra_body=...) holds {key!r}, an option of the client, not a "
                f"provider field (sent, it would never take effect); pass {_WHO}({low}=...)"
            )
    try:
        json.dumps(dict(value), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise _bad(name, f"JSON values only ({exc})", value) from None


#: Headers that frame the request or route it (RFC 9110 section 7.2, RFC 9112 sections 6 and
#: 9.6): httpx sets them per request; a fixed one contradicts the body or the URL.
_FRAMING_HEADERS = frozenset(
    {
        "content-length",
        "transfer-encoding",
        "host",
        "connection",
        "keep-alive",
        "upgrade",
        "te",
        "trailer",
        "proxy-connection",
        "expect",
    }
)


def _header(name: str, value: str) -> None:
    """Refuse a header httpx could not send, or that would inject another (value never shown)."""
    if not _TOKEN.fullmatch(name):
        raise UsageError(
            f"{_WHO}(headers=...): the header name {name!r:.60} is not an HTTP field name "
            "(RFC 9110: letters, digits and !#$%&'*+-.^_`|~ only, no spaces or colons), "
            "e.g. 'X-Client'"
        )
    if name.lower() in _FRAMING_HEADERS:
        raise UsageError(
            f"{_WHO}(headers=...): {name!r} is set by the HTTP client for each request (the "
            "body's length and encoding, the connection, the server's host); a fixed value "
            "breaks or redirects every request. Drop it; the URL's host goes in base_url"
        )
    bad = _BAD_VALUE_CHAR.search(value)
    if bad is not None:
        raise UsageError(
            f"{_WHO}(headers=...): the value of header {name!r} holds {_char_kind(bad.group())} "
            f"at position {bad.start()}; header values are sent as visible ASCII, spaces and "
            "tabs only (percent-encode or drop other characters)"
        )


def _char_kind(char: str) -> str:
    if char in "\r\n":
        return "a line break"
    if char == "\x00":
        return "a NUL character"
    if ord(char) < 0x20 or char == "\x7f":
        return f"a control character (U+{ord(char):04X})"
    return f"a non-ASCII character (U+{ord(char):04X})"


#: Query parameter names that carry a credential (`api_key`, `token`, `sig`, `code`, ...).
_SECRET_PARAM = re.compile(r"key|token|secret|pass|pwd|auth|sig|cred|session|code|jwt", re.I)
#: How a masked query value is shown.
MASK = "***"


def _query_pairs(url: str) -> list[tuple[str, str, str]]:
    """`(name, raw value, decoded value)` of each query parameter of `url` (no fragment)."""
    from urllib.parse import unquote_plus

    query = url.split("#", 1)[0].partition("?")[2]
    out = []
    for piece in query.split("&") if query else []:
        name, _, value = piece.partition("=")
        out.append((unquote_plus(name), value, unquote_plus(value)))
    return out


def shown_url(url: str) -> str:
    """`url` as it may be shown (repr, hints, error messages), never with a credential in it.

    Any `user:password@` is removed, and the value of each query parameter whose name says
    it carries a credential (`api_key`, `key`, `token`, `sig`, `code`, `password`, ...) is
    replaced by `***`; other parameters (`api-version`) are kept.

    Args:
        url: the URL as given.

    Returns:
        The URL to show.
    """
    head, sep, rest = url.partition("://")
    if sep and "@" in re.split(r"[/?#]", rest, maxsplit=1)[0]:
        url = f"{head}://{rest.split('@', 1)[1]}"
    base, qmark, query = url.partition("?")
    if not qmark:
        return url
    query, hash_, fragment = query.partition("#")
    pieces = []
    for piece in query.split("&"):
        name, eq, _ = piece.partition("=")
        pieces.append(f"{name}={MASK}" if eq and _SECRET_PARAM.search(name) else piece)
    return f"{base}?{'&'.join(pieces)}{hash_}{fragment and MASK}"


def url_secrets(url: str) -> list[str]:
    """The credentials in `url`, raw and percent-decoded, for scrubbing them from any text.

    Args:
        url: the URL as given.

    Returns:
        The `user:password` and the password of its userinfo, and the values of its
        credential query parameters (see `shown_url`); `[]` when it holds none.
    """
    from urllib.parse import unquote

    out: list[str] = []
    head, sep, rest = url.partition("://")
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0] if sep else ""
    if "@" in authority:
        userinfo = authority.rsplit("@", 1)[0]
        out += [userinfo, *userinfo.split(":", 1)[1:]]
    out += [v for name, raw, decoded in _query_pairs(url) if _SECRET_PARAM.search(name)
            for v in (raw, decoded)]  # fmt: skip
    return [*dict.fromkeys([*out, *(unquote(x) for x in out)])]


#: The fewest characters a base64 run cut out of a longer encoding must have to be scrubbed (a
#: shorter one could match ordinary text by chance).
_MIN_B64_RUN = 16


def secret_forms(*secrets: str | None) -> tuple[str, ...]:
    """Each secret as written raw, percent-encoded and base64-encoded, longest first.

    A server echoing a key back (`Incorrect API key provided: zq%2BKey...`), or a proxy
    logging a `Basic` header, writes it in one of these forms; scrubbing only the raw text
    leaks the others. The percent forms are `quote` with and without `/` kept, `quote_plus`,
    and the same with lower-case hex; the base64 forms are standard and URL-safe, padded and
    not, and the run of characters the secret alone decides when it sits at any byte offset
    inside a longer encoded value (`user:key` in a `Basic` header), when that run is at least
    16 characters. JSON escaping is left to the caller.

    Args:
        *secrets: the exact values (an API key, a URL's password); `None` and ones shorter
            than 4 characters are skipped.

    Returns:
        The distinct forms, longest first (so a longer form is replaced before a part of it).
    """
    import base64
    from urllib.parse import quote, quote_plus

    out: list[str] = []
    for secret in secrets:
        if not secret or len(secret) < 4:
            continue
        pct = [quote(secret, safe=""), quote(secret), quote_plus(secret)]
        out += [
            secret,
            *pct,
            *(re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), p) for p in pct),
        ]
        raw = secret.encode()
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            whole = encode(raw).decode()
            out += [whole, whole.rstrip("=")]
            for offset, start in ((0, 0), (1, 2), (2, 3)):
                text = encode(b"\0" * offset + raw).decode().rstrip("=")
                end = len(text) - (1 if (offset + len(raw)) % 3 else 0)
                if end - start >= _MIN_B64_RUN:
                    out.append(text[start:end])
    return tuple(sorted(dict.fromkeys(out), key=len, reverse=True))
