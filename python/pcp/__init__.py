"""PCP: a tensor framework with automatic differentiation.

The native core (``pcp._core``) holds tensors, kernels and autodiff; this package re-exports it
and adds the Python conveniences: ``tensor``, ``no_grad``, ``grad`` and ``value_and_grad``.
"""
from ._cuda_libraries import set_library_path as _set_cuda_library_path
_set_cuda_library_path()  # before the core's first GPU allocation, where it loads them
from . import _core
from ._core import (  # noqa: F401
    DType, Tensor,
    # creation
    zeros, ones, full, zeros_like, ones_like, arange, eye, rand, randn, randint, asarray, copy,
    from_numpy, from_dlpack,
    # elementwise
    neg, abs, exp, log, sqrt, rsqrt, sin, cos, tanh, sigmoid, relu, gelu, silu, square, sign, erf,
    floor, ceil, trunc, round, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, expm1, log1p, log2, log10,
    add, sub, mul, div, pow, maximum, minimum, eq, ne, lt, le, gt, ge,
    atan2, hypot, copysign, nextafter, remainder, floor_divide,
    logical_and, logical_or, logical_xor, logical_not, bitwise_and, bitwise_or, bitwise_xor, bitwise_not,
    bitwise_left_shift, bitwise_right_shift,
    where, clip, astype,
    # reductions
    sum, mean, max, min, any, all, argmax, argmin, var, logsumexp, sum_to, prod, cumsum, cumprod,
    # sorting and searching
    sort, argsort, take_along_axis, searchsorted, unique,
    # linear algebra and shapes
    matmul, reshape, flatten, transpose, permute, swapaxes, squeeze, unsqueeze, expand_dims,
    broadcast_to, contiguous, concatenate, stack, split, tril, triu,
    # indexing
    take, embedding, one_hot,
    # neural network
    softmax, log_softmax, layer_norm, cross_entropy, dropout, scaled_dot_product_attention, qkv_attention,
    # runtime
    memory_stats, reset_peak_memory_stats, clear_cache, set_num_threads, get_num_threads, cpu_features,
    is_grad_enabled, set_grad_enabled, set_float32_matmul_precision, get_float32_matmul_precision,
)
from . import random  # noqa: F401
from ._autograd import no_grad, enable_grad, grad, value_and_grad  # noqa: F401
from ._tensor import tensor, devices, device  # noqa: F401
from ._core import set_default_device, get_default_device, synchronize, to_device, gpu_info  # noqa: F401

bool_ = DType.bool
int32 = DType.int32
int64 = DType.int64
float16 = DType.float16
bfloat16 = DType.bfloat16
float32 = DType.float32
float64 = DType.float64

from . import nn, optim, amp  # noqa: E402,F401  (after the dtype names they use)
from .amp import autocast  # noqa: E402,F401
from ._compile import compile, load_plan  # noqa: E402,F401
from . import export  # noqa: E402,F401
from . import array_api  # noqa: E402,F401  (what Tensor.__array_namespace__ returns)

__version__ = "0.1.0"
