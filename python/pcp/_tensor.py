"""Tensor construction and device names. (Tensor's methods are bound in C++: cpp/bindings.)"""
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
