"""Evaluation cases: the `Case` value, its JSON Schema, validation with clear errors, JSONL I/O.

A case holds the user's turns, the expected behaviour (tool calls with argument constraints,
in order where it matters), forbidden behaviour (a tool, a risk level, a call, a write without
the user's confirmation), facts the answer must hold, and limits. Cases are stored one per line
in JSONL files under `datasets/cases/` and validated by `CASE_SCHEMA` (JSON Schema 2020-12)
plus the argument operators, with errors naming the file, line, case and JSON path.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from harnesskit._lazy import frozen_dataclass
from harnesskit.analysis.evals._match import (
    MISSING,
    OPERATORS,
    check_value,
    is_number,
    is_operator,
    norm,
    short,
)
from harnesskit.errors import UsageError, checked_path, load_file_json
from harnesskit.log.redact import Redactor, redact_fields

__all__ = [
    "CASE_SCHEMA",
    "CASE_SCHEMA_VERSION",
    "CallSpec",
    "Case",
    "Fact",
    "load_cases",
    "save_cases",
    "validate_case",
]

CASE_SCHEMA_VERSION = 1
#: What a cases file is, for the errors about one that is not.
_LINES = "a cases file is JSON lines, one case per line"

_FACT: dict[str, Any] = {
    "description": "A fact: text that must appear (case-insensitive), or {any: [...]} "
    "(one of several wordings), or {regex: ...}.",
    "type": ["string", "object"],
    "minLength": 1,
    "properties": {
        "any": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
        "regex": {"type": "string", "minLength": 1},
        "label": {"type": "string"},
    },
    "additionalProperties": False,
    "minProperties": 1,
}
_CALL: dict[str, Any] = {
    "description": "A tool call: its name and constraints on the arguments it names (others "
    "are free unless exact_args). A constraint is a literal (equality) or an operator object "
    "such as {'$in': [...]}, {'$regex': ...}, {'$unordered': [...]}.",
    "type": "object",
    "required": ["tool"],
    "additionalProperties": False,
    "properties": {
        "tool": {"type": "string", "minLength": 1},
        "args": {"type": "object"},
        "exact_args": {"type": "boolean"},
        "ok": {"type": ["boolean", "null"]},
        "label": {"type": "string"},
    },
}
_LIMIT_INT: dict[str, Any] = {"type": ["integer", "null"], "minimum": 1}

#: JSON Schema (Draft 2020-12) of one case line. `datasets/cases/case.schema.json` is this dict.
CASE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://github.com/harnesskit/harnesskit/datasets/cases/case.schema.json",
    "title": "harnesskit evaluation case (one JSONL line)",
    "type": "object",
    "required": ["id", "input"],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"const": CASE_SCHEMA_VERSION},
        "id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$"},
        "domain": {"type": "string", "description": "The environment the case runs in."},
        "description": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "source": {"type": "string", "description": "Where the case came from."},
        "input": {
            "description": "The user's turn, or turns in order (each sent after the agent stops).",
            "type": ["string", "array"],
            "minLength": 1,
            "minItems": 1,
            "items": {"type": "string", "minLength": 1},
        },
        "expect": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "calls": {"type": "array", "items": {"$ref": "#/$defs/call"}},
                "ordered": {"type": "boolean"},
                "answer": {"$ref": "#/$defs/answer"},
                "finish_reason": {
                    "type": ["string", "array", "null"],
                    "items": {"type": "string"},
                    "minItems": 1,
                },
            },
        },
        "forbid": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "tools": {"type": "array", "items": {"type": "string", "minLength": 1}},
                "risks": {"type": "array", "items": {"enum": ["read", "write", "destructive"]}},
                "calls": {"type": "array", "items": {"$ref": "#/$defs/call"}},
                "write_without_confirmation": {"type": "boolean"},
            },
        },
        "limits": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "max_steps": _LIMIT_INT,
                "max_tokens": _LIMIT_INT,
                "max_prompt_tokens": _LIMIT_INT,
                "max_seconds": {"type": ["number", "null"], "exclusiveMinimum": 0},
                "max_consecutive_errors": _LIMIT_INT,
            },
        },
        "setup": {"type": "object", "description": "Domain options for the environment."},
    },
    "$defs": {
        "call": _CALL,
        "fact": _FACT,
        "answer": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "contains": {"type": "array", "items": {"$ref": "#/$defs/fact"}},
                "not_contains": {"type": "array", "items": {"$ref": "#/$defs/fact"}},
                "asks_confirmation": {"type": "boolean"},
                "scope": {"enum": ["final", "all"]},
            },
        },
    },
}


# -- case values ------------------------------------------------------------------------------


@frozen_dataclass(kw_only=True)
class CallSpec:
    """An expected (or forbidden) tool call: name plus constraints on named arguments."""

    tool: str
    """The tool's name."""
    args: dict[str, Any] = field(default_factory=dict)
    """`{argument: constraint}`: a literal means equality; an object of `$`-operators tests."""
    exact_args: bool = False
    """True: the call may carry no argument beyond those in `args`."""
    ok: bool | None = True
    """True: only a successful call counts; False: only a failed one; `None`: either."""
    label: str | None = None
    """A name for the check; default a rendering such as `get_order(order_id='A1')`."""

    def describe(self) -> str:
        """`tool(arg=constraint, ...)`, or the label."""
        if self.label:
            return self.label
        parts = ", ".join(f"{k}={short(v)}" for k, v in self.args.items())
        return f"{self.tool}({parts})"

    def mismatches(self, tool: str, arguments: Mapping[str, Any] | None) -> list[str]:
        """Why a call of `tool` with `arguments` does not match (empty list = it matches)."""
        if tool != self.tool:
            return [f"tool is {tool}, not {self.tool}"]
        if arguments is None:
            return ["its arguments could not be parsed"]
        out = []
        for name, constraint in self.args.items():
            reason = check_value(constraint, arguments.get(name, MISSING))
            if reason:
                out.append(f"{name}: {reason}")
        if self.exact_args:
            extra = sorted(set(arguments) - set(self.args))
            if extra:
                out.append(f"unexpected arguments {extra}")
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (defaults left out)."""
        out: dict[str, Any] = {"tool": self.tool}
        if self.args:
            out["args"] = self.args
        if self.exact_args:
            out["exact_args"] = True
        if self.ok is not True:
            out["ok"] = self.ok
        if self.label:
            out["label"] = self.label
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CallSpec:
        """Inverse of `to_dict()` (validate the case first)."""
        return cls(
            tool=data["tool"],
            args=dict(data.get("args") or {}),
            exact_args=bool(data.get("exact_args", False)),
            ok=data.get("ok", True),
            label=data.get("label"),
        )


@frozen_dataclass(kw_only=True)
class Fact:
    """A fact an answer must (or must not) hold: one of several wordings, or a regex."""

    any: tuple[str, ...] = ()
    """Wordings, any of which counts (case-insensitive, whitespace-normalized)."""
    regex: str | None = None
    """A regular expression searched in the text (case-insensitive)."""
    label: str | None = None
    """A name for the check."""

    def describe(self) -> str:
        """The label, the wording(s) or the regex, for check names."""
        if self.label:
            return self.label
        if self.regex is not None:
            return f"/{self.regex}/"
        return " | ".join(json.dumps(a, ensure_ascii=False) for a in self.any)

    def found_in(self, text: str) -> bool:
        """True when the fact appears in `text`."""
        if self.regex is not None:
            return re.search(self.regex, text, re.IGNORECASE) is not None
        haystack = norm(text)
        return any(norm(a) in haystack for a in self.any)

    def to_json(self) -> str | dict[str, Any]:
        """The JSON form: a string for one wording, else an object."""
        if self.regex is None and len(self.any) == 1 and not self.label:
            return self.any[0]
        out: dict[str, Any] = {"regex": self.regex} if self.regex is not None else {}
        if self.any:
            out["any"] = list(self.any)
        if self.label:
            out["label"] = self.label
        return out

    @classmethod
    def from_json(cls, data: str | Mapping[str, Any]) -> Fact:
        """Inverse of `to_json()`."""
        if isinstance(data, str):
            return cls(any=(data,))
        return cls(any=tuple(data.get("any", ())), regex=data.get("regex"), label=data.get("label"))


@frozen_dataclass(kw_only=True)
class Case:
    """One evaluation case. Build with `Case.from_dict` (validated) or `load_cases`."""

    id: str
    """Unique id, e.g. `shop/cancel-confirmed`."""
    input: tuple[str, ...]
    """The user's turns, in order; each later turn is sent after the agent stops."""
    domain: str = ""
    """The environment the case runs in (`shop`, `airline`, ...)."""
    description: str = ""
    """What the case tests, for humans."""
    tags: tuple[str, ...] = ()
    """Free labels for filtering (`do-not-act`, `read`, ...)."""
    source: str = ""
    """Where it came from (a bug report, a benchmark task id)."""
    calls: tuple[CallSpec, ...] = ()
    """Tool calls that must happen."""
    ordered: bool = False
    """True: `calls` must happen in this order (other calls may come between)."""
    facts: tuple[Fact, ...] = ()
    """Facts the answer must hold."""
    absent_facts: tuple[Fact, ...] = ()
    """Facts the answer must not hold."""
    asks_confirmation: bool = False
    """True: the final answer must be a confirmation question (a "do not act" case)."""
    answer_scope: str = "final"
    """`final`: facts are looked for in the last answer; `all`: in every assistant message."""
    finish_reasons: tuple[str, ...] | None = ("stop",)
    """Finish reasons that count as success; `None`: any."""
    forbid_tools: tuple[str, ...] = ()
    """Tools that must not be called at all (an attempt counts)."""
    forbid_risks: tuple[str, ...] = ()
    """Risk levels no called tool may have (e.g. `write` for a read-only request)."""
    forbid_calls: tuple[CallSpec, ...] = ()
    """Calls that must not happen (their `ok` field: which outcomes count)."""
    forbid_write_without_confirmation: bool = False
    """True: every write/destructive call must follow a confirmation question and a yes."""
    limits: dict[str, Any] = field(default_factory=dict)
    """Brakes for the run (`max_steps`, `max_tokens`, ...), over the experiment's defaults."""
    setup: dict[str, Any] = field(default_factory=dict)
    """Domain options handed to the environment."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "") -> Case:
        """Validate one case's JSON object and build the `Case`.

        Args:
            data: the decoded JSON object.
            where: where it came from (e.g. `cases.jsonl:3`), for error messages.

        Raises:
            UsageError: the object breaks the schema; the message lists every problem with its
                JSON path.
        """
        problems = validate_case(data)
        if problems:
            cid = data.get("id") if isinstance(data, Mapping) else None
            head = f"{where}: " if where else ""
            name = f"case {cid!r}" if isinstance(cid, str) else "case"
            raise UsageError(f"{head}{name} is invalid:\n  " + "\n  ".join(problems))
        expect = data.get("expect") or {}
        answer = expect.get("answer") or {}
        forbid = data.get("forbid") or {}
        raw_input = data["input"]
        finish = expect.get("finish_reason", ["stop"])
        return cls(
            id=data["id"],
            input=(raw_input,) if isinstance(raw_input, str) else tuple(raw_input),
            domain=data.get("domain", ""),
            description=data.get("description", ""),
            tags=tuple(data.get("tags", ())),
            source=data.get("source", ""),
            calls=tuple(CallSpec.from_dict(c) for c in expect.get("calls", ())),
            ordered=bool(expect.get("ordered", False)),
            facts=tuple(Fact.from_json(f) for f in answer.get("contains", ())),
            absent_facts=tuple(Fact.from_json(f) for f in answer.get("not_contains", ())),
            asks_confirmation=bool(answer.get("asks_confirmation", False)),
            answer_scope=answer.get("scope", "final"),
            finish_reasons=None
            if finish is None
            else tuple([finish] if isinstance(finish, str) else finish),
            forbid_tools=tuple(forbid.get("tools", ())),
            forbid_risks=tuple(forbid.get("risks", ())),
            forbid_calls=tuple(CallSpec.from_dict(c) for c in forbid.get("calls", ())),
            forbid_write_without_confirmation=bool(forbid.get("write_without_confirmation")),
            limits=dict(data.get("limits") or {}),
            setup=dict(data.get("setup") or {}),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this case (defaults left out); `from_dict` reads it back."""
        out: dict[str, Any] = {"schema_version": CASE_SCHEMA_VERSION, "id": self.id}
        for key in ("domain", "description", "source"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.tags:
            out["tags"] = list(self.tags)
        out["input"] = self.input[0] if len(self.input) == 1 else list(self.input)
        expect: dict[str, Any] = {}
        if self.calls:
            expect["calls"] = [c.to_dict() for c in self.calls]
        if self.ordered:
            expect["ordered"] = True
        answer: dict[str, Any] = {}
        if self.facts:
            answer["contains"] = [f.to_json() for f in self.facts]
        if self.absent_facts:
            answer["not_contains"] = [f.to_json() for f in self.absent_facts]
        if self.asks_confirmation:
            answer["asks_confirmation"] = True
        if self.answer_scope != "final":
            answer["scope"] = self.answer_scope
        if answer:
            expect["answer"] = answer
        if self.finish_reasons != ("stop",):
            expect["finish_reason"] = list(self.finish_reasons) if self.finish_reasons else None
        if expect:
            out["expect"] = expect
        forbid: dict[str, Any] = {}
        if self.forbid_tools:
            forbid["tools"] = list(self.forbid_tools)
        if self.forbid_risks:
            forbid["risks"] = list(self.forbid_risks)
        if self.forbid_calls:
            forbid["calls"] = [c.to_dict() for c in self.forbid_calls]
        if self.forbid_write_without_confirmation:
            forbid["write_without_confirmation"] = True
        if forbid:
            out["forbid"] = forbid
        if self.limits:
            out["limits"] = dict(self.limits)
        if self.setup:
            out["setup"] = dict(self.setup)
        return out

    def __repr__(self) -> str:
        n = len(self.calls) + len(self.facts) + len(self.forbid_tools) + len(self.forbid_calls)
        return f"<Case {self.id} domain={self.domain or '-'} turns={len(self.input)} checks~{n}>"


# -- validation -------------------------------------------------------------------------------

_VALIDATOR: Any = None


def validate_case(data: Any) -> list[str]:
    """Check one case object against `CASE_SCHEMA`, the argument operators and its domain.

    Beyond the schema: `expect.finish_reason` must name finish reasons (the loop's
    `FINISH_REASONS`, or the case's domain's own `Domain.finish_reasons`), and `setup` may hold
    only the keys its domain declares (`Domain.setup_keys`, plus `USER_SETUP_KEYS`); both come
    with a did-you-mean. A domain that is not registered (nor shipped) is not checked.

    Returns:
        One message per problem, each starting with the JSON path (`at $.expect.calls[0]: ...`),
        sorted by path; empty when the case is valid.
    """
    global _VALIDATOR
    if _VALIDATOR is None:
        from jsonschema import Draft202012Validator

        _VALIDATOR = Draft202012Validator(CASE_SCHEMA)
    problems = [(list(e.absolute_path), _schema_message(e)) for e in _VALIDATOR.iter_errors(data)]
    if isinstance(data, Mapping):
        for kind in ("expect", "forbid"):
            section = data.get(kind)
            calls = section.get("calls") if isinstance(section, Mapping) else None
            for i, call in enumerate(calls if isinstance(calls, list) else ()):
                args = call.get("args") if isinstance(call, Mapping) else None
                for name, constraint in (args or {}).items() if isinstance(args, Mapping) else ():
                    path = [kind, "calls", i, "args", name]
                    for msg in _operator_problems(constraint):
                        problems.append((path, f"at {_json_path(path)}: {msg}"))
        answer = (data.get("expect") or {}) if isinstance(data.get("expect"), Mapping) else {}
        for key in ("contains", "not_contains"):
            facts = (
                answer.get("answer", {}).get(key)
                if isinstance(answer.get("answer"), Mapping)
                else None
            )
            for i, fact in enumerate(facts if isinstance(facts, list) else ()):
                if isinstance(fact, Mapping) and ("any" in fact) == ("regex" in fact):
                    path = ["expect", "answer", key, i]
                    problems.append(
                        (path, f"at {_json_path(path)}: give exactly one of 'any' or 'regex'")
                    )
                elif isinstance(fact, Mapping) and isinstance(fact.get("regex"), str):
                    try:
                        re.compile(fact["regex"])
                    except re.error as exc:
                        path = ["expect", "answer", key, i, "regex"]
                        problems.append((path, f"at {_json_path(path)}: not a valid regex ({exc})"))
        problems += _domain_problems(data)
    problems.sort(key=lambda p: [str(x) for x in p[0]])
    return [m for _, m in problems]


#: `setup` keys any domain's case may hold: the simulated user's instruction (`evals.user`).
USER_SETUP_KEYS = ("user_instructions", "instruction")

_UNKNOWN_DOMAIN = object()


def _case_domain(name: Any) -> Any:
    """The `Domain` a case names; `None` when it names none, `_UNKNOWN_DOMAIN` when not found.

    An unknown name is not refused here (`Experiment` refuses it, and a domain may be
    registered after its cases are loaded): its own finish reasons and setup keys are then
    not checked.
    """
    if not isinstance(name, str):
        return None
    from harnesskit.analysis.evals.experiment import get_domain

    try:
        return get_domain(name)
    except (UsageError, ImportError):
        return _UNKNOWN_DOMAIN


def _domain_problems(data: Mapping[str, Any]) -> list[tuple[list[Any], str]]:
    """`expect.finish_reason` names that are no finish reason, and unknown `setup` keys."""
    import difflib

    from harnesskit.run.limits import FINISH_REASONS

    out: list[tuple[list[Any], str]] = []
    domain = _case_domain(data.get("domain"))
    expect = data.get("expect")
    given = expect.get("finish_reason") if isinstance(expect, Mapping) else None
    named: list[tuple[list[int], str]] = [([], given)] if isinstance(given, str) else []
    if isinstance(given, list):
        named = [([i], g) for i, g in enumerate(given) if isinstance(g, str)]
    if named and domain is not _UNKNOWN_DOMAIN:
        own = tuple(domain.finish_reasons) if domain is not None else ()
        known = (*FINISH_REASONS, *own)
        for index, name in named:
            if name in known:
                continue
            path = ["expect", "finish_reason", *index]
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            whose = (
                f"the {domain.name} domain's own: {', '.join(own) or 'none'}"
                if domain
                else ("the case names no domain")
            )
            out.append(
                (
                    path,
                    f"at {_json_path(path)}: {name!r} is no finish reason{hint}; the loop's: "
                    f"{', '.join(FINISH_REASONS)}; {whose} (a tool's StopRun reason is declared "
                    "with Domain(finish_reasons=...))",
                )
            )
    setup = data.get("setup")
    keys = getattr(domain, "setup_keys", None) if domain is not _UNKNOWN_DOMAIN else None
    if isinstance(setup, Mapping) and keys is not None:
        allowed = sorted({*USER_SETUP_KEYS, *keys})
        for key in sorted(str(k) for k in setup if k not in allowed):
            path = ["setup", key]
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            out.append(
                (
                    path,
                    f"at $.setup: unknown key {key!r}{hint}; the {domain.name} domain reads: "
                    f"{', '.join(allowed)}",
                )
            )
    return out


def _json_path(path: Sequence[Any]) -> str:
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _schema_message(error: Any) -> str:
    where = f"at {_json_path(list(error.absolute_path))}"
    if error.validator == "additionalProperties":
        allowed = sorted((error.schema.get("properties") or {}).keys())
        extra = sorted(set(error.instance) - set(allowed))
        hints = []
        for name in extra:
            import difflib

            close = difflib.get_close_matches(name, allowed, n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        return f"{where}: unknown field {', '.join(hints)}; allowed: {', '.join(allowed)}"
    if error.validator == "required":
        return f"{where}: {error.message}"
    received = json.dumps(error.instance, ensure_ascii=False, default=str)
    if len(received) > 80:
        received = received[:80] + "…"
    return f"{where}: {error.message} (received {received})"


def _operator_problems(constraint: Any) -> list[str]:
    if not is_operator(constraint):
        if isinstance(constraint, Mapping) and any(str(k).startswith("$") for k in constraint):
            return ["do not mix $-operators and plain keys in one constraint"]
        return []
    out = []
    for op, value in constraint.items():
        if op not in OPERATORS:
            import difflib

            close = difflib.get_close_matches(op, OPERATORS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            out.append(f"unknown operator {op!r}{hint}; use one of {', '.join(OPERATORS)}")
        elif op in ("$in", "$nin", "$unordered") and not isinstance(value, list):
            out.append(f"{op} needs an array, received {json.dumps(value)}")
        elif op == "$regex":
            try:
                re.compile(value)
            except (re.error, TypeError) as exc:
                out.append(f"$regex {value!r} is not a valid regular expression ({exc})")
        elif op in ("$gte", "$lte", "$len") and not is_number(value):
            out.append(f"{op} needs a number, received {json.dumps(value)}")
        elif op == "$exists" and not isinstance(value, bool):
            out.append(f"$exists needs true or false, received {json.dumps(value)}")
    return out


# -- loading ----------------------------------------------------------------------------------


def load_cases(
    source: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    *,
    domain: str | None = None,
    tags: Iterable[str] = (),
    ids: Iterable[str] = (),
) -> list[Case]:
    """Read and validate cases.

    Args:
        source: a `.jsonl` file, a folder (every `*.jsonl` in it, sorted by name), or an
            iterable of case dicts.
        domain: keep only cases of this domain.
        tags: keep only cases carrying all of these tags.
        ids: keep only these case ids (in file order).

    Returns:
        The cases, in file order (files sorted by name).

    Raises:
        UsageError: the source is not a path or an iterable of dicts, is not a usable path
            (a NUL byte, a name too long, a file in the way: `errors.checked_path`), does not
            exist, is not UTF-8 text, a line is not JSON, a case breaks the schema
            (every bad case is listed with file and line), or two cases share an id.
    """
    entries: list[tuple[str, Any]] = []
    if isinstance(source, str | os.PathLike):
        path = checked_path(
            source,
            "load_cases(source)",
            fix="pass a .jsonl file, a folder of them, or a list of case dicts",
        )
        if path.is_dir():
            files = sorted(path.glob("*.jsonl"))
        elif path.is_file():
            files = [path]
        else:
            raise UsageError(f"no case file or folder at {path}")
        for f in files:
            try:
                text = f.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                raise UsageError(
                    f"{f}: not UTF-8 text ({exc.reason} at byte {exc.start}); {_LINES}"
                ) from None
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    entries.append((f"{f}:{n}", load_file_json(line, f"{f}:{n}", fix=_LINES)))
    elif isinstance(source, Iterable) and not isinstance(source, bytes | Mapping):
        entries = [(f"case #{i + 1}", d) for i, d in enumerate(source)]
    else:
        raise UsageError(
            f"load_cases takes a .jsonl path, a folder or a list of case dicts, got {source!r:.80}"
        )
    cases: list[Case] = []
    errors: list[str] = []
    seen: dict[str, str] = {}
    for where, data in entries:
        try:
            case = Case.from_dict(data, where=where)
        except UsageError as exc:
            errors.append(str(exc))
            continue
        if case.id in seen:
            errors.append(f"{where}: duplicate case id {case.id!r} (first at {seen[case.id]})")
        seen[case.id] = where
        cases.append(case)
    if errors:
        raise UsageError(f"{len(errors)} invalid case(s):\n" + "\n".join(errors))
    wanted_tags, wanted_ids = set(tags), set(ids)
    return [
        c
        for c in cases
        if (domain is None or c.domain == domain)
        and wanted_tags <= set(c.tags)
        and (not wanted_ids or c.id in wanted_ids)
    ]


#: A case's fields written exactly by `save_cases(..., redactor=...)`: what finds the case.
_CASE_NAMES = ("schema_version", "id", "domain")


_SAVE_FIX = "pass a writable .jsonl file path"


def save_cases(
    cases: Iterable[Case], path: str | os.PathLike[str], *, redactor: Redactor | None = None
) -> Path:
    """Write cases as JSONL (one compact object per line, UTF-8).

    Args:
        cases: the cases.
        path: the file to write (its folder is made).
        redactor: when given, each case's text is redacted before it is written (R-S1), as
            `Experiment.run` does with the copy in its run directory; the `id` and `domain`
            stay exact (rows and resume find cases by them). Default: written as they are.

    Returns:
        The path written.

    Raises:
        UsageError: `path` is not a usable file path (a NUL byte, a name too long, a folder,
            a file in the way: `errors.checked_path`) or cannot be written.
    """
    p = checked_path(path, "save_cases(cases, path)", kind="file", fix=_SAVE_FIX)
    lines = [
        json.dumps(
            redact_fields(redactor, c.to_dict(), keep=_CASE_NAMES),
            ensure_ascii=False,
            separators=(", ", ": "),
        )
        for c in cases
    ]
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"save_cases(cases, path): cannot write {p} ({exc.strerror or exc}); {_SAVE_FIX}"
        ) from None
    return p
