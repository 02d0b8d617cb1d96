"""Tensor construction and the Tensor methods that forward to module functions."""
import numpy as np

from . import _core
from ._core import Tensor


def tensor(data, dtype=None, requires_grad=False, device=None):
    """A new tensor copied from a Tensor, Python number, NumPy array or nested list.

    Python floats become float32 (the default float) and ints int64, as in PyTorch;
    NumPy arrays keep their dtype. `device` defaults to pcp.get_default_device().
    """
    target = _core.get_default_device() if device is None else device
    t = _core._tensor(data.detach() if isinstance(data, Tensor) else data, dtype, target)  # always new
    if requires_grad:
        t.requires_grad = True
    return t


def devices():
    """Every device this machine can run on, e.g. ['cpu', 'vulkan:0 (NVIDIA H200)']."""
    return [name if name == "cpu" else f"{name} ({desc})" for name, desc in _core.devices()]


def device(name="cpu"):
    """The canonical name of a device: 'cpu', or 'gpu' / 'gpu:N' / 'vulkan:N' / 'metal:N' for a
    GPU ('gpu' is the first); a ValueError naming what exists when there is no such device."""
    return _core.device(name)


def _shape_args(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return args


def _install_methods():
    c = _core
    methods = {
        # elementwise
        "exp": c.exp, "log": c.log, "sqrt": c.sqrt, "rsqrt": c.rsqrt, "sin": c.sin, "cos": c.cos,
        "tanh": c.tanh, "sigmoid": c.sigmoid, "relu": c.relu, "silu": c.silu, "square": c.square,
        "sign": c.sign, "abs": c.abs, "neg": c.neg, "erf": c.erf,
        "gelu": lambda self, approximate="none": c.gelu(self, approximate),
        "clip": lambda self, min=None, max=None: c.clip(self, min, max),
        "maximum": c.maximum, "minimum": c.minimum, "pow": c.pow,
        # reductions
        "sum": lambda self, axis=None, keepdims=False: c.sum(self, axis, keepdims),
        "mean": lambda self, axis=None, keepdims=False: c.mean(self, axis, keepdims),
        "max": lambda self, axis=None, keepdims=False: c.max(self, axis, keepdims),
        "min": lambda self, axis=None, keepdims=False: c.min(self, axis, keepdims),
        "var": lambda self, axis=None, ddof=0, keepdims=False: c.var(self, axis, ddof, keepdims),
        "logsumexp": lambda self, axis=None, keepdims=False: c.logsumexp(self, axis, keepdims),
        "argmax": lambda self, axis=None, keepdims=False: c.argmax(self, axis, keepdims),
        "argmin": lambda self, axis=None, keepdims=False: c.argmin(self, axis, keepdims),
        "any": lambda self, axis=None, keepdims=False: c.any(self, axis, keepdims),
        "all": lambda self, axis=None, keepdims=False: c.all(self, axis, keepdims),
        # shapes
        "reshape": lambda self, *shape: c.reshape(self, _shape_args(shape)),
        "view": lambda self, *shape: c.reshape(self, _shape_args(shape)),
        "flatten": lambda self, start_axis=0, end_axis=-1: c.flatten(self, start_axis, end_axis),
        "transpose": lambda self, *axes: c.transpose(self, _shape_args(axes) if axes else None),
        "permute": lambda self, *axes: c.permute(self, _shape_args(axes)),
        "swapaxes": c.swapaxes,
        "squeeze": lambda self, axis=None: c.squeeze(self, axis),
        "unsqueeze": c.unsqueeze,
        "broadcast_to": lambda self, *shape: c.broadcast_to(self, _shape_args(shape)),
        "expand": lambda self, *shape: c.broadcast_to(self, _shape_args(shape)),
        "split": lambda self, indices_or_sections, axis=0: c.split(self, indices_or_sections, axis),
        "tril": lambda self, k=0: c.tril(self, k),
        "triu": lambda self, k=0: c.triu(self, k),
        "take": lambda self, indices, axis=None: c.take(self, indices, axis),
        "matmul": c.matmul,
        "softmax": lambda self, axis=-1: c.softmax(self, axis),
        "log_softmax": lambda self, axis=-1: c.log_softmax(self, axis),
        "copy": c.copy,
        "clone": c.copy,
    }
    for name, fn in methods.items():
        if not isinstance(fn, type(lambda: 0)):  # native functions do not bind self
            fn = (lambda f: lambda self, *args, **kwargs: f(self, *args, **kwargs))(fn)
        setattr(Tensor, name, fn)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy() if self.dtype != _core.DType.bfloat16 else self.astype(_core.DType.float32).numpy()
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        return a.copy() if copy else a

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        # Negative strides are legal in DLPack but some consumers abort on them (PyTorch):
        # such views are exported as a copy.
        if copy or any(s < 0 for s in self.strides):
            return _core._to_dlpack(_core.copy(self.detach()))
        return _core._to_dlpack(self)

    def __dlpack_device__(self):
        if self.device == "cpu":
            return (1, 0)  # kDLCPU
        # kDLVulkan (kDLMetal on macOS): consumers see a device they cannot read and refuse it
        kind, index = self.device.split(":")
        return (8 if kind == "metal" else 7, int(index))

    Tensor.__array__ = __array__
    Tensor.__dlpack__ = __dlpack__
    Tensor.__dlpack_device__ = __dlpack_device__
    Tensor.__array_priority__ = 1000  # NumPy defers binary operators to Tensor


_install_methods()
