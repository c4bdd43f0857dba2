"""Parquet for frames (R-O5): typed columns, and a dataset of many runs (extra `[parquet]`).

`hk.frame(...)` returns frames whose columns all have a type Parquet can hold: nested values
(an event's `payload`, a finding's list of ids) are JSON text, optional integers are `Int64`,
optional flags `boolean`, text `string`. So `hk.frame(run).to_parquet(path)` works for every
frame kind, and `pandas.read_parquet(path)` gives the same frame back.

`export_parquet(logs, folder)` writes the events and budget tables of many runs to one folder
(`events.parquet`, `budget.parquet`, a `run_id` column first); `read_parquet(folder)` reads them
back. pandas and pyarrow are imported inside the functions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harnesskit.errors import UsageError, checked_path
from harnesskit.log.events import EventLog

__all__ = ["PARQUET_TABLES", "export_parquet", "read_parquet", "typed_frame"]

#: The tables `export_parquet` writes, one `<name>.parquet` file each.
PARQUET_TABLES = ("events", "budget")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, pd.NA (raises on NA: treated as missing below)
    except (TypeError, ValueError):
        return True


def _column(values: list[Any]) -> tuple[list[Any], str]:
    """The values of an object column made typed, and the pandas dtype to give them."""
    present = [v for v in values if not _missing(v)]
    kinds = {type(v) for v in present}
    if not present:  # no value at all: a text column of nulls, not an untyped one
        return [None] * len(values), "string"
    if kinds <= {bool}:
        return [None if _missing(v) else v for v in values], "boolean"
    if kinds <= {int}:
        return [None if _missing(v) else v for v in values], "Int64"
    if kinds <= {int, float} and all(math.isfinite(v) for v in present):
        return [None if _missing(v) else float(v) for v in values], "Float64"
    if kinds <= {str}:
        return [None if _missing(v) else v for v in values], "string"
    # nested values (dicts, lists) and mixed columns: one JSON text per value
    return [None if _missing(v) else _json(v) for v in values], "string"


def typed_frame(df: Any) -> Any:
    """`df` with every object column given a Parquet-ready type (a new frame; `df` is kept).

    Args:
        df: a `pandas.DataFrame`.

    Returns:
        A `pandas.DataFrame` with the same columns, index and `attrs`: object columns of
        booleans become `boolean`, of integers `Int64`, of numbers `Float64`, of text (or of
        missing values only) `string`; columns holding dicts, lists or mixed values become
        `string` columns of JSON text (one JSON document per cell; missing stays missing).
    """
    import pandas as pd

    out = df.copy()
    for name in df.columns:
        if df[name].dtype != object:
            continue
        values, dtype = _column(df[name].tolist())
        out[name] = pd.array(values, dtype=dtype)
    out.attrs = json.loads(_json(dict(df.attrs)))  # JSON-safe, so Parquet metadata can hold it
    return out


def _logs(logs: Any) -> list[tuple[str, EventLog]]:
    if isinstance(logs, EventLog) or isinstance(getattr(logs, "log", None), EventLog):
        logs = [logs]
    items = logs.items() if isinstance(logs, Mapping) else ((None, x) for x in logs)
    out: list[tuple[str, EventLog]] = []
    for label, item in items:
        log = item if isinstance(item, EventLog) else getattr(item, "log", None)
        if not isinstance(log, EventLog):
            raise UsageError(
                f"export_parquet takes runs or event logs (or {{run_id: run}}), got "
                f"{type(item).__name__}"
            )
        first = log.last("task.contract")
        run_id = label or log.run_id or (first.payload.get("run_id") if first else None)
        out.append((str(run_id or f"run-{len(out) + 1}"), log))
    if len({r for r, _ in out}) != len(out):
        raise UsageError("export_parquet: two runs share a run id; pass {label: run} instead")
    return out


def export_parquet(logs: Any, path: str | Path) -> dict[str, Path]:
    """Write the events and budget tables of many runs to Parquet files in one folder.

    Args:
        logs: a `Run` or `EventLog`, an iterable of them, or `{run_id: run}`; runs are named
            by their run id unless a mapping names them.
        path: the folder to write (created if missing; existing table files are replaced).

    Returns:
        `{table: file}` for each of `PARQUET_TABLES`: `events.parquet` (one row per event of
        every run: `run_id`, then the columns of `hk.frame(run)`) and `budget.parquet` (one
        row per model request of each run's main branch: `run_id`, then `BUDGET_COLUMNS`).

    Raises:
        UsageError: pyarrow is not installed, `path` is not a usable folder path (a NUL
            byte, a name too long, a file: `errors.checked_path`) or cannot be created, an
            item is not a run or log, or two runs share a run id.
    """
    try:
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise UsageError("Parquet export needs pyarrow: pip install 'harnesskit[parquet]'") from exc
    import pandas as pd

    from harnesskit.notebook.frames import frame

    folder = checked_path(
        path, "export_parquet(logs, path)", kind="folder", fix="pass a writable folder path"
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"export_parquet(logs, path): cannot create the folder {folder} "
            f"({exc.strerror or exc}); pass a writable folder path"
        ) from None
    tables: dict[str, list[Any]] = {name: [] for name in PARQUET_TABLES}
    for run_id, log in _logs(logs):
        for name in PARQUET_TABLES:
            df = frame(log, kind=name)
            df.insert(0, "run_id", pd.array([run_id] * len(df), dtype="string"))
            tables[name].append(df)
    written = {}
    for name, parts in tables.items():
        merged = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        merged = typed_frame(merged)
        merged.attrs = {}  # per-run attrs (limits) do not describe a table of many runs
        target = folder / f"{name}.parquet"
        merged.to_parquet(target, index=False)
        written[name] = target
    return written


def read_parquet(path: str | Path, table: str = "events") -> Any:
    """Read back one table written by `export_parquet` (or any frame's `to_parquet` file).

    Args:
        path: the folder `export_parquet` wrote, or a `.parquet` file.
        table: which of `PARQUET_TABLES` to read from a folder.

    Returns:
        A `pandas.DataFrame`, equal (values and dtypes) to the frame that was written.

    Raises:
        UsageError: `path` is not a usable path (a NUL byte, a name too long:
            `errors.checked_path`), `table` is unknown, or the file does not exist.
    """
    import pandas as pd

    target = checked_path(
        path, "read_parquet(path)", fix="pass the folder export_parquet wrote, or a .parquet file"
    )
    if target.is_dir():
        if table not in PARQUET_TABLES:
            raise UsageError(f"unknown table {table!r}; expected one of {list(PARQUET_TABLES)}")
        target = target / f"{table}.parquet"
    if not target.is_file():
        raise UsageError(f"no Parquet file at {target}")
    return pd.read_parquet(target)
