"""Context policies as data: the document, its JSON Schema and the built-ins (R-C1).

Import `ContextPolicy`, `policy_problems` and `BUILTIN_POLICIES` from `harnesskit.context`.
The schema and the built-in YAML files live in `harnesskit/context/policies/`.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import UsageError, checked_path

POLICY_DIR = Path(__file__).with_name("policies")
#: Names accepted by `ContextPolicy.resolve` without a file.
BUILTIN_POLICIES = ("default", "full-history", "naive", "summary", "window")
_LIMITS = ("max_events", "max_tool_output_chars", "max_prompt_tokens", "recent_turns")
_DOC_KEYS = ("include", "exclude", "limits", "require", "summary")
#: Deepest nesting (mappings and lists) a policy file may hold; the schema needs 4 levels.
MAX_POLICY_DEPTH = 64
#: Most values (scalars, lists, mappings, keys included) a policy file may expand to once its
#: aliases (`*name`) are replaced by what they name; the built-ins hold under 100.
MAX_POLICY_NODES = 10_000


def _read_document(p: Path) -> Any:
    """The YAML (or JSON) document of the policy file `p`, checked before it is built.

    The parser's event stream is walked first (PyYAML's parser is not recursive): nesting
    deeper than `MAX_POLICY_DEPTH` is refused there, before the recursive composer would
    overflow Python's stack, and so is a document that expands to more than
    `MAX_POLICY_NODES` values. Each value counts with its multiplicity, an alias as the size
    of the node its anchor names (known when that node ended), so a "billion laughs" file
    (9 levels of 9 aliases each) is refused after reading its few hundred bytes, without
    building anything (PyYAML has no alias limit of its own).

    Raises:
        UsageError: not UTF-8, not YAML, nested too deeply, or expanding to too many values;
            the message names the file and the line.
    """
    import yaml

    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"context policy file {p} is not UTF-8 text ({exc.reason} at byte {exc.start}); "
            "save it as UTF-8"
        ) from None
    try:
        sizes: dict[str, int] = {}  # anchor -> values its node expands to
        open_: list[list[Any]] = []  # [anchor, values so far] of each open list or mapping
        total = 0
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            line = event.start_mark.line + 1 if event.start_mark else "?"
            if isinstance(event, yaml.CollectionEndEvent):
                anchor, n = open_.pop()
                if anchor is not None:
                    sizes[anchor] = n
                if open_:
                    open_[-1][1] += n
                continue
            if not isinstance(event, yaml.NodeEvent):
                continue  # stream and document markers
            # an alias counts as what it names (an unknown one: safe_load names it below)
            n = sizes.get(event.anchor, 1) if isinstance(event, yaml.AliasEvent) else 1
            total += n
            if total > MAX_POLICY_NODES:
                raise UsageError(
                    f"context policy file {p}:{line}: expands to more than {MAX_POLICY_NODES} "
                    "values once its aliases (*name) are replaced by what they name (a policy "
                    "holds under 100); it is not a policy (an alias bomb?): write the values "
                    "out as in harnesskit/context/policies/*.yaml"
                )
            if isinstance(event, yaml.CollectionStartEvent):
                open_.append([event.anchor, 1])
                if len(open_) > MAX_POLICY_DEPTH:
                    raise UsageError(
                        f"context policy file {p}:{line}: nested more than "
                        f"{MAX_POLICY_DEPTH} levels deep (a policy needs 4); it is damaged or "
                        "not a policy: write it as in harnesskit/context/policies/*.yaml"
                    )
                continue
            if isinstance(event, yaml.ScalarEvent) and event.anchor is not None:
                sizes[event.anchor] = 1
            if open_:
                open_[-1][1] += n
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"context policy file {p} is not valid YAML: {exc}") from exc


@functools.cache
def _schema() -> dict[str, Any]:
    return json.loads((POLICY_DIR / "schema.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _field_name(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def policy_problems(doc: Any) -> list[tuple[str, str]]:
    """Check a policy document against `policies/schema.json`.

    Args:
        doc: the decoded document (a dict for a valid policy).

    Returns:
        `(field, message)` pairs, one per problem, in field order; empty when valid. The field
        is a dotted path with list indexes, e.g. `limits.max_events` or `include[2]`.
    """
    import jsonschema

    validator = jsonschema.Draft202012Validator(_schema())
    problems: list[tuple[str, str]] = []
    for err in validator.iter_errors(doc):
        where = _field_name(err.absolute_path)
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            allowed = sorted(err.schema.get("properties", {}))
            for key in sorted(set(err.instance) - set(allowed)):
                name = f"{where}.{key}" if where else key
                problems.append((name, f"unknown field; allowed here: {', '.join(allowed)}"))
        elif err.validator == "required" and isinstance(err.instance, dict):
            for key in err.validator_value:
                if key not in err.instance:
                    problems.append((f"{where}.{key}" if where else key, "required field missing"))
        else:
            problems.append((where or "(document)", err.message))
    return sorted(problems)


#: What to do about an unusable policy file path.
_FILE_FIX = "pass the path of a policy .yaml file, or a built-in policy name"


@frozen_dataclass(kw_only=True)
class ContextPolicy:
    """A context policy as data: name, version and the rules the builder applies (R-C1).

    Build one with `ContextPolicy.resolve` (a built-in name, a YAML/JSON path, a dict) so the
    document is validated; the fields below are read from `spec`.
    """

    _POSITIONAL_HINT = (
        "A policy by name, file or dict is ContextPolicy.resolve('window'), or pass the name "
        "where a policy is taken: hk.Harness(policy='window')"
    )
    #: Keys that go in the policy document, not in the constructor (`_lazy._refuse_unknown`):
    #: `ContextPolicy(max_prompt_tokens=...)` is answered with where the key goes.
    _KEYWORDS_ELSEWHERE = {
        **dict.fromkeys(_LIMITS, "ContextPolicy.resolve({'name': 'mine', 'limits': {'%s': ...}})"),
        **dict.fromkeys(_DOC_KEYS, "ContextPolicy.resolve({'name': 'mine', '%s': ...})"),
    }

    name: str = "full-history"
    """The policy's name, recorded in every `context.injected` event."""
    version: str = "1"
    """Its version, recorded likewise (resume checks it)."""
    spec: dict[str, Any] = field(default_factory=dict)
    """The full policy document (include, exclude, limits, require, summary)."""

    @property
    def include(self) -> tuple[str, ...]:
        """Event kinds the context may carry from before the window (`*` = all)."""
        return tuple(self.spec.get("include", ["*"]))

    @property
    def exclude(self) -> frozenset[str]:
        """Selectors of what never reaches the model (`status.rejected`, `branch.other`, ...)."""
        return frozenset(self.spec.get("exclude", ()))

    @property
    def limits(self) -> dict[str, int | None]:
        """The limits: `max_events`, `max_tool_output_chars`, `max_prompt_tokens`, `recent_turns`.

        Each is `None` when not set (no limit); `max_summary_items` defaults to 8.
        """
        given = self.spec.get("limits") or {}
        out: dict[str, int | None] = {k: given.get(k) for k in _LIMITS}
        out["max_summary_items"] = given.get("max_summary_items", 8)
        return out

    @property
    def require(self) -> tuple[str, ...]:
        """Fields every injected event must carry (Event fields or `payload.<key>`)."""
        return tuple(self.spec.get("require", ()))

    @property
    def summary(self) -> bool:
        """True when the six-block structured summary is added."""
        return bool(self.spec.get("summary", False))

    @property
    def facts_index(self) -> bool:
        """True when the values block is added (no fact lost to compression).

        It lists every id and value a tool returned that the prompt does not show whole, once,
        with its source label.
        """
        return bool(self.spec.get("facts_index", False))

    @property
    def linear(self) -> bool:
        """True when every event goes verbatim, in order (no window, no context block)."""
        return self.limits["recent_turns"] is None and not self.summary

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], *, origin: str = "") -> ContextPolicy:
        """Validate a policy document and build the policy.

        Args:
            doc: the document (name, version, include, exclude, limits, require, summary).
            origin: where it came from (a file path), quoted in errors.

        Raises:
            UsageError: the document breaks the schema; the message names every bad field
                (e.g. `limits.max_events`) and `err.fields` lists them.
        """
        problems = policy_problems(dict(doc) if isinstance(doc, Mapping) else doc)
        if problems:
            where = f" in {origin}" if origin else ""
            label = doc.get("name", "?") if isinstance(doc, Mapping) else "?"
            lines = "\n".join(f"  {f}: {m}" for f, m in problems)
            err = UsageError(f"invalid context policy {label!r}{where}:\n{lines}")
            err.fields = [f for f, _ in problems]  # type: ignore[attr-defined]
            raise err
        spec = json.loads(json.dumps(dict(doc)))
        spec["version"] = str(spec.get("version", "1"))
        return cls(name=str(spec["name"]), version=spec["version"], spec=spec)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ContextPolicy:
        """Load and validate a YAML (or JSON) policy file.

        Raises:
            UsageError: `path` is not a usable file path (a NUL byte, a name too long, a
                folder: `errors.checked_path`), the file is missing, is not UTF-8 YAML, is
                nested more than `MAX_POLICY_DEPTH` levels deep, or breaks the schema (the
                message names the bad field and the file).
        """
        p = checked_path(
            path,
            "ContextPolicy.from_file(path)",
            kind="file",
            fix=_FILE_FIX,
        )
        if not p.is_file():
            raise UsageError(f"no context policy file at {p}")
        doc = _read_document(p)
        if not isinstance(doc, dict):
            raise UsageError(
                f"context policy file {p} must hold a mapping, got {type(doc).__name__}"
            )
        return cls.from_dict(doc, origin=str(p))

    @classmethod
    def builtin(cls, name: str) -> ContextPolicy:
        """One of `BUILTIN_POLICIES`, loaded from `harnesskit/context/policies/<name>.yaml`.

        Raises:
            UsageError: not a built-in name.
        """
        if name not in BUILTIN_POLICIES:
            import difflib

            near = difflib.get_close_matches(name, BUILTIN_POLICIES, n=1)
            hint = f"did you mean {near[0]!r}? " if near else ""
            raise UsageError(
                f"unknown context policy {name!r}; {hint}built in: {', '.join(BUILTIN_POLICIES)} "
                "(or give a dict or a path to a YAML file)"
            )
        return _builtin(name)

    @classmethod
    def resolve(
        cls, policy: str | os.PathLike[str] | Mapping[str, Any] | ContextPolicy | None
    ) -> ContextPolicy:
        """Accept a built-in name, a path to a YAML/JSON file, a dict, or a `ContextPolicy`.

        Args:
            policy: the policy; `None` means `full-history`.

        Raises:
            UsageError: an unknown name, a path that is not usable (a NUL byte, a name too
                long, a folder: `errors.checked_path`), a missing file, or a document that
                breaks the schema.
        """
        if policy is None:
            return _builtin("full-history")
        if isinstance(policy, ContextPolicy):
            return policy
        if isinstance(policy, Mapping):
            return cls.from_dict(policy)
        if isinstance(policy, os.PathLike) or (
            isinstance(policy, str)
            and (policy.endswith((".yaml", ".yml", ".json")) or os.sep in policy)
        ):
            return cls.from_file(checked_path(policy, "policy=...", kind="file", fix=_FILE_FIX))
        if isinstance(policy, str):
            return cls.builtin(policy)
        raise UsageError(
            f"a policy is a name, a path, a dict or a ContextPolicy, got {type(policy).__name__}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The policy document (with name and version)."""
        return {**self.spec, "name": self.name, "version": self.version}

    def __repr__(self) -> str:
        return f"<ContextPolicy {self.name} v{self.version}>"


@functools.cache
def _builtin(name: str) -> ContextPolicy:
    return ContextPolicy.from_file(POLICY_DIR / f"{name}.yaml")
