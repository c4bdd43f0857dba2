"""JSON at the edges that never crashes: decoding, cleaning and argument reading (R-M2).

Everything a provider or a tool hands over passes through here before it is hashed, logged or
sent again: `loads` decodes without raising (huge integers, deep nesting, NaN, invalid UTF-8
all become a reason), `clean` makes every string encodable (lone surrogates joined into pairs
or replaced) and bounds the depth, and `read_arguments` turns a tool call's argument text into
an object, a noted repair, or a precise reason with a hint. Part of the value floor: imports
nothing of harnesskit.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from harnesskit._lazy import frozen_dataclass, lazy_pattern

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "ArgumentsRead",
    "FINITE_HINT",
    "clean",
    "clean_text",
    "echoable",
    "excerpt",
    "finite_arguments",
    "may_hold_non_finite",
    "wire_name",
    "loads",
    "non_finite",
    "plain_arguments",
    "read_arguments",
    "read_plain_object",
    "stand_in",
]

MAX_DEPTH = 200
"""Deepest nesting (objects and arrays) accepted from a provider or a tool."""
MAX_INT_DIGITS = 4000
"""Longest integer literal (digits) accepted; longer ones are refused in arguments."""
STAND_IN_CHARS = 200
"""At most this many characters of unparseable argument text are quoted in a stand-in."""

_SURROGATE = lazy_pattern("[\ud800-\udfff]")
_CONTROL_TOKEN = lazy_pattern(
    r"<\|[^|<>]{0,40}\|>|</?(?:tool_call|tool_calls|function_call|functioncall|function_calls)>"
    r"|\[/?TOOL_CALLS\]|\[/?INST\]|<\|?(?:im_start|im_end|endoftext|eot_id)\|?>",
    re.I,
)
_CONTROL_CHARS = lazy_pattern("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: Characters that show nothing and are no text before a fence or a JSON value: a byte-order
#: mark (U+FEFF), zero-width space, non-joiner and joiner (U+200B-U+200D), word joiner (U+2060).
INVISIBLE = "\ufeff\u200b\u200c\u200d\u2060"
#: A markdown fence opening a line (CommonMark: 3+ backticks or tildes, indented by up to 3
#: spaces; a deeper indent is read too, as models write it in lists; invisible characters
#: before it are allowed), its language word, and the line end after it (a body may also start
#: on the fence's own line).
_FENCE = lazy_pattern(
    rf"(?:\A|(?<=\n))[{INVISIBLE}]*[ \t]*(`{{3,}}|~{{3,}})[ \t]*([\w.+-]*)[ \t]*(?:\r?\n)?"
)
#: A run of fence characters; a closing fence is one of the opening's character, as long or
#: longer.
_RUN = {"`": lazy_pattern("`{3,}"), "~": lazy_pattern("~{3,}")}
_PY_LITERAL = lazy_pattern(r"""\A\s*\{\s*'|:\s*'|\b(?:True|False|None)\b""")
_SURROGATE_ESCAPE = lazy_pattern(r"\\u[dD][89a-fA-F]")  # a lone one needs cleaning
_LONG_INT = lazy_pattern(rf"\d{{{MAX_INT_DIGITS + 1}}}")


class _Refused(ValueError):
    """Internal: a literal the decoder refuses (never leaves this module)."""


def _surrogate(m: re.Match[str]) -> str:
    o = ord(m.group())
    # U+DC80..U+DCFF hold undecodable bytes (os.listdir, surrogateescape): show the byte
    return f"\\x{o - 0xDC00:02x}" if 0xDC80 <= o <= 0xDCFF else "\ufffd"


def clean_text(text: str, *, escape: bool = True) -> str:
    r"""Return `text` encodable as UTF-8.

    Surrogate pairs split across chunks are joined into their character; a lone surrogate
    from an undecodable byte (`os.listdir` of a non-UTF-8 name) becomes `\xNN`, any other
    lone surrogate U+FFFD.

    Args:
        text: any string.
        escape: show undecodable bytes as `\xNN`; `False` uses U+FFFD for every lone
            surrogate (for text that is already JSON, where a backslash would be an escape).

    Returns:
        `text` itself when it already encodes, else the cleaned copy.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        return _SURROGATE.sub(_surrogate if escape else "\ufffd", joined)
    return text


def clean(
    value: Any, *, max_depth: int = MAX_DEPTH, keep_non_finite: bool = False
) -> tuple[Any, str | None]:
    """Make a decoded JSON value safe to hash, log and send.

    Strings (keys included) go through `clean_text`; NaN and infinite floats become `None`;
    anything nested deeper than `max_depth` is refused.

    Args:
        value: a decoded JSON value (dicts, lists, strings, numbers, booleans, `None`).
        max_depth: deepest nesting accepted (levels).
        keep_non_finite: keep NaN and infinite floats as they are (for a reader that refuses
            them where they matter, e.g. tool-call arguments; see `finite_arguments`).

    Returns:
        `(cleaned, None)`, or `(None, reason)` when the value is nested too deeply.
    """
    try:
        return _clean(value, max_depth, keep_non_finite), None
    except _Refused as exc:
        return None, str(exc)


def non_finite(value: Any, *, max_depth: int = MAX_DEPTH) -> str | None:
    """Where `value` holds a float JSON cannot write (NaN, Infinity), if anywhere.

    For a user-given value the log will hold (request settings, task facts): `json.dumps`
    writes those floats as the tokens `NaN` / `Infinity`, which are not JSON.

    Args:
        value: a JSON-ready value (dicts, lists, tuples, strings, numbers, booleans, `None`;
            anything else is not looked into).
        max_depth: deepest nesting looked into (levels).

    Returns:
        The first such float's path and value (`temperature = nan`, `a.b[2] = inf`), else
        `None`.
    """
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"{path or 'the value'} = {item!r}"
        elif depth < max_depth:
            if isinstance(item, dict):
                stack.extend(
                    (v, f"{path}.{k}" if path else str(k), depth + 1)
                    for k, v in reversed(item.items())
                )
            elif isinstance(item, list | tuple):
                stack.extend(
                    (v, f"{path}[{i}]", depth + 1) for i, v in reversed(list(enumerate(item)))
                )
    return None


def _clean(value: Any, depth: int, keep: bool = False) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, float):
        return value if keep or math.isfinite(value) else None
    if isinstance(value, dict):
        if depth <= 0:
            raise _Refused(f"nested deeper than {MAX_DEPTH} levels")
        return {clean_text(str(k)): _clean(v, depth - 1, keep) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if depth <= 0:
            raise _Refused(f"nested deeper than {MAX_DEPTH} levels")
        return [_clean(v, depth - 1, keep) for v in value]
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


def _lenient_int(text: str) -> int | None:
    return None if len(text.lstrip("-")) > MAX_INT_DIGITS else int(text)


_TWICE = "appears twice in one object"


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members, refusing a key that appears twice (which value was meant?)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise _Refused(f"the key {dup!r} {_TWICE}")
    return out


def loads(
    text: str | bytes, *, strict: bool = False, max_depth: int = MAX_DEPTH, cleaned: bool = True
) -> tuple[Any, str | None]:
    """Decode JSON text without ever raising.

    Args:
        text: the JSON text (bytes are decoded as UTF-8).
        strict: refuse NaN/Infinity, integers over `MAX_INT_DIGITS` digits and a key given twice
            in one object (for arguments);
            otherwise they decode as `None` (for response bodies, where a stray field must not
            cost the whole answer).
        max_depth: deepest nesting accepted (levels).
        cleaned: clean the value (see `clean`); `False` for fragments of a stream, whose
            surrogate pairs may be split across chunks and are cleaned once joined.

    Returns:
        `(value, None)`, or `(None, reason)`.
    """
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, f"not valid UTF-8 (byte {exc.start})"
    if cleaned and _plain(text, max_depth):
        # the common case, well-formed JSON of plain values: the C decoder alone, no cleaning
        # walk (nothing in `text` can be unclean, too deep, non-finite or too long)
        try:
            return (_PLAIN if strict else _LENIENT_PLAIN).decode(text), None
        except ValueError:  # any refusal: the slow path below says exactly why
            pass
    try:
        if strict:
            value = json.loads(
                text,
                parse_int=_int,
                parse_float=_strict_float,
                parse_constant=_constant,
                object_pairs_hook=_no_duplicates,
            )
        else:
            value = json.loads(text, parse_int=_lenient_int, parse_constant=lambda _: None)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({_where(exc)})"
    except RecursionError:
        return None, f"nested deeper than {MAX_DEPTH} levels"
    except _Refused as exc:
        return None, f"not valid JSON ({exc})"
    except ValueError as exc:  # what else the decoder refuses (e.g. int conversion limits)
        return None, f"not valid JSON ({exc})"
    return clean(value, max_depth=max_depth) if cleaned else (value, None)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: the slow path cleans it to None
        raise _Refused("a float out of range")
    return value


#: Marks the strict reader's refusal of a number no float holds (`1e999`, `-1e400`).
_OUT_OF_RANGE = "out of the range of a float"


def _strict_float(text: str) -> float:
    """A JSON number for the strict reader; one that overflows a float is refused, not inf."""
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:40]} is {_OUT_OF_RANGE}")
    return value


