"""`frozen_dataclass` builds the class `dataclass(frozen=True, slots=True, ...)` builds.

Each case defines the same class body twice, once under `dataclasses.dataclass` and once under
`harnesskit._lazy.frozen_dataclass`, and compares fields, parameters, slots, signatures and the
behaviour of instances (equality, hash, repr, pickling, copy, `replace`, `asdict`, frozenness).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import sys
import textwrap
import types
from typing import Any, ClassVar

import pytest

from harnesskit._lazy import frozen_dataclass
from harnesskit.log import EVENT_CLASSES, ToolResultEvent

_ = ClassVar  # the class bodies below name it (string annotations resolve in this module)

BODIES = {
    "plain": """
        a: int
        b: str = "x"
        c: list[int] = field(default_factory=list)
    """,
    "classvar_and_hidden": """
        kind: ClassVar[str] = "k"
        a: int
        secret: str = field(default="s", repr=False, compare=False)
        later: int | None = field(default=None, init=False)
        made: dict[str, int] = field(default_factory=dict, init=False, hash=False)
        tagged: str = field(default="t", metadata={"key": "tag"})
    """,
    "post_init": """
        a: int
        b: int = 0

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("negative")
            object.__setattr__(self, "b", self.a * 2)
    """,
    "own_methods": '''
        """Has its own repr, eq and hash."""

        a: int

        def __repr__(self) -> str:
            return f"<A {self.a}>"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, type(self)) and other.a % 10 == self.a % 10

        def __hash__(self) -> int:
            return self.a % 10
    ''',
    "own_eq_only": """
        a: int

        def __eq__(self, other: object) -> bool:
            return True
    """,
    "self_field": """
        self: int
        other: str = "o"
    """,
    "empty": """
        pass
    """,
    "one_field": """
        x: float
    """,
}
FLAGS = [
    {},
    {"kw_only": True},
    {"kw_only": True, "repr": False},
    {"eq": False},
]


def _pair(body: str, flags: dict[str, Any], name: str = "V") -> tuple[type, type]:
    """The class `body` defines, built by `dataclass` and by `frozen_dataclass`."""
    module = sys.modules[__name__]
    out = []
    for deco in (
        dataclasses.dataclass(frozen=True, slots=True, **flags),
        frozen_dataclass(**flags),
    ):
        ns: dict[str, Any] = {"field": dataclasses.field, "ClassVar": ClassVar}
        src = f"class {name}:\n{textwrap.indent(textwrap.dedent(body), '    ')}"
        exec(src, {**vars(module), **ns}, ns)
        cls = ns[name]
        cls.__module__ = __name__
        out.append(deco(cls))
    return out[0], out[1]


def _picklable(monkeypatch: pytest.MonkeyPatch, cls: type) -> None:
    """Make `cls` findable by pickle (a module attribute under its qualified name)."""
    cls.__qualname__ = cls.__name__
    monkeypatch.setattr(sys.modules[__name__], cls.__name__, cls, raising=False)


def _outcome(fn: Any, *args: Any) -> Any:
    """`fn(*args)`, or the type and message of what it raised."""
    try:
        return fn(*args)
    except Exception as exc:  # compared, not handled
        return type(exc), str(exc)


def _field_view(cls: type) -> list[tuple[Any, ...]]:
    return [
        (
            f.name,
            f.type,
            f.default,
            f.default_factory,
            f.init,
            f.repr,
            f.hash,
            f.compare,
            dict(f.metadata),
            f.kw_only,
            f._field_type,  # type: ignore[attr-defined]
        )  # fmt: skip
        for f in cls.__dataclass_fields__.values()  # type: ignore[attr-defined]
    ]


def _args(cls: type) -> dict[str, Any]:
    values = {"a": 3, "b": "y", "c": [1, 2], "self": 1, "other": "p", "x": float("nan")}
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    return {k: v for k, v in values.items() if k in names}


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: ",".join(f) or "default")
@pytest.mark.parametrize("case", sorted(BODIES))
def test_the_class_matches_dataclass(case: str, flags: dict[str, Any]) -> None:
    real, fast = _pair(BODIES[case], flags)
    assert _field_view(fast) == _field_view(real)
    assert repr(fast.__dataclass_params__) == repr(real.__dataclass_params__)
    assert fast.__slots__ == real.__slots__
    assert fast.__match_args__ == real.__match_args__
    assert str(inspect.signature(fast)) == str(inspect.signature(real))
    assert fast.__init__.__annotations__ == real.__init__.__annotations__
    assert fast.__init__.__qualname__ == real.__init__.__qualname__
    assert fast.__doc__ == real.__doc__
    assert dataclasses.is_dataclass(fast)
    for name in ("__eq__", "__hash__", "__repr__"):
        assert (name in fast.__dict__) == (name in real.__dict__), name
    assert (fast.__hash__ is None) == (real.__hash__ is None)


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: ",".join(f) or "default")
@pytest.mark.parametrize("case", sorted(BODIES))
def test_instances_behave_as_dataclass_instances(
    case: str, flags: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    real, fast = _pair(BODIES[case], flags)
    _picklable(monkeypatch, fast)
    kwargs = _args(real)
    r1, r2, f1, f2 = real(**kwargs), real(**kwargs), fast(**kwargs), fast(**kwargs)
    if flags.get("repr", True):
        assert repr(f1) == repr(r1)
    assert (f1 == f2) == (r1 == r2)
    assert (f1 != f2) == (r1 != r2)
    assert f1.__eq__(r1) is NotImplemented or case.startswith("own")
    if flags.get("eq", True):
        assert _outcome(hash, f1) == _outcome(hash, r1)
    assert dataclasses.asdict(f1) == dataclasses.asdict(r1)
    assert dataclasses.astuple(f1) == dataclasses.astuple(r1)
    for clone in (copy.copy(f1), copy.deepcopy(f1), pickle.loads(pickle.dumps(f1))):
        assert type(clone) is fast
        assert repr(dataclasses.astuple(clone)) == repr(dataclasses.astuple(f1))
    changes = {k: v for k, v in kwargs.items() if k in ("a", "x")}
    assert dataclasses.astuple(dataclasses.replace(f1, **changes)) == dataclasses.astuple(
        dataclasses.replace(r1, **changes)
    )
    for f in dataclasses.fields(fast):
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field"):
            setattr(f1, f.name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field"):
            delattr(f1, f.name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f1.not_a_field = 1  # type: ignore[attr-defined]  # dataclass raises TypeError on 3.11


def test_init_is_written_on_first_use_then_kept() -> None:
    real, fast = _pair(BODIES["plain"], {"kw_only": True})
    assert not isinstance(fast.__dict__["__init__"], types.FunctionType)
    fast(a=1)
    init = fast.__dict__["__init__"]
    assert isinstance(init, types.FunctionType)
    fast(a=2)
    assert fast.__dict__["__init__"] is init


def test_class_attribute_lookup_of_init_writes_it() -> None:
    _, fast = _pair(BODIES["plain"], {})
    assert isinstance(fast.__init__, types.FunctionType)
    assert inspect.signature(fast.__init__).parameters.keys() == {"self", "a", "b", "c"}


def test_init_errors_match_dataclass() -> None:
    for flags in FLAGS:
        real, fast = _pair(BODIES["plain"], flags)
        for bad in ({}, {"a": 1, "zzz": 2}):
            with pytest.raises(TypeError) as r:
                real(**bad)
            with pytest.raises(TypeError) as f:
                fast(**bad)
            assert str(f.value) == str(r.value)
        if not flags.get("kw_only"):
            assert fast(1, "b").b == real(1, "b").b == "b"
            with pytest.raises(TypeError):
                fast(1, "b", [], 4)


def test_defaults_factories_and_post_init() -> None:
    real, fast = _pair(BODIES["classvar_and_hidden"], {"kw_only": True})
    f1, f2 = fast(a=1), fast(a=1)
    assert f1.made == {} and f1.made is not f2.made
    assert f1.later is None and f1.kind == "k" and fast.kind == "k"
    assert f1.tagged == "t" and fast.__dataclass_fields__["tagged"].metadata["key"] == "tag"
    assert "secret" not in repr(f1) and repr(f1) == repr(real(a=1)).replace("V", "V", 1)
    assert fast(a=1, secret="a") == fast(a=1, secret="b")  # compare=False
    with pytest.raises(TypeError):
        fast(a=1, later=3)  # init=False
    _, post = _pair(BODIES["post_init"], {})
    assert post(4).b == 8
    with pytest.raises(ValueError, match="negative"):
        post(-1)


def test_equality_keeps_tuple_identity_semantics() -> None:
    real, fast = _pair(BODIES["one_field"], {})
    nan = float("nan")
    assert (fast(nan) == fast(nan)) == (real(nan) == real(nan)) is True  # same object
    assert (fast(nan) == fast(float("nan"))) == (real(nan) == real(float("nan"))) is False
    assert hash(fast(2.0)) == hash(real(2.0)) == hash((2.0,))
    _, empty = _pair(BODIES["empty"], {})
    assert empty() == empty() and hash(empty()) == hash(())


def test_recursive_repr_is_cut() -> None:
    real, fast = _pair("a: object = None", {})
    box: list[Any] = []
    fb, rb = fast(box), real(box)
    box.extend([fb, rb])
    assert repr(fb) == "V(a=[..., V(a=[...])])"
    assert repr(rb) == "V(a=[V(a=[...]), ...])"


def test_own_methods_are_kept() -> None:
    _, fast = _pair(BODIES["own_methods"], {})
    assert repr(fast(3)) == "<A 3>"
    assert fast(3) == fast(13) and hash(fast(3)) == hash(fast(13)) == 3
    _, eq_only = _pair(BODIES["own_eq_only"], {})
    assert eq_only(1) == eq_only(2)
    assert hash(eq_only(1)) == hash((1,))  # an __eq__ without __hash__ still gets one, as dataclass


def test_match_args_work_in_match() -> None:
    _, fast = _pair(BODIES["plain"], {})
    match fast(5, "q"):
        case fast(a, b):  # type: ignore[misc]
            assert (a, b) == (5, "q")
        case _:
            pytest.fail("no match")


@pytest.mark.parametrize("outer", ["dataclass", "frozen_dataclass"])
@pytest.mark.parametrize("inner", ["dataclass", "frozen_dataclass"])
def test_inheritance_either_way(inner: str, outer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    decos = {
        "dataclass": dataclasses.dataclass(frozen=True, slots=True, kw_only=True),
        "frozen_dataclass": frozen_dataclass(kw_only=True),
    }

    class Base:
        a: int
        b: str = "b"

    base = decos[inner](Base)

    class Child(base):  # type: ignore[misc, valid-type]
        b: str = "override"
        c: int = 0

    child = decos[outer](Child)
    _picklable(monkeypatch, child)
    assert [f.name for f in dataclasses.fields(child)] == ["a", "b", "c"]
    obj = child(a=1)
    assert (obj.a, obj.b, obj.c) == (1, "override", 0)
    assert child.__slots__ == ("c",)
    assert pickle.loads(pickle.dumps(obj)) == obj
    assert dataclasses.replace(obj, c=5).c == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        obj.a = 2  # type: ignore[misc]


def test_malformed_classes_raise_as_dataclass_does() -> None:
    cases = {
        "a: list[int] = []": ValueError,
        "a: int = 1\nb: int": TypeError,
        "x = field(default=1)": TypeError,
        "a: int\n__slots__ = ('a',)": TypeError,
        "a: int\ndef __setattr__(self, n, v): pass": TypeError,
        "kind: ClassVar[list[int]] = field(default_factory=list)": TypeError,
    }
    for body, error in cases.items():
        with pytest.raises(error):
            _pair(body, {})
        with pytest.raises(error):
            _pair(body, {})[1]

    @dataclasses.dataclass(slots=True)
    class Mutable:
        a: int = 0

    class Sub(Mutable):
        b: int = 1

    with pytest.raises(TypeError, match="non-frozen"):
        frozen_dataclass(Sub)


def test_initvar_and_kw_only_markers_are_refused() -> None:
    for body in ("a: dataclasses.InitVar[int]", "_: dataclasses.KW_ONLY\na: int"):
        with pytest.raises(TypeError, match="does not support"):
            frozen_dataclass(
                type(
                    "V", (), {"__annotations__": dict([ln.split(": ") for ln in body.split("\n")])}
                )
            )


def test_event_classes_keep_dataclass_behaviour() -> None:
    for cls in EVENT_CLASSES.values():
        assert dataclasses.is_dataclass(cls)
        names = [f.name for f in dataclasses.fields(cls)]
        assert names[:2] == ["event_id", "parent_id"] and "_payload" in names
    e = ToolResultEvent(event_id=3, tool="t", ok=False, content="x", extra={"k": 1})
    assert e == ToolResultEvent(event_id=3, tool="t", ok=False, content="x", extra={"k": 1})
    assert e != ToolResultEvent(event_id=3, tool="t", ok=True, content="x", extra={"k": 1})
    assert e.payload == {"tool": "t", "ok": False, "content": "x", "k": 1}
    again = pickle.loads(pickle.dumps(e))
    assert again == e and again.payload == e.payload
    moved = dataclasses.replace(e, event_id=4)
    assert moved.event_id == 4 and moved.content == "x"
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.ok = True  # type: ignore[misc]
