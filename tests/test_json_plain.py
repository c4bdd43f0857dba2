"""The plain readers (`read_plain_object`, `plain_arguments`, `loads`' fast paths) answer
exactly as the full readers do, on hostile text too.

Every text is read twice, with the fast paths on and with them switched off, and the two
results must be identical (`repr`: types, key order, every field of a read or a call). The
texts are the fuzz corpus of `benchmarks/_fuzz.py`, the argument texts and response bodies of
the bug-report cases in `../shared/cases`, hand-written edge cases and Hypothesis.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import pathlib
import random
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harnesskit import _json
from harnesskit.messages import Message, ToolCall
from harnesskit.models._parse import parse_completion
from harnesskit.models.offline import as_response

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = ROOT.parent / "shared" / "cases"


@contextlib.contextmanager
def _slow() -> Iterator[None]:
    """Only the full readers: no plain reader, no plain fast path, no remembered read."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_json, "read_plain_object", lambda text: None)
        mp.setattr(_json, "_plain", lambda text, max_depth: False)
        mp.setattr(_json, "_LAST_FLAT", (None, {}))
        yield


def _fresh() -> None:
    _json._LAST_FLAT = (None, {})


def _both(fn: Any, *args: Any, **kw: Any) -> tuple[str, str, str]:
    """`repr` of `fn(...)` on the fast paths (read twice: fresh, then remembered) and slow."""
    _fresh()
    fast = repr(fn(*args, **kw))
    again = repr(fn(*args, **kw))
    with _slow():
        slow = repr(fn(*args, **kw))
    _fresh()
    return fast, again, slow


def _check_text(text: str) -> None:
    plain = _json.read_plain_object(text)
    with _slow():
        strict, err = _json.loads(text, strict=True)
    if plain is not None:
        assert err is None and repr(plain) == repr(strict), text[:200]
    fast, again, slow = _both(_json.read_arguments, text)
    assert fast == slow == again, text[:200]
    for cut in (True, False):
        fast, again, slow = _both(_json.read_arguments, text, cut_off=cut, max_tokens=64)
        assert fast == slow == again, text[:200]
    for strict_mode in (True, False):
        fast, again, slow = _both(_json.loads, text, strict=strict_mode)
        assert fast == slow == again, text[:200]
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": text}}
    fast, again, slow = _both(ToolCall.from_openai, call)
    assert fast == slow == again, text[:200]


def _check_body(body: bytes | str) -> None:
    fast, again, slow = _both(_json.loads, body)
    assert fast == slow == again, body[:200]
    data, err = _json.loads(body)
    if err is None and isinstance(data, dict):
        fast, again, slow = _both(_parse_or_error, data)
        assert fast == slow == again, body[:200]


def _parse_or_error(data: dict[str, Any]) -> Any:
    try:
        return parse_completion(data, model="m", tool_names=("echo", "count"))
    except Exception as exc:  # a body that is no completion: the same error both ways
        return (type(exc).__name__, str(exc))


EDGES = [
    '{"a": 1}',
    '{"a":1,"b":"x"}',
    '  {"a": 1}\n',
    '\n{"a": 1}',
    '{"a": 1} ',
    '{"a": 1}\t\r\n',
    "{}",
    " {} ",
    '{"a": 1, "a": 2}',
    '{"a":1,"a":1}',
    '{"a" :1, "a" :2, "b":":"}',  # a duplicate hidden by a ':' after a quote in a string
    '{"a"\n:1, "a" : 2, "b": ":", "c": ":"}',
    '{"x": {"a": 1, "a": 2}}',
    '{"x": [{"a": 1}, {"a": 1, "a": 2}]}',
    '{"x": [{"a": 1}, {"b": 2}], "y": {"z": {}}}',
    '{"a": "\\":"}',
    '{"a\\"": 1, "b": "\\"x\\": 1"}',
    '{"k": ":", "k2": "\\": \\""}',
    '{"n": NaN}',
    '{"n": -Infinity}',
    '{"n": 1e999}',
    '{"n": -1e400}',
    '{"n": 1.5e300, "m": 1e-400, "o": 0.1, "p": -0.0, "q": 1E5}',
    '{"n": ' + "9" * 4000 + "}",
    '{"n": ' + "9" * 4001 + "}",
    '{"n": ' + "9" * 4300 + "}",
    '{"n": ' + "9" * 4301 + "}",
    '{"n": ' + "1" * 400 + ".5}",
    '{"d": ' + "[" * 199 + "]" * 199 + "}",
    '{"d": ' + "[" * 200 + "]" * 200 + "}",
    '{"d": ' + "[" * 201 + "]" * 201 + "}",
    '{"d": ' + '{"a":' * 199 + "1" + "}" * 199 + "}",
    '{"d": ' + '{"a":' * 200 + "1" + "}" * 200 + "}",
    '{"d": ' + "[" * 5000 + "]" * 5000 + "}",
    '{"s": "\\ud83d\\ude00"}',
    '{"s": "\\ud83d"}',
    '{"s": "\\udce9"}',
    '{"s": "\\u00e9 caf\u00e9"}',
    '{"s": "caf\udce9"}',  # a raw lone surrogate in the text
    '{"s\ud800": 1}',
    '{"s": "\\/ \\b \\f \\n \\r \\t \\u0000"}',
    '{"s": "\x00"}',
    '{"s": "tab\there"}',
    '{"a": true, "b": false, "c": null, "d": [1, 2.5, "x"], "e": {"f": []}}',
    '{"a": 01}',
    '{"a": 1,}',
    '{"a": 1}}',
    '{"a": 1} {"b": 2}',
    '{"a": 1} trailing',
    "{'a': 1}",
    '```json\n{"a": 1}\n```',
    '"{\\"a\\": 1}"',
    "null",
    "[]",
    '[{"a": 1}]',
    "3",
    "",
    "   ",
    "{",
    '{"a": "cut',
    '{"a": 1',
    '\ufeff{"a": 1}',
    '\u00a0{"a": 1}',
    '{"a": 1}\u00a0',
]


