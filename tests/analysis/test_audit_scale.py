"""The two-forms check of the audit costs O(log n) substring tests per shared stretch, not O(n²).

Finding 20 of the fresh-user test: `hk.audit` grew ~9x per doubling of inline tool-result size
(two 5 KB results: 7 s) because each shared stretch was grown one char at a time, each step a
substring search, from every sampled window. These tests pin what it reports (the old
algorithm, kept here as the reference) and count the substring tests it makes.
"""

import json
import random
import string
import subprocess
import sys
import textwrap

from harnesskit.analysis.audit import _shared_run


def reference_shared_run(text: str, source: str, min_chars: int) -> int:
    """The audit's original stretch finder: grows each sampled window char by char."""
    if len(text) < min_chars:
        return 0
    window = max(16, min_chars // 2)
    best = 0
    for start in range(0, len(text) - window + 1, max(1, window // 2)):
        if text[start : start + window] not in source:
            continue
        lo, hi = start, start + window
        while hi < len(text) and text[lo : hi + 1] in source:
            hi += 1
        while lo > 0 and text[lo - 1 : hi] in source:
            lo -= 1
        best = max(best, hi - lo)
    return best if best >= min_chars else 0


class CountingSource(str):
    """A source text that counts the substring tests made against it."""

    tests = 0

    def __contains__(self, needle: object) -> bool:
        type(self).tests += 1
        return str.__contains__(self, needle)  # type: ignore[operator]


def _mutated(rng: random.Random, s: str, alphabet: str) -> str:
    chars = list(s)
    for _ in range(rng.randint(0, 8)):
        if not chars:
            break
        k = rng.randrange(len(chars))
        op = rng.random()
        if op < 0.4:
            chars[k] = rng.choice(alphabet + "Z")
        elif op < 0.7:
            del chars[k]
        else:
            chars.insert(k, rng.choice(alphabet))
    return "".join(chars)


def test_stretch_lengths_equal_the_original_algorithm_on_varied_texts():
    rng = random.Random(20)
    for _ in range(600):
        alphabet = rng.choice(["ab", "abc", "abcdefgh", "x"])  # periodic texts included
        base = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300)))
        pieces = [base[a : a + rng.randint(0, 150)] for a in rng.sample(range(301), 3)]
        text = "".join(_mutated(rng, p, alphabet) for p in pieces) + _mutated(rng, base, alphabet)
        source = _mutated(rng, base, alphabet)
        if rng.random() < 0.3:
            text, source = source, text
        for min_chars in (1, 16, 20, 33, 64, 100):
            assert _shared_run(text, source, min_chars) == reference_shared_run(
                text, source, min_chars
            ), (text, source, min_chars)


def _restating(size: int) -> tuple[str, str, int]:
    """A message that restates `size` chars of a source between unrelated text."""
    rng = random.Random(size)
    shared = "".join(rng.choice(string.ascii_lowercase) for _ in range(size))
    text = "".join(rng.choice(string.digits) for _ in range(size // 3))
    text += shared + "".join(rng.choice(string.digits) for _ in range(size // 3))
    source = "".join(rng.choice(string.ascii_uppercase) for _ in range(size // 2))
    return text, source + shared + source, size


def test_one_shared_stretch_costs_windows_plus_log_tests_not_one_per_char():
    counts = {}
    for size in (3_000, 6_000, 12_000):
        text, source, shared = _restating(size)
        CountingSource.tests = 0
        assert _shared_run(text, CountingSource(source), 200) == shared
        counts[size] = CountingSource.tests
        windows = len(text) // 50  # min_chars 200: a 100-char window every 50 chars
        assert counts[size] <= windows + 4 * size.bit_length(), counts  # was ~size * windows
    assert counts[12_000] <= 2 * counts[6_000] + 30, counts  # linear, the old code was ~4x


def test_a_stretch_that_reaches_the_end_stops_the_sampling():
    text = "x" * 8_000  # every window is in the source; one stretch covers them all
    CountingSource.tests = 0
    assert _shared_run(text, CountingSource("y" + "x" * 8_000), 200) == 8_000
    assert CountingSource.tests <= 4 * 14, CountingSource.tests


SCRIPT = """
import json, random, string
import harnesskit as hk
from harnesskit.testing import reply

rng = random.Random(5)
blob = "".join(rng.choice(string.ascii_letters) for _ in range(7000))

@hk.tool
def get(order_id: str) -> dict:
    '''Get an order.

    Use when asked about an order. Do not use for changes.

    Args:
        order_id: id.

    Returns:
        Order.
    '''
    return {"id": order_id, "blob": blob}

calls = [reply.call("get", order_id=f"{s}-{i}") for s in "AB" for i in (1, 2)]
turns = [reply.tool_calls(*calls[:2]), reply.tool_calls(*calls[2:]), reply.text("done")]
run = hk.Harness([get], hk.ScriptedModel(turns)).run("go")
report = hk.audit(run)
print(json.dumps([f.detail for f in report.flagged if f.point == "two_forms"]))
"""


def test_four_7kb_results_sharing_a_blob_are_audited_in_seconds_with_every_pair_found():
    # took minutes before (two 5 KB results: 7 s, ~9x per doubling); bounded by the timeout
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    details = json.loads(proc.stdout.strip().splitlines()[-1])
    # each pair shares '", "blob": "<7000 chars>"}' (7014 chars), two more when the ids end
    # alike (A-1 and B-1: '-1'); the 2nd prompt has 2 results, the 3rd has 4 (messages 3, 4, 6, 7)
    message = {"tc_1": 3, "tc_2": 4, "tc_3": 6, "tc_4": 7}
    id_end = {"tc_1": "1", "tc_2": "2", "tc_3": "1", "tc_4": "2"}  # B-1, B-2
    pairs = [("tc_1", "tc_2"), ("tc_2", "tc_1")]
    pairs += [(a, b) for a in message for b in message if a != b]
    assert details == [
        f"tool result of {a} is in the prompt in full and again as "
        f"{7016 if id_end[a] == id_end[b] else 7014}"
        f" chars restated in message {message[b]} (tool)"
        for a, b in pairs
    ]
