"""Neural-network building blocks: Module, layers and losses."""
from .module import Module, Sequential, ModuleList  # noqa: F401
from .layers import Linear, Embedding, LayerNorm, Dropout, GELU  # noqa: F401
from .losses import cross_entropy, mse_loss  # noqa: F401
