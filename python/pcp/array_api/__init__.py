"""The Python Array API standard (2024.12) on PCP tensors: ``x.__array_namespace__()`` is this
module, so code written once for NumPy, CuPy, PyTorch and JAX through the standard (SciPy's and
scikit-learn's array API support among it) runs on PCP tensors, on the CPU and on GPUs.

It is a namespace of its own, beside PCP's API, because the standard's names and signatures
differ from PCP's NumPy- and PyTorch-shaped ones (``concat`` and ``concatenate``, ``permute_dims``
and ``permute``, positional-only arguments, ``correction`` for ``ddof``); keeping them apart
leaves both clean.

Example:
    >>> import pcp
    >>> x = pcp.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> xp = x.__array_namespace__()
    >>> xp.__name__, xp.matrix_transpose(x).tolist(), xp.isdtype(x.dtype, "real floating")
    ('pcp.array_api', [[1.0, 3.0], [2.0, 4.0]], True)
"""
import math

import pcp

from .dtypes import (__array_namespace_info__, bfloat16, bool, can_cast, finfo, float16, float32, float64, iinfo,
                     int32, int64, isdtype, result_type)
from .functions import *  # noqa: F401,F403 (the standard's functions)
from .functions import __all__ as _functions
from . import linalg  # noqa: E402 (the linalg extension)

__array_api_version__ = "2024.12"
e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None

__all__ = ["__array_api_version__", "__array_namespace_info__", "bool", "int32", "int64", "float16", "bfloat16",
           "float32", "float64", "can_cast", "finfo", "iinfo", "isdtype", "result_type", "e", "pi", "inf", "nan",
           "newaxis", "linalg"] + _functions
