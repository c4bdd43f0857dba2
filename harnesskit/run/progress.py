"""The progress stream as a progress bar (R-L3): `Harness(progress=hk.TqdmProgress())`.

The loop emits `Progress` items (a step began, a tool finished, the run ended); `TqdmProgress`
turns them into a `tqdm.auto` bar — a widget in a notebook, text on a terminal — counting
steps against the `max_steps` brake, with the last tool, its status and the error count in the
postfix. One callback serves consecutive runs of a harness: each run gets its own bar.

Bars are drawn only where someone watches: in a notebook kernel, or on a terminal (the bar's
file is a TTY). In CI logs and other redirected output they are off (`quiet_output`), unless
`disable=False` is passed.
"""

from __future__ import annotations

import sys
from typing import Any

from harnesskit._lazy import frozen_dataclass

__all__ = ["Progress", "TqdmProgress"]


@frozen_dataclass(kw_only=True)
class Progress:
    """One item of the progress stream (R-L3): a step began, a tool finished, the run ended."""

    step: int
    """The step (1-based)."""
    status: str
    """`model`, `ok`, an error_type, or `finished`."""
    tool: str | None = None
    """The tool, for tool items."""
    max_steps: int | None = None
    """The step brake, for progress bars."""
    finish_reason: str | None = None
    """Set on the `finished` item."""


def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython with a kernel attached), where widgets show."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if get is not None else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def quiet_output(file: Any = None) -> bool:
    """Whether a progress bar drawn on `file` should be off: not a notebook and not a TTY.

    Args:
        file: the stream the bar writes to; `None` means `sys.stderr` (tqdm's default).

    Returns:
        True in CI logs, pipes and files (`file.isatty()` is false or missing), False in a
        notebook kernel or on a terminal.
    """
    if in_notebook():
        return False
    stream = sys.stderr if file is None else file
    try:
        return not bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return True


class TqdmProgress:
    """A `Harness` progress callback drawing a tqdm bar per run.

    Args:
        desc: the bar's label (default `"run"`).
        leave: keep the finished bar on screen.
        tqdm_class: the bar class; default `tqdm.auto.tqdm` (notebook widget or terminal text).
        **tqdm_kwargs: passed to the bar (e.g. `file=sys.stderr`). Without `disable`, the bar
            is off when its file is not a TTY and this is not a notebook (`quiet_output`),
            so CI logs get no bar lines; `disable=False` draws it anyway.
    """

    def __init__(
        self,
        desc: str = "run",
        *,
        leave: bool = True,
        tqdm_class: Any = None,
        **tqdm_kwargs: Any,
    ) -> None:
        self.desc = desc
        self.leave = leave
        self.tqdm_class = tqdm_class
        self.tqdm_kwargs = tqdm_kwargs
        self.bar: Any = None
        self.tool_calls = 0
        self.tool_errors = 0
        self.finish_reason: str | None = None

    def _new_bar(self, item: Progress) -> Any:
        cls = self.tqdm_class
        if cls is None:
            from tqdm.auto import tqdm

            cls = tqdm
        self.tool_calls = self.tool_errors = 0
        self.finish_reason = None
        kwargs = dict(self.tqdm_kwargs)
        kwargs.setdefault("disable", quiet_output(kwargs.get("file")))
        return cls(total=item.max_steps, desc=self.desc, unit="step", leave=self.leave, **kwargs)

    def __call__(self, item: Progress) -> None:
        """Update the bar with one progress item (the `Harness` calls this).

        Args:
            item: the item; `status` is `model` (a step began), a tool status (`ok` or an
                error_type) or `finished`.
        """
        if self.bar is None:
            self.bar = self._new_bar(item)
        bar = self.bar
        if item.status == "model":
            bar.update(max(item.step - bar.n, 0))
            bar.set_postfix_str(self._postfix("model"), refresh=True)
        elif item.status == "finished":
            self.finish_reason = item.finish_reason
            bar.update(max(item.step - bar.n, 0))
            bar.set_postfix_str(self._postfix(f"finished: {item.finish_reason}"), refresh=True)
            bar.close()
            self.bar = None
        else:
            self.tool_calls += 1
            self.tool_errors += item.status != "ok"
            bar.set_postfix_str(self._postfix(f"{item.tool} {item.status}"), refresh=True)

    def _postfix(self, last: str) -> str:
        errors = f", {self.tool_errors} failed" if self.tool_errors else ""
        return f"{last} | {self.tool_calls} tool calls{errors}"

    def close(self) -> None:
        """Close a bar left open (a run abandoned before it finished)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __repr__(self) -> str:
        state = "open" if self.bar is not None else "idle"
        return f"<TqdmProgress {self.desc!r} {state}>"
