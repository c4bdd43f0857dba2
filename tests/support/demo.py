"""A tiny built-in offline demo (replaced by the airline domain's main job when it lands)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import harnesskit as hk


def _tools() -> hk.ToolRegistry:
    stock = {"apple": 3, "pear": 0, "plum": 12}

    @hk.tool
    def check_stock(item: Literal["apple", "pear", "plum"]) -> dict[str, int | str]:
        """Look up how many units of a fruit are in stock.

        Use this when the user asks whether a fruit is available. Do not use it to order.

        Args:
            item: the fruit to look up.

        Returns:
            `{"item", "units"}`.
        """
        return {"item": item, "units": stock[item]}

    return hk.ToolRegistry([check_stock])


def _policy(messages: tuple[hk.Message, ...], info: hk.ModelRequest) -> object:
    last = messages[-1]
    if last.role == "user":
        return hk.ToolCall(id="", name="check_stock", arguments={"item": "plum"})
    return f"There are {last.content} in stock."


def main(*, out_dir: str = "runs", model: object | None = None) -> int:
    """Run the demo once and print where its log is; `model` replaces the offline policy."""
    h = hk.Harness(_tools(), model or hk.FunctionModel(_policy), log_dir=out_dir)
    run = h.start("Do you have plums?").run()
    print(f"finish_reason={run.finish_reason} steps={run.state.step} events={len(run.log)}")
    print(f"log: {Path(str(run.log.path)).resolve()}")
    if run.error is not None:
        print(f"error: {type(run.error).__name__}: {run.error}")
        return 1
    return 0
