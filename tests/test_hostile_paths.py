"""Hostile path strings given to public entry points are `UsageError`s naming the argument.

A NUL byte, a name too long for the file system, a file where a folder is needed: each is
refused by the one shared check (`errors.checked_path`) with a sentence that names the call's
argument and the path (a NUL shown as `\\x00`), never as a raw `ValueError`/`OSError`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import harnesskit as hk
from harnesskit.analysis.evals.cases import save_cases
from harnesskit.domains.airline import run_demo
from harnesskit.errors import UsageError, checked_path
from harnesskit.log.otel import export_otlp
from harnesskit.models.local import LocalModel
from harnesskit.testing import reply


def _model() -> Any:
    return hk.ScriptedModel([reply.text("hi")])


def _cases() -> list[Any]:
    return hk.load_cases([{"id": "a", "domain": "shop", "input": "where is A1001"}])


#: (label, the argument's name as the message gives it, call taking the hostile path)
ENTRY_POINTS: list[tuple[str, str, Callable[[Any], Any]]] = [
    ("Harness(log_dir)", "Harness(log_dir=...)", lambda p: hk.Harness([], _model(), log_dir=p)),
    ("Gate(workspace)", "Gate(workspace=...)", lambda p: hk.Gate(workspace=p)),
    ("EventLog.read", "EventLog.read(path)", lambda p: hk.EventLog.read(p)),
    ("EventLog(path)", "EventLog(path)", lambda p: hk.EventLog(p)),
    ("Harness.resume", "h.resume(path)", lambda p: hk.Harness([], _model()).resume(p)),
    (
        "Harness.restart",
        "h.restart(path)",
        lambda p: hk.Harness([], _model()).restart(p, reason="x"),
    ),
    (
        "check_resume",
        "check_resume(harness, path)",
        lambda p: hk.check_resume(hk.Harness([], _model()), p),
    ),
    ("load_cases", "load_cases(source)", lambda p: hk.load_cases(p)),
    ("save_cases", "save_cases(cases, path)", lambda p: save_cases(_cases(), p)),
    ("Harness(policy)", "policy=...", lambda p: hk.Harness([], _model(), policy=Path(p))),
    (
        "ContextPolicy.from_file",
        "ContextPolicy.from_file(path)",
        lambda p: hk.ContextPolicy.from_file(p),
    ),
    (
        "Experiment.run",
        "exp.run(out_dir=...)",
        lambda p: hk.Experiment(_cases(), ["default"], ["shop:careful"], repeats=1).run(
            p, progress=False
        ),
    ),
    ("Experiment.from_dir", "Experiment.from_dir(path)", lambda p: hk.Experiment.from_dir(p)),
    ("ExperimentResult.load", "ExperimentResult.load(path)", lambda p: hk.ExperimentResult.load(p)),
    ("replay", "replay(log, ...)", lambda p: hk.replay(p, hk.Harness([], _model()))),
    ("counterfactual", "counterfactual(log, ...)", lambda p: hk.counterfactual(p, "full-history")),
    ("ArtifactStore(root)", "ArtifactStore(root)", lambda p: hk.ArtifactStore(p)),
    ("audit", "audit(target)", lambda p: hk.audit(p)),
    ("export_otlp", "export_otlp(path=...)", lambda p: export_otlp([], path=p)),
    ("LocalModel(model)", "LocalModel(model)", lambda p: LocalModel(p + ".gguf")),
    ("run_demo", "--out", lambda p: run_demo(p, echo=None)),
]


@pytest.fixture
def blocker(tmp_path: Path) -> Path:
    """A plain file, so that `<blocker>/x` goes through a file as if it were a folder."""
    f = tmp_path / "afile"
    f.write_text("x")
    return f


def _hostile(kind: str, tmp_path: Path, blocker: Path) -> str:
    return {
        "nul": str(tmp_path / "a\x00b"),
        "long": str(tmp_path / ("x" * 300)),
        "through-file": str(blocker / "sub" / "x.jsonl"),
    }[kind]


@pytest.mark.parametrize("kind", ["nul", "long", "through-file"])
@pytest.mark.parametrize(("label", "where", "call"), ENTRY_POINTS, ids=[e[0] for e in ENTRY_POINTS])
def test_a_hostile_path_is_a_usage_error_naming_the_argument(
    label: str, where: str, call: Callable[[Any], Any], kind: str, tmp_path: Path, blocker: Path
) -> None:
    path = _hostile(kind, tmp_path, blocker)
    with pytest.raises(UsageError) as info:
        call(path)
    message = str(info.value)
    assert message.startswith(where), message
    assert "\x00" not in message  # shown escaped, never as a raw NUL (printed as a space)
    if kind == "nul":
        assert "\\x00" in message and "NUL" in message
    elif kind == "long":
        assert "too long" in message
    else:
        assert f"{blocker} is a file" in message


@pytest.mark.parametrize(
    ("label", "call"),
    [
        ("Harness(log_dir)", lambda p: hk.Harness([], _model(), log_dir=p)),
        ("Gate(workspace)", lambda p: hk.Gate(workspace=p)),
        ("Experiment.run", lambda p: hk.Experiment(_cases(), ["default"], ["shop:careful"]).run(p)),
        ("ArtifactStore(root)", lambda p: hk.ArtifactStore(p)),
        ("ExperimentResult.load", lambda p: hk.ExperimentResult.load(p)),
    ],
)
def test_a_file_where_a_folder_is_needed_is_refused(
    label: str, call: Callable[[Any], Any], blocker: Path
) -> None:
    with pytest.raises(UsageError, match="is a file, not a folder"):
        call(str(blocker))


@pytest.mark.parametrize(
    "call",
    [
        lambda p: hk.EventLog.read(p),
        lambda p: hk.Harness([], _model()).resume(p),
        lambda p: save_cases(_cases(), p),
    ],
)
def test_a_folder_where_a_file_is_needed_is_refused(
    call: Callable[[Any], Any], tmp_path: Path
) -> None:
    with pytest.raises(UsageError, match="is a folder, not a file"):
        call(str(tmp_path))


def test_checked_path_passes_a_missing_path_and_returns_a_path(tmp_path: Path) -> None:
    assert checked_path(str(tmp_path / "new" / "x.jsonl"), "f(path)", kind="file") == (
        tmp_path / "new" / "x.jsonl"
    )
    assert checked_path(tmp_path, "f(path)", kind="folder") == tmp_path


@pytest.mark.parametrize("value", [b"/tmp/x", 3, None, ""])
def test_checked_path_refuses_what_is_no_text_path(value: Any) -> None:
    with pytest.raises(UsageError, match=r"^f\(path\)"):
        checked_path(value, "f(path)")
