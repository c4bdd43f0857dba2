"""The notebooks are checked by nbval: a changed figure in a checked cell fails the run."""

import json
import pathlib
import re
import subprocess
import sys

import pytest

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[2] / "notebooks"


def checked_cells(nb):
    return [
        c
        for c in nb["cells"]
        if c["cell_type"] == "code" and "# NBVAL_CHECK_OUTPUT" in "".join(c["source"])
    ]


@pytest.mark.parametrize("name", ["01_quickstart.ipynb", "02_tool_descriptions.ipynb"])
def test_notebooks_are_committed_executed_with_checked_cells_and_parameters(name):
    nb = json.loads((NOTEBOOKS / name).read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["execution_count"] for c in code), "every code cell has a stored execution"
    assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]
    assert len(checked_cells(nb)) >= 5
    assert [c for c in code if "parameters" in c["metadata"].get("tags", [])], (
        "papermill needs a parameters cell"
    )


def test_a_changed_step_count_fails_the_notebook_check(tmp_path):
    nb = json.loads((NOTEBOOKS / "01_quickstart.ipynb").read_text())
    params = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    source = "".join(params["source"])
    assert re.search(r"^max_steps = \d+$", source, re.M)
    params["source"] = re.sub(
        r"^max_steps = \d+$", "max_steps = 2", source, flags=re.M
    )  # brakes early
    broken = tmp_path / "broken.ipynb"
    broken.write_text(json.dumps(nb))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval-lax",
            "--nbval-current-env",
            "-p",
            "no:cacheprovider",
            "-q",
            "-x",
            str(broken),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert out.returncode == 1, out.stdout[-2000:]
    assert "finish_reason=max_steps" in out.stdout and "finish_reason=stop" in out.stdout
