"""A damaged run directory: a cut-off last result is run again, anything else is a named error.

Real run directories written by `Experiment.run` (the shop domain's scripted agents), then
damaged on disk: `results.jsonl` cut mid-line or with a bad middle line, `experiment.json`
that is not a manifest. Load, resume, audit and `harnesskit eval --resume` all agree.
"""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest

import harnesskit as hk
from harnesskit.cli import main
from harnesskit.errors import CorruptLogError, SchemaVersionError

SHOP = pathlib.Path(__file__).resolve().parents[2] / "datasets" / "cases" / "shop.jsonl"


def _exp():
    return hk.Experiment(hk.load_cases(SHOP)[:2], models=["shop:careful"], repeats=2)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    path = tmp_path_factory.mktemp("exp") / "run"
    _exp().run(path, parallel=False, progress=False)
    return path


@pytest.fixture
def run_dir(finished, tmp_path):
    path = tmp_path / "run"
    shutil.copytree(finished, path)
    return path


def _refused_everywhere(run_dir, text, where, capsys):
    """Load, resume, audit and `eval --resume` all refuse `run_dir`, naming `where` first.

    `results.jsonl` must still read `text` afterwards; returns the three error messages.
    """
    messages = []
    for attempt in (
        lambda: hk.ExperimentResult.load(run_dir),
        lambda: _exp().resume(run_dir, parallel=False, progress=False),
        lambda: hk.audit(run_dir),
    ):
        with pytest.raises(CorruptLogError) as info:
            attempt()
        assert str(info.value).startswith(where)
        messages.append(str(info.value))
    assert (run_dir / "results.jsonl").read_text(encoding="utf-8") == text  # nothing rewritten
    assert main(["eval", "--resume", str(run_dir), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"harnesskit: CorruptLogError: {where}") and "Traceback" not in err
    return messages


def _lines(path):
    return (path / "results.jsonl").read_text(encoding="utf-8").splitlines()


def test_a_cut_off_last_line_is_skipped_with_a_note_and_run_again_on_resume(run_dir):
    lines = _lines(run_dir)
    assert len(lines) == 4
    cut = "\n".join(lines[:3]) + "\n" + lines[3][:30]  # killed while writing the last row
    (run_dir / "results.jsonl").write_text(cut, encoding="utf-8")
    where = f"{run_dir / 'results.jsonl'}:4: skipped a last line cut off"

    with pytest.warns(RuntimeWarning, match=where):
        loaded = hk.ExperimentResult.load(run_dir)
    assert len(loaded) == 3
    with pytest.warns(RuntimeWarning, match=where):
        assert len(hk.audit(run_dir).rows) == 3
    with pytest.warns(RuntimeWarning, match=where):
        again = _exp().resume(run_dir, parallel=False, progress=False)
    assert len(again) == 4 and [json.loads(x)["run_id"] for x in _lines(run_dir)] == [
        json.loads(x)["run_id"] for x in lines
    ]
    assert json.loads((run_dir / "experiment.json").read_text())["finished"]


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ("garbage", "not valid JSON"),
        ("[1]", "a JSON list"),
        ('{"case": "x"}', "a JSON object without 'policy', 'model', 'repeat', 'run_id'"),
    ],
)
def test_a_bad_middle_line_is_a_named_error_everywhere(run_dir, bad, says, capsys):
    lines = _lines(run_dir)
    text = "\n".join([*lines[:1], bad, *lines[1:]]) + "\n"
    (run_dir / "results.jsonl").write_text(text, encoding="utf-8")
    where = f"{run_dir / 'results.jsonl'}:2: {says}"

    for message in _refused_everywhere(run_dir, text, where, capsys):
        assert message.startswith(where) and "Remove that line" in message


