"""A tool gets the path the gate checked (R-E4), never a relative path opened from the cwd.

The gate takes a relative path from the workspace root; the process's current folder is
somewhere else (a notebook's folder). Each test changes into a real folder holding a decoy file
of the same name, so a tool that opened the path as sent would read the decoy.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TypedDict

import pytest

import harnesskit as hk
from harnesskit.testing import reply
from harnesskit.tools.spec import Tool

received: list[object] = []


@hk.tool
def read_file(path: Path) -> str:
    """Read a text file.

    Args:
        path: the file.
    """
    received.append(path)
    return Path(path).read_text()


@hk.tool
def read_many(paths: list[Path]) -> list[str]:
    """Read several files.

    Args:
        paths: the files.
    """
    received.append(paths)
    return [Path(p).read_text() for p in paths]


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
    received.append(jobs)
    return "|".join(Path(j["source"]).read_text() for j in jobs)


@hk.tool
def copy(spec: Copy) -> str:
    """Copy a file."""
    received.append(spec)
    return "ok"


@pytest.fixture
def ws(tmp_path, monkeypatch):
    """A workspace `tmp/ws` and a cwd `tmp/cwd` holding decoys with the workspace's names."""
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_text("inside")
    (root / "sub" / "b.txt").write_text("inside b")
    cwd = tmp_path / "cwd"
    (cwd / "sub").mkdir(parents=True)
    (cwd / "notes.txt").write_text("DECOY")
    (cwd / "sub" / "b.txt").write_text("DECOY b")
    (cwd / "outside.txt").write_text("DECOY outside")
    monkeypatch.chdir(cwd)
    received.clear()
    return root


def test_the_tool_reads_the_workspace_file_not_the_one_in_the_cwd(ws):
    model = hk.ScriptedModel([reply.tool_call("read_file", path="notes.txt"), "done"])
    run = hk.Harness([read_file], model, gate=hk.Gate(workspace=ws)).run("go")
    (call,) = run.log.of_type("tool.call")
    (result,) = run.log.of_type("tool.result")
    assert result.ok and result.content == "inside"
    assert received == [str(ws / "notes.txt")]
    assert call.payload["arguments"] == {"path": "notes.txt"}  # the log keeps what the model sent
    assert result.payload["resolved_paths"] == {"path": str(ws / "notes.txt")}


def test_a_file_only_in_the_cwd_is_not_found_rather_than_read(ws):
    model = hk.ScriptedModel([reply.tool_call("read_file", path="outside.txt"), "done"])
    run = hk.Harness([read_file], model, gate=hk.Gate(workspace=ws)).run("go")
    (result,) = run.log.of_type("tool.result")
    assert not result.ok and "DECOY" not in result.content
    assert str(ws / "outside.txt") in result.content  # it looked inside the workspace


def test_every_path_typed_value_reaches_the_tool_resolved(ws):
    ex = hk.tools.Executor(hk.ToolRegistry([read_many, run_jobs, copy]), hk.Gate(workspace=str(ws)))

    def run_one(name, **arguments):
        received.clear()
        call = hk.ToolCall(id="c1", name=name, arguments=arguments)
        (done,) = ex.execute([call], lambda c: hk.ToolContext(tool_call_id=c.id))
        assert done.result.ok, done.result.content
        assert done.arguments == arguments  # what the model sent, as recorded
        return done, received[0]

    done, got = run_one("read_many", paths=["notes.txt", "sub/b.txt"])
    assert done.result.content == '["inside", "inside b"]'
    assert got == [str(ws / "notes.txt"), str(ws / "sub" / "b.txt")]
    done, got = run_one("run_jobs", jobs=[{"source": "sub/b.txt", "note": "notes.txt"}])
    assert done.result.content == "inside b"
    assert got == [{"source": str(ws / "sub" / "b.txt"), "note": "notes.txt"}]  # str: no path
    done, got = run_one("copy", spec={"source": "notes.txt", "targets": ["x/../sub/b.txt"]})
    spec = got if isinstance(got, dict) else dataclasses.asdict(got)
    assert spec == {"source": str(ws / "notes.txt"), "targets": [str(ws / "sub" / "b.txt")]}
    assert done.result.meta["resolved_paths"] == {
        "spec.source": str(ws / "notes.txt"),
        "spec.targets[0]": str(ws / "sub" / "b.txt"),
    }