FINITE_HINT = (
    "send every number as a finite JSON number (at most about 1.8e308 in size; 1e999 is "
    "infinite); for 'no limit' leave the argument out, or send null where the tool allows it"
)
"""What a model is told when its arguments hold a number out of float range."""
#: A JSON number token (after `:`, `[` or `,`) with an exponent of 3+ digits, or the tokens
#: NaN / Infinity: what may decode to a non-finite float (ids such as "9e123ab" do not match).
_NON_FINITE_TEXT = re.compile(rb"[:\[,][ \t\r\n]*-?(?:\d+(?:\.\d*)?[eE]\+?\d{3}|Infinity|NaN)")


def may_hold_non_finite(text: bytes) -> bool:
    """Whether JSON `text` may hold a number that decodes to an infinite float (or NaN).

    A cheap test on the raw bytes (a number with an exponent of 3+ digits, `Infinity`, `NaN`,
    after `:`, `[` or `,`); `True` may be a false alarm (such text inside a string), `False`
    is certain.

    Args:
        text: JSON text as received.

    Returns:
        False when no number in `text` can be out of float range.
    """
    return _NON_FINITE_TEXT.search(text) is not None


def finite_arguments(value: dict[str, Any]) -> ArgumentsRead:
    """Arguments given as an object, refused when they hold a NaN or infinite float.

    Such a float comes from a number out of float range (`{"n": 1e999}`, `-1e400`) that a
    lenient decoder read as infinity; it must never reach a tool as `inf`.

    Args:
        value: the decoded arguments object.

    Returns:
        The read: `value` itself, or no arguments and an `invalid_argument` error naming the
        first such number's path, with `FINITE_HINT`.
    """
    where = non_finite(value)
    if where is None:
        return ArgumentsRead(arguments=value)
    return _not_finite(where)


