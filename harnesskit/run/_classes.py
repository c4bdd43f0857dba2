"""Private: the data class of each model request (R-S2), and its check against the model.

A request carries the content of the events its prompt was built from (`Prompt.selected`, plus
the events its summary names, `Prompt.summarized`), so its class is the highest class among
them, and at least the run's own floor (`Harness(settings={"data_class": ...})`). Nothing is
sent to a model whose `max_data_class` is below it.

Cheap on the hot path: the log is read once, incrementally; only the few events marked other
than `internal` (the default) are remembered, so a run whose events are all `internal` costs
one look at the first selected id per request.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harnesskit.errors import ModelError, UsageError
from harnesskit.log.events import DATA_CLASSES
from harnesskit.messages import check_data_class

if TYPE_CHECKING:
    from harnesskit.log.events import EventLog

__all__ = ["RequestClasses", "approved_class", "check_approved", "model_limit", "run_data_class"]

_RANK = {name: rank for rank, name in enumerate(DATA_CLASSES)}
_PUBLIC, _INTERNAL = _RANK["public"], _RANK["internal"]


def run_data_class(value: Any) -> str | None:
    """Check the run's data class given as `Harness(settings={"data_class": ...})`.

    Args:
        value: the setting's value (`None` when not given).

    Returns:
        The class name, or `None` when not given.

    Raises:
        UsageError: the value is not one of `public`, `internal`, `restricted`, `secret`.
    """
    if value is None or (isinstance(value, str) and value in _RANK):
        return value
    raise UsageError(
        f'Harness(settings={{"data_class": ...}}) must be one of {DATA_CLASSES} '
        f"(lower case), got {value!r}"
    )


class RequestClasses:
    """The classes of one log's events that are not `internal`, read incrementally."""

    def __init__(self) -> None:
        self._read = 0  # events of the log read so far
        self._above: dict[int, int] = {}  # event id -> rank, for restricted and secret events
        self._public: set[int] = set()  # ids of public events
        self._recorded = -1  # the least class a task contract in the log records (its rank)

    def _catch_up(self, log: EventLog) -> None:
        events = log.events
        if self._read == len(events):
            return
        for e in events[self._read :]:
            rank = _RANK.get(e.data_class, _INTERNAL)
            if rank > _INTERNAL:
                self._above[e.event_id] = rank
            elif rank == _PUBLIC:
                self._public.add(e.event_id)
            if e.type == "task.contract":  # the run's least class, as it was started
                recorded = e.payload.get("data_class")
                if isinstance(recorded, str) and recorded in _RANK:
                    self._recorded = max(self._recorded, _RANK[recorded])
        self._read = len(events)

    def of(
        self, log: EventLog, groups: Sequence[Sequence[int]], floor: str | None = None
    ) -> tuple[str | None, tuple[int, ...]]:
        """The class of a request carrying the content of the events in `groups`.

        Args:
            log: the run's log (read from where the last call stopped).
            groups: sequences of ids of the events whose content the request carries (e.g.
                the prompt's selected and summarized events); not copied.
            floor: the run's least class (`Harness(settings={"data_class": ...})`), or `None`.
                The class the log's task contract records (`data_class`, written when the run
                was started with a least class) counts too: a run resumed, forked or
                simulated with a harness that has none keeps it.

        Returns:
            `(data_class, because)`: the highest class among the events and the floors
            (`None` when there are no events and no floor), and the ids of the events of that
            class when it is above them and above `internal` (for the refusal message), else
            `()`.
        """
        self._catch_up(log)
        rank = max(-1 if floor is None else _RANK[floor], self._recorded)
        because: tuple[int, ...] = ()
        above = [(r, i) for i, r in self._above.items() if r >= rank]
        if above and any(groups):
            if len(above) <= 8:  # a few: scan the id tuples (C speed), no set built
                hits = [(r, i) for r, i in above if any(i in g for g in groups)]
            else:
                chosen = frozenset().union(*groups)
                hits = [(r, i) for r, i in above if i in chosen]
            if hits:
                top = max(r for r, _ in hits)
                if top > rank:
                    rank = top
                    because = tuple(sorted(i for r, i in hits if r == top))
        if rank < _INTERNAL and any(groups):
            public = self._public
            inside = any(i not in public for ids in groups for i in ids)
            rank = max(rank, _INTERNAL if inside else _PUBLIC)
        return (None if rank < 0 else DATA_CLASSES[rank]), because


def model_limit(model: Any, what: str = "") -> str | None:
    """The `max_data_class` a model is approved for, checked (never read as "no limit").

    Harnesses check their model with it when made, so a custom model with a misspelt class
    (`"Public"`) is refused there; `check_approved` checks again before each request.

    Args:
        model: any model object (its `max_data_class` attribute is read, if any).
        what: how to name the model in the message; default its `name`.

    Returns:
        The class, or `None` when the model has no limit.

    Raises:
        UsageError: the attribute is set to something other than `None` or one of
            `public`, `internal`, `restricted`, `secret`.
    """
    name = what or str(getattr(model, "name", type(model).__name__))
    limit = getattr(model, "max_data_class", None)
    return check_data_class(limit, f"the max_data_class of model {name!r}")


def check_approved(model: Any, data_class: str | None, because: str = "") -> None:
    """Refuse to send a request of `data_class` to a model approved only for less (R-S2).

    A model without `max_data_class` (or with `None`) is not limited here; a `FallbackModel`
    checks each of its nodes itself (and skips those not approved).

    Args:
        model: the model about to be asked.
        data_class: the request's class, or `None`.
        because: what in the prompt carries that class (event labels), for the message.

    Raises:
        ModelError: the model's `max_data_class` is below `data_class`; nothing was sent.
        UsageError: the model's `max_data_class` is not one of the four classes; nothing was
            sent (an unknown limit never fails open).
    """
    limit = model_limit(model)
    if data_class is None or limit is None:
        return
    if _RANK[data_class] <= _RANK[limit]:
        return
    name = getattr(model, "name", type(model).__name__)
    raise ModelError(
        f"{name} is approved up to {limit!r} data; this request is {data_class!r}"
        f"{f' ({because})' if because else ''} and was not sent. Use a model approved for "
        f"{data_class!r} data (max_data_class), a hk.models.FallbackModel with such a node, or "
        "a context policy that leaves that data out",
        model=name,
    )


def approved_class(
    model: Any,
    log: EventLog,
    groups: Sequence[Sequence[int]],
    floor: str | None = None,
    classes: RequestClasses | None = None,
) -> str | None:
    """The class of a request carrying the events in `groups`, checked against `model` (R-S2).

    Everything that sends a log's content to a model (the run's own requests, a simulated
    user's turns) goes through here, so the class is computed and enforced one way.

    Args:
        model: the model about to be asked.
        log: the log the events are in.
        groups: sequences of ids of the events whose content the request carries.
        floor: the run's least class (`Harness(settings={"data_class": ...})`), or `None`.
        classes: the log's class index, read incrementally; `None` = a fresh one.

    Returns:
        The request's class (for `ModelRequest.data_class`), or `None` when nothing is known.

    Raises:
        ModelError: the model's `max_data_class` is below the request's class; the message
            names up to five events carrying it. Nothing was sent.
        UsageError: the model's `max_data_class` is not one of the four classes.
    """
    data_class, because = (classes or RequestClasses()).of(log, groups, floor)
    check_approved(model, data_class, ", ".join(log.events[i - 1].label for i in because[:5]))
    return data_class
