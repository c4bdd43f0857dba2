"""Reading a GGUF file's chat template from its header, and the fenced tool-call variant."""

from __future__ import annotations

import struct

import pytest

from harnesskit.errors import UsageError
from harnesskit.models import _gguf

QWEN_LIKE = (
    "{%- for tool_call in message.tool_calls %}"
    '{{- \'\\n<tool_call>\\n{"name": "\' }}{{- tool_call.name }}'
    '{{- \'", "arguments": \' }}{{- tool_call.arguments | tojson }}'
    "{{- '}\\n</tool_call>' }}{%- endfor %}"
    '{{- "For each function call, return a json object within <tool_call></tool_call> tags" }}'
)


def _s(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf(kvs: list[tuple[str, int, bytes]], *, version: int = 3) -> bytes:
    out = b"GGUF" + struct.pack("<IQQ", version, 0, len(kvs))
    for key, kind, value in kvs:
        out += _s(key) + struct.pack("<I", kind) + value
    return out


def tokens(n: int) -> bytes:  # an array of n strings, as the tokenizer's vocabulary is stored
    return struct.pack("<IQ", 8, n) + b"".join(_s(f"tok{i}") for i in range(n))


def test_the_template_is_found_after_arrays_and_numbers(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(
        gguf(
            [
                ("general.name", 8, _s("tiny")),
                ("qwen2.context_length", 4, struct.pack("<I", 32768)),
                ("tokenizer.ggml.tokens", 9, tokens(1000)),
                ("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, 3) + b"\0" * 12),
                ("general.flag", 7, b"\1"),
                ("tokenizer.chat_template", 8, _s(QWEN_LIKE)),
                ("after", 10, struct.pack("<Q", 1)),
            ]
        )
    )
    assert _gguf.chat_template(path) == QWEN_LIKE


def test_no_template_is_none_and_a_bad_file_is_a_usage_error_naming_it(tmp_path):
    none = tmp_path / "none.gguf"
    none.write_bytes(gguf([("general.name", 8, _s("tiny"))]))
    assert _gguf.chat_template(none) is None

    for name, data in {
        "text.gguf": b"not a gguf at all",
        "cut.gguf": gguf([("tokenizer.ggml.tokens", 9, tokens(50))])[:-30],
        "odd.gguf": gguf([("k", 99, b"")]),
        "empty.gguf": b"",
        # an array of arrays nested 5,000 deep
        "deep.gguf": gguf([("k", 9, struct.pack("<IQ", 9, 1) * 5000 + struct.pack("<IQ", 4, 0))]),
    }.items():
        bad = tmp_path / name
        bad.write_bytes(data)
        with pytest.raises(UsageError, match=f"{name}: not a readable GGUF file"):
            _gguf.chat_template(bad)


def test_the_fenced_variant_changes_only_how_earlier_calls_render():
    fenced = _gguf.fenced_call_template(QWEN_LIKE)

    assert '\'\\n```json\\n{"name": "\'' in fenced and "'}\\n```'" in fenced
    assert "'\\n<tool_call>" not in fenced and "</tool_call>'" not in fenced
    # the model's own description of the call format (system block) is left as it is
    assert "within <tool_call></tool_call> tags" in fenced
    assert (
        fenced.replace("```json", "<tool_call>").replace("'}\\n```'", "'}\\n</tool_call>'")
        == QWEN_LIKE
    )
    assert _gguf.fenced_call_template("{{ messages }}") is None
