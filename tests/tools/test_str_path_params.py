"""R-E4: a path typed `str` is gated when `@hk.tool(path_params=...)` names it, and `lint`
warns about a str parameter named like a path that the gate does not check."""

from __future__ import annotations

from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.errors import UsageError
from harnesskit.testing import reply


def _read_file(path: str) -> str:
    """Read a text file.

    Use this to read a file in the workspace. Do not use it to write.

    Args:
        path: the file.

    Returns:
        The text.
    """
    return Path(path).read_text()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "secret.txt").write_text("SECRET")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("inside")
    return tmp_path / "ws"


def _results(tool: hk.Tool, ws: Path, path: str) -> list[dict]:
    model = hk.ScriptedModel([reply.tool_call("read_file", path=path), reply.text("end")])
    run = hk.Harness([tool], model, gate=hk.Gate(workspace=ws)).run("read it")
    return [e.payload for e in run.log.events if e.type == "tool.result"]


def test_the_decorator_takes_path_params_and_the_gate_checks_a_str_path(ws):
    read_file = hk.tool(name="read_file", path_params=("path",))(_read_file)

    (outside,) = _results(read_file, ws, str(ws.parent / "secret.txt"))
    (inside,) = _results(read_file, ws, "notes.txt")

    assert read_file.path_params == ("path",)
    assert not outside["ok"] and outside["error_type"] == "permission_denied"
    assert "SECRET" not in outside["content"]
    assert inside["ok"] and "inside" in inside["content"]


def test_named_path_params_add_to_the_path_typed_ones():
    def copy(src: Path, dst: str) -> str:
        """Copy a file."""
        return ""

    assert set(hk.tool(path_params=("dst",))(copy).path_params) == {"src", "dst"}
    assert hk.Tool.from_function(copy, path_params=("dst",)).path_params == ("src", "dst")


@pytest.mark.parametrize(
    ("names", "match"),
    [("path", r"wrap it: path_params=\('path',\)"), (("pth",), "'pth' is not a parameter")],
)
def test_path_params_given_as_a_str_or_naming_no_parameter_is_refused(names, match):
    with pytest.raises(UsageError, match=match):
        hk.tool(path_params=names)(_read_file)


@pytest.mark.parametrize("name", ["path", "file", "filename", "out_path", "dir", "target_dir"])
def test_lint_warns_about_a_str_parameter_named_like_a_path_and_says_how_to_fix_it(name):
    def f(x: str) -> str:
        return x

    tool = hk.Tool(
        name="f",
        description=hk.tool(_read_file).description,
        parameters={
            "type": "object",
            "properties": {name: {"type": "string", "description": "the file"}},
        },
        fn=f,
    )

    (issue,) = [i for i in hk.lint(tool) if i.code == "unchecked-path"]

    assert issue.param == name
    assert f"path_params=({name!r},)" in issue.message and "pathlib.Path" in issue.message


def test_lint_is_quiet_for_a_gated_path_and_for_names_that_are_not_paths():
    def search(query: str, profile: str, path: Path) -> str:
        """Search.

        Use this to search. Do not use it to write.

        Args:
            query: the text.
            profile: the profile name.
            path: where.

        Returns:
            Hits.
        """
        return ""

    assert not [i for i in hk.lint(hk.tool(search)) if i.code == "unchecked-path"]
    gated = hk.tool(name="read_file", path_params=("path",))(_read_file)
    assert not [i for i in hk.lint(gated) if i.code == "unchecked-path"]


def test_a_str_path_not_named_is_not_a_path_param_by_default():
    """Which str params are gated does not change silently: lint says what to do."""
    assert hk.tool(_read_file).path_params == ()
