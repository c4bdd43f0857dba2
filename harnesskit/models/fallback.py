"""A model fallback chain (R-M5): when one node stays unavailable, the next one answers.

```python
model = FallbackModel(
    [hk.get_model("vllm:qwen2.5-32b"), hk.get_model("ollama:qwen2.5", max_data_class="secret")],
    on_switch=lambda s: print(s.reason, s.old, "->", s.new),
)
```

A node is skipped for a request whose `data_class` is above the node's
`max_data_class` (an attribute of the model, or given with `FallbackNode`), so nothing is ever
sent to a node not approved for it (R-S2). A node that raises `ModelError` after its own retries
hands over to the next approved node; `ModelOutputError` (the model answered, badly) is not a
reason to switch and is raised as is. After a switch the chain stays on the new node (`sticky`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import ModelError, ModelOutputError, RateLimitError, UsageError
from harnesskit.messages import DATA_CLASSES, ModelRequest, ModelResponse, check_data_class
from harnesskit.models.base import Model, model_secrets

__all__ = ["DATA_CLASSES", "FallbackModel", "FallbackNode", "Switch"]


@frozen_dataclass(kw_only=True)
class FallbackNode:
    """A model in a fallback chain, with the data class it is approved for."""

    model: Model
    """The model to ask."""
    max_data_class: str | None = None
    """Most sensitive data class it may receive; `None` takes the model's own attribute, or all."""

    def __post_init__(self) -> None:
        check_data_class(self.max_data_class, "FallbackNode(max_data_class=...)")
        if self.max_data_class is None:
            _ = self.limit  # the model's own attribute: a misspelt one is refused here

    @property
    def limit(self) -> str | None:
        """The effective approval: this node's, else the model's `max_data_class`, else None.

        Raises:
            UsageError: the model's `max_data_class` is not one of the four classes (a typo
                such as `"Public"` is refused, never read as "no limit").
        """
        if self.max_data_class is not None:
            return self.max_data_class
        name = getattr(self.model, "name", type(self.model).__name__)
        return check_data_class(
            getattr(self.model, "max_data_class", None), f"the max_data_class of model {name!r}"
        )

    def approves(self, data_class: str | None) -> bool:
        """True when a request of `data_class` may be sent to this node.

        Raises:
            UsageError: the model's `max_data_class` is not one of the four classes.
        """
        limit = self.limit
        if data_class is None or limit is None:
            return True
        return DATA_CLASSES.index(data_class) <= DATA_CLASSES.index(limit)


@frozen_dataclass(kw_only=True)
class Switch:
    """One hand-over between nodes of a chain (the loop logs it as `model.switch`)."""

    reason: str
    """Why: the failed node's error, or `data_class ...` when the node was not approved."""
    old: str
    """Name of the node that did not answer."""
    new: str
    """Name of the node asked next."""
    skipped: tuple[str, ...] = ()
    """Nodes passed over on the way because they were not approved for the data class."""

    def to_dict(self) -> dict[str, Any]:
        """Return the switch as a JSON-ready dict (the payload of a `model.switch` event)."""
        return {
            "reason": self.reason,
            "old": self.old,
            "new": self.new,
            "skipped": list(self.skipped),
        }


class FallbackModel:
    """Asks an ordered chain of models, moving on when one stays unavailable."""

    def __init__(
        self,
        models: Sequence[Model | FallbackNode],
        *,
        on_switch: Callable[[Switch], None] | None = None,
        sticky: bool = True,
        name: str | None = None,
    ) -> None:
        """Create the chain.

        Args:
            models: the nodes in order of preference: models, or `FallbackNode`s to attach a
                data-class approval.
            on_switch: called with a `Switch` each time a request moves to another node (and
                then the request's own `on_switch`, which the loop uses for events).
            sticky: after a node failed, later requests start at the node that answered.
            name: the chain's name in events; defaults to `fallback[a,b,...]`.

        Raises:
            UsageError: the chain is empty, or a node's model has a `max_data_class` that is
                not one of the four classes.
        """
        if not models:
            raise UsageError("FallbackModel needs at least one model")
        self.nodes = tuple(
            m if isinstance(m, FallbackNode) else FallbackNode(model=m) for m in models
        )
        self.on_switch = on_switch
        self.sticky = sticky
        self.name = name or "fallback[" + ",".join(n.model.name for n in self.nodes) + "]"
        self._start = 0

    @property
    def current(self) -> Model:
        """The node the next request starts at."""
        return self.nodes[self._start].model

    def request(self, request: ModelRequest) -> ModelResponse:
        """Ask the current node; on `ModelError` switch to the next approved one.

        Returns:
            The first answer any approved node gives.

        Raises:
            ModelError: every approved node failed, or no node is approved for the request's
                `data_class` (the loop then pauses).
            ModelOutputError: a node answered with output that could not be used.
            UsageError: the data class is unknown.
        """
        data_class = request.data_class
        if data_class is not None and data_class not in DATA_CLASSES:
            raise UsageError(f"data_class must be one of {DATA_CLASSES}, got {data_class!r}")
        hooks = [h for h in (self.on_switch, request.on_switch) if h is not None]
        previous: str | None = None
        reason = ""
        skipped: list[str] = []
        errors: list[str] = []
        last: ModelError | None = None
        failures: list[ModelError] = []
        for index in range(self._start, len(self.nodes)):
            node = self.nodes[index]
            if not node.approves(data_class):
                skipped.append(node.model.name)
                if previous is None:
                    previous, reason = (
                        node.model.name,
                        f"data_class {data_class!r} above {node.limit!r}",
                    )
                continue
            if previous is not None:
                switch = Switch(
                    reason=reason, old=previous, new=node.model.name, skipped=tuple(skipped)
                )
                for hook in hooks:
                    hook(switch)
            try:
                response = node.model.request(request)
            except ModelOutputError:
                raise
            except ModelError as exc:
                last = exc
                failures.append(exc)
                errors.append(f"{node.model.name}: {exc}")
                previous, reason, skipped = node.model.name, f"unavailable: {exc}", []
                continue
            if self.sticky and errors:
                self._start = index
            return response
        self._start = 0  # after a pause, try the whole chain again
        detail = "; ".join(errors) if errors else "no node is approved for it"
        limited = bool(errors) and all(isinstance(e, RateLimitError) for e in failures)
        raise (RateLimitError if limited else ModelError)(
            f"{self.name}: no model left to answer (data_class={data_class!r}): {detail}",
            model=self.name,
            status_code=last.status_code if last else None,
            body=last.body if last else None,
        )

    def secrets(self) -> tuple[str, ...]:
        """Every node's own secrets (see `Model.secrets`), for the run's log redactor.

        Returns:
            The distinct texts of the nodes whose model has a `secrets()` method.
        """
        return tuple(dict.fromkeys(s for node in self.nodes for s in model_secrets(node.model)))

    def __repr__(self) -> str:
        return f"FallbackModel({[n.model.name for n in self.nodes]!r})"
