"""Tool groups (R-T3): with many tools the model first picks a group, then sees only its specs.

Past `ToolGroups.threshold` tools (default 15) in a registry whose tools declare a `group`, a
run offers the model one `choose_group` tool (group names and one-line descriptions) plus the
ungrouped tools; once a group is open, its tools are offered too, and calling `choose_group`
again switches. A call to a tool of a group that is not open is refused with a result that
says which group to open. The open group is recorded on every `model.request` and
`context.injected` event (`tool_group`), and read back from the log on resume.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any

from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import ToolError, UsageError
from harnesskit.messages import ToolCall
from harnesskit.tools.spec import Tool, ToolRegistry

__all__ = ["CHOOSE_GROUP", "GroupSelector", "ToolGroups"]

#: The name of the group-selection tool.
CHOOSE_GROUP = "choose_group"


@frozen_dataclass(kw_only=True)
class ToolGroups:
    """How a harness offers grouped tools (R-T3).

    Raises:
        UsageError: `threshold` is below 1.
    """

    descriptions: Mapping[str, str] = field(default_factory=dict)
    """`{group: one-line description}` shown by `choose_group`; a group without one is
    described by its first tool names."""
    threshold: int = 15
    """Group selection starts when the registry has more than this many tools."""

    def __post_init__(self) -> None:
        if self.threshold < 1:
            raise UsageError(f"ToolGroups(threshold=...) must be >= 1, got {self.threshold}")

    def applies(self, registry: ToolRegistry) -> bool:
        """True when `registry` is large enough and has at least one grouped tool."""
        return len(registry) > self.threshold and any(t.group for t in registry)


class GroupSelector:
    """One run's open group: the `choose_group` tool, the visible specs and the call check.

    Args:
        registry: the harness's tools.
        config: descriptions and threshold.
        open_group: the group already open (read back from a log on resume), or `None`.
    """

    def __init__(
        self, registry: ToolRegistry, config: ToolGroups, *, open_group: str | None = None
    ) -> None:
        self.registry, self.config = registry, config
        self.members = {g: names for g, names in registry.groups().items() if g}
        self.open: str | None = open_group if open_group in self.members else None
        """The open group, or `None` before the model chose one."""
        self.tool = Tool(
            name=CHOOSE_GROUP,
            description=self._description(),
            parameters={
                "type": "object",
                "properties": {
                    "group": {
                        "type": "string",
                        "enum": list(self.members),
                        "description": "the group whose tools you need next",
                    }
                },
                "required": ["group"],
                "additionalProperties": False,
            },
            fn=self._choose,
            timeout_seconds=None,
        )
        """The `choose_group` tool (risk read, runs inline)."""

    def _description(self) -> str:
        lines = [
            "Open one group of tools: its tools become callable in the next step (one group "
            "is open at a time; call again to switch). Use it first, and whenever the tools "
            "you need are in another group. Returns the group and its tool names. Groups:"
        ]
        for group, names in self.members.items():
            text = self.config.descriptions.get(group) or f"{len(names)} tools: " + ", ".join(
                names[:4]
            ) + (", ..." if len(names) > 4 else "")
            lines.append(f"- {group}: {text}")
        return "\n".join(lines)

    def _choose(self, group: str) -> dict[str, Any]:
        self.open = group
        return {"group": group, "tools": self.members[group]}

    def visible(self, name: str) -> bool:
        """True when the tool `name` is offered now (ungrouped, in the open group, or ours)."""
        tool = self.registry.get(name)
        return tool is None or not tool.group or tool.group == self.open

    def check(self, arguments: dict[str, Any], call: ToolCall) -> dict[str, Any]:
        """The executor's pre-validation hook: refuse a tool of a group that is not open.

        Returns:
            `arguments`, unchanged.

        Raises:
            ToolError: the tool belongs to a group that is not open (error_type `tool_error`).
        """
        tool = self.registry.get(call.name)
        if tool is not None and not self.visible(call.name):
            raise ToolError(
                f"{call.name} is in group {tool.group!r}, which is not open "
                f"(open: {self.open or 'none'})",
                hint=f"call {CHOOSE_GROUP}(group='{tool.group}') first, then call {call.name}",
            )
        return arguments

    def names(self, exclude: Iterable[str] = ()) -> list[str]:
        """The tool names offered now: `choose_group`, then the visible tools in order."""
        skip = set(exclude)
        shown = [t.name for t in self.registry if self.visible(t.name) and t.name not in skip]
        return [CHOOSE_GROUP, *shown]

    def specs(self, exclude: Iterable[str] = ()) -> tuple[dict[str, Any], ...]:
        """The chat-completions specs offered now, in the order of `names`."""
        skip = set(exclude)
        shown = tuple(
            t.model_spec() for t in self.registry if self.visible(t.name) and t.name not in skip
        )
        return (self.tool.model_spec(), *shown)

    @staticmethod
    def open_in(results: Iterable[tuple[str | None, bool, str]]) -> str | None:
        """The group the last successful `choose_group` result opened.

        Args:
            results: `(tool, ok, content)` of the tool results in log order.

        Returns:
            The group name, or `None` when none was opened.
        """
        group = None
        for tool, ok, content in results:
            if tool == CHOOSE_GROUP and ok:
                try:
                    group = json.loads(content).get("group", group)
                except (ValueError, AttributeError):
                    continue
        return group