@pytest.mark.parametrize(
    ("manifest", "says"),
    [
        ("[]", "a JSON list"),
        ("{{", "not valid JSON"),
        ('{"name": "x"}', "a JSON object without 'seed'"),
        ('"repeats": "2"', "'repeats' is str"),
    ],
)
def test_a_malformed_experiment_json_is_a_named_error(run_dir, manifest, says, capsys):
    if manifest.startswith('"repeats"'):  # the saved manifest with one field of a wrong type
        saved = json.loads((run_dir / "experiment.json").read_text(encoding="utf-8"))
        manifest = json.dumps({**saved, "repeats": "2"})
    (run_dir / "experiment.json").write_text(manifest, encoding="utf-8")
    where = f"{run_dir / 'experiment.json'}: {says}"
    attempts = [
        lambda: _exp().resume(run_dir, parallel=False, progress=False),
        lambda: hk.Experiment.from_dir(run_dir),
    ]
    if "without" not in says:  # loading reads only what it needs (repeats)
        attempts += [lambda: hk.ExperimentResult.load(run_dir), lambda: hk.audit(run_dir)]
    for attempt in attempts:
        with pytest.raises(CorruptLogError) as info:
            attempt()
        assert str(info.value).startswith(where)

    assert main(["eval", "--resume", str(run_dir), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"harnesskit: CorruptLogError: {where}") and "Traceback" not in err


@pytest.mark.parametrize("version", [99, 0])
def test_a_manifest_of_another_schema_version_is_refused_everywhere(run_dir, version, capsys):
    saved = json.loads((run_dir / "experiment.json").read_text(encoding="utf-8"))
    assert saved["schema_version"] == 1
    manifest = json.dumps({**saved, "schema_version": version})
    (run_dir / "experiment.json").write_text(manifest, encoding="utf-8")
    rows_before = (run_dir / "results.jsonl").read_bytes()
    for attempt in (
        lambda: _exp().resume(run_dir, parallel=False, progress=False),
        lambda: hk.Experiment.from_dir(run_dir),
        lambda: hk.ExperimentResult.load(run_dir),
    ):
        with pytest.raises(SchemaVersionError, match=f"schema_version {version}; this harnesskit"):
            attempt()
    assert main(["eval", "--resume", str(run_dir), "--no-progress"]) == 2
    assert "SchemaVersionError" in capsys.readouterr().err
    assert (run_dir / "results.jsonl").read_bytes() == rows_before  # nothing run or written


def test_a_trial_row_written_twice_counts_once(run_dir):
    lines = _lines(run_dir)
    text = "\n".join([*lines[:2], lines[1], *lines[2:]]) + "\n"  # the second trial twice
    (run_dir / "results.jsonl").write_text(text, encoding="utf-8")

    loaded = hk.ExperimentResult.load(run_dir)
    assert [r["run_id"] for r in loaded.rows] == [json.loads(x)["run_id"] for x in lines]
    assert len(hk.audit(run_dir).rows) == 4
    again = _exp().resume(run_dir, parallel=False, progress=False)
    assert len(again) == 4 and _lines(run_dir) == lines  # rewritten once per trial


def _with_row(run_dir, at, change):
    """`results.jsonl` with the row at index `at` changed by `change` and written back."""
    lines = _lines(run_dir)
    row = json.loads(lines[at])
    change(row)
    lines[at] = json.dumps(row)
    text = "\n".join(lines) + "\n"
    (run_dir / "results.jsonl").write_text(text, encoding="utf-8")
    return text


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda r: r.update({"pass": "false"}), "'pass' is a string \"false\" (true/false"),
        (lambda r: r.update({"pass": 0}), "'pass' is a number 0 (true/false expected)"),
        (lambda r: r.update({"repeat": "1"}), "'repeat' is a string \"1\" (an integer expected)"),
        (lambda r: r.update({"steps": True}), "'steps' is true (an integer expected)"),
        (lambda r: r.update({"error": 3}), "'error' is a number 3 (a string or null expected)"),
        (lambda r: r.update({"checks": {}}), "'checks' is an object {} (a list expected)"),
        (lambda r: r["checks"][0].update({"passed": "no"}), "'checks.0.passed' is a string"),
        (lambda r: r["checks"].__setitem__(0, 7), "'checks.0' is a number 7 (an object expected)"),
        # these loaded, then `frame`/`summary` raised raw TypeError, IntCastingNaNError, ...
        (lambda r: r.update({"checks": 1.5}), "'checks' is a number 1.5 (a list expected)"),
        (lambda r: r.pop("steps"), "a JSON object without 'steps'"),
        (lambda r: r.pop("prompt_tokens"), "a JSON object without 'prompt_tokens'"),
        (
            lambda r: r.update({"prompt_tokens": 10**30}),
            "'prompt_tokens' is 10000000000000000000... (an integer from 0 to 92233",
        ),
        (lambda r: r.update({"tool_calls": -1}), "'tool_calls' is -1 (an integer from 0 to"),
        (lambda r: r.update({"seed": 2**63}), "'seed' is 9223372036854775808 (an integer from -"),
    ],
)
def test_a_row_field_of_the_wrong_type_is_a_named_error(run_dir, change, says, capsys):
    text = _with_row(run_dir, 1, change)
    where = f"{run_dir / 'results.jsonl'}:2: {says}"

    for message in _refused_everywhere(run_dir, text, where, capsys):
        assert message.startswith(where) and "Remove that line" in message


