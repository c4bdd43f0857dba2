"""Private: work kept off import time.

Names a package exports but imports on first use (PEP 562), value classes whose methods are not
compiled at import (`frozen_dataclass`), regular expressions compiled on first use
(`lazy_pattern`).
"""

from __future__ import annotations

import _thread
import dataclasses
import importlib
import operator
import re
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast, dataclass_transform

from harnesskit.errors import UsageError

__all__ = ["frozen_dataclass", "lazy_exports", "lazy_pattern"]

_T = TypeVar("_T")


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


class LazyPattern:
    """A regular expression compiled on first use; reads as the compiled `re.Pattern`.

    Each attribute (`search`, `sub`, `pattern`, ...) is taken from the compiled pattern on its
    first read and kept on this object, so later calls cost what they cost on the pattern.
    Pass `.compiled` where an `re.Pattern` itself is needed (`isinstance`, `re.sub(p, ...)`).
    """

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now if not yet).

        Raises:
            re.error: the pattern does not compile.
        """
        compiled: re.Pattern[str] | None = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self.__dict__["_compiled"] = re.compile(*self._source)
        return compiled

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_source", "_compiled"):
            raise AttributeError(name)
        value = getattr(self.compiled, name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"lazy_pattern({self._source[0]!r}, {self._source[1]!r})"

    def __eq__(self, other: object) -> bool:
        # as `re.Pattern`: equal to a pattern (lazy or compiled) of the same text and flags
        if isinstance(other, LazyPattern):
            return self._source == other._source or self.compiled == other.compiled
        if isinstance(other, re.Pattern):
            return self.compiled == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.compiled)

    def __reduce__(self) -> tuple[Any, ...]:
        return (LazyPattern, self._source)  # a copy compiles on its own first use


def lazy_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, compiled on first use (for module-level patterns).

    Args:
        pattern: the regular expression.
        flags: `re` flags.

    Returns:
        A `LazyPattern`, typed as the pattern it stands for: call `search`, `match`, `sub`,
        ... on it as on the compiled pattern. It is not an `re.Pattern` instance: pass
        `.compiled` to code that checks (`isinstance`, `re.sub(p, ...)`).
    """
    return cast("re.Pattern[str]", LazyPattern(pattern, flags))


# -- frozen value classes -----------------------------------------------------------------

_FIELD = dataclasses._FIELD  # type: ignore[attr-defined]  # stable since 3.7 (fields() reads it)
_FIELD_CLASSVAR = dataclasses._FIELD_CLASSVAR  # type: ignore[attr-defined]
_HAS_DEFAULT_FACTORY = dataclasses._HAS_DEFAULT_FACTORY  # type: ignore[attr-defined]
_MISSING: Any = dataclasses.MISSING
_PARAMS: dict[tuple[bool, bool, bool], Any] = {}


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def frozen_dataclass(
    cls: type[_T] | None = None, /, *, kw_only: bool = False, repr: bool = True, eq: bool = True
) -> Any:
    """`@dataclass(frozen=True, slots=True, ...)` without compiling code per class at import.

    `dataclasses.dataclass` writes and `exec`s the source of `__init__`, `__eq__`, `__hash__`,
    `__repr__`, `__setattr__` and `__delattr__` for every class, which is most of the cost of
    importing a module of value classes. This builds the same class (same `__slots__`,
    `__dataclass_fields__`, `__dataclass_params__`, `__match_args__`, pickling, so
    `dataclasses.fields`, `replace`, `asdict`, `is_dataclass` and `copy` work unchanged) with
    `__eq__`, `__hash__`, `__repr__` and the frozen `__setattr__`/`__delattr__` as shared
    functions, and `__init__` written on first use (its text, signature and behaviour, with
    `__post_init__`, are those `dataclass` writes). Methods the class body defines are kept,
    as `dataclass` keeps them.

    An unknown keyword in a call of the class raises `errors.UnknownArgumentError` (a
    `UsageError` and a `TypeError`) with Python's words plus a did-you-mean of the field
    names; a field name close to it is named in the message, else the arguments are added as
    a note. `__init__` takes `**` for that (hidden from its signature): a good call pays one
    empty dict and one truth test, nothing else.

    One difference: setting an attribute that is not a field raises `FrozenInstanceError`
    (as for a field); on Python 3.11 `dataclass(frozen=True, slots=True)` raises `TypeError`
    there (a `super()` call on the pre-slots class). `InitVar` and `KW_ONLY` annotations are
    not supported (`TypeError` at class creation).

    Args:
        cls: the class, when used bare (`@frozen_dataclass`).
        kw_only: every field keyword-only in `__init__` (as `dataclass(kw_only=True)`).
        repr: generate `__repr__` (`ClassName(field=value, ...)`).
        eq: generate `__eq__` (and `__hash__`) over the fields with `compare=True`.

    Returns:
        The new class (a decorator when `cls` is not given).

    Raises:
        TypeError: as `dataclass` raises for a malformed class (a field without annotation,
            a non-default field after a default one, a non-frozen dataclass base,
            `__setattr__`/`__slots__` in the body), or an `InitVar`/`KW_ONLY` annotation.
        ValueError: a mutable default (list, dict, set): use `default_factory`.
    """

    def wrap(c: type[_T]) -> type[_T]:
        return _frozen_class(c, kw_only, repr, eq)

    return wrap if cls is None else wrap(cls)


