"""A simulated user for multi-turn cases, as in the τ-bench protocol (R-P4).

The user is a model given the case's user instruction (`setup.user_instructions`, else its
description). It sees the conversation from its side (the agent's answers as the other
party's turns) and writes the next customer message, until it writes the stop token.

```python
user = hk.analysis.evals.UserSimulator("ollama:qwen2.5")            # a real model
user = hk.analysis.evals.UserSimulator(lambda trial: hk.ScriptedModel(["Yes.", "###STOP###"]))
exp = hk.Experiment(hk.load_cases("datasets/cases/airline_tau2.jsonl"), models=[...], user=user)
```

Each simulated turn is a `user.message` event with `simulated: true` and `simulator: <model
name>` in its payload (source `user`), so context policies and audits treat it as a user turn
and can still tell it from a scripted one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any, cast

from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import UsageError
from harnesskit.log.events import EventLog
from harnesskit.log.trajectory import visible_events
from harnesskit.messages import Message, ModelRequest
from harnesskit.models.base import Model, get_model
from harnesskit.run._classes import approved_class

__all__ = ["STOP_TOKEN", "UserSimulator", "user_instruction"]

#: What the simulated user writes when the conversation is over (τ-bench's marker).
STOP_TOKEN = "###STOP###"

_PROMPT = """You are a customer talking to a customer-service agent. Play the customer described
by the instruction below; never act as the agent.

Instruction:
{instruction}

Rules:
- Write one short message at a time, as the customer would type it.
- Give only the information the instruction holds, and only when it is needed or asked for;
  never invent details it does not give.
- Do not repeat the instruction word for word.
- When the task is done, or the agent cannot help any further, reply with {stop} alone."""


def user_instruction(case: Any) -> str:
    """The instruction a simulated user plays: `setup.user_instructions`, else the description.

    Args:
        case: a `Case`.

    Returns:
        The instruction text (may be empty).
    """
    setup = getattr(case, "setup", {}) or {}
    text = setup.get("user_instructions") or setup.get("instruction")
    return str(text or getattr(case, "description", "") or "")


@frozen_dataclass(kw_only=True)
class UserSimulator:
    """A model playing the case's user; `Experiment(..., user=UserSimulator(...))`.

    The case's first `input` turn opens the conversation; after each agent answer (a run that
    finished with `stop`) the simulator writes the next user turn, until its reply holds
    `stop_token` or `max_turns` simulated turns were sent.
    """

    model: str | Model | Callable[[Any], Model] = "scripted"
    """A `get_model` spec (`"ollama:qwen2.5"`, `"openai-compat:NAME"` with `base_url` in
    `model_options`), a `Model` without state between requests, or a factory `fn(trial)`
    building one per trial (scripted users in tests)."""
    model_options: Mapping[str, Any] = field(default_factory=dict)
    """Keyword arguments for `get_model` (`base_url`, `api_key_env`, ...)."""
    stop_token: str = STOP_TOKEN
    """The marker that ends the conversation."""
    max_turns: int = 10
    """Simulated user turns per trial, at most."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Sampling settings for the user's requests (the trial seed is added as `seed`)."""
    prompt: str = _PROMPT
    """The system prompt; `{instruction}` and `{stop}` are filled in."""

    def __post_init__(self) -> None:
        if self.max_turns < 0:
            raise UsageError(f"max_turns must be >= 0, got {self.max_turns}")
        if not self.stop_token:
            raise UsageError("stop_token must not be empty")
        if isinstance(self.model, str) and self.model not in ("scripted", "function"):
            get_model(self.model, **dict(self.model_options))  # an unknown provider fails here

    @property
    def label(self) -> str:
        """The simulator's name in manifests and events."""
        if isinstance(self.model, str):
            return self.model
        return str(getattr(self.model, "name", getattr(self.model, "__name__", "user")))

    def build(self, trial: Any) -> Model:
        """The user model for one trial.

        Args:
            trial: the `Trial`.

        Returns:
            A `Model`.

        Raises:
            UsageError: a string spec names an unknown provider.
        """
        spec = self.model
        if not isinstance(spec, str) and not hasattr(spec, "request") and callable(spec):
            spec = spec(trial)
        if isinstance(spec, str):
            return get_model(spec, **dict(self.model_options))
        return cast(Model, spec)

    def messages(self, case: Any, log: EventLog, branch: str = "main") -> list[Message]:
        """What the user model is sent: its instructions, then the conversation from its side.

        Args:
            case: the `Case` (for its instruction).
            log: the run's log.
            branch: the branch whose conversation is shown.

        Returns:
            Messages: one system message, then the user's own turns as `assistant` and the
            agent's answers (texts without tool calls) as `user`.
        """
        return self._conversation(case, log, branch)[0]

    def _conversation(
        self, case: Any, log: EventLog, branch: str
    ) -> tuple[list[Message], tuple[int, ...]]:
        """`messages(...)` and the ids of the events whose content they carry (for R-S2)."""
        system = self.prompt.format(instruction=user_instruction(case), stop=self.stop_token)
        out = [Message(role="system", content=system)]
        ids: list[int] = []
        for e in visible_events(log, branch):
            if e.type == "user.message":
                out.append(Message(role="assistant", content=e.payload.get("content") or ""))
                ids.append(e.event_id)
            elif e.type == "model.response":
                msg = e.payload.get("message") or {}
                if msg.get("content") and not msg.get("tool_calls"):
                    out.append(Message(role="user", content=str(msg["content"])))
                    ids.append(e.event_id)
        return out, tuple(ids)

    def reply(
        self,
        model: Model,
        case: Any,
        log: EventLog,
        *,
        seed: int,
        run_id: str,
        data_class: str | None = None,
    ) -> str:
        """The user's next turn (may hold the stop token).

        The request is classed as the agent's own are (R-S2): the highest class among the
        events it carries (the user's turns, the agent's answers) and the run's `data_class`
        setting; a user model whose `max_data_class` is below that is not sent it.

        Args:
            model: the trial's user model (`build`).
            case: the `Case`.
            log: the run's log so far.
            seed: the trial seed (sent as the `seed` setting).
            run_id: the run's id (sent with the request).
            data_class: the run's least class (`Harness(settings={"data_class": ...})`), or
                `None`.

        Returns:
            The text; empty when the model answered with no text.

        Raises:
            ModelError: the user model failed (an infrastructure error of the trial), or it is
                not approved for the request's data class (then nothing was sent).
            UsageError: the user model's `max_data_class` is not one of the four classes.
        """
        messages, ids = self._conversation(case, log, "main")
        cls = approved_class(model, log, (ids,), data_class)
        request = ModelRequest(
            messages=tuple(messages),
            settings={**self.settings, "seed": seed},
            run_id=f"{run_id}-user",
            data_class=cls,
        )
        response = model.request(request)
        return (response.message.content or "").strip()

    def done(self, text: str) -> bool:
        """True when `text` ends the conversation (it holds the stop token, or is empty)."""
        return not text or self.stop_token in text