def _not_finite(what: str) -> ArgumentsRead:
    return ArgumentsRead(
        arguments=None,
        error=f"arguments hold a number out of float range: {what}",
        error_type="invalid_argument",
        hint=FINITE_HINT,
    )


#: The fast path's decoder: refuses (so hands over to the slow path) anything it cannot read
#: exactly as the strict, cleaned path would.
_PLAIN = json.JSONDecoder(
    parse_float=_finite, parse_constant=_constant, object_pairs_hook=_no_duplicates
)


#: The lenient fast path's decoder (response bodies): a key given twice keeps its last value,
#: as the slow path's; NaN, Infinity and overflowing floats go to the slow path (-> None).
_LENIENT_PLAIN = json.JSONDecoder(parse_float=_finite, parse_constant=_constant)
#: `scan_once(text, index) -> (value, end)`: the C scanner without the object hook.
_PLAIN_SCAN: Callable[[str, int], tuple[Any, int]]
_PLAIN_SCAN = _LENIENT_PLAIN.scan_once  # type: ignore[attr-defined]
_JSON_SPACE = " \t\n\r"
#: The end of an object key: its closing quote, JSON whitespace, the colon. Every key of an
#: object text ends so once; text inside strings can only add matches, never remove one.
_KEY_END = re.compile(r'"[ \t\n\r]*:')