def _params(kw_only: bool, repr_: bool, eq: bool) -> Any:
    """The `__dataclass_params__` `dataclass` would set (taken from an empty real one)."""
    key = (kw_only, repr_, eq)
    params = _PARAMS.get(key)
    if params is None:
        template: Any = dataclasses.dataclass(
            frozen=True, slots=True, kw_only=kw_only, repr=repr_, eq=eq
        )(type("_Template", (), {}))
        params = _PARAMS[key] = template.__dataclass_params__
    return params


def _special(cls: type, annotation: Any) -> str | None:
    """Which marker `annotation` (an object or a string) names, as `dataclass` decides it.

    `"ClassVar"` (`typing`), `"InitVar"` or `"KW_ONLY"` (`dataclasses`), or `None`.
    """
    typing_mod = sys.modules["typing"]
    if not isinstance(annotation, str):
        origin = getattr(annotation, "__origin__", annotation)
        if origin is typing_mod.ClassVar:
            return "ClassVar"
        if origin is dataclasses.KW_ONLY:
            return "KW_ONLY"
        if origin is dataclasses.InitVar or type(annotation) is dataclasses.InitVar:
            return "InitVar"
        return None
    head = annotation.split("[", 1)[0]
    mod_name, _, attr = head.rpartition(".")
    attr = attr.strip()
    if attr not in _SPECIAL:
        return None
    module = typing_mod if attr == "ClassVar" else dataclasses
    ns = getattr(sys.modules.get(cls.__module__), "__dict__", {})
    if mod_name.strip():
        if ns.get(mod_name.strip()) is not module:
            return None
        ns = module.__dict__
    return attr if ns.get(attr) is getattr(module, attr) else None


_SPECIAL = frozenset({"ClassVar", "InitVar", "KW_ONLY"})


