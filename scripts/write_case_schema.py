"""Write datasets/cases/case.schema.json from `harnesskit.analysis.evals.CASE_SCHEMA`.

Run it after editing the schema.
"""

import json
import pathlib

from harnesskit.analysis.evals import CASE_SCHEMA

out = pathlib.Path(__file__).resolve().parents[1] / "datasets" / "cases" / "case.schema.json"
out.write_text(json.dumps(CASE_SCHEMA, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
print(f"wrote {out}")
