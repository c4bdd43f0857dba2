"""Private: find every path-typed value inside a tool argument, guided by its type hint (R-E4).

The gate must check every path a call carries, not `str()` of the container holding it:
`list[Path]`, `tuple[Path, ...]`, `dict[str, Path]`, `Path | None`, and fields typed `Path` in
TypedDicts and dataclasses, nested to any depth. `locate(hint)` turns a hint into a small plan
(`None` when the hint holds no path) and `paths_in(plan, value)` walks a value by that plan.
A parameter named in `path_params` without a usable hint is walked conservatively: every
string in it is treated as a path.
"""

from __future__ import annotations

import dataclasses
import functools
import pathlib
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Any, get_args, get_origin, is_typeddict

__all__ = ["ANY", "Plan", "contains_path", "locate", "map_paths", "param_plans", "paths_in"]

#: A plan: `"path"` (the value is a path), `("items", plan)` (each item of a list, tuple or
#: set), `("map", key_plan, value_plan)` (a dict), `("fields", {name: plan})` (an object), or
#: `("any", (plans...))` (a union: each alternative is tried).
Plan = Any
ANY: Plan = ("strings",)  # every string anywhere in the value is a path
_SEQUENCES = (list, tuple, set, frozenset)
_MAX_DEPTH = 64  # deeper values are refused as a whole by `paths_in` (see below)


def contains_path(hint: Any) -> bool:
    """Whether a type hint holds a `pathlib.Path` anywhere (directly, in items, in fields)."""
    return locate(hint) is not None


def locate(hint: Any, _seen: frozenset[int] = frozenset()) -> Plan | None:
    """The plan to find the paths in values of type `hint`, or `None` when it holds none.

    Args:
        hint: a type hint, e.g. `list[Path]` or a TypedDict class.

    Returns:
        A plan for `paths_in`, or `None`.
    """
    if isinstance(hint, type) and issubclass(hint, pathlib.PurePath):
        return "path"
    if id(hint) in _seen:  # a recursive type: its paths are already being located
        return None
    seen = _seen | {id(hint)}
    origin, args = get_origin(hint), get_args(hint)
    if origin is typing.Annotated:
        return locate(args[0], seen)
    if origin in _SEQUENCES or _is_abc(origin, "Sequence", "Set", "Iterable"):
        plans = [p for a in args if a is not Ellipsis and (p := locate(a, seen)) is not None]
        return None if not plans else ("items", plans[0] if len(plans) == 1 else ("any", plans))
    if origin is dict or _is_abc(origin, "Mapping"):
        key, value = (locate(a, seen) for a in (args or (Any, Any))[:2])
        return None if key is None and value is None else ("map", key, value)
    if args:  # a union (Path | None, Optional[list[Path]], ...)
        plans = [p for a in args if (p := locate(a, seen)) is not None]
        return None if not plans else plans[0] if len(plans) == 1 else ("any", tuple(plans))
    if isinstance(hint, type) and (is_typeddict(hint) or dataclasses.is_dataclass(hint)):
        try:
            hints = typing.get_type_hints(hint)
        except Exception:  # an unresolvable forward reference: check its strings
            return ANY
        fields = {n: p for n, h in hints.items() if (p := locate(h, seen)) is not None}
        return ("fields", fields) if fields else None
    return None


def paths_in(plan: Plan, value: Any, where: str = "", _depth: int = 0) -> Iterator[tuple[str, Any]]:
    """Every path-typed value inside `value`, with where it sits.

    Args:
        plan: from `locate` (or `ANY`).
        value: the argument value (JSON data or converted objects).
        where: the location prefix, e.g. the argument's name.

    Yields:
        `(location, value)` pairs, e.g. `("paths[1]", "/etc/passwd")`; a value nested deeper
        than 64 levels is yielded whole so the gate refuses it.
    """
    if _depth > _MAX_DEPTH:
        yield where, value
        return
    d = _depth + 1
    if plan == "path":
        if value is not None:
            yield where, value
    elif plan == ANY:
        if isinstance(value, str | pathlib.PurePath):
            yield where, value
        elif isinstance(value, Mapping):
            for k, v in value.items():
                yield from paths_in(ANY, k, f"{where}[{k!r}] (key)", d)
                yield from paths_in(ANY, v, f"{where}[{k!r}]", d)
        elif isinstance(value, _SEQUENCES):
            for i, v in enumerate(value):
                yield from paths_in(ANY, v, f"{where}[{i}]", d)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                yield from paths_in(ANY, getattr(value, f.name), f"{where}.{f.name}", d)
    elif plan[0] == "any":
        yield from _deduped(plan[1], value, where, d)
    elif plan[0] == "items" and isinstance(value, _SEQUENCES):
        for i, v in enumerate(value):
            yield from paths_in(plan[1], v, f"{where}[{i}]", d)
    elif plan[0] == "map" and isinstance(value, Mapping):
        for k, v in value.items():
            if plan[1] is not None:
                yield from paths_in(plan[1], k, f"{where}[{k!r}] (key)", d)
            if plan[2] is not None:
                yield from paths_in(plan[2], v, f"{where}[{k!r}]", d)
    elif plan[0] == "fields":
        for name, sub in plan[1].items():
            if isinstance(value, Mapping):
                found, item = name in value, value.get(name)
            else:
                found, item = hasattr(value, name), getattr(value, name, None)
            if found:
                yield from paths_in(sub, item, f"{where}.{name}", d)