def test_two_different_rows_of_one_trial_are_a_named_error(run_dir, capsys):
    lines = _lines(run_dir)
    other = json.loads(lines[1])
    other["pass"] = not other["pass"]
    text = "\n".join([*lines, json.dumps(other)]) + "\n"
    (run_dir / "results.jsonl").write_text(text, encoding="utf-8")
    where = (
        f"{run_dir / 'results.jsonl'}:5: a second row for trial {other['run_id']!r} "
        "(first at line 2) that differs from it"
    )

    for message in _refused_everywhere(run_dir, text, where, capsys):
        assert message.startswith(where) and "Remove the wrong one" in message


def test_two_rows_of_one_trial_under_different_run_ids_are_a_named_error(run_dir, capsys):
    lines = _lines(run_dir)
    other = json.loads(lines[0])
    other["run_id"] += "-b"
    other["pass"] = not other["pass"]
    text = "\n".join([*lines, json.dumps(other)]) + "\n"
    (run_dir / "results.jsonl").write_text(text, encoding="utf-8")
    where = f"{run_dir / 'results.jsonl'}:5: a second row for trial case={other['case']!r}"

    for message in _refused_everywhere(run_dir, text, where, capsys):
        assert message.startswith(where) and "the first is line 1" in message
        assert repr(other["run_id"]) in message and "count the trial twice" in message
    assert (run_dir / "results.jsonl").read_text(encoding="utf-8") == text


def test_rows_of_no_trial_of_the_experiment_are_named_and_the_folder_is_left_alone(run_dir, capsys):
    # a row of another experiment pasted in: resume rewrote results.jsonl without it
    lines = _lines(run_dir)
    stray = json.loads(lines[0])
    stray.update(run_id="t0099-other-case-full-history-shop_careful-r0", case="other-case")
    text = "\n".join([*lines, json.dumps(stray)]) + "\n"
    (run_dir / "results.jsonl").write_text(text, encoding="utf-8")
    logs = sorted(p.name for p in (run_dir / "logs").iterdir())

    with pytest.raises(CorruptLogError) as info:
        _exp().resume(run_dir, parallel=False, progress=False)
    message = str(info.value)
    assert message.startswith(f"{run_dir / 'results.jsonl'}: 1 row(s) belong to no trial")
    assert repr(stray["run_id"]) in message and "case='other-case'" in message
    assert "Move those lines" in message
    assert (run_dir / "results.jsonl").read_text(encoding="utf-8") == text  # nothing rewritten
    assert sorted(p.name for p in (run_dir / "logs").iterdir()) == logs
    assert main(["eval", "--resume", str(run_dir), "--no-progress"]) == 2
    assert "belong to no trial" in capsys.readouterr().err
    assert len(hk.ExperimentResult.load(run_dir)) == 5  # reading them is still fine