def read_plain_object(text: str) -> dict[str, Any] | None:
    """The object a well-formed, plain JSON object text holds; `None` for anything else.

    The fast path in front of `read_arguments` and `loads(strict=True)`: one pass of the C
    decoder with no hook per object. It answers only when the strict reader would return the
    very same object: JSON whitespace around one object and nothing else, no key given twice
    (the keys decoded are counted against the key ends in the text, which no string can hide),
    no NaN or Infinity, no float out of range, no integer over `MAX_INT_DIGITS` digits, no
    nesting deeper than `MAX_DEPTH` and no string that needs cleaning. `None` never means the
    text is wrong: the strict reader then decides, and says why.

    Args:
        text: the argument (or body) text as received.

    Returns:
        The decoded object, or `None` when the text needs the full reader.
    """
    start = 0
    if text[:1] != "{":
        start = len(text) - len(text.lstrip(_JSON_SPACE))
        if text[start : start + 1] != "{":
            return None
    n = len(text)
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        return None
    if n > MAX_INT_DIGITS and _LONG_INT.search(text):
        return None
    braces = text.count("{")
    if n > 2 * MAX_DEPTH and braces + text.count("[") > MAX_DEPTH:
        return None
    if not text.isascii() and clean_text(text) is not text:
        return None
    try:
        value, end = _PLAIN_SCAN(text, start)
    except (StopIteration, ValueError, RecursionError):
        return None
    if end != n and text[end:].strip(_JSON_SPACE):
        return None
    keys = len(value) if braces == 1 else _count_keys(value)  # one brace: no nested object
    if keys != _key_ends(text):  # a key given twice (or a ':' after a quote in a string)
        return None
    return value  # type: ignore[no-any-return]  # a dict: the value at `start` opens with {


def _key_ends(text: str) -> int:
    """At least the number of object keys in `text` (see `_KEY_END`), cheaply when it can."""
    if '" ' in text or '"\n' in text or '"\t' in text or '"\r' in text:
        return len(_KEY_END.findall(text))  # a key may end in whitespace before its colon
    return text.count('":')  # every key's closing quote is right before its colon


def _count_keys(value: Any) -> int:
    """How many keys the objects in `value` hold, nested ones included."""
    if type(value) is dict:
        return len(value) + sum(_count_keys(v) for v in value.values() if type(v) in _NESTS)
    return sum(_count_keys(v) for v in value if type(v) in _NESTS)


_NESTS = (dict, list)


def _plain(text: str, max_depth: int) -> bool:
    """True when `text` can hold no string to clean, no refused integer and no deep nesting."""
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        return False
    if len(text) > MAX_INT_DIGITS and _LONG_INT.search(text):
        return False
    if text.count("{") + text.count("[") > max_depth:
        return False
    return text.isascii() or clean_text(text) is text


@frozen_dataclass(kw_only=True)
class ArgumentsRead:
    """What a tool call's argument text turned out to be."""

    arguments: dict[str, Any] | None
    """The object, or `None` when the text gives none."""
    error: str | None = None
    """Why there is no object: what is wrong with the text, with its position."""
    error_type: str | None = None
    """`invalid_argument` or `truncated_call` when `arguments` is `None`."""
    hint: str | None = None
    """What the model should send instead, naming the problem."""
    repair: str | None = None
    """A note when the object was read after a safe normalization (fence, trailing text)."""


_ONE_OBJECT = "send the arguments as one bare JSON object matching the tool's schema"


#: The last argument text read to an object of scalars only, and that object: a call's text
#: is read twice a step (the provider adapter, then the context builder rendering the
#: logged reply), and a copy of a flat object is the same object a second read would give.
_LAST_FLAT: tuple[str | None, dict[str, Any]] = (None, {})
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _remember_flat(text: str, value: dict[str, Any]) -> None:
    global _LAST_FLAT
    scalars = _SCALARS
    for v in value.values():
        if type(v) not in scalars:
            return
    _LAST_FLAT = (text, dict(value))