def _frozen_class(cls: type[_T], kw_only: bool, repr_: bool, eq: bool) -> type[_T]:
    body = cls.__dict__
    if "__slots__" in body:
        raise TypeError(f"{cls.__name__} already specifies __slots__")
    for name in ("__setattr__", "__delattr__"):
        if name in body:
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    fields: dict[str, dataclasses.Field[Any]] = {}
    has_bases = any_frozen = False
    for base in cls.__mro__[-1:0:-1]:
        base_fields = getattr(base, "__dataclass_fields__", None)
        if base_fields is not None:
            has_bases = True
            fields.update(base_fields)
            any_frozen = any_frozen or base.__dataclass_params__.frozen  # type: ignore[attr-defined]
    if has_bases and not any_frozen:
        raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
    annotations = body.get("__annotations__", {})
    own: list[str] = []
    for name, annotation in annotations.items():
        special = _special(cls, annotation)
        if special is not None and special != "ClassVar":
            raise TypeError(f"frozen_dataclass does not support InitVar or KW_ONLY ({name!r})")
        default = getattr(cls, name, _MISSING)
        if isinstance(default, dataclasses.Field):
            f = default
        else:
            if isinstance(default, types.MemberDescriptorType):
                default = _MISSING
            f = dataclasses.field(default=default)
        f.name = name
        f.type = annotation
        if special == "ClassVar":
            f._field_type = _FIELD_CLASSVAR  # type: ignore[attr-defined]
            if f.default_factory is not _MISSING:
                raise TypeError(f"field {name} cannot have a default factory")
            if f.kw_only is not _MISSING:
                raise TypeError(f"field {name} is a ClassVar but specifies kw_only")
        else:
            f._field_type = _FIELD  # type: ignore[attr-defined]
            if f.kw_only is _MISSING:
                f.kw_only = kw_only
            if f.default.__class__.__hash__ is None:
                raise ValueError(
                    f"mutable default {type(f.default)} for field {name} is not allowed: "
                    "use default_factory"
                )
            own.append(name)
        fields[name] = f
    for name, value in body.items():
        if isinstance(value, dataclasses.Field) and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    real = [f for f in fields.values() if f._field_type is _FIELD]  # type: ignore[attr-defined]
    seen_default = False
    for f in real:
        if f.init and not f.kw_only:
            if f.default is not _MISSING or f.default_factory is not _MISSING:
                seen_default = True
            elif seen_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")

    names = tuple(f.name for f in real)
    ns = dict(body)
    for name in names:
        ns.pop(name, None)  # the slot replaces the class attribute holding the default
    for name, f in fields.items():
        if name not in own and isinstance(body.get(name), dataclasses.Field):
            if f.default is _MISSING:  # a ClassVar given as field(): its default, if any
                ns.pop(name)
            else:
                ns[name] = f.default
    ns.pop("__dict__", None)
    ns.pop("__weakref__", None)
    inherited = {s for base in cls.__mro__[1:-1] for s in _slots_of(base)}
    ns["__slots__"] = tuple(n for n in names if n not in inherited)
    ns["__dataclass_params__"] = _params(kw_only, repr_, eq)
    ns["__dataclass_fields__"] = fields
    ns.setdefault("__init__", _LazyInit())
    if repr_:
        ns.setdefault("__repr__", _repr_fn(tuple(f.name for f in real if f.repr)))
    if eq:
        ns.setdefault("__eq__", _eq_fn(tuple(f.name for f in real if f.compare)))
        explicit = body.get("__hash__", _MISSING)
        if explicit is _MISSING or (explicit is None and "__eq__" in body):
            hashed = tuple(f.name for f in real if (f.compare if f.hash is None else f.hash))
            ns["__hash__"] = _hash_fn(hashed)
    ns.setdefault("__match_args__", tuple(f.name for f in real if f.init and not f.kw_only))
    ns.setdefault("__getstate__", _getstate)
    ns.setdefault("__setstate__", _setstate)
    if not body.get("__doc__"):
        ns["__doc__"] = _LazyDoc()
    meta: Any = type(cls)
    new: Any = meta(cls.__name__, cls.__bases__, ns)
    new.__qualname__ = cls.__qualname__
    name_set = frozenset(names)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is new or name in name_set:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(new, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is new or name in name_set:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(new, self).__delattr__(name)

    for fn in (__setattr__, __delattr__):
        fn.__qualname__ = f"{new.__qualname__}.{fn.__name__}"
        setattr(new, fn.__name__, fn)
    for value in (ns["__init__"], ns["__doc__"]):
        if isinstance(value, _LazyInit | _LazyDoc):
            value.cls = new
    return new  # type: ignore[no-any-return]


def _slots_of(cls: type) -> tuple[str, ...]:
    slots = cls.__dict__.get("__slots__", ())
    return (slots,) if isinstance(slots, str) else tuple(slots)


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _setstate(self: Any, state: list[Any]) -> None:
    for f, value in zip(dataclasses.fields(self), state, strict=False):
        object.__setattr__(self, f.name, value)


def _key_fn(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """`obj -> (obj.<name>, ...)`, always a tuple (as the tuples `dataclass` compares)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        get = operator.attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda obj: ()


def _eq_fn(names: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    key = _key_fn(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash_fn(names: tuple[str, ...]) -> Callable[[Any], int]:
    key = _key_fn(names)

    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__


def _repr_fn(names: tuple[str, ...]) -> Callable[[Any], str]:
    running: set[tuple[int, int]] = set()

    def __repr__(self: Any) -> str:
        key = id(self), _thread.get_ident()
        if key in running:
            return "..."
        running.add(key)
        try:
            inner = ", ".join([f"{n}={getattr(self, n)!r}" for n in names])
        finally:
            running.discard(key)
        return f"{self.__class__.__qualname__}({inner})"

    return __repr__


class _LazyInit:
    """The class's `__init__`, written (as `dataclass` writes it) on first use, then kept."""

    __slots__ = ("cls",)
    cls: type

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        fn = _init_fn(self.cls)
        type.__setattr__(self.cls, "__init__", fn)
        return fn if obj is None else fn.__get__(obj, owner)


class _LazyDoc:
    """A class docstring `Name(signature)` for a class without one, as `dataclass` writes it."""

    __slots__ = ("cls",)
    cls: type

    def __get__(self, obj: Any, owner: type | None = None) -> str:
        import inspect

        try:
            sig = str(inspect.signature(self.cls)).replace(" -> None", "")
        except (TypeError, ValueError):
            sig = ""
        doc = self.cls.__name__ + sig
        type.__setattr__(self.cls, "__doc__", doc)
        return doc


def _init_fn(cls: type) -> Callable[..., None]:
    """The `__init__` `dataclass(frozen=True, slots=True)` writes for `cls` (same source)."""
    fields = [
        f
        for f in cls.__dataclass_fields__.values()  # type: ignore[attr-defined]
        if f._field_type is _FIELD
    ]
    self_name = "__dataclass_self__" if "self" in cls.__dataclass_fields__ else "self"  # type: ignore[attr-defined]
    local: dict[str, Any] = {
        "__dataclass_builtins_object__": object,
        "_HAS_DEFAULT_FACTORY": _HAS_DEFAULT_FACTORY,
        "MISSING": _MISSING,
        "_return_type": None,
    }
    lines = []
    for f in fields:
        local[f"_type_{f.name}"] = f.type
        dflt = f"_dflt_{f.name}"
        if f.default_factory is not _MISSING:
            local[dflt] = f.default_factory
            value = (
                f"{dflt}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}"
                if f.init
                else f"{dflt}()"
            )
        elif f.init:
            if f.default is not _MISSING:
                local[dflt] = f.default
            value = f.name
        elif f.default is not _MISSING:
            local[dflt] = f.default
            value = dflt
        else:
            continue
        lines.append(f"__dataclass_builtins_object__.__setattr__({self_name},{f.name!r},{value})")
    if hasattr(cls, "__post_init__"):
        lines.append(f"{self_name}.__post_init__()")

    def param(f: Any) -> str:
        if f.default is _MISSING and f.default_factory is _MISSING:
            return f"{f.name}:_type_{f.name}"
        if f.default is not _MISSING:
            return f"{f.name}:_type_{f.name}=_dflt_{f.name}"
        return f"{f.name}:_type_{f.name}=_HAS_DEFAULT_FACTORY"

    params = [param(f) for f in fields if f.init and not f.kw_only]
    kw = [param(f) for f in fields if f.init and f.kw_only]
    refuse = not params and bool(kw)  # keyword-only: a positional argument is a UsageError
    # an unknown keyword lands in `**__dataclass_unknown__` and is refused with a did-you-mean
    # (`_refuse_unknown`); on a good call that costs one empty dict and one truth test
    local["__dataclass_unknown_fn__"] = _refuse_unknown
    if refuse:
        # positional arguments are taken, then refused; a required keyword defaults to a
        # marker so that a missing one does not pre-empt that (its TypeError is raised below,
        # as Python words it)
        required = [f.name for f in fields if f.init and param(f) == f"{f.name}:_type_{f.name}"]
        local["__dataclass_refuse__"] = _refuse_arguments
        local["__dataclass_required__"] = _REQUIRED
        kw = [f"{p}=__dataclass_required__" if p.split(":")[0] in required else p for p in kw]
        params = ["*__dataclass_positional__", *kw, "**__dataclass_unknown__"]
        missing = " or ".join(f"{n} is __dataclass_required__" for n in required)
        lines.insert(
            0,
            f"if __dataclass_positional__ or __dataclass_unknown__"
            f"{' or ' + missing if missing else ''}: "
            f"__dataclass_refuse__({self_name}, __dataclass_positional__, "
            f"[{', '.join(required)}], {tuple(required)!r}, __dataclass_unknown__)",
        )
    else:
        if kw:
            params += ["*", *kw]
        params.append("**__dataclass_unknown__")
        lines.insert(
            0,
            f"if __dataclass_unknown__: "
            f"__dataclass_unknown_fn__({self_name}, __dataclass_unknown__)",
        )
    body = "\n".join(f"  {b}" for b in lines or ["pass"])
    text = f" def __init__({','.join([self_name, *params])})->_return_type:\n{body}"
    text = f"def __create_fn__({', '.join(local)}):\n{text}\n return __init__"
    module = sys.modules.get(cls.__module__)
    ns: dict[str, Any] = {}
    code = compile(text, "<string>", "exec", dont_inherit=True)  # no `annotations` future
    exec(code, module.__dict__ if module is not None else {}, ns)  # as dataclass does
    fn: Callable[..., None] = ns["__create_fn__"](**local)
    fn.__qualname__ = f"{cls.__qualname__}.__init__"
    # shown as `dataclass` writes it: no `*args` or `**unknown`, no marker
    import inspect  # loaded by `dataclasses` already

    sig = inspect.signature(fn)
    kept = [
        p.replace(default=p.empty) if p.default is _REQUIRED else p
        for p in sig.parameters.values()
        if p.kind is not p.VAR_KEYWORD and (p.kind is not p.VAR_POSITIONAL or not refuse)
    ]
    fn.__signature__ = sig.replace(parameters=kept)  # type: ignore[attr-defined]
    return fn


class _Required:
    """Marker default of a required keyword of a keyword-only value class (`_init_fn`)."""

    def __repr__(self) -> str:
        return "<required>"


_REQUIRED = _Required()


def _refuse_unknown(obj: Any, unknown: dict[str, Any]) -> None:
    """Refuse keywords that name no field with an `UnknownArgumentError`.

    It is a `UsageError` and a `TypeError`, in Python's words plus a did-you-mean of the
    fields (or, for a key a class takes elsewhere, `_KEYWORDS_ELSEWHERE`, where it goes) and
    the class's arguments. With no field name close to the keyword the message is Python's
    own (as `dataclass` raises it), and the arguments are added as a note (in tracebacks).
    """
    import difflib

    from harnesskit.errors import UnknownArgumentError

    cls = type(obj)
    name = next(iter(unknown))
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    elsewhere: dict[str, str] = getattr(cls, "_KEYWORDS_ELSEWHERE", {})
    text = f"{cls.__init__.__qualname__}() got an unexpected keyword argument {name!r}"
    listed = f"{cls.__qualname__} takes: {', '.join(names) or 'no arguments'}"
    if name in elsewhere:
        raise UnknownArgumentError(f"{text}; pass it as {elsewhere[name] % name}. {listed}")
    near = difflib.get_close_matches(name, [*names, *elsewhere], n=1)
    if near and near[0] in elsewhere:
        where = elsewhere[near[0]] % near[0]
        raise UnknownArgumentError(f"{text}; did you mean {near[0]!r} ({where})? {listed}")
    if near:
        raise UnknownArgumentError(f"{text}; did you mean {near[0]!r}? {listed}")
    err = UnknownArgumentError(text)  # Python's words, as `dataclass` raises them
    hint = getattr(cls, "_POSITIONAL_HINT", "")
    err.add_note(f"{listed}{'. ' + hint if hint else ''}")
    raise err


def _refuse_arguments(
    obj: Any,
    args: tuple[Any, ...],
    values: list[Any],
    required: tuple[str, ...],
    unknown: dict[str, Any],
) -> None:
    """Refuse positional arguments (`UsageError`), unknown keywords, or missing required ones.

    Positional arguments first: `Message("user", "hi")` says to name them, not that `role`
    is missing. Then an unknown keyword (`_refuse_unknown`), as Python checks it before a
    missing one. A missing keyword raises the `TypeError` Python (and `dataclass`) raises.
    A class may add how to build it otherwise as a `_POSITIONAL_HINT` string.
    """
    cls = type(obj)
    if unknown and not args:
        _refuse_unknown(obj, unknown)
    if not args:
        names = [f"'{n}'" for n, v in zip(required, values, strict=True) if v is _REQUIRED]
        listed = (
            names[0]
            if len(names) == 1
            else f"{names[0]} and {names[1]}"
            if len(names) == 2
            else f"{', '.join(names[:-1])}, and {names[-1]}"
        )
        plural = "s" if len(names) > 1 else ""
        raise TypeError(
            f"{cls.__init__.__qualname__}() missing {len(names)} required keyword-only "
            f"argument{plural}: {listed}"
        )
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    more = ", ..." if len(args) > 1 else ""
    hint = getattr(cls, "_POSITIONAL_HINT", "")
    raise UsageError(
        f"{cls.__qualname__} takes keyword arguments only, got {len(args)} positional "
        f"({args[0]!r:.40}{more}); name each one, e.g. {cls.__qualname__}({names[0]}=...). "
        f"Its arguments: {', '.join(names)}{'. ' + hint if hint else ''}"
    )
