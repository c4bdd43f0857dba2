"""Model providers: the `Model` protocol, `get_model`, the offline models, fallback chains."""

from harnesskit.messages import ModelRequest
from harnesskit.models.base import Model, block_real_models, get_model, register_provider
from harnesskit.models.fallback import FallbackModel, FallbackNode
from harnesskit.models.offline import FunctionModel, ReplayModel, ScriptedModel

__all__ = [
    "FallbackModel",
    "FallbackNode",
    "FunctionModel",
    "Model",
    "ModelRequest",
    "ReplayModel",
    "ScriptedModel",
    "block_real_models",
    "get_model",
    "register_provider",
]