def plain_arguments(text: str) -> dict[str, Any] | None:
    """The arguments object of well-formed argument text, as `read_arguments` reads it.

    The fast path of `read_arguments` (and of the provider adapters, which then need no
    `ArgumentsRead`): text read just before gives a fresh copy of the same flat object, else
    `read_plain_object`.

    Args:
        text: a tool call's argument text as received.

    Returns:
        A new dict equal to `read_arguments(text).arguments` (with no `repair`), or `None` when
        the text needs `read_arguments` (empty, repaired, not an object, not plain, wrong).
    """
    last = _LAST_FLAT
    if last[0] == text:  # read again (the adapter, then the context builder): a fresh dict
        return dict(last[1])
    plain = read_plain_object(text)
    if plain is not None:
        _remember_flat(text, plain)
    return plain


def read_arguments(
    text: str, *, cut_off: bool = False, max_tokens: int | None = None
) -> ArgumentsRead:
    """Read a tool call's argument text, strictly, naming what is wrong when it does not parse.

    Only two normalizations are applied, each noted in `repair`: a markdown code fence around
    a complete JSON object is removed, and text after a complete object is dropped when it is
    not another JSON value. A Python-literal dict, an incomplete object or anything else is an
    error; nothing is ever auto-closed or guessed.

    Args:
        text: the argument text as received.
        cut_off: the provider stopped at its output limit (finish_reason `length`, or
            `completion_tokens` reached `max_tokens`).
        max_tokens: the request's output limit (tokens), quoted in the truncation hint.

    Returns:
        The read; `arguments` is `{}` for empty text.
    """
    if not text.strip():
        return ArgumentsRead(arguments={})
    plain = plain_arguments(text)
    if plain is not None:  # the common case: one well-formed object, exactly as below
        return ArgumentsRead(arguments=plain)
    if text[:1] in INVISIBLE:  # a BOM or zero-width characters before the value or fence
        read = read_arguments(text.lstrip(INVISIBLE), cut_off=cut_off, max_tokens=max_tokens)
        if read.arguments is None or not text.strip(INVISIBLE):
            return read
        note = "leading byte-order mark or zero-width characters removed"
        return ArgumentsRead(
            arguments=read.arguments, repair=f"{read.repair}; {note}" if read.repair else note
        )
    value, err = loads(text, strict=True)
    if err is not None and _OUT_OF_RANGE in err:  # 1e999 is no number a tool can take
        return _not_finite(err.removeprefix("not valid JSON (")[:-1])
    if err is not None and _TWICE in err:  # never guess which of the two values was meant
        return ArgumentsRead(
            arguments=None,
            error=f"arguments are ambiguous: {err.removeprefix('not valid JSON (')[:-1]}",
            error_type="invalid_argument",
            hint="give each argument once; " + _ONE_OBJECT,
        )
    if err is None:
        if isinstance(value, dict):
            _remember_flat(text, value)
            return ArgumentsRead(arguments=value)
        if isinstance(value, str):  # double-encoded: a JSON string holding the object's text
            inner, inner_err = loads(value, strict=True)
            if inner_err is None and isinstance(inner, dict):
                return ArgumentsRead(arguments=inner, repair="double-encoded JSON string decoded")
        return ArgumentsRead(
            arguments=None,
            error=f"arguments must be a JSON object, got {_kind(value)}",
            error_type="invalid_argument",
            hint=_ONE_OBJECT,
        )
    return _read_text(text, err, cut_off=cut_off, max_tokens=max_tokens)


def _read_text(text: str, err: str, *, cut_off: bool, max_tokens: int | None) -> ArgumentsRead:
    """Read argument text that is not one JSON value (`err`: why): a fence, or a diagnosis."""
    head = text.lstrip()[:1]
    fence = None if head in ("{", "[", '"') else _FENCE.search(text)  # JSON-looking: no fence
    if fence is not None and head in ("`", "~") and text[: fence.start()].strip():
        fence = None  # the text opens with a run that opens no fence: not a later one
    if fence is not None:
        return _fenced(text, fence, cut_off=cut_off, max_tokens=max_tokens)
    return _diagnose(text, err, cut_off=cut_off, max_tokens=max_tokens)


