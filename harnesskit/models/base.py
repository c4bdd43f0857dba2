"""The model protocol and the provider registry (R-M1).

A model turns a `ModelRequest` (messages, tool specs, settings) into a `ModelResponse`
(assistant message, usage, finish_reason, raw). Providers are looked up by a
`"provider:name"` string through `get_model`; new providers register with `register_provider`.
Models know only the value types in `harnesskit.messages`: nothing of runs or logs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from harnesskit.errors import UsageError
from harnesskit.messages import ModelRequest, ModelResponse

__all__ = [
    "SECRETS_METHOD",
    "Model",
    "block_real_models",
    "get_model",
    "model_secrets",
    "register_provider",
]


@runtime_checkable
class Model(Protocol):
    """A chat model: one request in, one response out.

    Implementations raise `ModelError` when the provider fails after its retries and
    `ModelOutputError` when the output cannot be used; they never return partial garbage.
    """

    name: str
    """Identifies the model in events, e.g. `"scripted"` or `"openai-compat:gpt-4o"`."""

    def request(self, request: ModelRequest) -> ModelResponse:
        """Answer one request."""
        ...


#: The optional method a model with credentials has (not part of `Model`, so every callable
#: with `name` and `request` stays a model): `secrets() -> tuple[str, ...]`, the exact texts
#: (its API key, its URL's password, and their encoded forms) that no event may show. A run
#: adds them to its log redactor's literals (`Harness.run_redactor`); models know nothing of
#: logs, the run floor asks.
SECRETS_METHOD = "secrets"


def model_secrets(model: object) -> tuple[str, ...]:
    """The texts `model` says no log may show: its `secrets()`, or `()` without that method.

    Args:
        model: any model.

    Returns:
        The strings of at least 4 characters `model.secrets()` returned, in its order.

    Raises:
        UsageError: `secrets()` returned something that is not a collection of strings.
    """
    own = getattr(model, SECRETS_METHOD, None)
    if not callable(own):
        return ()
    found = own()
    if isinstance(found, str) or not all(isinstance(x, str) for x in found):
        raise UsageError(
            f"{type(model).__name__}.secrets() must return a tuple of strings, got "
            f"{type(found).__name__}"
        )
    return tuple(x for x in found if len(x) >= 4)


#: Set to False by `block_real_models()`; network providers check it.
ALLOW_MODEL_REQUESTS = True


def block_real_models() -> None:
    """Make every network model provider fail fast (for test suites: call in conftest.py).

    Sets `harnesskit.models.base.ALLOW_MODEL_REQUESTS` to False; the HTTP client checks it
    before sending and raises `UsageError`.
    """
    global ALLOW_MODEL_REQUESTS
    ALLOW_MODEL_REQUESTS = False


_PROVIDERS: dict[str, Callable[..., Model]] = {}


def register_provider(prefix: str, factory: Callable[..., Model]) -> None:
    """Make `get_model(f"{prefix}:NAME", **kwargs)` call `factory(NAME, **kwargs)`.

    Raises:
        UsageError: `prefix` is empty or contains a colon.
    """
    if not prefix or ":" in prefix:
        raise UsageError(f"provider prefix must be a non-empty word without ':', got {prefix!r}")
    _PROVIDERS[prefix] = factory


def get_model(spec: str | Model, **kwargs: Any) -> Model:
    """Return a model for `spec`.

    Args:
        spec: `"scripted"`, `"function"`, `"replay"`, or `"provider:model-name"` such as
            `"openai-compat:gpt-4o"`, `"ollama:qwen2.5"`, `"local:qwen2.5-coder-1.5b"`; a `Model`
            instance is returned as is.
        **kwargs: passed to the provider's factory (e.g. `turns=[...]` for `"scripted"`).

    Raises:
        UsageError: the provider is unknown (the message lists the known ones).
    """
    if not isinstance(spec, str):
        if spec is None or not callable(getattr(spec, "request", None)):
            raise UsageError(
                f"get_model takes a 'provider:name' string or a Model, got {spec!r:.60}; "
                "e.g. get_model('scripted', turns=[...]) or get_model('ollama:qwen2.5')"
            )
        return spec
    _load_builtin_providers()
    prefix, _, name = spec.partition(":")
    factory = _PROVIDERS.get(prefix)
    if factory is None:
        known = ", ".join(sorted(_PROVIDERS))
        raise UsageError(f"unknown model provider {prefix!r} in {spec!r}; known providers: {known}")
    return factory(name, **kwargs)


def _load_builtin_providers() -> None:
    # Imported lazily so that `import harnesskit` stays cheap and httpx is loaded only when used.
    from harnesskit.models import offline  # noqa: F401

    with contextlib.suppress(ImportError):  # the HTTP client is optional at this floor
        from harnesskit.models import openai_compat  # noqa: F401
    from harnesskit.models import local  # noqa: F401  (`local:`: a llama-server it starts)