def test_a_bound_path_is_resolved_too(ws):
    @hk.tool
    def listing() -> dict[str, list[str]]:
        """List files."""
        return {"files": ["notes.txt", "sub/b.txt"]}

    model = hk.ScriptedModel([
        reply.tool_call("listing", id="l1"),
        reply.tool_call("read_many", paths={"$bind": "l1#/files"}),
        "done",
    ])  # fmt: skip
    run = hk.Harness([listing, read_many], model, gate=hk.Gate(workspace=ws)).run("read them")
    result = run.log.of_type("tool.result")[-1]
    assert result.ok and result.content == '["inside", "inside b"]'
    assert received == [[str(ws / "notes.txt"), str(ws / "sub" / "b.txt")]]


def test_an_absolute_path_already_inside_is_passed_unchanged_and_not_noted(ws):
    ex = hk.tools.Executor(hk.ToolRegistry([read_file]), hk.Gate(workspace=ws))
    call = hk.ToolCall(id="c1", name="read_file", arguments={"path": str(ws / "notes.txt")})
    (done,) = ex.execute([call], lambda c: hk.ToolContext(tool_call_id=c.id))
    assert done.result.ok and "resolved_paths" not in done.result.meta
    assert received == [str(ws / "notes.txt")]


def test_a_dry_run_preview_reads_the_workspace_and_never_runs_for_a_denied_path(ws):
    previews: list[object] = []

    def write_note(path: Path, text: str, dry_run: bool = False) -> str:
        """Overwrite a note.

        Args:
            path: the file.
            text: the new text.
        """
        if dry_run:
            previews.append(path)
            return f"would replace {Path(path).read_text()!r}"
        Path(path).write_text(text)
        return "written"

    tool = Tool.from_function(write_note, risk="destructive")
    seen: list[hk.ApprovalRequest] = []
    gate = hk.Gate(workspace=ws, confirm=lambda r: seen.append(r) or True)
    ex = hk.tools.Executor(hk.ToolRegistry([tool]), gate)
    calls = [
        hk.ToolCall(id="c1", name="write_note", arguments={"path": "notes.txt", "text": "new"}),
        hk.ToolCall(
            id="c2", name="write_note", arguments={"path": "../cwd/notes.txt", "text": "x"}
        ),
    ]
    ok, denied = ex.execute(calls, lambda c: hk.ToolContext(tool_call_id=c.id))
    assert ok.result.ok and (ws / "notes.txt").read_text() == "new"
    assert seen[0].preview == "would replace 'inside'"
    assert seen[0].arguments["path"] == str(ws / "notes.txt")  # the human approves the real path
    assert denied.result.error_type == "permission_denied"
    assert previews == [str(ws / "notes.txt")]  # no dry run of the escaping call
    assert (ws.parent / "cwd" / "notes.txt").read_text() == "DECOY"


def test_a_path_param_named_explicitly_on_a_str_hint_is_checked_and_resolved(ws):
    def cat(p: str) -> str:
        """Read a file.

        Args:
            p: the file.
        """
        return Path(p).read_text()

    tool = Tool.from_function(cat, path_params=("p",))
    ex = hk.tools.Executor(hk.ToolRegistry([tool]), hk.Gate(workspace=ws))
    ctx = lambda c: hk.ToolContext(tool_call_id=c.id)  # noqa: E731
    (inside,) = ex.execute([hk.ToolCall(id="c1", name="cat", arguments={"p": "notes.txt"})], ctx)
    (outside,) = ex.execute([hk.ToolCall(id="c2", name="cat", arguments={"p": "../x"})], ctx)
    assert inside.result.content == "inside"
    assert outside.result.error_type == "permission_denied"