def _read_body(text: str, *, cut_off: bool, max_tokens: int | None) -> ArgumentsRead:
    """`read_arguments` of a fence's body: the same reading, without looking for a fence."""
    if not text.strip():
        return ArgumentsRead(
            arguments=None,
            error="arguments are not valid JSON: the fence is empty",
            error_type="invalid_argument",
            hint=_ONE_OBJECT,
        )
    value, err = loads(text, strict=True)
    if err is not None and _OUT_OF_RANGE in err:
        return _not_finite(err.removeprefix("not valid JSON (")[:-1])
    if err is None:
        if isinstance(value, dict):
            return ArgumentsRead(arguments=value)
        if isinstance(value, str):
            inner, inner_err = loads(value, strict=True)
            if inner_err is None and isinstance(inner, dict):
                return ArgumentsRead(arguments=inner, repair="double-encoded JSON string decoded")
        return ArgumentsRead(
            arguments=None,
            error=f"arguments must be a JSON object, got {_kind(value)}",
            error_type="invalid_argument",
            hint=_ONE_OBJECT,
        )
    return _diagnose(text, err, cut_off=cut_off, max_tokens=max_tokens)


#: Finds where a JSON value ends without refusing anything (the strict read follows).
_SCANNER = json.JSONDecoder(parse_int=_lenient_int, parse_constant=lambda _: None)


def _value_end(text: str, start: int) -> int | None:
    """The end of the JSON value starting at `start`, or `None` when there is none."""
    try:
        return _SCANNER.raw_decode(text, start)[1]
    except (ValueError, RecursionError):
        return None


#: What may stand between a fence, its JSON value and its closing run.
_BLANK = frozenset(" \t\r\n" + INVISIBLE)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _BLANK:
        pos += 1
    return pos


def _fenced(
    text: str, fence: re.Match[str], *, cut_off: bool, max_tokens: int | None
) -> ArgumentsRead:
    """Read argument text holding a markdown code fence (`fence`: its opening).

    One pass, whatever the text (each ``` is not tried as the end in turn): the JSON value
    after the opening is scanned to its end, and the fence is closed when a run of the
    opening's character, at least as long (CommonMark), follows it. A ``` inside a string value
    is therefore never the end. Prose before the fence and after the closed fence is dropped,
    noted in `repair`, unless what follows is another JSON value or fence. A fence never
    closed, or closed around something that is not one object, is an error naming which.
    """
    marker = fence.group(1)
    run = _RUN[marker[0]]
    inside = text[fence.end() :]
    before = text[: fence.start()].strip()
    pos = _skip_space(inside, 0)
    end = _value_end(inside, pos)
    if end is not None:
        read = _read_body(inside[pos:end], cut_off=cut_off, max_tokens=max_tokens)
        close = run.match(inside, _skip_space(inside, end))
        if close is not None and len(close.group()) < len(marker):
            close = None  # a shorter run does not close the fence
        if read.arguments is not None and close is not None:
            return _after_fence(read, inside[close.end() :].strip(), before)
        if read.arguments is not None:
            closed = _closing(inside, end, marker) is not None
            return _fence_error(closed=closed)
        return _fence_read_error(read)
    close_at = _closing(inside, pos, marker)
    body = inside[pos:close_at] if close_at is not None else inside[pos:]
    read = _read_body(body, cut_off=cut_off, max_tokens=max_tokens)
    if read.arguments is not None:  # not expected (the scan failed); say what is true of it
        return _fence_error(closed=close_at is not None)
    return _fence_read_error(read)


def _closing(text: str, start: int, marker: str) -> int | None:
    """Where the first run closing a fence opened by `marker` starts at or after `start`."""
    for m in _RUN[marker[0]].finditer(text, start):
        if len(m.group()) >= len(marker):
            return m.start()
    return None


def _after_fence(read: ArgumentsRead, rest: str, before: str) -> ArgumentsRead:
    another_fence = rest[:1] in _RUN and _RUN[rest[0]].match(rest) is not None
    another_value = rest[:1] in ("{", "[") and _value_end(rest, 0) is not None
    if another_fence or another_value:
        return ArgumentsRead(
            arguments=None,
            error=f"arguments are not valid JSON: {len(rest)} chars of trailing data after "
            "the closed markdown code fence (another JSON value or fence)",
            error_type="invalid_argument",
            hint="send one JSON object and nothing after it (no fence, second object or code)",
        )
    notes = ["markdown code fence removed"]
    if read.repair:
        notes.append(read.repair)
    if before:
        notes.append(f"dropped {len(before)} chars of text before it")
    if rest:
        notes.append(f"dropped {len(rest)} chars of trailing text after it")
    return ArgumentsRead(arguments=read.arguments, repair="; ".join(notes))


