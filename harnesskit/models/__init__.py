"""Model providers: the `Model` protocol, `get_model`, and the embedded offline models."""

from harnesskit.models.base import Model, ModelRequest, get_model, register_provider
from harnesskit.models.offline import FunctionModel, ReplayModel, ScriptedModel

__all__ = [
    "FunctionModel",
    "Model",
    "ModelRequest",
    "ReplayModel",
    "ScriptedModel",
    "get_model",
    "register_provider",
]
