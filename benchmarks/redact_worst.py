"""Worst-case inputs for the secret scan: CPU time of `Redactor.redact` on crafted 20k texts.

Each text pads a credential's name, separator or value with what a pattern repeats (spaces,
line breaks, escaped quotes, pairs of a cookie jar), the shapes that made a regex backtrack
quadratically (a fresh-user test found `password` + 20,000 spaces took 23 s). Baseline: the
same `redact` on an ordinary 20k text in the same process. No target is set by an issue: a
ratio in the hundreds names a pattern to fix. Prints one row per text.
"""

from __future__ import annotations

import time

import _common

from harnesskit.log.redact import Redactor

N = 20_000

TEXTS = {
    "name + spaces": "password" + " " * N + "x",
    "name: + spaces": "password:" + " " * N + "x",
    "name + escaped breaks": "password" + "\\n " * (N // 3) + "x",
    "block scalar, blank": "password: |\n" + " " * N + "x",
    "block scalar, lines": "password: |\n" + "  a\n" * (N // 4),
    "value to end of line": "password: " + "a " * (N // 2),
    "name/value pair + spaces": "- name: DB_PASSWORD" + " " * N,
    "escaped quotes in value": '"password": "' + '\\"' * (N // 2),
    "cookie jar pairs": "cookies={" + '"a":"b",' * (N // 8),
    "long options": "--password " * (N // 11),
    "client options": "docker login " + "-p " * (N // 3),
    "phrase + spaces": "password is" + " " * N + "x",
    "prose names + spaces": "token is" + " " * N + "x",
    "phrase for-clauses": "token for " * (N // 10),
    "html input values": "<input " + "value=x " * (N // 8),
    "invisible names": "pass\u200bword=" * (N // 10),
    "markdown table rows": "| user | password |\n" + "| a | b |\n" * (N // 10),
    "csv table rows": "user,password\n" + "a,b\n" * (N // 4),
    "header-like lines": "a b c d e,password\n" * (N // 19),
    "nested lists under a name": '{"password": ' + "[" * N,
    "unclosed lists under names": '{"password": ["a", ' * (N // 19),
    "escaped lists under names": '{\\"token\\": [\\"a\\", ' * (N // 24),
    "items of one list": '{"secret": [' + '"a", 1, ' * (N // 8) + "]}",
    "yaml items under a name": "password:\n" + "  - a\n" * (N // 6),
    "yaml names without items": "password:\n  -" * (N // 13),
    "pairs of credential names": '[["x_password", ' * (N // 16),
    "custom header names": "x-" + "a-" * (N // 2) + "auth: x",
}


def main() -> None:
    args = _common.parser(__doc__.splitlines()[0]).parse_args()
    r = Redactor()
    ordinary = ("flight HAT136 on 2024-05-20, reservation 4WQ150, seat 12C; " * 400)[:N]
    rows = []

    def cpu(text: str) -> float:
        best = float("inf")
        for _ in range(max(1, args.repeat)):
            t0 = time.process_time()
            r.redact(text)
            best = min(best, time.process_time() - t0)
        return best

    base = cpu(ordinary)
    for name, text in TEXTS.items():
        took = cpu(text)
        rows.append(
            _common.row(
                "redact-worst",
                f"redact {len(text):,} chars: {name}",
                took,
                "s",
                baseline="an ordinary text as long",
                baseline_value=base,
                ratio=took / base if base else None,
                cpu_value=took,
                cpu_baseline_value=base,
            )
        )
    _common.report(rows, args.json)


if __name__ == "__main__":
    main()