def map_paths(
    plan: Plan, value: Any, fn: Callable[[str, Any], Any], where: str = "", _depth: int = 0
) -> Any:
    """`value` with every path-typed value inside it replaced by `fn(location, path)`.

    The walk is the one `paths_in` makes (same plans, same locations); containers on the way
    are copied (lists, tuples and sets keep their type, mappings become dicts), everything
    else is shared.
    Objects that are not mappings (dataclass instances) and values nested deeper than
    `paths_in` walks are returned unchanged: the gate refuses the latter whole.

    Args:
        plan: from `locate` (or `ANY`).
        value: the argument value (JSON data).
        fn: `fn(location, path) -> replacement`, called once per path value found.
        where: the location prefix, e.g. the argument's name.

    Returns:
        The new value (`value` itself when the plan finds nothing to walk).
    """
    if _depth > _MAX_DEPTH:
        return value
    d = _depth + 1
    if plan == "path":
        return value if value is None else fn(where, value)
    if plan == ANY:
        if isinstance(value, str | pathlib.PurePath):
            return fn(where, value)
        if isinstance(value, Mapping):
            return {
                map_paths(ANY, k, fn, f"{where}[{k!r}] (key)", d): map_paths(
                    ANY, v, fn, f"{where}[{k!r}]", d
                )
                for k, v in value.items()
            }
        if isinstance(value, _SEQUENCES):
            return _same_kind(
                value, (map_paths(ANY, v, fn, f"{where}[{i}]", d) for i, v in enumerate(value))
            )
        return value
    if plan[0] == "any":  # each alternative in turn; `fn` must be idempotent (resolving is)
        for sub in plan[1]:
            value = map_paths(sub, value, fn, where, d)
        return value
    if plan[0] == "items" and isinstance(value, _SEQUENCES):
        return _same_kind(
            value, (map_paths(plan[1], v, fn, f"{where}[{i}]", d) for i, v in enumerate(value))
        )
    if plan[0] == "map" and isinstance(value, Mapping):
        key_plan, value_plan = plan[1], plan[2]
        out = {}
        for key, v in value.items():
            if value_plan is not None:
                v = map_paths(value_plan, v, fn, f"{where}[{key!r}]", d)
            if key_plan is not None:
                key = map_paths(key_plan, key, fn, f"{where}[{key!r}] (key)", d)
            out[key] = v
        return out
    if plan[0] == "fields" and isinstance(value, Mapping):
        out = dict(value)
        for name, sub in plan[1].items():
            if name in out:
                out[name] = map_paths(sub, out[name], fn, f"{where}.{name}", d)
        return out
    return value


@functools.lru_cache(maxsize=1024)
def param_plans(fn: Any, names: tuple[str, ...]) -> tuple[tuple[str, Plan], ...]:
    """The plan of each path parameter of a tool function (`ANY` where its hint is unusable).

    Args:
        fn: the tool's function.
        names: its path parameters (`Tool.path_params`).

    Returns:
        `((name, plan), ...)` in the order of `names`; `ANY` for a parameter whose hint holds
        no `Path` (e.g. `str`).
    """
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # no usable hints (a lambda, a bad forward reference): be conservative
        hints = {}
    # a parameter named a path without a hint holding one (`p: str`): every string is a path
    return tuple((n, (locate(hints[n]) if n in hints else None) or ANY) for n in names)


def _same_kind(value: Any, items: Iterator[Any]) -> Any:
    """`items` in a container of `value`'s kind (a list for sequence types of other kinds)."""
    kind = type(value)
    return kind(items) if kind in _SEQUENCES else list(items)


def _deduped(plans: Any, value: Any, where: str, depth: int) -> Iterator[tuple[str, Any]]:
    seen: set[tuple[str, int]] = set()
    for plan in plans:
        for loc, v in paths_in(plan, value, where, depth):
            if (loc, id(v)) not in seen:
                seen.add((loc, id(v)))
                yield loc, v


def _is_abc(origin: Any, *names: str) -> bool:
    import collections.abc as abc

    return any(origin is getattr(abc, n) for n in names)
