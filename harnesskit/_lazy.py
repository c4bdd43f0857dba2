"""Private: names a package exports but imports on first use (PEP 562), kept off import time."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, table: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level `__getattr__` and `__dir__` for names imported on first use.

    Args:
        package: the package's dotted name, for the error message.
        table: `{exported name: module that defines it}`.
        namespace: the package's `globals()`; a loaded name is kept there, so `__getattr__`
            runs once per name.

    Returns:
        `(__getattr__, __dir__)`; `__getattr__` raises `AttributeError` for a name not in
        `table`, `__dir__` lists the loaded and the lazy names.
    """

    def getattr_(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(table))

    return getattr_, dir_