@pytest.mark.parametrize("text", EDGES, ids=range(len(EDGES)))
def test_edge_texts_read_the_same_on_both_paths(text):
    _check_text(text)
    _check_body(text)
    _check_body(text.encode("utf-8", "surrogatepass"))


def test_the_plain_reader_answers_for_well_formed_objects():
    # so that a plain reader that always gave up would fail here
    for text in ('{"a": 1}', ' {"a": [1, {"b": "c\u00e9"}]}\n', '{"a":1,"b":{"c":null}}'):
        assert _json.read_plain_object(text) == json.loads(text)
    assert _json.read_plain_object('{"a" : 1, "b":\n2}') == {"a": 1, "b": 2}
    for text in ('{"a": 1, "a": 2}', '{"a" :1, "a" :2, "b":":"}', '{"n": NaN}', "[1]", ""):
        assert _json.read_plain_object(text) is None


def test_a_body_is_decoded_without_the_cleaning_walk_when_plain(monkeypatch):
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "hi"}}]})
    monkeypatch.setattr(_json, "clean", lambda *a, **k: pytest.fail("cleaning walk used"))
    assert _json.loads(body.encode())[0]["choices"][0]["message"]["content"] == "hi"


def _fuzz_module():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return importlib.import_module("_fuzz")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


@pytest.fixture(scope="module")
def fuzz():
    module = _fuzz_module()
    yield module
    shutil.rmtree(module._ODD_DIR, ignore_errors=True)


def test_the_fuzz_corpus_reads_the_same_on_both_paths(fuzz):
    rng = random.Random(19)
    for _ in range(300):
        _check_text(fuzz._args_text(rng))
    for _ in range(300):
        body = fuzz.body_for(rng)
        _check_body(body)
    for _ in range(100):
        for event in fuzz.sse_for(rng):
            _check_body(event)
            fast, again, slow = _both(_json.loads, event, cleaned=False)
            assert fast == slow == again


def _case_texts() -> tuple[list[str], list[str]]:
    if not CASES.is_dir():
        pytest.skip(f"../shared/cases not found at {CASES}: these tests need the shared cases")
    texts: list[str] = []
    bodies: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if "choices" in value:
                bodies.append(json.dumps(value))
                bodies.append(json.dumps(value, separators=(",", ":")))
                bodies.append(json.dumps(value, indent=2, ensure_ascii=False))
            for key, item in value.items():
                if key == "arguments" and isinstance(item, str):
                    texts.append(item)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
            texts.append(value)

    for path in sorted(CASES.glob("*.json")):
        walk(json.loads(path.read_text()))
    return texts, bodies


def test_the_shared_cases_read_the_same_on_both_paths():
    texts, bodies = _case_texts()
    assert texts and bodies
    for text in texts:
        _check_text(text)
    for body in bodies:
        _check_body(body)


def test_a_scripted_chat_completions_turn_is_the_same_on_both_paths():
    turn = {
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
            {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{'x': 1}"}},
            {"id": "c", "type": "function", "function": {"name": "h", "arguments": '{"x": [1]}'}},
            {"id": "", "type": "function", "function": {"name": "i", "arguments": ""}},
        ],
    }
    fast, again, slow = _both(lambda: as_response(turn, model="m", ids=iter(range(1, 99))))
    assert fast == slow == again
    fast, again, slow = _both(Message.from_openai, {"role": "assistant", **turn})
    assert fast == slow == again


pieces = st.sampled_from(
    [
        '"\\ud83d"',
        '"\\u00e9"',
        '"caf\u00e9"',
        '":"',
        '"\\":"',
        '"a\\"b"',
        "NaN",
        "1e999",
        "9" * 4001,
        "12",
        "-0.5",
        "true",
        "null",
        "{}",
        "[]",
        '"x"',
    ]
)
spaces = st.sampled_from(["", " ", "\n", "\t", "  ", "\r\n"])
keys = st.sampled_from(["a", "b", 'a"', ":", "\u00e9"])


@st.composite
def objects(draw: Any, depth: int = 0) -> str:
    members = []
    for _ in range(draw(st.integers(0, 4))):
        key = json.dumps(draw(keys), ensure_ascii=False)
        if depth < 2 and draw(st.booleans()):
            value = draw(objects(depth + 1))
        elif depth < 2 and draw(st.booleans()):
            value = "[" + ",".join(draw(st.lists(objects(depth + 1), max_size=2))) + "]"
        else:
            value = draw(pieces)
        members.append(draw(spaces) + key + draw(spaces) + ":" + draw(spaces) + value)
    return "{" + ",".join(members) + draw(spaces) + "}"


@given(st.tuples(spaces, objects(), spaces, st.sampled_from(["", " x", "}", ","])))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_objects_read_the_same_on_both_paths(parts):
    text = "".join(parts)
    _check_text(text)
    _check_body(text)
