"""Build a notebook from a list of cells (markdown strings / code strings) and execute it.

Usage (from a script): build("notebooks/01_quickstart.ipynb", cells) — code cells start with
"# code" is not needed: pass ("md", text) or ("code", text) tuples.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbconvert.preprocessors import ExecutePreprocessor


def build(path: str, cells: list[tuple[str, str]], *, parameters: str | None = None) -> None:
    """Write the notebook at `path` with `cells`, executed in place (outputs stored)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    for kind, text in cells:
        if kind == "md":
            nb.cells.append(nbformat.v4.new_markdown_cell(text))
        else:
            cell = nbformat.v4.new_code_cell(text)
            if kind == "parameters":
                cell.metadata["tags"] = ["parameters"]
            nb.cells.append(cell)
    out = Path(path)
    ExecutePreprocessor(timeout=600, kernel_name="python3").preprocess(
        nb, {"metadata": {"path": str(out.parent.resolve())}}
    )
    out.write_text(nbformat.writes(nb))
    print(f"wrote {out}", file=sys.stderr)
