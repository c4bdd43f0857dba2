"""The display seam: value classes ask here for their HTML; the notebook layer answers.

A class at any floor writes `def _repr_html_(self): return _repr.html(self)` and imports nothing
above the value floor. `harnesskit.notebook.display` installs its `render_html` with `install`
when it is imported (`import harnesskit` imports it, so it is always in place). Until then, and
whenever no renderer is installed, `html` returns `None` and Jupyter shows the plain repr.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["html", "install"]

_RENDER: list[Callable[[Any], str | None]] = []


def install(render: Callable[[Any], str | None]) -> None:
    """Install the function that turns an object into HTML (the notebook layer calls this).

    Args:
        render: `render(obj) -> html or None`; replaces any earlier one.
    """
    _RENDER[:] = [render]


def html(obj: Any) -> str | None:
    """HTML for `obj` from the installed renderer, or `None` (plain repr) when there is none.

    Args:
        obj: the object whose `_repr_html_` was called.

    Returns:
        An HTML fragment, or `None`.
    """
    return _RENDER[0](obj) if _RENDER else None