def _fence_error(*, closed: bool) -> ArgumentsRead:
    return ArgumentsRead(
        arguments=None,
        error="arguments are wrapped in a markdown code fence that holds text besides "
        "the JSON object"
        if closed
        else "arguments are wrapped in a markdown code fence that is never closed",
        error_type="invalid_argument",
        hint="remove the code fence; " + _ONE_OBJECT,
    )


def _fence_read_error(read: ArgumentsRead) -> ArgumentsRead:
    return ArgumentsRead(
        arguments=None,
        error=f"arguments are wrapped in a markdown code fence and {read.error}",
        error_type=read.error_type,
        hint=f"remove the code fence; {read.hint}",
    )


def _diagnose(text: str, err: str, *, cut_off: bool, max_tokens: int | None) -> ArgumentsRead:
    decoder = json.JSONDecoder(parse_int=_int, parse_float=_strict_float, parse_constant=_constant)
    stripped = text.strip()
    start = len(text) - len(text.lstrip())
    try:
        first, end = decoder.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        incomplete = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated")
        if cut_off or incomplete:
            return _incomplete(exc, cut_off=cut_off, max_tokens=max_tokens)
        if _PY_LITERAL.search(stripped):
            return ArgumentsRead(
                arguments=None,
                error=f"arguments are not valid JSON: they look like a Python dict literal "
                f"(single quotes or True/False/None; {_where(exc)})",
                error_type="invalid_argument",
                hint="write JSON: double-quoted keys and strings, true/false/null; " + _ONE_OBJECT,
            )
        return ArgumentsRead(
            arguments=None,
            error=f"arguments are not valid JSON ({_where(exc)})",
            error_type="invalid_argument",
            hint=_ONE_OBJECT,
        )
    except (RecursionError, ValueError):
        return ArgumentsRead(
            arguments=None,
            error=f"arguments are not valid JSON: {err.removeprefix('not valid JSON ')}",
            error_type="invalid_argument",
            hint=_ONE_OBJECT + " (plain numbers, at most a few levels deep)",
        )
    rest = text[end:].strip()
    cleaned, why = clean(first)
    if why is not None:
        return ArgumentsRead(
            arguments=None,
            error=f"arguments are not valid JSON: {why}",
            error_type="invalid_argument",
            hint=_ONE_OBJECT + " (at most a few levels deep)",
        )
    if isinstance(cleaned, dict) and why is None and rest[:1] not in ("{", "["):
        return ArgumentsRead(
            arguments=cleaned,
            repair=f"dropped {len(rest)} chars of trailing text after the JSON object",
        )
    return ArgumentsRead(
        arguments=None,
        error=f"arguments are not valid JSON: {len(rest)} chars of trailing data after the "
        f"JSON value (char {end})",
        error_type="invalid_argument",
        hint="send one JSON object and nothing after it (no second object, tag or text)",
    )


def _incomplete(
    exc: json.JSONDecodeError, *, cut_off: bool, max_tokens: int | None
) -> ArgumentsRead:
    where = _where(exc)
    if cut_off:
        limit = f"max_tokens={max_tokens}" if max_tokens is not None else "max_tokens"
        return ArgumentsRead(
            arguments=None,
            error=f"the arguments were cut off by the output token limit ({limit} reached; "
            f"the JSON object is incomplete: {where})",
            error_type="truncated_call",
            hint=f"the output limit {limit} ended your call before its JSON object was "
            "complete; send shorter arguments (split the work into smaller calls) or raise "
            "the output limit",
        )
    return ArgumentsRead(
        arguments=None,
        error=f"arguments are not valid JSON: the JSON object is incomplete ({where})",
        error_type="truncated_call",
        hint="the JSON object is incomplete, as if cut off (e.g. by max_tokens); send the "
        "complete object, with shorter arguments if needed",
    )


def _where(exc: json.JSONDecodeError) -> str:
    """`Expecting value at char 7`; `Unterminated string starting at char 10`."""
    return f"{exc.msg.removesuffix(' at')} at char {exc.pos}"


