"""The column index behind `Trajectory.search` (R-V8): numpy columns, extended as a log grows.

Private: the public entry point is `Trajectory.search`. numpy and pandas are imported only when
a search runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from harnesskit.log._codec import message_of
from harnesskit.log.events import Event


def _as_list(values: str | Iterable[str]) -> list[str]:
    return [values] if isinstance(values, str) else list(values)


class SearchIndex:
    """Columns for fast filtering, extended as the log grows (rebuilt after a tombstone).

    The text column is built on the first text search: the summary plus the payload's `repr`
    (values as Python writes them; about twice as fast as JSON), lower-cased.
    """

    _COLUMNS = (
        "ids", "parents", "branches", "types", "sources", "created", "steps", "summaries", "kinds",
    )  # fmt: skip

    def __init__(self, tombstones: int, *, kind_of: Callable[[Event], str]) -> None:
        self.tombstones = tombstones
        self.kind_of = kind_of
        self.rows: list[tuple[Any, ...]] = []
        self.texts: list[str] | None = None
        self._arrays: dict[str, Any] = {}
        self._arrays_size = -1

    @property
    def size(self) -> int:
        """How many events are indexed."""
        return len(self.rows)

    def extend(self, events: list[Event], *, with_text: bool) -> None:
        """Index the events past the ones already indexed (`with_text`: their text too)."""
        new = events[len(self.rows) :]
        kind_of = self.kind_of
        self.rows.extend(
            (
                e.event_id, e.parent_id, e.branch_id, e.type, e.source, e.created_at,
                e.step, e.summary,
                kind_of(e),
            )
            for e in new
        )  # fmt: skip
        if with_text and self.texts is None:
            new = events
            self.texts = []
        if self.texts is not None:
            self.texts.extend(_text(e, events).lower() for e in new)

    def query(
        self,
        statuses: list[str],
        *,
        text: str | None,
        filters: dict[str, str | Iterable[str] | None],
        status: str | Iterable[str] | None,
        since: str | None,
        until: str | None,
    ) -> Any:
        """The matching rows as a DataFrame (see `Trajectory.search`); times are ISO strings."""
        import numpy as np
        import pandas as pd

        n = len(self.rows)
        mask = np.ones(n, dtype=bool)
        for column, values in filters.items():
            if values is not None:
                mask &= np.isin(getattr(self, column), _as_list(values))
        folded = np.array(statuses[:n], dtype=object)
        if status is not None:
            mask &= np.isin(folded, _as_list(status))
        if since is not None:
            mask &= self.created >= since
        if until is not None:
            mask &= self.created < until
        if text is not None:
            needle = text.lower()
            texts: list[str] = self.texts or []
            candidates = np.flatnonzero(mask)
            hits = np.array([needle in texts[i] for i in candidates], dtype=bool)
            mask[:] = False
            mask[candidates[hits]] = True
        sel = np.flatnonzero(mask)
        return pd.DataFrame(
            {
                "event_id": self.ids[sel],
                "parent_id": self.parents[sel],
                "branch_id": self.branches[sel],
                "type": self.types[sel],
                "source": self.sources[sel],
                "created_at": self.created[sel],
                "step": self.steps[sel],
                "status": folded[sel],
                "kind": self.kinds[sel],
                "summary": self.summaries[sel],
            }
        )

    def __getattr__(self, name: str) -> Any:
        if name not in SearchIndex._COLUMNS:
            raise AttributeError(name)
        done = max(self._arrays_size, 0)
        if done != len(self.rows):  # convert only the rows added since, then concatenate
            import numpy as np

            columns = list(zip(*self.rows[done:], strict=True))
            for col, values in zip(self._COLUMNS, columns, strict=True):
                new = np.array(values, dtype=np.int64 if col == "ids" else object)
                old = self._arrays.get(col)
                self._arrays[col] = new if old is None else np.concatenate([old, new])
            self._arrays_size = len(self.rows)
        if name not in self._arrays:  # an empty log
            import numpy as np

            return np.array([], dtype=np.int64 if name == "ids" else object)
        return self._arrays[name]


def _text(e: Event, events: list[Event]) -> str:
    """An event's searchable text: summary and payload, with a request's referenced messages."""
    text = f"{e.summary}\n{e.payload!r}"
    if e.type == "model.request":
        for m in e.payload.get("new_messages") or ():
            if isinstance(m, int) and 1 <= m <= len(events):
                text += f"\n{message_of(events[m - 1])!r}"
    return text
