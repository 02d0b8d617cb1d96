"""Layers with PyTorch's parameter layouts and initialisations."""
import math

import pcp

from .module import Module


def _size(layer, name, value):
    """A layer's size argument: a non-negative int (TypeError / ValueError naming the layer)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{layer}: {name} must be an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{layer}: {name} must be non-negative, got {value}")
    return value


def _make(layer, fn, *args):
    """Creates a parameter; a shape too large for memory raises naming the layer."""
    try:
        return fn(*args)
    except (ValueError, MemoryError, OverflowError) as e:
        raise type(e)(f"{layer}: cannot create its parameters ({e})") from None


class Linear(Module):
    """y = x @ weight.T + bias, weight of shape (out_features, in_features) as in PyTorch."""

    def __init__(self, in_features, out_features, bias=True, dtype=pcp.float32):
        super().__init__()
        self.in_features = _size("Linear", "in_features", in_features)
        self.out_features = _size("Linear", "out_features", out_features)
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        self.weight = (_make("Linear", pcp.rand, (out_features, in_features), dtype) * 2 - 1) * bound
        self.bias = (_make("Linear", pcp.rand, (out_features,), dtype) * 2 - 1) * bound if bias else None

    def forward(self, x):
        y = x @ self.weight.T
        # The bias joins in the product's type (bfloat16 under autocast), as PyTorch's linear.
        return y + self.bias.astype(y.dtype) if self.bias is not None else y

    def extra_repr(self):
        return f"{self.in_features}, {self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """Rows of a (num_embeddings, embedding_dim) table, initialised N(0, 1) as in PyTorch."""

    def __init__(self, num_embeddings, embedding_dim, dtype=pcp.float32):
        super().__init__()
        self.num_embeddings = _size("Embedding", "num_embeddings", num_embeddings)
        self.embedding_dim = _size("Embedding", "embedding_dim", embedding_dim)
        self.weight = _make("Embedding", pcp.randn, (num_embeddings, embedding_dim), dtype)

    def forward(self, indices):
        return pcp.embedding(self.weight, indices)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"


class LayerNorm(Module):
    """Normalises over the last axis (one fused kernel), then scales and shifts."""

    def __init__(self, normalized_shape, eps=1e-5, bias=True, dtype=pcp.float32):
        super().__init__()
        if isinstance(normalized_shape, (tuple, list)) and len(normalized_shape) == 1:
            normalized_shape = normalized_shape[0]  # PyTorch's form; PCP normalises the last axis only
        self.normalized_shape = _size("LayerNorm", "normalized_shape", normalized_shape)
        if not isinstance(eps, (int, float)) or not eps >= 0:
            raise ValueError(f"LayerNorm: eps must be a non-negative number, got {eps!r}")
        self.eps = eps
        self.weight = _make("LayerNorm", pcp.ones, (normalized_shape,), dtype)
        self.bias = _make("LayerNorm", pcp.zeros, (normalized_shape,), dtype) if bias else None

    def forward(self, x):
        return pcp.layer_norm(x, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}"


class Dropout(Module):
    """Zeroes elements with probability p while training, scaling the rest by 1/(1-p)."""

    def __init__(self, p=0.5):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)):
            raise TypeError(f"Dropout: p must be a number, got {type(p).__name__}")
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x):
        return pcp.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        return pcp.gelu(x, self.approximate)

    def extra_repr(self):
        return f"approximate='{self.approximate}'"
