"""How `hk.audit` grows with inline tool-result size: CPU time per run and ratio per doubling.

A run with two steps of two `get` calls whose results each carry the same random blob of `n`
chars (so every pair of results shares a stretch of about `n` chars, the two-forms check's
worst ordinary case), for n = 1,000 to 8,000 (the inline limit). Baseline: the previous size.
A fresh-user test found ~9x per doubling (two 5 KB results: 7 s); linear work gives ~2x. No
target is set: a ratio near 4 or above names a quadratic step to fix. Prints one row per size.
"""

from __future__ import annotations

import random
import string
import time

import _common

import harnesskit as hk
from harnesskit.testing import reply

SIZES = (1_000, 2_000, 4_000, 8_000)


def _run(n: int) -> hk.Run:
    rng = random.Random(n)
    blob = "".join(rng.choice(string.ascii_letters) for _ in range(n - 40))

    @hk.tool
    def get(order_id: str) -> dict:
        """Get an order.

        Use when asked about an order. Do not use for changes.

        Args:
            order_id: id.

        Returns:
            Order.
        """
        return {"id": order_id, "blob": blob}

    calls = [reply.call("get", order_id=f"{s}-{i}") for s in "AB" for i in (1, 2)]
    turns = [reply.tool_calls(*calls[:2]), reply.tool_calls(*calls[2:]), reply.text("done")]
    return hk.Harness([get], hk.ScriptedModel(turns)).run("go")


def main() -> None:
    args = _common.parser(__doc__.splitlines()[0]).parse_args()
    rows, previous = [], None
    hk.audit(_run(SIZES[0]))  # imports and first-call costs out of the first row
    for n in SIZES:
        run = _run(n)
        best = float("inf")
        for _ in range(max(1, args.repeat)):
            t0 = time.process_time()
            hk.audit(run)
            best = min(best, time.process_time() - t0)
        rows.append(
            _common.row(
                "audit-scale",
                f"audit, 4 results of {n:,} chars sharing a blob",
                best,
                "s",
                baseline="half the size",
                baseline_value=previous,
                ratio=best / previous if previous else None,
                cpu_value=best,
                cpu_baseline_value=previous,
            )
        )
        previous = best
    _common.report(rows, args.json)


if __name__ == "__main__":
    main()
