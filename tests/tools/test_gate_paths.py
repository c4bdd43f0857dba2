"""The gate checks every path-typed value (R-E4): in containers, nested objects, `$bind` values.

Hostile names (NUL, a symlink loop, a lone surrogate) are `permission_denied` with a reason,
never a crash. Real files and symlinks in a temporary workspace.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TypedDict

import pytest

import harnesskit as hk
from harnesskit.testing import reply

READ: list[object] = []


@hk.tool
def read_many(paths: list[Path]) -> int:
    """Read several files.

    Args:
        paths: the files.
    """
    READ.append(paths)
    return len(paths)


@hk.tool
def read_pair(pair: tuple[Path, Path]) -> str:
    """Read two files."""
    READ.append(pair)
    return "ok"


@hk.tool
def read_named(files: dict[str, Path]) -> str:
    """Read named files."""
    READ.append(files)
    return "ok"


class Job(TypedDict):
    source: Path
    note: str


@dataclasses.dataclass
class Copy:
    source: Path
    targets: list[Path]


@hk.tool
def run_jobs(jobs: list[Job]) -> str:
    """Run jobs."""
    READ.append(jobs)
    return "ok"


@hk.tool
def copy(spec: Copy) -> str:
    """Copy a file."""
    READ.append(spec)
    return "ok"


@hk.tool
def maybe(path: Path | None = None) -> str:
    """Maybe read a file."""
    READ.append(path)
    return "ok"


TOOLS = [read_many, read_pair, read_named, run_jobs, copy, maybe]


@pytest.fixture
def ws(tmp_path, monkeypatch):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a")
    os.symlink(root / "loop1", root / "loop2")
    os.symlink(root / "loop2", root / "loop1")
    monkeypatch.chdir(tmp_path)
    READ.clear()
    return root


def call(ws, name, **arguments):
    ex = hk.tools.Executor(hk.ToolRegistry(TOOLS), hk.Gate(workspace="ws"))
    ctx = lambda c: hk.ToolContext(tool_call_id=c.id)  # noqa: E731
    (done,) = ex.execute([hk.ToolCall(id="c1", name=name, arguments=arguments)], ctx)
    return done.result


@pytest.mark.parametrize(
    ("name", "arguments", "where"),
    [
        ("read_many", {"paths": ["a.txt", "/etc/passwd"]}, "paths[1]"),
        ("read_many", {"paths": ["../../../etc/passwd"]}, "paths[0]"),
        ("read_pair", {"pair": ["a.txt", "/etc/passwd"]}, "pair[1]"),
        ("read_named", {"files": {"x": "a.txt", "y": "/etc/passwd"}}, "files['y']"),
        ("run_jobs", {"jobs": [{"source": "a.txt", "note": "n"}, {"source": "/etc/passwd",
                                                                  "note": "n"}]}, "jobs[1].source"),
        ("copy", {"spec": {"source": "a.txt", "targets": ["a.txt", "/etc/shadow"]}},
         "spec.targets[1]"),
        ("maybe", {"path": "/etc/passwd"}, "path"),
    ],
)  # fmt: skip
def test_every_path_typed_value_is_checked(ws, name, arguments, where):
    result = call(ws, name, **arguments)
    assert result.error_type == "permission_denied", result.content
    assert f"argument {where!r}" in result.message and "outside the workspace" in result.message
    assert READ == []


def test_paths_inside_the_workspace_still_pass_and_strings_that_are_not_paths_are_not_checked(ws):
    assert call(ws, "read_many", paths=["a.txt", "sub/../a.txt"]).ok
    assert call(ws, "run_jobs", jobs=[{"source": "a.txt", "note": "/etc/passwd"}]).ok
    assert call(ws, "maybe").ok


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("a\x00.txt", "NUL byte"),
        ("loop1", "symlink loop"),
        ("loop1/x.txt", "symlink loop"),
        ("caf\udce9.txt", "not valid UTF-8"),
        ("hi \ud83d.txt", "not valid UTF-8"),
    ],
)
def test_hostile_names_are_denied_with_a_reason_never_a_crash(ws, path, reason):
    for name, arguments in [("maybe", {"path": path}), ("read_many", {"paths": [path]})]:
        result = call(ws, name, **arguments)
        assert result.error_type == "permission_denied", result.content
        assert reason in result.message
    assert READ == []


def test_a_bound_value_is_checked_like_a_typed_one(ws, tmp_path):
    @hk.tool
    def listing() -> dict[str, list[str]]:
        """List files."""
        return {"files": ["a.txt", "/etc/passwd"]}

    model = hk.ScriptedModel([
        reply.tool_call("listing", id="l1"),
        reply.tool_call("read_many", paths={"$bind": "l1#/files"}),
        reply.text("done"),
    ])  # fmt: skip
    h = hk.Harness([listing, read_many], model, gate=hk.Gate(workspace="ws"))
    run = h.run("read them")
    denied = run.log.of_type("tool.result")[-1]
    assert denied.payload["error_type"] == "permission_denied"
    assert "paths[1]" in denied.content and "/etc/passwd" in denied.content
    assert READ == []
