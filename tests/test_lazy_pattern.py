"""`lazy_pattern` reads as the compiled pattern, and `import harnesskit` compiles none of them."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit._lazy import LazyPattern, lazy_pattern
from harnesskit.notebook import display

PATTERNS = [
    (r"(?<![\w-])[A-Za-z0-9][A-Za-z0-9_-]{2,62}(?![\w-])", 0),
    (r"(?P<key>pass\w*)\s*[:=]\s*(\S+)", re.I),
    (r"\A\s*```[ \t]*([\w.+-]*)[ \t]*\n?(.*?)(```\s*)?\Z", re.S),
    (r"[\ud800-\udfff]", 0),
    (r"^x$", re.M),
    (r"", 0),
]
TEXTS = [
    "",
    "PASSWORD = hunter2 and passwd:abc",
    '```json\n{"a": 1}\n```',
    "x\nx\ny",
    "lone \ud800 surrogate, \x00 nul, ünïcödé, 🙂" * 3,
    "a" * 5_000,
]


@pytest.mark.parametrize(("source", "flags"), PATTERNS)
def test_a_lazy_pattern_gives_what_the_compiled_one_gives(source: str, flags: int) -> None:
    lazy, real = lazy_pattern(source, flags), re.compile(source, flags)
    assert "_compiled" not in vars(lazy)  # nothing compiled until first use
    for text in TEXTS:
        for method in ("search", "match", "fullmatch"):
            got, want = getattr(lazy, method)(text), getattr(real, method)(text)
            assert (got and got.groups(), got and got.span()) == (
                want and want.groups(),
                want and want.span(),
            )
        assert lazy.findall(text) == real.findall(text)
        assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
        assert lazy.split(text) == real.split(text)
        assert lazy.sub("<\\g<0>>", text) == real.sub("<\\g<0>>", text)
        assert lazy.subn(lambda m: "#", text) == real.subn(lambda m: "#", text)
        assert lazy.search(text, 1) == real.search(text, 1) or (
            lazy.search(text, 1).span() == real.search(text, 1).span()
        )
    assert (lazy.pattern, lazy.flags, lazy.groups, dict(lazy.groupindex)) == (
        real.pattern,
        real.flags,
        real.groups,
        dict(real.groupindex),
    )
    assert lazy.compiled is lazy.compiled and lazy.compiled.pattern == source
    assert not isinstance(lazy, re.Pattern)
    assert re.sub(lazy.compiled, "", "abc") == re.sub(real, "", "abc")


def test_a_bad_pattern_raises_on_first_use() -> None:
    bad = lazy_pattern("(unclosed")
    with pytest.raises(re.error):
        bad.search("x")
    with pytest.raises(re.error):
        bad.search("x")  # still not compiled: raises again
    with pytest.raises(AttributeError):
        lazy_pattern("ok").no_such_method  # noqa: B018 - the attribute read is the test


def test_import_compiles_no_lazy_pattern_and_skips_html() -> None:
    code = (
        "import sys, harnesskit\n"
        "from harnesskit._lazy import LazyPattern\n"
        "lazy = [(m, k) for m, mod in list(sys.modules.items()) if m.startswith('harnesskit')\n"
        "        for k, v in vars(mod).items() if isinstance(v, LazyPattern)]\n"
        "done = [(m, k) for m, k in lazy if '_compiled' in vars(vars(sys.modules[m])[k])]\n"
        "print(len(lazy), done, 'html' in sys.modules)"
    )
    root = Path(hk.__file__).parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/", env=env
    )
    count, rest = out.stdout.split(" ", 1)
    assert int(count) >= 20
    assert rest.strip() == "[] False"


def test_module_patterns_are_lazy_patterns() -> None:
    from harnesskit import _json
    from harnesskit.tools import spec

    assert isinstance(_json._CONTROL_TOKEN, LazyPattern)
    assert isinstance(spec._WHEN, LazyPattern)


@pytest.mark.parametrize(
    "text",
    ["", "plain", "<script>alert('x')</script>", 'a "b" & c', "&amp; &lt;", "'\"<>&" * 50, "ü🙂"],
)
def test_display_escape_is_html_escape(text: str) -> None:
    assert display._escape(text) == html.escape(text)
    assert display.escape_bounded(text) == html.escape(text)


def test_lazy_patterns_compare_hash_copy_and_pickle_as_patterns() -> None:
    import copy
    import pickle

    lazy, real = lazy_pattern(r"a+b", re.I), re.compile(r"a+b", re.I)
    same, other = lazy_pattern(r"a+b", re.I), lazy_pattern(r"a+b")
    assert lazy == same and lazy == real and real == lazy and lazy != other
    assert hash(lazy) == hash(real) == hash(same)
    assert lazy != "a+b"
    for clone in (copy.copy(lazy), copy.deepcopy(lazy), pickle.loads(pickle.dumps(lazy))):
        assert isinstance(clone, LazyPattern) and clone == lazy
        assert clone.search("xAAB").span() == real.search("xAAB").span()
