"""Every value class made with `frozen_dataclass` refuses an unknown keyword with a
`UsageError` (`UnknownArgumentError`, still a `TypeError`) that says "did you mean" a field."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
import pkgutil

import pytest

import harnesskit as hk
from harnesskit.errors import UnknownArgumentError


def _value_classes() -> list[type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(hk.__path__, "harnesskit."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra (otel, parquet) not installed
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            setattr_ = cls.__dict__.get("__setattr__")
            if "__dataclass_fields__" in cls.__dict__ and (
                getattr(setattr_, "__module__", "") == "harnesskit._lazy"
            ):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return [found[k] for k in sorted(found)]


CLASSES = _value_classes()


def _required_positional(cls: type) -> dict[str, None]:
    return {
        f.name: None
        for f in dataclasses.fields(cls)
        if f.init
        and not f.kw_only
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    }


def test_the_value_classes_are_found():
    names = {c.__qualname__ for c in CLASSES}
    assert {"ContextPolicy", "Limits", "Message", "ToolCall", "Trial"} <= names
    assert len(CLASSES) > 40


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_an_unknown_keyword_is_a_usage_error_with_a_did_you_mean(cls):
    fields = [f.name for f in dataclasses.fields(cls) if f.init and len(f.name) >= 4]
    base = _required_positional(cls)
    with pytest.raises(hk.UsageError, match="unexpected keyword argument 'zq_not_a_field'") as e:
        cls(**base, zq_not_a_field=1)
    assert isinstance(e.value, TypeError)  # code catching Python's TypeError still does
    notes = " ".join(getattr(e.value, "__notes__", []))
    assert f"{cls.__qualname__} takes: " in notes
    if fields:
        typo = fields[0] + "x"
        with pytest.raises(UnknownArgumentError, match=rf"did you mean '{fields[0]}'\?"):
            cls(**base, **{typo: 1})


def test_the_policy_says_where_a_policy_limit_goes():
    with pytest.raises(hk.UsageError, match=r"did you mean 'max_prompt_tokens' \(ContextPolicy"):
        hk.ContextPolicy(max_tokns=1000)
    with pytest.raises(hk.UsageError, match=r"'limits': \{'max_events'"):
        hk.ContextPolicy(max_events=3)
    with pytest.raises(hk.UsageError, match=r"did you mean 'max_steps'\? Limits takes: max_steps"):
        hk.Limits(max_step=3)


def test_unknown_is_checked_before_missing_and_positional_is_checked_first():
    with pytest.raises(UnknownArgumentError, match="did you mean 'role'"):
        hk.Message(rol="user")  # `role` is missing too: the typo is the news
    with pytest.raises(hk.UsageError, match="keyword arguments only"):
        hk.Message("user", contnt="x")
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'role'"):
        hk.Message(content="x")


def test_the_error_pickles_and_the_signature_is_unchanged():
    with pytest.raises(UnknownArgumentError) as info:
        hk.Limits(max_step=3)
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is UnknownArgumentError and str(again) == str(info.value)
    assert "**" not in str(inspect.signature(hk.Limits))
    assert hk.Limits(max_steps=3).max_steps == 3
