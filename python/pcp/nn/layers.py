"""Layers with PyTorch's parameter layouts and initialisations."""
import math

import pcp

from .module import Module


class Linear(Module):
    """y = x @ weight.T + bias, weight of shape (out_features, in_features) as in PyTorch."""

    def __init__(self, in_features, out_features, bias=True, dtype=pcp.float32):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        self.weight = (pcp.rand((out_features, in_features), dtype) * 2 - 1) * bound
        self.bias = (pcp.rand((out_features,), dtype) * 2 - 1) * bound if bias else None

    def forward(self, x):
        y = x @ self.weight.T
        return y + self.bias if self.bias is not None else y

    def extra_repr(self):
        return f"{self.in_features}, {self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """Rows of a (num_embeddings, embedding_dim) table, initialised N(0, 1) as in PyTorch."""

    def __init__(self, num_embeddings, embedding_dim, dtype=pcp.float32):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = pcp.randn((num_embeddings, embedding_dim), dtype)

    def forward(self, indices):
        return pcp.embedding(self.weight, indices)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"


class LayerNorm(Module):
    """Normalises over the last axis (one fused kernel), then scales and shifts."""

    def __init__(self, normalized_shape, eps=1e-5, bias=True, dtype=pcp.float32):
        super().__init__()
        self.normalized_shape, self.eps = normalized_shape, eps
        self.weight = pcp.ones((normalized_shape,), dtype)
        self.bias = pcp.zeros((normalized_shape,), dtype) if bias else None

    def forward(self, x):
        return pcp.layer_norm(x, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}"


class Dropout(Module):
    """Zeroes elements with probability p while training, scaling the rest by 1/(1-p)."""

    def __init__(self, p=0.5):
        super().__init__()
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
        self.approximate = approximate

    def forward(self, x):
        return pcp.gelu(x, self.approximate)

    def extra_repr(self):
        return f"approximate='{self.approximate}'"
