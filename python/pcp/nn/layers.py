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
    """An affine map, y = x @ weight.T + bias, with PyTorch's layout and initialisation: weight
    (out_features, in_features) and bias (out_features,) drawn uniformly from
    [-1/sqrt(in_features), 1/sqrt(in_features)].

    Args:
        in_features: the width of the input's last axis.
        out_features: the width of the output's last axis.
        bias: whether to add a bias (default True).
        dtype: the parameters' floating dtype (default float32).

    Raises:
        TypeError: a size that is not an int.
        ValueError: a negative size.
        MemoryError: parameters too large for memory.

    Example:
        >>> from pcp import nn
        >>> layer = nn.Linear(4, 2)
        >>> layer.weight.shape, layer(pcp.ones((8, 4))).shape
        ((2, 4), (8, 2))
    """

    def __init__(self, in_features, out_features, bias=True, dtype=pcp.float32):
        super().__init__()
        self.in_features = _size("Linear", "in_features", in_features)
        self.out_features = _size("Linear", "out_features", out_features)
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        self.weight = (_make("Linear", pcp.rand, (out_features, in_features), dtype) * 2 - 1) * bound
        self.bias = (_make("Linear", pcp.rand, (out_features,), dtype) * 2 - 1) * bound if bias else None

    def forward(self, x):
        """Applies the layer; under autocast the product (and the bias added to it) is in the
        autocast dtype.

        Args:
            x: (..., in_features), a floating tensor.

        Returns:
            (..., out_features).

        Raises:
            ValueError: x's last axis is not in_features wide.

        Example:
            >>> from pcp import nn
            >>> nn.Linear(3, 5)(pcp.ones((2, 7, 3))).shape
            (2, 7, 5)
        """
        y = x @ self.weight.T
        # The bias joins in the product's type (bfloat16 under autocast), as PyTorch's linear.
        return y + self.bias.astype(y.dtype) if self.bias is not None else y

    def extra_repr(self):
        return f"{self.in_features}, {self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A lookup table: row i of weight (num_embeddings, embedding_dim) for index i, initialised
    N(0, 1) as in PyTorch (pcp.embedding).

    Args:
        num_embeddings: the number of rows (the vocabulary's size).
        embedding_dim: the width of a row.
        dtype: the table's floating dtype (default float32).

    Raises:
        TypeError: a size that is not an int.
        ValueError: a negative size.
        MemoryError: a table too large for memory.

    Example:
        >>> from pcp import nn
        >>> nn.Embedding(10, 4)(pcp.tensor([[1, 2, 3]])).shape
        (1, 3, 4)
    """

    def __init__(self, num_embeddings, embedding_dim, dtype=pcp.float32):
        super().__init__()
        self.num_embeddings = _size("Embedding", "num_embeddings", num_embeddings)
        self.embedding_dim = _size("Embedding", "embedding_dim", embedding_dim)
        self.weight = _make("Embedding", pcp.randn, (num_embeddings, embedding_dim), dtype)

    def forward(self, indices):
        """The rows of the table at the indices.

        Args:
            indices: an integer tensor of any shape, values in [0, num_embeddings).

        Returns:
            indices.shape + (embedding_dim,), in the table's dtype and on its device.

        Raises:
            IndexError: an index out of range.
            TypeError: indices that are not integers.

        Example:
            >>> from pcp import nn
            >>> nn.Embedding(5, 2)(pcp.tensor([0, 4])).shape
            (2, 2)
        """
        return pcp.embedding(self.weight, indices)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"


class LayerNorm(Module):
    """Layer normalisation over the last axis (one fused kernel, pcp.layer_norm), then a learned
    gain (weight, initialised to 1) and shift (bias, initialised to 0).

    Args:
        normalized_shape: the width of the last axis (an int, or PyTorch's one-element tuple).
        eps: added to the variance (default 1e-5).
        bias: whether to learn a shift (default True).
        dtype: the parameters' floating dtype (default float32).

    Raises:
        TypeError: normalized_shape is not an int.
        ValueError: a negative width or eps.

    Example:
        >>> from pcp import nn
        >>> y = nn.LayerNorm(4)(pcp.arange(8.0).reshape(2, 4))
        >>> [round(v, 3) for v in y.mean(axis=-1).tolist()]
        [0.0, 0.0]
    """

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
        """Normalises x over its last axis, then scales and shifts.

        Args:
            x: (..., normalized_shape), a floating tensor.

        Returns:
            A tensor of x's shape.

        Raises:
            ValueError: x's last axis is not normalized_shape wide.

        Example:
            >>> from pcp import nn
            >>> nn.LayerNorm(3)(pcp.ones((2, 3))).shape
            (2, 3)
        """
        return pcp.layer_norm(x, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}"


class Dropout(Module):
    """Inverted dropout (pcp.dropout): in training mode each element is zeroed with probability
    p and the rest scaled by 1 / (1 - p); in evaluation mode (module.eval()) it passes x through.

    Args:
        p: the probability of zeroing an element (default 0.5).

    Raises:
        TypeError: p is not a number.
        ValueError: p outside [0, 1].

    Example:
        >>> from pcp import nn
        >>> nn.Dropout(0.5).eval()(pcp.ones(3)).tolist()
        [1.0, 1.0, 1.0]
    """

    def __init__(self, p=0.5):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)):
            raise TypeError(f"Dropout: p must be a number, got {type(p).__name__}")
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x):
        """Drops elements of x (training mode), or returns x (evaluation mode).

        Args:
            x: a floating tensor of any shape.

        Returns:
            A tensor of x's shape.

        Raises:
            TypeError: x is not floating.

        Example:
            >>> from pcp import nn
            >>> pcp.random.seed(0)
            >>> sorted(set(nn.Dropout(0.5)(pcp.ones(100)).tolist()))
            [0.0, 2.0]
        """
        return pcp.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class GELU(Module):
    """The Gaussian error linear unit as a module (pcp.gelu): exact by default, or the tanh
    approximation GPT-2 uses.

    Args:
        approximate: 'none' (default) or 'tanh'.

    Raises:
        ValueError: another approximate.

    Example:
        >>> from pcp import nn
        >>> [round(v, 4) for v in nn.GELU("tanh")(pcp.tensor([1.0])).tolist()]
        [0.8412]
    """

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        """GELU of x, elementwise.

        Args:
            x: a floating tensor of any shape.

        Returns:
            A tensor of x's shape.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> from pcp import nn
            >>> nn.GELU()(pcp.zeros(2)).tolist()
            [0.0, 0.0]
        """
        return pcp.gelu(x, self.approximate)

    def extra_repr(self):
        return f"approximate='{self.approximate}'"