def _kind(value: Any) -> str:
    return type(value).__name__


def echoable(text: str, *, repaired: bool) -> bool:
    """Whether argument text that parsed can go back to the provider byte for byte.

    Empty text, `null`, a repaired text (fence, trailing data, double encoding) and text with
    surrogate escapes are sent as the object read instead, so the echo is always one strict
    JSON object (the provider's own bytes otherwise, which keeps its prompt cache warm).

    Args:
        text: the argument text as received (it parsed to an object).
        repaired: it was read after a normalization.

    Returns:
        True when `text` itself is sent.
    """
    return not repaired and text.lstrip().startswith("{") and "\\ud" not in text.lower()


_NAME_OK = lazy_pattern(r"\A[a-zA-Z0-9_-]{1,64}\Z")


def excerpt(text: str, limit: int = STAND_IN_CHARS) -> str:
    """`text` made safe to show a provider: clean, without chat control tokens, capped.

    Args:
        text: any text the model or a tool produced.
        limit: the most characters kept.

    Returns:
        At most `limit` characters.
    """
    return _CONTROL_CHARS.sub("", _CONTROL_TOKEN.sub("", clean_text(text)))[:limit]


def wire_name(name: str) -> str:
    """A tool name as echoed to a provider: providers refuse names outside `[a-zA-Z0-9_-]{1,64}`.

    Args:
        name: the name the model wrote (possibly invented, empty or hostile).

    Returns:
        `name` itself when valid, else its allowed characters (`_` for the rest), capped at 64,
        or `invalid_tool_name` when nothing is left.
    """
    if _NAME_OK.match(name):
        return name
    fixed = re.sub(r"[^a-zA-Z0-9_-]", "_", excerpt(name, 64)).strip("_")
    return fixed[:64] or "invalid_tool_name"


def stand_in(raw: str, error: str | None) -> str:
    """The argument text echoed to the provider in place of text that does not parse.

    Strict providers refuse a request whose history holds invalid argument JSON, so the echo
    is a valid object quoting at most `STAND_IN_CHARS` characters of the original, with chat
    control tokens and control characters removed. The raw text stays in the log.

    Args:
        raw: the argument text as received.
        error: why it did not parse.

    Returns:
        A JSON object text `{"_unparsed_arguments": {"chars", "excerpt", "error"}}`.
    """
    body = {"chars": len(raw), "excerpt": excerpt(raw), "error": excerpt(error or "")}
    return json.dumps({"_unparsed_arguments": body}, ensure_ascii=False)


def _read_only(self: Any, *args: Any, **kwargs: Any) -> Any:
    from harnesskit.errors import UsageError

    raise UsageError(
        f"this {type(self).__name__} is read-only: it is shared with the harness (tool specs, "
        "request settings); change a copy instead (copy.deepcopy(value) gives a plain one)"
    )


class ReadOnlyDict(dict):  # type: ignore[type-arg]
    """A `dict` whose mutators raise `UsageError`; JSON-encodes and reads like a dict.

    `copy.copy`, `copy.deepcopy` and pickling give plain, mutable dicts (and lists).
    """

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        import copy

        return {k: copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


class ReadOnlyList(list):  # type: ignore[type-arg]
    """A `list` whose mutators raise `UsageError`; JSON-encodes and reads like a list."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = extend = insert = pop = remove = clear = sort = reverse = _read_only

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        import copy

        return [copy.deepcopy(v, memo) for v in self]

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


def read_only(value: Any) -> Any:
    """A read-only deep copy of a JSON-like value (tool specs, request settings).

    Dicts become `ReadOnlyDict`, lists and tuples `ReadOnlyList`; other values are kept as
    they are.

    Args:
        value: the value (e.g. a tool spec or request settings).

    Returns:
        The copy; the original is never changed and shares no container with it.
    """
    if isinstance(value, dict):
        for item in value.values():
            if isinstance(item, dict | list | tuple):
                return ReadOnlyDict({k: read_only(v) for k, v in value.items()})
        return ReadOnlyDict(value)  # flat (request settings, most often): one copy
    if isinstance(value, list | tuple):
        return ReadOnlyList(read_only(v) for v in value)
    return value
