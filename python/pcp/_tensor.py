"""Tensor construction and device names. (Tensor's methods are bound in C++: cpp/bindings.)"""
from . import _core
from ._core import Tensor


def tensor(data, dtype=None, requires_grad=False, device=None):
    """A new tensor copied from a Tensor, Python number, NumPy array or nested list.

    Python floats become float32 (the default float) and ints int64, as in PyTorch;
    NumPy arrays keep their dtype. `device` defaults to pcp.get_default_device().

    Args:
        data: a Tensor (copied, detached), a number, a NumPy array or a nested list or tuple.
        dtype: convert to this dtype (default: as above).
        requires_grad: make the new tensor a leaf that records gradients (default False).
        device: where to put it (default: pcp.get_default_device()).

    Returns:
        A new tensor that shares no memory with `data`.

    Raises:
        TypeError: data of another type, or an unknown dtype.
        ValueError: ragged nested lists, or an unknown device.

    Example:
        >>> pcp.tensor([[1.0, 2.0]], requires_grad=True).shape
        (1, 2)
    """
    target = _core.get_default_device() if device is None else device
    t = _core._tensor(data.detach() if isinstance(data, Tensor) else data, dtype, target)  # always new
    if requires_grad:
        t.requires_grad = True
    return t


def devices():
    """Every device this machine can run on, e.g. ['cpu', 'vulkan:0 (NVIDIA H200)'], or 'cuda:0'
    where PCP runs on CUDA (an NVIDIA GPU with pcp[cuda] installed). It raises nothing: a machine
    without a usable GPU lists only the CPU.

    Returns:
        A list of strings: 'cpu' first, then each GPU as its name with the device's in brackets.

    Example:
        >>> pcp.devices()[0]
        'cpu'
    """
    return [name if name == "cpu" else f"{name} ({desc})" for name, desc in _core.devices()]


def device(name="cpu"):
    """The canonical name of a device: 'cpu', or 'gpu' / 'gpu:N' / 'vulkan:N' / 'cuda:N' /
    'metal:N' for a GPU ('gpu' is the first; the runtime's name works too).

    Args:
        name: a device's name (default 'cpu').

    Returns:
        The canonical name, e.g. 'vulkan:0' for 'gpu'.

    Raises:
        ValueError: no such device (the message names what exists).

    Example:
        >>> pcp.device("cpu")
        'cpu'
    """
    return _core.device(name)
