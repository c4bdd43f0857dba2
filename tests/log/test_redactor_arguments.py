"""A `Redactor` built from bad arguments says what is wrong instead of failing later or silently."""

from __future__ import annotations

import pytest

from harnesskit.errors import UsageError
from harnesskit.log.redact import Redactor


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"extra": {"customer": "CUST-("}}, "not a valid regex"),
        ({"extra": {"customer": 5}}, "must map a kind name"),
        ({"extra": {5: "x+"}}, "must map a kind name"),
        ({"extra": [("customer", "x+")]}, "must be a dict"),
        ({"kinds": ("api_key", "nope")}, "unknown redaction kinds"),
        ({"literals": "sk-live-0123456789"}, "wrap a single secret"),
        ({"literals": (b"sk-live-0123456789",)}, "tuple of strings"),
    ],
)
def test_bad_arguments_raise_usage_error_naming_the_problem(kwargs, says):
    with pytest.raises(UsageError, match=says):
        Redactor(**kwargs)


def test_good_extra_patterns_and_literals_still_redact():
    r = Redactor(extra={"customer": r"CUST-\d+"}, literals=("sk-live-0123456789",))
    text, counts = r.redact("CUST-42 paid with sk-live-0123456789")
    assert "CUST-42" not in text and "sk-live-0123456789" not in text
    assert counts == {"customer": 1, "secret": 1}


def test_kinds_may_be_any_iterable_and_compare_by_content():
    assert Redactor(kinds=["api_key", "jwt"]) == Redactor(kinds=("api_key", "jwt"))
    assert Redactor(kinds=(k for k in ["api_key"])).redact("sk-" + "a" * 40)[1]


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"kinds": None}, "kinds must be a tuple of kind names"),
        ({"kinds": "password"}, r"wrap a single kind as \('password',\)"),
        ({"literals": None}, "take \\(\\) and \\{\\} for none"),
        ({"extra": None}, "take \\(\\) and \\{\\} for none"),
    ],
)
def test_none_and_a_single_kind_string_are_refused(kwargs, says):
    with pytest.raises(UsageError, match=says):
        Redactor(**kwargs)


def test_an_event_log_takes_only_a_redactor():
    from harnesskit.log import EventLog

    with pytest.raises(UsageError, match=r"EventLog\(redactor=...\) takes"):
        EventLog(None, run_id="r", redactor="x")
    assert EventLog(None, run_id="r", redactor=None).redactor is None
