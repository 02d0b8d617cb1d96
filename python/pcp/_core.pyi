# Type stubs of pcp._core, generated from the built module by tools/gen_core_stub.py: do not edit.
# After changing the bindings, reinstall and rerun it (tests/test_stubs.py fails until then).
"""
PCP native core: tensors, CPU and GPU kernels, and autodiff
"""
from __future__ import annotations

import builtins
import collections.abc
import typing

import numpy
import typing_extensions


class DType:
    """
    The element type of a tensor: pcp.bool, int32, int64, float16, bfloat16, float32 or float64.
    DType(value) converts a name ('bfloat16'), a NumPy dtype, or a DType.

    Args:
        value: what to convert.

    Returns:
        The DType.

    Raises:
        TypeError: an unknown dtype.

    Example:
        >>> pcp.DType('bfloat16') == pcp.bfloat16
        True


    Members:

      bool

      int32

      int64

      float16

      bfloat16

      float32

      float64
    """
    __members__: typing.ClassVar[dict[str, DType]]
    bfloat16: typing.ClassVar[DType]
    bool: typing.ClassVar[DType]
    float16: typing.ClassVar[DType]
    float32: typing.ClassVar[DType]
    float64: typing.ClassVar[DType]
    int32: typing.ClassVar[DType]
    int64: typing.ClassVar[DType]
    @typing.overload
    def __eq__(self, other: DType, /) -> builtins.bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any, /) -> builtins.bool:
        ...
    def __getstate__(self, /) -> int:
        ...
    def __hash__(self, /) -> int:
        ...
    def __index__(self, /) -> int:
        ...
    @typing.overload
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @typing.overload
    def __init__(self, value: typing.Any) -> None:
        ...
    def __int__(self, /) -> int:
        ...
    @typing.overload
    def __ne__(self, other: DType, /) -> builtins.bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any, /) -> builtins.bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex, /) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def is_floating_point(self) -> builtins.bool:
        """
        Whether this dtype holds floating-point numbers (float16, bfloat16, float32, float64). It raises
        nothing.

        Example:
            >>> pcp.float16.is_floating_point, pcp.int32.is_floating_point
            (True, False)
        """
    @property
    def itemsize(self) -> int:
        """
        The bytes one element of this dtype takes. It raises nothing.

        Example:
            >>> pcp.bfloat16.itemsize, pcp.int64.itemsize
            (2, 8)
        """
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...


class HostScalar:
    """
    A number an optimizer step reads when it runs; a traced step's plan reads it on each replay (the step count, the learning rate)
    """
    def __init__(self, value: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def value(self) -> float:
        """
        The number
        """
    @value.setter
    def value(self, value: typing.SupportsFloat | typing.SupportsIndex) -> None: ...


class Plan:
    """
    A traced computation, replayed by run()
    """
    def __str__(self) -> str:
        ...
    def check(self) -> None:
        """
        Infers every node's outputs again (no kernel runs) and compares them with the recorded ones
        """
    @property
    def command_lists(self) -> bool:
        """
        Whether run() may replay as command lists on a Vulkan GPU (set before the first run)
        """
    @command_lists.setter
    def command_lists(self, value: bool) -> None: ...
    @property
    def commands(self) -> typing.Any:
        """
        The GPU commands (kernel dispatches, copies, transfers, library calls) its last run recorded, a command list's replay counting its commands; None before a run or without GPU values
        """
    def memory(self) -> dict[typing.Any, typing.Any]:
        """
        Buffer planning by liveness: the most bytes of values the run holds at once (peak_bytes, reached at node peak_node), against the bytes of every value it makes (allocated_bytes, over allocations values); views and the caller's tensors are not counted
        """
    @property
    def num_captured(self) -> int:
        ...
    @property
    def num_nodes(self) -> int:
        ...
    @property
    def ops(self) -> list[str]:
        """
        The primitive of every node, in order
        """
    @property
    def replay_mode(self) -> str:
        """
        How run() replays: as command lists on a Vulkan GPU (recorded by the first run, resubmitted after; live nodes such as optimizer steps and dropout run each time), or node by node, and why
        """
    def run(self, args: collections.abc.Sequence[Tensor]) -> list[Tensor]:
        """
        Runs the plan on tensors of the traced specs and returns its outputs
        """
    @property
    def traced_nodes(self) -> int:
        """
        Nodes as traced, before constant folding and dead-code elimination
        """


class Tensor:
    """
    An n-dimensional array with automatic differentiation: a cheap handle to refcounted storage on
    a device, with a shape, strides and a dtype. Views (reshape, transpose, slicing, broadcast_to)
    share storage; operators (``+ - * / @ **``, comparisons, ``~ & | ^``) and the methods named
    like pcp's functions (x.sum(axis=0), x.softmax()) call those functions. A tensor made with
    requires_grad=True records the operations on it, and backward() fills the .grad of such
    leaves.

    Create one with pcp.tensor, pcp.asarray, pcp.from_numpy or a creation function (pcp.zeros, ...),
    not with Tensor(...).

    Raises:
        TypeError: Tensor() called directly.

    Example:
        >>> x = pcp.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        >>> (x @ x.T).sum().backward()
        >>> x.grad.tolist()
        [[8.0, 12.0], [8.0, 12.0]]
    """
    __array_priority__: typing.ClassVar[int]
    @property
    def T(self) -> Tensor:
        """
        This tensor with its axes reversed, as x.transpose(): a view, no data moves. A 0-d or 1-d
        tensor is returned as it is.

        Example:
            >>> pcp.zeros((2, 3)).T.shape
            (3, 2)
        """
    def __abs__(self) -> Tensor:
        """
        abs(x): pcp.abs.

        Returns:
            A tensor of x's shape and dtype.

        Raises:
            TypeError: a bool tensor.

        Example:
            >>> abs(pcp.tensor([-1.5, 2.0])).tolist()
            [1.5, 2.0]
        """
    def __add__(self, other: typing.Any) -> Tensor:
        """
        x + other, elementwise with broadcasting: pcp.add.

        Args:
            other: a tensor, a NumPy array, a list or a Python number (weak: it takes this tensor's
                dtype); arrays and lists move to this tensor's device.

        Returns:
            A new tensor of the broadcast shape in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (pcp.tensor([1.0, 2.0]) + 1).tolist()
            [2.0, 3.0]
        """
    def __and__(self, other: typing.Any) -> Tensor:
        """
        x & other on integers and bools, elementwise with broadcasting: pcp.bitwise_and.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not an integer or bool tensor.

        Example:
            >>> (pcp.tensor([True, False]) & True).tolist()
            [True, False]
        """
    def __array__(self, dtype: typing.Any = None, copy: typing.Any = None) -> typing.Any:
        """
        NumPy's array protocol: np.asarray(x) and np.array(x) read the tensor through it (as numpy(),
        sharing memory on the CPU; bfloat16 is widened to float32).

        Args:
            dtype: convert to this NumPy dtype (default: the tensor's).
            copy: True for a copy (default None: share where possible).

        Returns:
            A numpy.ndarray.

        Raises:
            TypeError: a dtype NumPy does not know.

        Example:
            >>> import numpy as np
            >>> np.asarray(pcp.arange(3), dtype=np.float64).tolist()
            [0.0, 1.0, 2.0]
        """
    def __array_namespace__(self, *, api_version: typing.Any = None) -> typing.Any:
        """
        The Array API standard's namespace of PCP tensors: the module pcp.array_api.

        Args:
            api_version: None, or the standard's version "2024.12".

        Returns:
            The module pcp.array_api.

        Raises:
            ValueError: another version of the standard.

        Example:
            >>> pcp.ones((2,)).__array_namespace__().__name__
            'pcp.array_api'
        """
    def __bool__(self) -> bool:
        """
        bool(x) (and ``if x:``): the truth of a one-element tensor, non-zero being true.

        Returns:
            A bool.

        Raises:
            ValueError: more than one element, where the truth is ambiguous: use .any() or .all().

        Example:
            >>> bool(pcp.tensor([0.5]))
            True
        """
    def __complex__(self) -> complex:
        """
        complex(x): the value of a one-element tensor as a Python complex (PCP's dtypes are real: its
        imaginary part is 0).

        Returns:
            A complex.

        Raises:
            ValueError: the tensor has more or fewer than one element.

        Example:
            >>> complex(pcp.tensor(1.5))
            (1.5+0j)
        """
    def __dlpack__(self, stream: typing.Any = None, max_version: typing.Any = None, dl_device: typing.Any = None, copy: typing.Any = None) -> typing_extensions.CapsuleType:
        """
        The DLPack protocol (what np.from_dlpack, torch.from_dlpack and jax.dlpack call): a capsule
        that shares this CPU tensor's memory with the consumer; views with negative strides (and
        copy=True) are exported as a copy.

        Args:
            stream: ignored (CPU memory needs no stream).
            max_version: ignored (an unversioned capsule is returned, which every consumer accepts).
            dl_device: ignored.
            copy: True to export a copy (default None: share).

        Returns:
            A 'dltensor' PyCapsule.

        Raises:
            BufferError: the tensor is on a GPU (move it with .to('cpu') first).

        Example:
            >>> import numpy as np
            >>> np.from_dlpack(pcp.arange(3)).tolist()
            [0, 1, 2]
        """
    def __dlpack_device__(self) -> tuple[int, int]:
        """
        The DLPack device of this tensor: (1, 0) on the CPU; (7, index) on a Vulkan GPU and
        (8, index) on a Metal one, which consumers that cannot read them refuse. It raises nothing.

        Returns:
            A tuple (device type, device index).

        Example:
            >>> pcp.zeros(2).__dlpack_device__()
            (1, 0)
        """
    def __eq__(self, other: typing.Any) -> Tensor:  # type: ignore[override]
        """
        x == other, elementwise with broadcasting: pcp.eq.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A bool tensor of the broadcast shape (not one bool).

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (pcp.tensor([1, 2]) == 2).tolist()
            [False, True]
        """
    def __float__(self) -> float:
        """
        float(x): the value of a one-element tensor as a Python float.

        Returns:
            A float.

        Raises:
            ValueError: the tensor has more or fewer than one element.

        Example:
            >>> float(pcp.tensor(3))
            3.0
        """
    def __floordiv__(self, other: typing.Any) -> Tensor:
        """
        x // other, rounded toward -inf (as Python's), elementwise with broadcasting: pcp.floor_divide.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not a tensor, an array, a list or a number.

        Example:
            >>> (pcp.tensor([7, -7]) // 2).tolist()
            [3, -4]
        """
    def __ge__(self, other: typing.Any) -> Tensor:
        """
        x >= other, elementwise with broadcasting: pcp.ge.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A bool tensor of the broadcast shape.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (pcp.tensor([1, 2]) >= 2).tolist()
            [False, True]
        """
    def __getitem__(self, key: typing.Any) -> Tensor:
        """
        x[key]: elements selected as NumPy selects them. Integers (negative count from the end),
        slices (any non-zero step), None (a new axis) and ``...`` select a view of this tensor; an
        integer tensor or list along an axis gathers (a copy), and a bool tensor of the indexed axes'
        shape selects where it is true (a 1-D copy). Differentiable: the gradient flows back to the
        selected elements.

        Args:
            key: an int, a slice, None, Ellipsis, an integer or bool tensor (or list, or NumPy array),
                or a tuple of these.

        Returns:
            A tensor of the selected elements.

        Raises:
            IndexError: an index out of bounds, more indices than axes, a float index, or a mask whose
                shape does not match the axes it indexes.
            ValueError: a slice step of zero.
            TypeError: a key of another type (a string, a dict).

        Example:
            >>> x = pcp.arange(6).reshape(2, 3)
            >>> x[1].tolist(), x[:, ::2].tolist(), x[x > 3].tolist()
            ([3, 4, 5], [[0, 2], [3, 5]], [4, 5])
        """
    def __gt__(self, other: typing.Any) -> Tensor:
        """
        x > other, elementwise with broadcasting: pcp.gt.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A bool tensor of the broadcast shape.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (pcp.tensor([1, 2]) > 1).tolist()
            [False, True]
        """
    def __hash__(self) -> int:
        """
        hash(x): by identity of the tensor (two handles to one tensor hash alike; equal values do not),
        so tensors can be set members and dict keys, as in PyTorch; == compares elementwise. It raises
        nothing.

        Returns:
            An int.

        Example:
            >>> x = pcp.zeros(2)
            >>> {x: "weights"}[x]
            'weights'
        """
    def __index__(self) -> int:
        """
        operator.index(x): a one-element integer tensor used where Python wants an int (a list
        index, range(), a slice bound).

        Returns:
            An int.

        Raises:
            TypeError: the tensor is not an integer or bool tensor of one element.

        Example:
            >>> ["a", "b", "c"][pcp.tensor(1)]
            'b'
        """
    def __int__(self) -> typing.Any:
        """
        int(x): the value of a one-element tensor as a Python int; floats truncate toward zero, exactly
        (as Python's int(float)).

        Returns:
            An int.

        Raises:
            ValueError: more or fewer than one element, or a NaN.
            OverflowError: an infinity.

        Example:
            >>> int(pcp.tensor(-2.7))
            -2
        """
    def __invert__(self) -> Tensor:
        """
        ~x: logical not of a bool tensor, bitwise not of an integer one: pcp.bitwise_not.

        Returns:
            A tensor of x's shape and dtype.

        Raises:
            TypeError: a floating tensor.

        Example:
            >>> (~pcp.tensor([True, False])).tolist()
            [False, True]
        """
    def __le__(self, other: typing.Any) -> Tensor:
        """
        x <= other, elementwise with broadcasting: pcp.le.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A bool tensor of the broadcast shape.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (pcp.tensor([1, 2]) <= 2).tolist()
            [True, True]
        """
    def __len__(self) -> int:
        """
        len(x): the length of the first axis.

        Returns:
            An int.

        Raises:
            TypeError: a 0-d tensor (it has no first axis).

        Example:
            >>> len(pcp.zeros((4, 2)))
            4
        """
    def __lshift__(self, other: typing.Any) -> Tensor:
        """
        x << other on integers, elementwise with broadcasting: pcp.bitwise_left_shift.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not an integer tensor.

        Example:
            >>> (pcp.tensor([1, 3]) << 2).tolist()
            [4, 12]
        """
    def __lt__(self, other: typing.Any) -> Tensor:
        """
        x < other, elementwise with broadcasting: pcp.lt.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A bool tensor of the broadcast shape.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (pcp.tensor([1, 2]) < 2).tolist()
            [True, False]
        """
    def __matmul__(self, other: typing.Any) -> Tensor:
        """
        x @ other: the matrix product, pcp.matmul (NumPy's rules: 1-D operands become a row or a
        column, leading batch axes broadcast).

        Args:
            other: (..., K, N) or (K,), a tensor, a NumPy array or a list.

        Returns:
            (..., M, N) for x of shape (..., M, K), in the promoted dtype.

        Raises:
            ValueError: K differs, a 0-d operand, or batch axes that do not broadcast.

        Example:
            >>> (pcp.ones((2, 3)) @ pcp.ones((3, 4))).shape
            (2, 4)
        """
    def __mod__(self, other: typing.Any) -> Tensor:
        """
        x % other, with other's sign (as Python's), elementwise with broadcasting: pcp.remainder.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not a tensor, an array, a list or a number.

        Example:
            >>> (pcp.tensor([7, -7]) % 3).tolist()
            [1, 2]
        """
    def __mul__(self, other: typing.Any) -> Tensor:
        """
        x * other, elementwise with broadcasting: pcp.mul.

        Args:
            other: a tensor, a NumPy array, a list or a Python number (weak: it takes this tensor's
                dtype); arrays and lists move to this tensor's device.

        Returns:
            A new tensor of the broadcast shape in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (pcp.tensor([1.0, 2.0]) * 3).tolist()
            [3.0, 6.0]
        """
    def __ne__(self, other: typing.Any) -> Tensor:  # type: ignore[override]
        """
        x != other, elementwise with broadcasting: pcp.ne.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A bool tensor of the broadcast shape.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (pcp.tensor([1, 2]) != 2).tolist()
            [True, False]
        """
    def __neg__(self) -> Tensor:
        """
        -x: pcp.neg.

        Returns:
            A tensor of x's shape and dtype.

        Raises:
            TypeError: a bool tensor (use ~x).

        Example:
            >>> (-pcp.tensor([1.0, -2.0])).tolist()
            [-1.0, 2.0]
        """
    def __or__(self, other: typing.Any) -> Tensor:
        """
        x | other on integers and bools, elementwise with broadcasting: pcp.bitwise_or.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not an integer or bool tensor.

        Example:
            >>> (pcp.tensor([True, False]) | False).tolist()
            [True, False]
        """
    def __pos__(self) -> Tensor:
        """
        +x: pcp.positive (a copy).

        Returns:
            A new tensor equal to x.

        Raises:
            Nothing.

        Example:
            >>> (+pcp.tensor([1.0, -2.0])).tolist()
            [1.0, -2.0]
        """
    def __pow__(self, other: typing.Any) -> Tensor:
        """
        x ** other, elementwise with broadcasting: pcp.pow.

        Args:
            other: a tensor, a NumPy array, a list or a Python number (weak: it takes this tensor's
                dtype); arrays and lists move to this tensor's device.

        Returns:
            A new tensor of the broadcast shape in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (pcp.tensor([2.0, 3.0]) ** 2).tolist()
            [4.0, 9.0]
        """
    def __radd__(self, other: typing.Any) -> Tensor:
        """
        other + x, elementwise with broadcasting: pcp.add.

        Args:
            other: a tensor, a NumPy array, a list or a Python number (weak: it takes this tensor's
                dtype); arrays and lists move to this tensor's device.

        Returns:
            A new tensor of the broadcast shape in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (1 + pcp.tensor([1.0, 2.0])).tolist()
            [2.0, 3.0]
        """
    def __rand__(self, other: typing.Any) -> Tensor:
        """
        other & x on integers and bools, elementwise with broadcasting: pcp.bitwise_and.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not an integer or bool tensor.

        Example:
            >>> (12 & pcp.tensor([10])).tolist()
            [8]
        """
    def __repr__(self) -> str:
        """
        repr(x): the elements in NumPy's style (nested brackets, PyTorch's tensor(...) around them),
        then the dtype, the device for a GPU tensor, and requires_grad when it is True. On a GPU it
        waits for the values. It raises nothing.

        Returns:
            A str.

        Example:
            >>> pcp.tensor([1.0, 2.5])
            tensor([1., 2.5], dtype=float32)
        """
    def __rfloordiv__(self, other: typing.Any) -> Tensor:
        """
        other // x, rounded toward -inf (as Python's), elementwise with broadcasting: pcp.floor_divide.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not a tensor, an array, a list or a number.

        Example:
            >>> (7 // pcp.tensor([2, -2])).tolist()
            [3, -4]
        """
    def __rlshift__(self, other: typing.Any) -> Tensor:
        """
        other << x on integers, elementwise with broadcasting: pcp.bitwise_left_shift.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not an integer tensor.

        Example:
            >>> (1 << pcp.tensor([2, 3])).tolist()
            [4, 8]
        """
    def __rmatmul__(self, other: typing.Any) -> Tensor:
        """
        other @ x: the matrix product with this tensor on the right, pcp.matmul (for a NumPy array or a
        list on the left).

        Args:
            other: (..., M, K) or (K,), a NumPy array or a list.

        Returns:
            (..., M, N) for x of shape (..., K, N), in the promoted dtype.

        Raises:
            ValueError: K differs, a 0-d operand, or batch axes that do not broadcast.

        Example:
            >>> ([[1.0, 2.0]] @ pcp.ones((2, 3))).tolist()
            [[3.0, 3.0, 3.0]]
        """
    def __rmod__(self, other: typing.Any) -> Tensor:
        """
        other % x, with x's sign (as Python's), elementwise with broadcasting: pcp.remainder.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not a tensor, an array, a list or a number.

        Example:
            >>> (7 % pcp.tensor([3, -3])).tolist()
            [1, -2]
        """
    def __rmul__(self, other: typing.Any) -> Tensor:
        """
        other * x, elementwise with broadcasting: pcp.mul.

        Args:
            other: a tensor, a NumPy array, a list or a Python number (weak: it takes this tensor's
                dtype); arrays and lists move to this tensor's device.

        Returns:
            A new tensor of the broadcast shape in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (3 * pcp.tensor([1.0, 2.0])).tolist()
            [3.0, 6.0]
        """
    def __ror__(self, other: typing.Any) -> Tensor:
        """
        other | x on integers and bools, elementwise with broadcasting: pcp.bitwise_or.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not an integer or bool tensor.

        Example:
            >>> (12 | pcp.tensor([10])).tolist()
            [14]
        """
    def __rpow__(self, other: typing.Any) -> Tensor:
        """
        other ** x, elementwise with broadcasting: pcp.pow.

        Args:
            other: a tensor, a NumPy array, a list or a Python number (weak: it takes this tensor's
                dtype); arrays and lists move to this tensor's device.

        Returns:
            A new tensor of the broadcast shape in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (2 ** pcp.tensor([1.0, 3.0])).tolist()
            [2.0, 8.0]
        """
    def __rrshift__(self, other: typing.Any) -> Tensor:
        """
        other >> x on integers (arithmetic: the sign is kept), elementwise with broadcasting: pcp.bitwise_right_shift.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not an integer tensor.

        Example:
            >>> (12 >> pcp.tensor([1, 2])).tolist()
            [6, 3]
        """
    def __rshift__(self, other: typing.Any) -> Tensor:
        """
        x >> other on integers (arithmetic: the sign is kept), elementwise with broadcasting: pcp.bitwise_right_shift.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not an integer tensor.

        Example:
            >>> (pcp.tensor([12, -12]) >> 2).tolist()
            [3, -3]
        """
    def __rsub__(self, other: typing.Any) -> Tensor:
        """
        other - x, elementwise with broadcasting: pcp.sub.

        Args:
            other: a tensor, a NumPy array, a list or a Python number (weak: it takes this tensor's
                dtype); arrays and lists move to this tensor's device.

        Returns:
            A new tensor of the broadcast shape in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (1 - pcp.tensor([1.0, 2.0])).tolist()
            [0.0, -1.0]
        """
    def __rtruediv__(self, other: typing.Any) -> Tensor:
        """
        other / x (true division: integers give float32), elementwise with broadcasting: pcp.div.

        Args:
            other: a tensor, a NumPy array, a list or a Python number (weak: it takes this tensor's
                dtype); arrays and lists move to this tensor's device.

        Returns:
            A new tensor of the broadcast shape in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (3 / pcp.tensor([1.0, 2.0])).tolist()
            [3.0, 1.5]
        """
    def __rxor__(self, other: typing.Any) -> Tensor:
        """
        other ^ x on integers and bools, elementwise with broadcasting: pcp.bitwise_xor.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not an integer or bool tensor.

        Example:
            >>> (12 ^ pcp.tensor([10])).tolist()
            [6]
        """
    def __setitem__(self, key: typing.Any, value: typing.Any) -> None:
        """
        x[key] = value: writes value into the selected elements in place (the key as in x[key]). The
        value broadcasts to the selection's shape and is converted to this tensor's dtype. The write
        bumps the storage's version counter, so backward() refuses a graph that saved the old values.

        Args:
            key: as for x[key].
            value: a tensor, a NumPy array, a list or a Python number.

        Returns:
            None.

        Raises:
            ValueError: value does not broadcast to the selection, or this tensor requires grad (write
                under pcp.no_grad(), as optimizers do).
            IndexError: an index out of bounds.
            TypeError: a key or value of another type.

        Example:
            >>> x = pcp.zeros(4)
            >>> x[1:3] = 5.0
            >>> x[x == 0] = -1.0
            >>> x.tolist()
            [-1.0, 5.0, 5.0, -1.0]
        """
    def __sub__(self, other: typing.Any) -> Tensor:
        """
        x - other, elementwise with broadcasting: pcp.sub.

        Args:
            other: a tensor, a NumPy array, a list or a Python number (weak: it takes this tensor's
                dtype); arrays and lists move to this tensor's device.

        Returns:
            A new tensor of the broadcast shape in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (pcp.tensor([1.0, 2.0]) - 1).tolist()
            [0.0, 1.0]
        """
    def __truediv__(self, other: typing.Any) -> Tensor:
        """
        x / other (true division: integers give float32), elementwise with broadcasting: pcp.div.

        Args:
            other: a tensor, a NumPy array, a list or a Python number (weak: it takes this tensor's
                dtype); arrays and lists move to this tensor's device.

        Returns:
            A new tensor of the broadcast shape in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: other is not a tensor, an array, a list or a number.

        Example:
            >>> (pcp.tensor([1, 3]) / 2).tolist()
            [0.5, 1.5]
        """
    def __xor__(self, other: typing.Any) -> Tensor:
        """
        x ^ other on integers and bools, elementwise with broadcasting: pcp.bitwise_xor.

        Args:
            other: a tensor, a NumPy array, a list or a Python number.

        Returns:
            A tensor in the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast.
            TypeError: an operand that is not an integer or bool tensor.

        Example:
            >>> (pcp.tensor([12]) ^ 10).tolist()
            [6]
        """
    def abs(self) -> Tensor:
        """
        The absolute value of x, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.abs(pcp.tensor([-2.0, 3.0])).tolist()
            [2.0, 3.0]
        """
    def acos(self) -> Tensor:
        """
        The inverse cosine of x, in [0, pi], elementwise (nan outside [-1, 1]).

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.acos(pcp.tensor([1.0])).tolist()
            [0.0]
        """
    def acosh(self) -> Tensor:
        """
        The inverse hyperbolic cosine of x, elementwise (nan below 1).

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.acosh(pcp.tensor([1.0])).tolist()
            [0.0]
        """
    def all(self, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
        """
        Whether every element over `axis` is true (non-zero).

        Args:
            x: a tensor of any shape.
            axis: an int, a tuple of ints, or None (the default) for every axis;
                negative counts from the end.
            keepdims: keep the reduced axes with length 1 (default False).

        Returns:
            A bool tensor without the reduced axes.

        Raises:
            IndexError: an axis out of range for x.
            ValueError: an axis named twice.

        Example:
            >>> pcp.all(pcp.tensor([False, True])).item()
            False
        """
    def any(self, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
        """
        Whether any element over `axis` is true (non-zero).

        Args:
            x: a tensor of any shape.
            axis: an int, a tuple of ints, or None (the default) for every axis;
                negative counts from the end.
            keepdims: keep the reduced axes with length 1 (default False).

        Returns:
            A bool tensor without the reduced axes.

        Raises:
            IndexError: an axis out of range for x.
            ValueError: an axis named twice.

        Example:
            >>> pcp.any(pcp.tensor([False, True])).item()
            True
        """
    def argmax(self, axis: int | None = None, keepdims: bool = False) -> Tensor:
        """
        The index of the largest element along `axis` (the first of equals), or in the flattened x when
        axis is None.

        Args:
            x: a tensor.
            axis: an int, or None (default) for the flattened tensor.
            keepdims: keep the reduced axis with length 1 (default False).

        Returns:
            An int64 tensor without the reduced axis.

        Raises:
            IndexError: axis out of range for x.
            ValueError: an empty axis (no maximum).

        Example:
            >>> pcp.argmax(pcp.tensor([1.0, 3.0, 2.0])).item()
            1
        """
    def argmin(self, axis: int | None = None, keepdims: bool = False) -> Tensor:
        """
        The index of the smallest element along `axis` (the first of equals), or in the flattened x when
        axis is None.

        Args:
            x: a tensor.
            axis: an int, or None (default) for the flattened tensor.
            keepdims: keep the reduced axis with length 1 (default False).

        Returns:
            An int64 tensor without the reduced axis.

        Raises:
            IndexError: axis out of range for x.
            ValueError: an empty axis (no minimum).

        Example:
            >>> pcp.argmin(pcp.tensor([1.0, 3.0, 0.5])).item()
            2
        """
    def argsort(self, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
        """
        The indices that sort x along `axis`, stably: equal values keep their order (descending too);
        NaNs order above every number. A GPU tensor is sorted on the host (no GPU kernel yet).

        Args:
            x: a tensor.
            axis: the axis to sort along (default -1).
            descending: largest first (default False).
            stable: accepted for the Array API standard; the sort is always stable.

        Returns:
            An int64 tensor of x's shape.

        Raises:
            IndexError: axis out of range for x.

        Example:
            >>> pcp.argsort(pcp.tensor([3.0, 1.0, 2.0])).tolist()
            [1, 2, 0]
        """
    def asin(self) -> Tensor:
        """
        The inverse sine of x, in [-pi/2, pi/2], elementwise (nan outside [-1, 1]).

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.asin(pcp.tensor([0.0])).tolist()
            [0.0]
        """
    def asinh(self) -> Tensor:
        """
        The inverse hyperbolic sine of x, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.asinh(pcp.tensor([0.0])).tolist()
            [0.0]
        """
    def astype(self, dtype: typing.Any) -> Tensor:
        """
        A copy converted to another dtype, as pcp.astype(x, dtype): floats to integers truncate toward
        zero, wider to narrower floats round to nearest even. Differentiable between floating dtypes.

        Args:
            dtype: a pcp dtype, its name ('bfloat16'), or a NumPy dtype.

        Returns:
            A tensor of this shape in that dtype.

        Raises:
            TypeError: an unknown dtype.

        Example:
            >>> pcp.tensor([1.7, -1.7]).astype(pcp.int64).tolist()
            [1, -1]
        """
    def atan(self) -> Tensor:
        """
        The inverse tangent of x, in [-pi/2, pi/2], elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.atan(pcp.tensor([0.0])).tolist()
            [0.0]
        """
    def atanh(self) -> Tensor:
        """
        The inverse hyperbolic tangent of x, elementwise (+-inf at +-1, nan beyond).

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.atanh(pcp.tensor([0.0])).tolist()
            [0.0]
        """
    def backward(self, grad: typing.Any = None, create_graph: bool = False, retain_graph: bool | None = None) -> None:
        """
        Computes the gradient of this tensor with respect to every leaf of its graph that requires
        grad, and adds it to that leaf's .grad (gradients accumulate: clear them between steps). The
        graph's saved tensors are checked: one modified in place after the forward pass saved it is
        refused rather than giving a wrong gradient. Unless retain_graph, each op of the graph lets go
        of what it saved as soon as its gradient is taken, as in PyTorch: the activations are freed as
        the pass goes, and a second backward through the graph raises. The GIL is released while it
        runs.

        Args:
            grad: the gradient flowing into this tensor, a tensor of its shape; may be omitted (None,
                the default) for a one-element tensor such as a loss, where it is 1.
            create_graph: record the backward pass too, so the gradients can be differentiated again
                (default False).
            retain_graph: keep what the graph saved, for another backward through it (default None:
                create_graph).

        Returns:
            None.

        Raises:
            ValueError: no grad for a tensor of more than one element, a grad of another shape, or this
                tensor does not require grad (nothing it came from had requires_grad=True, or it was
                computed under pcp.no_grad()).
            RuntimeError: a tensor the graph saved was modified in place since, or a backward pass
                without retain_graph went through the graph already.

        Example:
            >>> w = pcp.tensor([1.0, 2.0, 3.0], requires_grad=True)
            >>> loss = (w * w).sum()
            >>> loss.backward(retain_graph=True)
            >>> loss.backward()  # the gradients add up
            >>> w.grad.tolist()
            [4.0, 8.0, 12.0]
        """
    def broadcast_to(self, *args: typing.Any) -> Tensor:
        """
        This tensor broadcast to a shape, as pcp.broadcast_to: a read-only view in which axes of length
        1 (and new leading axes) repeat the elements (their stride is 0).

        Args:
            *shape: the target shape, as separate ints or one tuple or list.

        Returns:
            A view of that shape.

        Raises:
            ValueError: this tensor's shape does not broadcast to it.

        Example:
            >>> pcp.tensor([1, 2]).broadcast_to(2, 2).tolist()
            [[1, 2], [1, 2]]
        """
    def ceil(self) -> Tensor:
        """
        The smallest integer not below x, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape and numeric dtype.

        Returns:
            A new tensor of x's shape and dtype (an integer tensor's values are already whole).

        Raises:
            TypeError: x is a bool tensor, or not a tensor, an array, a list or a number.

        Example:
            >>> pcp.ceil(pcp.tensor([-1.5, 2.5])).tolist()
            [-1.0, 3.0]
        """
    def clip(self, min: typing.Any = None, max: typing.Any = None) -> Tensor:
        """
        x limited to [min, max] elementwise; either bound may be None (no limit) and broadcasts.

        Args:
            x: a tensor.
            min: the lower bound, a number or tensor, or None.
            max: the upper bound, a number or tensor, or None.

        Returns:
            A tensor of the broadcast shape.

        Raises:
            ValueError: shapes that do not broadcast.

        Example:
            >>> pcp.clip(pcp.tensor([-2.0, 0.5, 3.0]), 0.0, 1.0).tolist()
            [0.0, 0.5, 1.0]
        """
    def clone(self) -> Tensor:
        """
        A copy with storage of its own, still part of the recorded graph (gradients flow back to this
        tensor), as PyTorch's clone; pcp.copy(x) does the same. It raises nothing.

        Returns:
            A new contiguous tensor of this shape, dtype and device.

        Example:
            >>> x = pcp.zeros(2)
            >>> y = x.clone()
            >>> y[0] = 1.0
            >>> x.tolist(), y.tolist()
            ([0.0, 0.0], [1.0, 0.0])
        """
    def contiguous(self) -> Tensor:
        """
        This tensor if it is contiguous, else a row-major copy of it (differentiable). It raises
        nothing.

        Returns:
            A contiguous tensor of this shape, dtype and device.

        Example:
            >>> pcp.zeros((2, 3)).T.contiguous().is_contiguous()
            True
        """
    def copy(self) -> Tensor:
        """
        A copy of x in new memory (x.clone()); differentiable.

        Args:
            x: a tensor.

        Returns:
            A new contiguous tensor equal to x, on x's device.

        Raises:
            TypeError: x is not a tensor.

        Example:
            >>> pcp.copy(pcp.tensor([1, 2])).tolist()
            [1, 2]
        """
    def cos(self) -> Tensor:
        """
        The cosine of x (radians), elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.cos(pcp.tensor([0.0])).tolist()
            [1.0]
        """
    def cosh(self) -> Tensor:
        """
        The hyperbolic cosine of x, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.cosh(pcp.tensor([0.0])).tolist()
            [1.0]
        """
    def cumprod(self, axis: int | None = None) -> Tensor:
        """
        Running products of x along `axis` (of the flattened x when axis is None). Integers and bools
        count in int64. Differentiable, exactly where x has zeros. A GPU tensor is computed on
        the host (no GPU kernel yet).

        Args:
            x: a tensor.
            axis: an int, or None (default) for the flattened x.

        Returns:
            A tensor of x's shape (flattened when axis is None).

        Raises:
            IndexError: axis out of range for x.

        Example:
            >>> pcp.cumprod(pcp.tensor([1.0, 2.0, 3.0])).tolist()
            [1.0, 2.0, 6.0]
        """
    def cumsum(self, axis: int | None = None) -> Tensor:
        """
        Running sums of x along `axis` (of the flattened x when axis is None). Integers and bools
        count in int64; 16-bit floats in float32, rounded back. Differentiable. A GPU tensor is
        summed on the host (no GPU kernel yet).

        Args:
            x: a tensor.
            axis: an int, or None (default) for the flattened x.

        Returns:
            A tensor of x's shape (flattened when axis is None).

        Raises:
            IndexError: axis out of range for x.

        Example:
            >>> pcp.cumsum(pcp.tensor([1, 2, 3])).tolist()
            [1, 3, 6]
        """
    def detach(self) -> Tensor:
        """
        A tensor that shares this one's storage (writes through either show in both) but is cut off
        from the graph: it does not require grad and is a leaf. It raises nothing.

        Returns:
            A tensor of this shape, dtype and device.

        Example:
            >>> w = pcp.ones(2, dtype=pcp.float32).requires_grad_()
            >>> d = (w * 2).detach()
            >>> d.requires_grad, d.is_leaf
            (False, True)
        """
    @property
    def device(self) -> str:
        """
        The device that holds the elements, by its canonical name: 'cpu', or a GPU's such as
        'vulkan:0' or 'metal:0'.

        Example:
            >>> pcp.zeros(2).device
            'cpu'
        """
    @property
    def dtype(self) -> DType:
        """
        The element type, a pcp.DType (pcp.float32, pcp.int64, ...).

        Example:
            >>> pcp.tensor([1, 2]).dtype
            pcp.int64
        """
    def erf(self) -> Tensor:
        """
        The error function of x, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.erf(pcp.tensor([0.0])).tolist()
            [0.0]
        """
    def exp(self) -> Tensor:
        """
        e to the power x, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.exp(pcp.tensor([0.0, 1.0])).tolist()
            [1.0, 2.7182817459106445]
        """
    def expand(self, *args: typing.Any) -> Tensor:
        """
        The same as broadcast_to (PyTorch's name); the target shape is given in full (no -1).

        Args:
            *shape: the target shape, as separate ints or one tuple or list.

        Returns:
            A read-only view of that shape.

        Raises:
            ValueError: this tensor's shape does not broadcast to it, or a negative dimension.

        Example:
            >>> pcp.ones((1, 3)).expand(2, 3).shape
            (2, 3)
        """
    def expm1(self) -> Tensor:
        """
        exp(x) - 1, elementwise, accurate for x near 0.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.expm1(pcp.tensor([0.0])).tolist()
            [0.0]
        """
    def flatten(self, start_axis: int = 0, end_axis: int = -1) -> Tensor:
        """
        x with the axes start_axis..end_axis merged into one (a view where the strides allow).

        Args:
            x: a tensor.
            start_axis: the first axis to merge (default 0).
            end_axis: the last axis to merge (default -1).

        Returns:
            A tensor of the merged shape.

        Raises:
            IndexError: an axis out of range.

        Example:
            >>> pcp.flatten(pcp.zeros((2, 3, 4)), 1).shape
            (2, 12)
        """
    def floor(self) -> Tensor:
        """
        The largest integer not above x, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape and numeric dtype.

        Returns:
            A new tensor of x's shape and dtype (an integer tensor's values are already whole).

        Raises:
            TypeError: x is a bool tensor, or not a tensor, an array, a list or a number.

        Example:
            >>> pcp.floor(pcp.tensor([-1.5, 2.5])).tolist()
            [-2.0, 2.0]
        """
    def gelu(self, approximate: str = 'none') -> Tensor:
        """
        The Gaussian error linear unit, x * Phi(x): exact (erf) by default, or GPT-2's tanh
        approximation with approximate='tanh' (PyTorch's F.gelu).

        Args:
            x: a floating tensor.
            approximate: 'none' (default) or 'tanh'.

        Returns:
            A tensor of x's shape.

        Raises:
            ValueError: another approximate.

        Example:
            >>> [round(v, 4) for v in pcp.gelu(pcp.tensor([0.0, 1.0])).tolist()]
            [0.0, 0.8413]
        """
    @property
    def grad(self) -> typing.Any:
        """
        The gradient backward() accumulated into this tensor: a tensor of its shape, dtype and device,
        or None before any backward (and for tensors that are not leaves, unless retain_grad() was
        called). Assign a tensor like this one, or None to clear it (what optimizer.zero_grad() does).

        Raises:
            TypeError: assigning something that is not a Tensor or None, or a tensor of another dtype.
            ValueError: assigning a tensor of another shape or on another device.

        Example:
            >>> w = pcp.tensor([1.0, 2.0], requires_grad=True)
            >>> (w * w).sum().backward()
            >>> w.grad.tolist()
            [2.0, 4.0]
        """
    @grad.setter
    def grad(self, value: typing.Any) -> None: ...
    @property
    def grad_fn(self) -> typing.Any:
        """
        The name of the operation that produced this tensor in the recorded graph (a string such as
        'mul', where PyTorch has a node object), or None for a leaf or an unrecorded result.

        Example:
            >>> w = pcp.ones(2).requires_grad_()
            >>> (w * 2).grad_fn, w.grad_fn
            ('mul', None)
        """
    def is_contiguous(self) -> bool:
        """
        Whether the elements lie in storage in row-major (C) order without gaps: False for most
        transposed, strided or broadcast views. It raises nothing.

        Returns:
            A bool.

        Example:
            >>> x = pcp.zeros((2, 3))
            >>> x.is_contiguous(), x.T.is_contiguous()
            (True, False)
        """
    @property
    def is_leaf(self) -> bool:
        """
        Whether this tensor starts the graph: True for one made by the user (pcp.tensor, pcp.zeros,
        ...), by an operation that recorded nothing, or by detach(); False for the result of a recorded
        operation. backward() fills the .grad of the leaves that require grad.

        Example:
            >>> w = pcp.ones(2).requires_grad_()
            >>> w.is_leaf, (w * 2).is_leaf
            (True, False)
        """
    def item(self) -> typing.Any:
        """
        The value of a one-element tensor (of any shape) as a Python number: an int for integer
        dtypes, a bool for bool, a float otherwise. On a GPU it waits for the value.

        Returns:
            An int, float or bool.

        Raises:
            ValueError: the tensor has more or fewer than one element.

        Example:
            >>> pcp.tensor([[2.5]]).item()
            2.5
        """
    @property
    def itemsize(self) -> int:
        """
        The bytes one element takes: 1 for bool, 2 for float16 and bfloat16, 4 for int32 and float32,
        8 for int64 and float64.

        Example:
            >>> pcp.zeros(3, dtype=pcp.float16).itemsize
            2
        """
    def log(self) -> Tensor:
        """
        The natural logarithm of x, elementwise (-inf at 0, nan below).

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.log(pcp.tensor([1.0, 4.0])).tolist()
            [0.0, 1.3862943649291992]
        """
    def log10(self) -> Tensor:
        """
        The base-10 logarithm of x, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.log10(pcp.tensor([100.0])).tolist()
            [2.0]
        """
    def log1p(self) -> Tensor:
        """
        log(1 + x), elementwise, accurate for x near 0.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.log1p(pcp.tensor([0.0])).tolist()
            [0.0]
        """
    def log2(self) -> Tensor:
        """
        The base-2 logarithm of x, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.log2(pcp.tensor([8.0])).tolist()
            [3.0]
        """
    def log_softmax(self, axis: int = -1) -> Tensor:
        """
        log(softmax(x)) along an axis, computed as x - max - log(sum(exp(x - max))), without the
        cancellation of taking the log of a softmax.

        Args:
            x: a tensor of any shape; integer inputs are promoted to float32.
            axis: the axis to normalise over (default -1).

        Returns:
            A tensor of x's shape; exp of it sums to 1 along `axis`.

        Raises:
            IndexError: axis out of range for x.

        Example:
            >>> [round(v, 4) for v in pcp.log_softmax(pcp.tensor([0.0, 0.0])).tolist()]
            [-0.6931, -0.6931]
        """
    def logsumexp(self, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
        """
        log(sum(exp(x))) over `axis`, computed without overflow (max + log sum exp(x - max)).

        Args:
            x: a tensor of any shape.
            axis: an int, a tuple of ints, or None (the default) for every axis;
                negative counts from the end.
            keepdims: keep the reduced axes with length 1 (default False).

        Returns:
            A floating tensor without the reduced axes.

        Raises:
            IndexError: an axis out of range for x.
            ValueError: an axis named twice.

        Example:
            >>> round(pcp.logsumexp(pcp.tensor([0.0, 0.0])).item(), 4)
            0.6931
        """
    @property
    def mT(self) -> Tensor:
        """
        This tensor with its last two axes swapped: a batch of matrices, each transposed (a view).

        Raises:
            IndexError: the tensor has fewer than 2 dimensions.

        Example:
            >>> pcp.zeros((4, 2, 3)).mT.shape
            (4, 3, 2)
        """
    def matmul(self, b: typing.Any) -> Tensor:
        """
        Matrix product with NumPy's matmul rules (the @ operator): 1-D operands are promoted to a row or
        column and the added axis removed; leading (batch) axes broadcast.

        Args:
            a: (..., M, K) or (K,).
            b: (..., K, N) or (K,).

        Returns:
            (..., M, N), the broadcast batch shape in front, in the promoted dtype. float16 and
            bfloat16 accumulate in float32 (tensor cores on a GPU that has them).

        Raises:
            ValueError: K differs between a and b, a 0-d operand, or batch shapes that do not
                broadcast; the message names both shapes, e.g. 'matmul: shapes (2, 3) and (4, 5) do not
                align: 3 != 4'.

        Example:
            >>> pcp.matmul(pcp.tensor([[1.0, 2.0], [3.0, 4.0]]), pcp.tensor([1.0, 1.0])).tolist()
            [3.0, 7.0]
        """
    def max(self, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
        """
        The largest of x's elements over `axis` (a NaN wins).

        Args:
            x: a tensor of any shape.
            axis: an int, a tuple of ints, or None (the default) for every axis;
                negative counts from the end.
            keepdims: keep the reduced axes with length 1 (default False).

        Returns:
            A tensor of x's dtype without the reduced axes.

        Raises:
            IndexError: an axis out of range for x.
            ValueError: an axis named twice.

        Example:
            >>> pcp.max(pcp.tensor([[1.0, 5.0], [3.0, 2.0]]), axis=1).tolist()
            [5.0, 3.0]
        """
    def maximum(self, b: typing.Any) -> Tensor:
        """
        The larger of a and b, elementwise (nan if either is nan).

        Args:
            a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

        Returns:
            A new tensor of the broadcast shape and the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast (the message names both shapes).
            TypeError: an argument is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.maximum(pcp.tensor([1.0, 5.0]), 3.0).tolist()
            [3.0, 5.0]
        """
    def mean(self, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
        """
        The mean of x's elements over `axis` (all of them by default).

        Args:
            x: a tensor of any shape.
            axis: an int, a tuple of ints, or None for every axis.
            keepdims: keep the reduced axes with length 1 (default False).

        Returns:
            A floating tensor of x's shape without the reduced axes (NaN over no elements).

        Raises:
            IndexError: an axis out of range for x.
            ValueError: an axis named twice.

        Example:
            >>> pcp.mean(pcp.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=1).tolist()
            [1.5, 3.5]
        """
    def min(self, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
        """
        The smallest of x's elements over `axis` (a NaN wins).

        Args:
            x: a tensor of any shape.
            axis: an int, a tuple of ints, or None (the default) for every axis;
                negative counts from the end.
            keepdims: keep the reduced axes with length 1 (default False).

        Returns:
            A tensor of x's dtype without the reduced axes.

        Raises:
            IndexError: an axis out of range for x.
            ValueError: an axis named twice.

        Example:
            >>> pcp.min(pcp.tensor([[1.0, 5.0], [3.0, 2.0]]), axis=0).tolist()
            [1.0, 2.0]
        """
    def minimum(self, b: typing.Any) -> Tensor:
        """
        The smaller of a and b, elementwise (nan if either is nan).

        Args:
            a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

        Returns:
            A new tensor of the broadcast shape and the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast (the message names both shapes).
            TypeError: an argument is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.minimum(pcp.tensor([1.0, 5.0]), 3.0).tolist()
            [1.0, 3.0]
        """
    @property
    def nbytes(self) -> int:
        """
        The bytes of this tensor's elements, size * itemsize (a view counts its own elements, not the
        storage it shares).

        Example:
            >>> pcp.zeros((2, 3)).nbytes
            24
        """
    @property
    def ndim(self) -> int:
        """
        The number of axes, len(shape).

        Example:
            >>> pcp.zeros((2, 3)).ndim
            2
        """
    def neg(self) -> Tensor:
        """
        -x, elementwise (the unary - operator).

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.neg(pcp.tensor([1.0, -2.0])).tolist()
            [-1.0, 2.0]
        """
    def numpy(self) -> numpy.ndarray:
        """
        The elements as a NumPy array. On the CPU the array shares this tensor's memory (no copy:
        writes through either show in both; the array keeps the memory alive), with the same shape and
        strides; a GPU tensor gives a host copy. While the recorded graph saved this memory for
        backward the array is read-only, so a write cannot silently spoil a gradient.

        Returns:
            A numpy.ndarray of the matching dtype.

        Raises:
            TypeError: a bfloat16 tensor (NumPy has no bfloat16: convert with .astype(pcp.float32)).

        Example:
            >>> x = pcp.zeros(3)
            >>> a = x.numpy()
            >>> a[0] = 7.0
            >>> x.tolist()
            [7.0, 0.0, 0.0]
        """
    def permute(self, *args: typing.Any) -> Tensor:
        """
        This tensor with its axes in the given order, as PyTorch's permute: a view.

        Args:
            *axes: a permutation of range(ndim), as separate ints or one tuple; negative counts from
                the end.

        Returns:
            A view with shape [self.shape[a] for a in axes].

        Raises:
            ValueError: the axes are not a permutation (an axis repeated or missing).
            IndexError: an axis out of range.

        Example:
            >>> pcp.zeros((2, 3, 4)).permute(2, 0, 1).shape
            (4, 2, 3)
        """
    def pow(self, b: typing.Any) -> Tensor:
        """
        a to the power b, elementwise with broadcasting (the ** operator).

        Args:
            a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

        Returns:
            A new tensor of the broadcast shape and the promoted dtype.

        Raises:
            ValueError: the shapes do not broadcast (the message names both shapes).
            TypeError: an argument is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.pow(pcp.tensor([2.0, 3.0]), 2).tolist()
            [4.0, 9.0]
        """
    def prod(self, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
        """
        The product of x's elements over `axis` (1 for an empty one); integers and bools count
        in int64. Differentiable, exactly where x has zeros. A GPU tensor is computed on the
        host (no GPU kernel yet).

        Args:
            x: a tensor of any shape.
            axis: an int, a tuple of ints, or None (the default) for every axis;
                negative counts from the end.
            keepdims: keep the reduced axes with length 1 (default False).

        Returns:
            A tensor without the reduced axes, of x's floating dtype or int64.

        Raises:
            IndexError: an axis out of range for x.
            ValueError: an axis named twice.

        Example:
            >>> pcp.prod(pcp.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=1).tolist()
            [2.0, 12.0]
        """
    def relu(self) -> Tensor:
        """
        max(x, 0), elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.relu(pcp.tensor([-1.0, 2.0])).tolist()
            [0.0, 2.0]
        """
    @property
    def requires_grad(self) -> bool:
        """
        Whether operations on this tensor are recorded for backward(). Set it to True on a leaf (a
        tensor you made, such as a parameter) to have backward() fill its .grad; results of recorded
        operations require grad by themselves.

        Raises:
            TypeError: set to True on a tensor whose dtype is not floating.
            ValueError: set to False on a tensor that is not a leaf (use detach()).

        Example:
            >>> w = pcp.zeros(2)
            >>> w.requires_grad = True
            >>> (w * 2).requires_grad
            True
        """
    @requires_grad.setter
    def requires_grad(self, value: bool) -> None: ...
    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """
        Sets requires_grad in place and returns this tensor, for chaining: w = pcp.zeros(3).requires_grad_().

        Args:
            requires_grad: the new value (default True).

        Returns:
            This tensor.

        Raises:
            TypeError: True for a tensor whose dtype is not floating.
            ValueError: False for a tensor that is not a leaf (use detach()).

        Example:
            >>> pcp.zeros(3).requires_grad_().requires_grad
            True
        """
    def reshape(self, *args: typing.Any) -> Tensor:
        """
        This tensor with a new shape of the same number of elements, as pcp.reshape: a view where the
        strides allow, else a copy. One dimension may be -1, inferred from the others.

        Args:
            *shape: the new shape, as separate ints or as one tuple or list.

        Returns:
            A tensor of the new shape holding the elements in row-major order.

        Raises:
            ValueError: the number of elements differs, more than one -1, or a negative dimension.

        Example:
            >>> pcp.arange(6).reshape(3, 2).shape
            (3, 2)
        """
    def retain_grad(self) -> None:
        """
        Makes backward() keep this tensor's gradient in .grad although it is not a leaf (an
        intermediate result); leaves keep theirs anyway. It raises nothing.

        Returns:
            None.

        Example:
            >>> w = pcp.tensor([1.0, 2.0], requires_grad=True)
            >>> h = w * 3
            >>> h.retain_grad()
            >>> (h * h).sum().backward()
            >>> h.grad.tolist()
            [6.0, 12.0]
        """
    def round(self) -> Tensor:
        """
        x rounded to the nearest integer, halves to even, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape and numeric dtype.

        Returns:
            A new tensor of x's shape and dtype (an integer tensor's values are already whole).

        Raises:
            TypeError: x is a bool tensor, or not a tensor, an array, a list or a number.

        Example:
            >>> pcp.round(pcp.tensor([0.5, 1.5, -2.5])).tolist()
            [0.0, 2.0, -2.0]
        """
    def rsqrt(self) -> Tensor:
        """
        1 / sqrt(x), elementwise (inf at 0).

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.rsqrt(pcp.tensor([4.0])).tolist()
            [0.5]
        """
    @property
    def shape(self) -> tuple[typing.Any, ...]:
        """
        The length of each axis, a tuple of ints (``()`` for a 0-d tensor).

        Example:
            >>> pcp.zeros((2, 3)).shape
            (2, 3)
        """
    def sigmoid(self) -> Tensor:
        """
        1 / (1 + exp(-x)), elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.sigmoid(pcp.tensor([0.0])).tolist()
            [0.5]
        """
    def sign(self) -> Tensor:
        """
        -1, 0 or 1 by the sign of x, elementwise (nan stays nan).

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.sign(pcp.tensor([-3.0, 0.0, 2.0])).tolist()
            [-1.0, 0.0, 1.0]
        """
    def silu(self) -> Tensor:
        """
        x * sigmoid(x), elementwise (also called swish).

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.silu(pcp.tensor([0.0])).tolist()
            [0.0]
        """
    def sin(self) -> Tensor:
        """
        The sine of x (radians), elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.sin(pcp.tensor([0.0])).tolist()
            [0.0]
        """
    def sinh(self) -> Tensor:
        """
        The hyperbolic sine of x, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.sinh(pcp.tensor([0.0])).tolist()
            [0.0]
        """
    @property
    def size(self) -> int:
        """
        The number of elements, the product of shape (1 for a 0-d tensor), as NumPy's ``size``
        attribute (PyTorch's ``x.size()`` is ``x.shape`` here).

        Example:
            >>> pcp.zeros((2, 3)).size
            6
        """
    def softmax(self, axis: int = -1) -> Tensor:
        """
        Softmax along an axis: exp(x - max) / sum(exp(x - max)), stable for large inputs.

        Args:
            x: a tensor of any shape; integer inputs are promoted to float32.
            axis: the axis to normalise over (default -1, the last); negative counts from the end.

        Returns:
            A tensor of x's shape whose values along `axis` are non-negative and sum to 1. float16
            and bfloat16 inputs are computed in float32 and rounded once; a NaN makes its whole row NaN.

        Raises:
            IndexError: axis out of range for x.

        Example:
            >>> [round(v, 4) for v in pcp.softmax(pcp.tensor([1.0, 2.0, 3.0])).tolist()]
            [0.09, 0.2447, 0.6652]
        """
    def sort(self, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
        """
        x sorted along `axis` (x taken at argsort's indices: differentiable), NaNs last ascending.

        Args:
            x: a tensor.
            axis: the axis to sort along (default -1).
            descending: largest first (default False).
            stable: accepted; the sort is always stable.

        Returns:
            A tensor of x's shape and dtype.

        Raises:
            IndexError: axis out of range for x.

        Example:
            >>> pcp.sort(pcp.tensor([3, 1, 2]), descending=True).tolist()
            [3, 2, 1]
        """
    def split(self, indices_or_sections: typing.Any, axis: int = 0) -> list[Tensor]:
        """
        x cut along an axis into a list of views: into n equal sections, or at the given indices (as
        NumPy's split; indices beyond the axis clamp).

        Args:
            x: a tensor.
            indices_or_sections: an int n dividing the axis, or a sequence of split points.
            axis: the axis to cut (default 0).

        Returns:
            A list of tensors.

        Raises:
            ValueError: n does not divide the axis.
            TypeError: split points that are not ints.

        Example:
            >>> [a.tolist() for a in pcp.split(pcp.arange(6), [1, 4])]
            [[0], [1, 2, 3], [4, 5]]
        """
    def sqrt(self) -> Tensor:
        """
        The square root of x, elementwise (nan below 0).

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.sqrt(pcp.tensor([4.0, 9.0])).tolist()
            [2.0, 3.0]
        """
    def square(self) -> Tensor:
        """
        x * x, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.square(pcp.tensor([3.0])).tolist()
            [9.0]
        """
    def squeeze(self, axis: typing.Any = None) -> Tensor:
        """
        x without axes of length 1 (all of them, or those given): a view.

        Args:
            x: a tensor.
            axis: an int, a tuple of ints, or None (default) for every length-1 axis.

        Returns:
            A view of x.

        Raises:
            ValueError: a named axis whose length is not 1.
            IndexError: an axis out of range.

        Example:
            >>> pcp.squeeze(pcp.zeros((1, 3, 1))).shape
            (3,)
        """
    @property
    def strides(self) -> tuple[typing.Any, ...]:
        """
        For each axis, how many elements apart its neighbours lie in storage: a tuple of ints, in
        elements (NumPy's are in bytes). Views such as x.T change strides, not data; a broadcast axis
        has stride 0 and a reversed one a negative stride.

        Example:
            >>> x = pcp.zeros((2, 3))
            >>> x.strides, x.T.strides
            ((3, 1), (1, 3))
        """
    def sum(self, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
        """
        The sum of x's elements over `axis` (all of them by default).

        Args:
            x: a tensor of any shape.
            axis: an int, a tuple of ints, or None for every axis; negative counts from the end.
            keepdims: keep the summed axes with length 1 (default False).

        Returns:
            A tensor of x's shape without the summed axes; bool and integer inputs sum as int64,
            float16 and bfloat16 in float32 (rounded once).

        Raises:
            IndexError: an axis out of range for x.
            ValueError: an axis named twice.

        Example:
            >>> pcp.sum(pcp.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=0).tolist()
            [4.0, 6.0]
        """
    def swapaxes(self, axis1: int, axis2: int) -> Tensor:
        """
        x with two axes exchanged: a view.

        Args:
            x: a tensor.
            axis1, axis2: the axes to exchange.

        Returns:
            A view of x.

        Raises:
            IndexError: an axis out of range.

        Example:
            >>> pcp.swapaxes(pcp.zeros((2, 3, 4)), 0, 2).shape
            (4, 3, 2)
        """
    def take(self, indices: typing.Any, axis: int | None = None) -> Tensor:
        """
        Elements of x at integer indices along an axis (NumPy's take): the flattened x when axis is None.

        Args:
            x: a tensor.
            indices: an integer tensor of any shape (negative counts from the end).
            axis: an int, or None (default).

        Returns:
            x.shape[:axis] + indices.shape + x.shape[axis + 1:] (indices.shape when axis is None).

        Raises:
            IndexError: an index out of bounds, or axis out of range.

        Example:
            >>> pcp.take(pcp.arange(10, 15), pcp.tensor([4, 0])).tolist()
            [14, 10]
        """
    def tan(self) -> Tensor:
        """
        The tangent of x (radians), elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.tan(pcp.tensor([0.0])).tolist()
            [0.0]
        """
    def tanh(self) -> Tensor:
        """
        The hyperbolic tangent of x, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

        Returns:
            A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

        Raises:
            TypeError: x is not a tensor, an array, a list or a number.

        Example:
            >>> pcp.tanh(pcp.tensor([0.0])).tolist()
            [0.0]
        """
    def to(self, device_or_dtype: typing.Any = None, dtype_or_device: typing.Any = None, *, device: typing.Any = None, dtype: typing.Any = None) -> Tensor:
        """
        This tensor on another device and/or in another dtype, as PyTorch's ``to``: x.to('gpu'),
        x.to(pcp.float16), x.to('gpu', pcp.float16) or x.to(device=..., dtype=...). A move is a copy
        that gradients flow back through; when nothing changes, the result shares this tensor's storage.

        Args:
            device_or_dtype: a device's name ('cpu', 'gpu', 'gpu:N', 'vulkan:N') or a dtype.
            dtype_or_device: the other of the two, optionally.
            device: the device, by keyword.
            dtype: the dtype, by keyword.

        Returns:
            A tensor of this shape on that device, in that dtype.

        Raises:
            ValueError: an unknown device, or a GPU this machine does not have.
            TypeError: an unknown dtype, or two devices or two dtypes given.

        Example:
            >>> x = pcp.arange(3).to("cpu", pcp.float32)
            >>> x.device, x.dtype
            ('cpu', pcp.float32)
        """
    def to_device(self, device: typing.Any, *, stream: typing.Any = None) -> typing.Any:
        """
        This tensor on `device`: itself when it is there already, else a copy there (the Array API
        standard's name for x.to(device)).

        Args:
            device: a pcp.device, or its name ("cpu", "gpu", "gpu:1").
            stream: must be None: PCP has no streams to name.

        Returns:
            A tensor.

        Raises:
            ValueError: a stream, or a device that does not exist.

        Example:
            >>> x = pcp.ones((2,))
            >>> x.to_device("cpu") is x
            True
        """
    def tolist(self) -> typing.Any:
        """
        The elements as nested Python lists (one level per axis) of ints, floats or bools, as NumPy's
        tolist; a 0-d tensor gives a plain number. float16 and bfloat16 values are widened exactly. It
        raises nothing.

        Returns:
            A list, or a number for a 0-d tensor.

        Example:
            >>> pcp.arange(4).reshape(2, 2).tolist()
            [[0, 1], [2, 3]]
        """
    def transpose(self, *args: typing.Any) -> Tensor:
        """
        This tensor with its axes permuted, as NumPy's ndarray.transpose (not PyTorch's, which swaps
        two axes: use swapaxes for that): the axes reversed when none are given. A view.

        Args:
            *axes: a permutation of range(ndim), as separate ints or one tuple; none for the reverse.

        Returns:
            A view with shape [self.shape[a] for a in axes].

        Raises:
            ValueError: the axes are not a permutation of this tensor's.

        Example:
            >>> pcp.zeros((2, 3, 4)).transpose(1, 2, 0).shape
            (3, 4, 2)
        """
    def tril(self, k: int = 0) -> Tensor:
        """
        x with the elements above the k-th diagonal zeroed (of its last two axes).

        Args:
            x: a tensor of at least 2 dimensions.
            k: the diagonal (default 0; positive above the main one).

        Returns:
            A tensor of x's shape.

        Raises:
            ValueError: x has fewer than 2 dimensions.

        Example:
            >>> pcp.tril(pcp.ones((2, 2))).tolist()
            [[1.0, 0.0], [1.0, 1.0]]
        """
    def triu(self, k: int = 0) -> Tensor:
        """
        x with the elements below the k-th diagonal zeroed (of its last two axes).

        Args:
            x: a tensor of at least 2 dimensions.
            k: the diagonal (default 0; positive above the main one).

        Returns:
            A tensor of x's shape.

        Raises:
            ValueError: x has fewer than 2 dimensions.

        Example:
            >>> pcp.triu(pcp.ones((2, 2))).tolist()
            [[1.0, 1.0], [0.0, 1.0]]
        """
    def trunc(self) -> Tensor:
        """
        x rounded toward zero, elementwise.

        Args:
            x: a tensor (or anything pcp.asarray takes) of any shape and numeric dtype.

        Returns:
            A new tensor of x's shape and dtype (an integer tensor's values are already whole).

        Raises:
            TypeError: x is a bool tensor, or not a tensor, an array, a list or a number.

        Example:
            >>> pcp.trunc(pcp.tensor([-1.5, 2.5])).tolist()
            [-1.0, 2.0]
        """
    def unsqueeze(self, axis: int) -> Tensor:
        """
        x with a new axis of length 1 at `axis` (NumPy's expand_dims): a view.

        Args:
            x: a tensor.
            axis: the new axis's position in the result (negative counts from its end).

        Returns:
            A view of x with one more dimension.

        Raises:
            IndexError: axis out of range.

        Example:
            >>> pcp.unsqueeze(pcp.zeros(3), 0).shape
            (1, 3)
        """
    def var(self, axis: typing.Any = None, ddof: typing.SupportsFloat | typing.SupportsIndex = 0, keepdims: bool = False) -> Tensor:
        """
        The variance of x's elements over `axis`: the mean of squared deviations, divided by n - ddof.

        Args:
            x: a tensor of any shape.
            axis: an int, a tuple of ints, or None (default) for every axis.
            ddof: delta degrees of freedom (default 0; 1 gives the unbiased estimate).
            keepdims: keep the reduced axes with length 1 (default False).

        Returns:
            A floating tensor without the reduced axes (NaN where n - ddof <= 0).

        Raises:
            IndexError: an axis out of range for x.
            ValueError: an axis named twice.

        Example:
            >>> pcp.var(pcp.tensor([1.0, 2.0, 3.0, 4.0])).item()
            1.25
        """
    def view(self, *args: typing.Any) -> Tensor:
        """
        The same as reshape (PyTorch's name). Unlike PyTorch's view it copies where the strides do
        not allow a view, instead of raising.

        Args:
            *shape: the new shape, as separate ints or as one tuple or list; one may be -1.

        Returns:
            A tensor of the new shape.

        Raises:
            ValueError: the number of elements differs, more than one -1, or a negative dimension.

        Example:
            >>> pcp.zeros((2, 3)).view(-1).shape
            (6,)
        """


class Trace:
    """
    An open trace on this thread (see pcp.compile)
    """
    def __init__(self, args: collections.abc.Sequence[Tensor]) -> None:
        ...
    def close(self) -> None:
        """
        Closes the trace without a plan (the function raised)
        """
    def finish(self, outputs: collections.abc.Sequence[Tensor]) -> Plan:
        """
        Ends the trace with the function's outputs: the plan
        """


def _crc32c(data: typing_extensions.Buffer, crc: typing.SupportsInt | typing.SupportsIndex = 0) -> int:
    """
    CRC32C (Castagnoli) of a contiguous buffer's bytes, continuing from crc (the CRC32C of the bytes before; 0 to start): what PCP's safetensors files carry per tensor
    """

def _cuda_compile_kernel(name: str, constants: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], arch: typing.SupportsInt | typing.SupportsIndex) -> int:
    """
    Compiles a kernel's CUDA translation with NVRTC (no GPU needed): the cubin's size in bytes
    """

def _gpu_kernels() -> dict[typing.Any, typing.Any]:
    """
    {name: (SPIR-V bytes, MSL source or None, workgroup size, CUDA source or None)} of the embedded GPU kernels
    """

def _same_tensor(a: Tensor, b: Tensor) -> bool:
    """
    Whether two handles are one tensor (Python makes a new handle each time one crosses over)
    """

def _set_gpu_attention(mode: str) -> None:
    """
    Which attention GPUs run: auto, fused (the flash kernels) or composed (tests, benchmarks)
    """

def _set_gpu_vendor(enabled: bool) -> None:
    """
    NVIDIA's libraries for products and attention where they loaded (on by default), or PCP's own kernels
    """

def _tensor(data: typing.Any, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    ...

def abs(x: typing.Any) -> Tensor:
    """
    The absolute value of x, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.abs(pcp.tensor([-2.0, 3.0])).tolist()
        [2.0, 3.0]
    """

def acos(x: typing.Any) -> Tensor:
    """
    The inverse cosine of x, in [0, pi], elementwise (nan outside [-1, 1]).

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.acos(pcp.tensor([1.0])).tolist()
        [0.0]
    """

def acosh(x: typing.Any) -> Tensor:
    """
    The inverse hyperbolic cosine of x, elementwise (nan below 1).

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.acosh(pcp.tensor([1.0])).tolist()
        [0.0]
    """

def adam_step(params: collections.abc.Sequence[Tensor], grads: collections.abc.Sequence[Tensor], exp_avg: collections.abc.Sequence[Tensor], exp_avg_sq: collections.abc.Sequence[Tensor], step: typing.Any, lr: typing.Any, beta1: typing.SupportsFloat | typing.SupportsIndex, beta2: typing.SupportsFloat | typing.SupportsIndex, eps: typing.SupportsFloat | typing.SupportsIndex, weight_decay: typing.SupportsFloat | typing.SupportsIndex, decoupled: bool) -> None:
    """
    One fused Adam/AdamW step over every parameter, updating params and state in place; step and lr may be HostScalars
    """

def add(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a + b, elementwise with broadcasting (the + operator).

    Args:
        a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

    Returns:
        A new tensor of the broadcast shape and the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast (the message names both shapes).
        TypeError: an argument is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.add(pcp.tensor([[1.0], [2.0]]), pcp.tensor([10.0, 20.0])).tolist()
        [[11.0, 21.0], [12.0, 22.0]]
    """

def all(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
    """
    Whether every element over `axis` is true (non-zero).

    Args:
        x: a tensor of any shape.
        axis: an int, a tuple of ints, or None (the default) for every axis;
            negative counts from the end.
        keepdims: keep the reduced axes with length 1 (default False).

    Returns:
        A bool tensor without the reduced axes.

    Raises:
        IndexError: an axis out of range for x.
        ValueError: an axis named twice.

    Example:
        >>> pcp.all(pcp.tensor([False, True])).item()
        False
    """

def any(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
    """
    Whether any element over `axis` is true (non-zero).

    Args:
        x: a tensor of any shape.
        axis: an int, a tuple of ints, or None (the default) for every axis;
            negative counts from the end.
        keepdims: keep the reduced axes with length 1 (default False).

    Returns:
        A bool tensor without the reduced axes.

    Raises:
        IndexError: an axis out of range for x.
        ValueError: an axis named twice.

    Example:
        >>> pcp.any(pcp.tensor([False, True])).item()
        True
    """

def arange(start: typing.Any, stop: typing.Any = None, step: typing.Any = 1, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    """
    Evenly spaced values in [start, stop), as NumPy's arange: arange(stop) or arange(start, stop,
    step). All-integer arguments give int64 and are exact; any float gives float32.

    Args:
        start, stop, step: numbers (step non-zero).
        dtype: the element type (default: as above).
        device: where to create it (default: pcp.get_default_device()).

    Returns:
        A 1-D tensor of ceil((stop - start) / step) values (none when that is not positive).

    Raises:
        TypeError: an argument that is not a number.
        ValueError: a zero step.

    Example:
        >>> pcp.arange(1, 7, 2).tolist()
        [1, 3, 5]
    """

def argmax(x: typing.Any, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """
    The index of the largest element along `axis` (the first of equals), or in the flattened x when
    axis is None.

    Args:
        x: a tensor.
        axis: an int, or None (default) for the flattened tensor.
        keepdims: keep the reduced axis with length 1 (default False).

    Returns:
        An int64 tensor without the reduced axis.

    Raises:
        IndexError: axis out of range for x.
        ValueError: an empty axis (no maximum).

    Example:
        >>> pcp.argmax(pcp.tensor([1.0, 3.0, 2.0])).item()
        1
    """

def argmin(x: typing.Any, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """
    The index of the smallest element along `axis` (the first of equals), or in the flattened x when
    axis is None.

    Args:
        x: a tensor.
        axis: an int, or None (default) for the flattened tensor.
        keepdims: keep the reduced axis with length 1 (default False).

    Returns:
        An int64 tensor without the reduced axis.

    Raises:
        IndexError: axis out of range for x.
        ValueError: an empty axis (no minimum).

    Example:
        >>> pcp.argmin(pcp.tensor([1.0, 3.0, 0.5])).item()
        2
    """

def argsort(x: typing.Any, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """
    The indices that sort x along `axis`, stably: equal values keep their order (descending too);
    NaNs order above every number. A GPU tensor is sorted on the host (no GPU kernel yet).

    Args:
        x: a tensor.
        axis: the axis to sort along (default -1).
        descending: largest first (default False).
        stable: accepted for the Array API standard; the sort is always stable.

    Returns:
        An int64 tensor of x's shape.

    Raises:
        IndexError: axis out of range for x.

    Example:
        >>> pcp.argsort(pcp.tensor([3.0, 1.0, 2.0])).tolist()
        [1, 2, 0]
    """

def asarray(data: typing.Any, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    """
    A tensor from data: a Tensor as it is (no copy), else a new tensor holding the data's values,
    as NumPy's asarray. Python ints give int64, floats float32, bools bool; NumPy arrays keep
    their dtype (float64 stays float64).

    Args:
        data: a Tensor, a NumPy array or scalar, a (nested) list or tuple, or a number.
        dtype: convert to this dtype (default: as above).
        device: put it there (default: where it is, or the CPU).

    Returns:
        A tensor.

    Raises:
        TypeError: data of another type, or an unknown dtype.
        ValueError: ragged nested lists.

    Example:
        >>> pcp.asarray([[1, 2], [3, 4]]).dtype
        pcp.int64
    """

def asin(x: typing.Any) -> Tensor:
    """
    The inverse sine of x, in [-pi/2, pi/2], elementwise (nan outside [-1, 1]).

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.asin(pcp.tensor([0.0])).tolist()
        [0.0]
    """

def asinh(x: typing.Any) -> Tensor:
    """
    The inverse hyperbolic sine of x, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.asinh(pcp.tensor([0.0])).tolist()
        [0.0]
    """

def astype(x: typing.Any, dtype: typing.Any) -> Tensor:
    """
    x converted to another dtype: a copy (as NumPy's astype). Floats to integers truncate toward
    zero; float32 to float16 or bfloat16 rounds to nearest even.

    Args:
        x: a tensor.
        dtype: a pcp dtype, its name ('bfloat16'), or a NumPy dtype.

    Returns:
        A tensor of x's shape in that dtype.

    Raises:
        TypeError: an unknown dtype.

    Example:
        >>> pcp.astype(pcp.tensor([1.7, -1.7]), pcp.int32).tolist()
        [1, -1]
    """

def atan(x: typing.Any) -> Tensor:
    """
    The inverse tangent of x, in [-pi/2, pi/2], elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.atan(pcp.tensor([0.0])).tolist()
        [0.0]
    """

def atan2(a: typing.Any, b: typing.Any) -> Tensor:
    """
    The angle of the point (b, a) from the x axis, in [-pi, pi], elementwise (integers are
    taken as floats; zeros and infinities as C's atan2).

    Args:
        a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

    Returns:
        A new tensor of the broadcast shape and the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast (the message names both shapes).
        TypeError: an argument is not a tensor, an array, a list or a number.

    Example:
        >>> round(pcp.atan2(pcp.tensor([1.0]), pcp.tensor([-1.0])).item(), 4)
        2.3562
    """

def atanh(x: typing.Any) -> Tensor:
    """
    The inverse hyperbolic tangent of x, elementwise (+-inf at +-1, nan beyond).

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.atanh(pcp.tensor([0.0])).tolist()
        [0.0]
    """

def autocast_dtype() -> DType | None:
    """
    The dtype of the enclosing pcp.autocast scope, or None
    """

def autograd_grad(output: Tensor, inputs: collections.abc.Sequence[Tensor], grad: typing.Any = None, create_graph: bool = False, retain_graph: bool | None = None) -> list[Tensor]:
    """
    Gradients of `output` with respect to each of `inputs`, without touching .grad
    """

def bitwise_and(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a & b on integers and bools, elementwise.

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A tensor in the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.bitwise_and(pcp.tensor([12]), 10).tolist()
        [8]
    """

def bitwise_left_shift(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a << b on integers, elementwise (a count below 0 or of the type's width or
    more gives 0).

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A tensor in the promoted integer dtype.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.bitwise_left_shift(pcp.tensor([1, 3]), 2).tolist()
        [4, 12]
    """

def bitwise_not(x: typing.Any) -> Tensor:
    """
    ~x on integers and bools, elementwise (the ~ operator).

    Args:
        x: an integer or bool tensor.

    Returns:
        A tensor of x's shape and dtype.

    Raises:
        TypeError: a floating tensor.

    Example:
        >>> pcp.bitwise_not(pcp.tensor([0, 2])).tolist()
        [-1, -3]
    """

def bitwise_or(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a | b on integers and bools, elementwise.

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A tensor in the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.bitwise_or(pcp.tensor([12]), 10).tolist()
        [14]
    """

def bitwise_right_shift(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a >> b on integers, elementwise, keeping the sign (a count below 0 or of the
    type's width or more gives 0, or -1 for negative a).

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A tensor in the promoted integer dtype.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.bitwise_right_shift(pcp.tensor([12, -12]), 2).tolist()
        [3, -3]
    """

def bitwise_xor(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a ^ b on integers and bools, elementwise.

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A tensor in the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.bitwise_xor(pcp.tensor([12]), 10).tolist()
        [6]
    """

def broadcast_to(x: Tensor, shape: typing.Any) -> Tensor:
    """
    x broadcast to a shape, as NumPy's broadcast_to: a read-only view repeating x's elements.

    Args:
        x: a tensor.
        shape: the target shape; x's axes align with its last ones.

    Returns:
        A view of that shape.

    Raises:
        ValueError: x's shape does not broadcast to it.

    Example:
        >>> pcp.broadcast_to(pcp.tensor([1, 2]), (2, 2)).tolist()
        [[1, 2], [1, 2]]
    """

def ceil(x: typing.Any) -> Tensor:
    """
    The smallest integer not below x, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape and numeric dtype.

    Returns:
        A new tensor of x's shape and dtype (an integer tensor's values are already whole).

    Raises:
        TypeError: x is a bool tensor, or not a tensor, an array, a list or a number.

    Example:
        >>> pcp.ceil(pcp.tensor([-1.5, 2.5])).tolist()
        [-1.0, 3.0]
    """

def clear_cache(device: typing.Any = None) -> None:
    """
    Returns a device's cached free blocks to the system (the caching allocator keeps freed memory
    for reuse); tensors in use are untouched. On a GPU it waits for the device first.

    Args:
        device: 'cpu', a GPU, or None (default) for the default device.

    Returns:
        None.

    Raises:
        ValueError: an unknown device.

    Example:
        >>> pcp.clear_cache('cpu')
    """

def clip(x: typing.Any, min: typing.Any = None, max: typing.Any = None) -> Tensor:
    """
    x limited to [min, max] elementwise; either bound may be None (no limit) and broadcasts.

    Args:
        x: a tensor.
        min: the lower bound, a number or tensor, or None.
        max: the upper bound, a number or tensor, or None.

    Returns:
        A tensor of the broadcast shape.

    Raises:
        ValueError: shapes that do not broadcast.

    Example:
        >>> pcp.clip(pcp.tensor([-2.0, 0.5, 3.0]), 0.0, 1.0).tolist()
        [0.0, 0.5, 1.0]
    """

def clip_grad_norm(grads: collections.abc.Sequence[Tensor], max_norm: typing.SupportsFloat | typing.SupportsIndex, eps: typing.SupportsFloat | typing.SupportsIndex = 1e-06) -> Tensor:
    """
    Scales float32 gradients in place so their global L2 norm is at most max_norm; returns the norm before, a 0-d tensor on their device
    """

def concatenate(tensors: collections.abc.Sequence[typing.Any], axis: int = 0) -> Tensor:
    """
    The tensors joined along an existing axis.

    Args:
        tensors: a sequence of tensors of one number of dimensions, equal in every axis but `axis`.
        axis: the axis to join along (default 0).

    Returns:
        A new tensor in the promoted dtype; its length along `axis` is the sum of theirs.

    Raises:
        ValueError: no tensors, different numbers of dimensions, other axes that differ, or
            tensors on different devices.

    Example:
        >>> pcp.concatenate([pcp.ones((1, 2)), pcp.zeros((2, 2))]).shape
        (3, 2)
    """

def contiguous(x: Tensor) -> Tensor:
    """
    x in row-major order in memory of its own: x itself when it already is, else a copy.

    Args:
        x: a tensor.

    Returns:
        A contiguous tensor equal to x.

    Raises:
        TypeError: x is not a tensor.

    Example:
        >>> pcp.contiguous(pcp.zeros((2, 3)).T).is_contiguous()
        True
    """

def copy(x: Tensor) -> Tensor:
    """
    A copy of x in new memory (x.clone()); differentiable.

    Args:
        x: a tensor.

    Returns:
        A new contiguous tensor equal to x, on x's device.

    Raises:
        TypeError: x is not a tensor.

    Example:
        >>> pcp.copy(pcp.tensor([1, 2])).tolist()
        [1, 2]
    """

def copysign(a: typing.Any, b: typing.Any) -> Tensor:
    """
    The magnitude of a with the sign bit of b, elementwise (integers are taken as floats).

    Args:
        a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

    Returns:
        A new tensor of the broadcast shape and the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast (the message names both shapes).
        TypeError: an argument is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.copysign(pcp.tensor([2.0, 3.0]), pcp.tensor([-0.0, 1.0])).tolist()
        [-2.0, 3.0]
    """

def cos(x: typing.Any) -> Tensor:
    """
    The cosine of x (radians), elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.cos(pcp.tensor([0.0])).tolist()
        [1.0]
    """

def cosh(x: typing.Any) -> Tensor:
    """
    The hyperbolic cosine of x, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.cosh(pcp.tensor([0.0])).tolist()
        [1.0]
    """

def cpu_features() -> dict[typing.Any, typing.Any]:
    """
    Which CPU kernels this machine runs: the instruction set chosen at start-up ('avx512',
    'avx2', 'neon' or 'baseline'; PCP_SIMD overrides it), those available, the thread count, and
    whether bfloat16 matmuls use AVX512_BF16. It raises nothing.

    Returns:
        A dict: isa, available, threads, bf16_matmul.

    Example:
        >>> sorted(pcp.cpu_features())
        ['available', 'bf16_matmul', 'isa', 'threads']
    """

def cross_entropy(logits: Tensor, targets: typing.Any, ignore_index: int = -100, reduction: str = 'mean') -> Tensor:
    """
    Cross-entropy of logits against integer class targets: the mean over the targets of
    -log_softmax(logits)[target], classes on the last axis (PyTorch's F.cross_entropy on (N, C)).

    Args:
        logits: (..., C) floating scores.
        targets: (...) integers in [0, C), or ignore_index; on the CPU or on the logits' GPU.
        ignore_index: targets equal to it add nothing and are not counted (default -100).
        reduction: 'mean' over the counted targets (default), 'sum', or 'none'.

    Returns:
        With 'mean' or 'sum' a 0-d float tensor (a mean over no counted target is NaN); with
        'none' the per-target losses, of targets' shape (0 where ignored).

    Raises:
        ValueError: targets' shape is not logits' without the class axis, or an unknown reduction.
        IndexError: a target outside [0, C) that is not ignore_index (on a GPU, at the next
            synchronisation, as CUDA's device asserts).

    Example:
        >>> logits = pcp.tensor([[2.0, 0.0], [0.0, 2.0]])
        >>> round(pcp.cross_entropy(logits, pcp.tensor([0, 1])).item(), 4)
        0.1269
    """

def cumprod(x: typing.Any, axis: int | None = None) -> Tensor:
    """
    Running products of x along `axis` (of the flattened x when axis is None). Integers and bools
    count in int64. Differentiable, exactly where x has zeros. A GPU tensor is computed on
    the host (no GPU kernel yet).

    Args:
        x: a tensor.
        axis: an int, or None (default) for the flattened x.

    Returns:
        A tensor of x's shape (flattened when axis is None).

    Raises:
        IndexError: axis out of range for x.

    Example:
        >>> pcp.cumprod(pcp.tensor([1.0, 2.0, 3.0])).tolist()
        [1.0, 2.0, 6.0]
    """

def cumsum(x: typing.Any, axis: int | None = None) -> Tensor:
    """
    Running sums of x along `axis` (of the flattened x when axis is None). Integers and bools
    count in int64; 16-bit floats in float32, rounded back. Differentiable. A GPU tensor is
    summed on the host (no GPU kernel yet).

    Args:
        x: a tensor.
        axis: an int, or None (default) for the flattened x.

    Returns:
        A tensor of x's shape (flattened when axis is None).

    Raises:
        IndexError: axis out of range for x.

    Example:
        >>> pcp.cumsum(pcp.tensor([1, 2, 3])).tolist()
        [1, 3, 6]
    """

def device(name: str) -> str:
    """
    The canonical name of a device: 'gpu' -> 'vulkan:0'; a ValueError when it does not exist
    """

def devices() -> list[tuple[str, str]]:
    """
    [(device, description)] for the CPU and every GPU (hardware GPUs first; a software one says so)
    """

def div(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a / b, elementwise with broadcasting (true division: integers give float32).

    Args:
        a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

    Returns:
        A new tensor of the broadcast shape and the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast (the message names both shapes).
        TypeError: an argument is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.div(pcp.tensor([3, 4]), 2).tolist()
        [1.5, 2.0]
    """

def dropout(x: Tensor, p: typing.SupportsFloat | typing.SupportsIndex = 0.5, training: bool = True) -> Tensor:
    """
    Inverted dropout: each element is zeroed with probability p and the rest scaled by 1 / (1 - p),
    so the expectation is unchanged; x itself when not training. The mask comes from the seeded
    generator, the same on the CPU and the GPU.

    Args:
        x: a floating tensor.
        p: the probability of dropping (default 0.5).
        training: apply dropout (default True); False returns x.

    Returns:
        A tensor of x's shape.

    Raises:
        ValueError: p outside [0, 1].

    Example:
        >>> pcp.dropout(pcp.ones(4), 0.5, training=False).tolist()
        [1.0, 1.0, 1.0, 1.0]
    """

def embedding(weight: Tensor, indices: typing.Any) -> Tensor:
    """
    Rows of a table gathered by integer indices: weight[indices] (a lookup, differentiable in
    weight, whose gradient is a scatter-add of the output's).

    Args:
        weight: (V, C), the table.
        indices: integer tensor of any shape, values in [0, V).

    Returns:
        indices.shape + (C,), in weight's dtype and on weight's device.

    Raises:
        IndexError: an index outside [0, V), named with its value.
        ValueError: weight is not 2-D.
        TypeError: indices are not integers.

    Example:
        >>> w = pcp.tensor([[0.0, 0.0], [1.0, 2.0]])
        >>> pcp.embedding(w, pcp.tensor([1, 1, 0])).tolist()
        [[1.0, 2.0], [1.0, 2.0], [0.0, 0.0]]
    """

def eq(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a == b, elementwise.

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A bool tensor of the broadcast shape.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.eq(pcp.tensor([1, 2]), pcp.tensor([1, 3])).tolist()
        [True, False]
    """

def erf(x: typing.Any) -> Tensor:
    """
    The error function of x, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.erf(pcp.tensor([0.0])).tolist()
        [0.0]
    """

def exp(x: typing.Any) -> Tensor:
    """
    e to the power x, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.exp(pcp.tensor([0.0, 1.0])).tolist()
        [1.0, 2.7182817459106445]
    """

def expand_dims(x: Tensor, axis: int) -> Tensor:
    """
    x with a new axis of length 1 at `axis` (NumPy's name for unsqueeze): a view.

    Args:
        x: a tensor.
        axis: the new axis's position in the result.

    Returns:
        A view of x with one more dimension.

    Raises:
        IndexError: axis out of range.

    Example:
        >>> pcp.expand_dims(pcp.zeros(3), -1).shape
        (3, 1)
    """

def expm1(x: typing.Any) -> Tensor:
    """
    exp(x) - 1, elementwise, accurate for x near 0.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.expm1(pcp.tensor([0.0])).tolist()
        [0.0]
    """

def eye(n: int, m: int | None = None, k: int = 0, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    """
    A 2-D tensor with ones on a diagonal and zeros elsewhere.

    Args:
        n: rows.
        m: columns (default n).
        k: the diagonal: 0 the main one, positive above it, negative below.
        dtype: the element type (default float32).
        device: where (default: pcp.get_default_device()).

    Returns:
        An (n, m) tensor.

    Raises:
        ValueError: a negative n or m.

    Example:
        >>> pcp.eye(2).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """

def flatten(x: Tensor, start_axis: int = 0, end_axis: int = -1) -> Tensor:
    """
    x with the axes start_axis..end_axis merged into one (a view where the strides allow).

    Args:
        x: a tensor.
        start_axis: the first axis to merge (default 0).
        end_axis: the last axis to merge (default -1).

    Returns:
        A tensor of the merged shape.

    Raises:
        IndexError: an axis out of range.

    Example:
        >>> pcp.flatten(pcp.zeros((2, 3, 4)), 1).shape
        (2, 12)
    """

def floor(x: typing.Any) -> Tensor:
    """
    The largest integer not above x, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape and numeric dtype.

    Returns:
        A new tensor of x's shape and dtype (an integer tensor's values are already whole).

    Raises:
        TypeError: x is a bool tensor, or not a tensor, an array, a list or a number.

    Example:
        >>> pcp.floor(pcp.tensor([-1.5, 2.5])).tolist()
        [-2.0, 2.0]
    """

def floor_divide(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a / b rounded toward -inf, elementwise: Python's // (integer division by zero gives
    0, as NumPy; on floats it gives a / b).

    Args:
        a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

    Returns:
        A new tensor of the broadcast shape and the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast (the message names both shapes).
        TypeError: an argument is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.floor_divide(pcp.tensor([7.0, -7.0]), 2).tolist()
        [3.0, -4.0]
    """

def from_dlpack(obj: typing.Any) -> Tensor:
    """
    A tensor sharing memory with any DLPack producer on the CPU (a PyTorch tensor, a NumPy array, a
    JAX array), without a copy.

    Args:
        obj: an object with __dlpack__ (or a DLPack capsule).

    Returns:
        A CPU tensor viewing the producer's memory.

    Raises:
        TypeError: not a DLPack producer, or a dtype PCP does not have.
        ValueError: memory not on the CPU, or a malformed shape or strides.

    Example:
        >>> import numpy as np
        >>> pcp.from_dlpack(np.arange(3)).tolist()
        [0, 1, 2]
    """

def from_numpy(array: typing.Any) -> Tensor:
    """
    A tensor sharing memory with a NumPy array: writes to either show in the other. A read-only,
    unaligned or byte-swapped array is copied instead, with a warning.

    Args:
        array: a NumPy array of a dtype PCP has (bool, int32, int64, float16, float32, float64).

    Returns:
        A CPU tensor of the array's shape and dtype.

    Raises:
        TypeError: not a NumPy array, or a dtype PCP does not have.

    Example:
        >>> import numpy as np
        >>> a = np.zeros(2, np.float32)
        >>> t = pcp.from_numpy(a)
        >>> a[0] = 5.0
        >>> t.tolist()
        [5.0, 0.0]
    """

def full(shape: typing.Any, fill_value: typing.Any, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    """
    A new tensor filled with one value.

    Args:
        shape: an int or a sequence of non-negative ints.
        fill_value: a number (or 0-d tensor).
        dtype: the element type (default: the value's, int64 for a Python int, float32 for a float).
        device: where to create it (default: pcp.get_default_device()).

    Returns:
        A tensor of that shape.

    Raises:
        ValueError: a negative dimension, or a size that overflows.

    Example:
        >>> pcp.full((2,), 7).tolist()
        [7, 7]
    """

def ge(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a >= b, elementwise.

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A bool tensor of the broadcast shape.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.ge(pcp.tensor([1, 2]), 2).tolist()
        [False, True]
    """

def gelu(x: typing.Any, approximate: str = 'none') -> Tensor:
    """
    The Gaussian error linear unit, x * Phi(x): exact (erf) by default, or GPT-2's tanh
    approximation with approximate='tanh' (PyTorch's F.gelu).

    Args:
        x: a floating tensor.
        approximate: 'none' (default) or 'tanh'.

    Returns:
        A tensor of x's shape.

    Raises:
        ValueError: another approximate.

    Example:
        >>> [round(v, 4) for v in pcp.gelu(pcp.tensor([0.0, 1.0])).tolist()]
        [0.0, 0.8413]
    """

def get_default_device() -> str:
    """
    The device creation functions use when not given device= (see set_default_device). It raises
    nothing.

    Returns:
        Its canonical name, e.g. 'cpu' or 'vulkan:0'.

    Example:
        >>> pcp.get_default_device()
        'cpu'
    """

def get_float32_matmul_precision() -> str:
    """
    The float32 matmul precision set_float32_matmul_precision chose: 'highest' or 'high'. It
    raises nothing.

    Returns:
        A str.

    Example:
        >>> pcp.get_float32_matmul_precision()
        'highest'
    """

def get_num_threads() -> int:
    """
    The number of threads CPU kernels use. It raises nothing.

    Returns:
        A positive int.

    Example:
        >>> pcp.get_num_threads() >= 1
        True
    """

def get_rng_state() -> tuple[int, int]:
    """
    The global generator's state: its seed and how many numbers it has handed out (the counter),
    which set_rng_state restores (checkpoints save it). It raises nothing.

    Returns:
        A tuple (seed, offset) of ints.

    Example:
        >>> pcp.random.seed(3)
        >>> pcp.random.get_rng_state()
        (3, 0)
    """

def gpu_info(device: str = 'gpu') -> dict[typing.Any, typing.Any]:
    """
    What PCP knows of a GPU: its name, API, memory and identity (its UUID, as CUDA and nvidia-smi
    give it, and PCI address), whether float16 / bfloat16 matmuls run on
    tensor cores there (and why not: tensor_core_note), which heads its flash attention takes on
    tensor cores, and the kernels this build has.

    Args:
        device: 'gpu' (the first GPU, default), 'gpu:N' or 'vulkan:N'.

    Returns:
        A dict: name, software (a software implementation on the CPU, such as Mesa's lavapipe:
        correct but far slower than the CPU backend for training), api, memory_bytes, uuid (32 hex
        digits; '' when unknown), pci_bus
        ('dddd:bb:dd.f'; '' when the driver does not say), tensor_core_float16, tensor_core_bfloat16,
        tensor_core_note, cooperative_matrix2, buffer_addresses (optimizers update all parameters
        in one dispatch), float64 (float64 and int64 run here: Vulkan's shaderFloat64 and shaderInt64,
        or CUDA) and float64_note (why not, '' when they do), tensor_core_attention ('bfloat16 and float16', 'float16' or 'none'), vendor (NVIDIA's libraries on this GPU, pcp[cuda]: a dict of matmul
        ('cuBLASLt' or None), attention ('cuDNN' or None), cublaslt and cudnn (the files loaded and
        their versions, '' when not loaded) and note (why they are not used, '' when they are)),
        kernels.

    Raises:
        ValueError: not a GPU, or no GPU on this machine (the message says why).

    Example:
        >>> if len(pcp.devices()) > 1:  # a GPU
        ...     assert "matmul" in pcp.gpu_info()["kernels"]
    """

def gpu_profile_results(device: typing.Any = None) -> list[typing.Any]:
    """
    [(kernel, launches, seconds on the GPU)] since the last call, sorted by time
    """

def gpu_unavailable_reason() -> str:
    ...

def gt(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a > b, elementwise.

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A bool tensor of the broadcast shape.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.gt(pcp.tensor([1, 2]), 2).tolist()
        [False, False]
    """

def hypot(a: typing.Any, b: typing.Any) -> Tensor:
    """
    sqrt(a**2 + b**2), elementwise, without overflow in the squares.

    Args:
        a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

    Returns:
        A new tensor of the broadcast shape and the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast (the message names both shapes).
        TypeError: an argument is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.hypot(pcp.tensor([3.0]), 4.0).tolist()
        [5.0]
    """

def is_grad_enabled() -> bool:
    """
    Whether operations record the autograd graph now (False inside pcp.no_grad). It raises nothing.

    Returns:
        A bool.

    Example:
        >>> pcp.is_grad_enabled()
        True
    """

def is_tracing() -> bool:
    """
    Whether a trace is open on this thread
    """

def layer_norm(x: Tensor, weight: typing.Any = None, bias: typing.Any = None, eps: typing.SupportsFloat | typing.SupportsIndex = 1e-05) -> Tensor:
    """
    Layer normalisation over the last axis: (x - mean) / sqrt(var + eps) * weight + bias, the
    variance biased (divided by n), as in PyTorch.

    Args:
        x: (..., n), a floating tensor with at least one axis.
        weight: (n,), the gain, or None for 1.
        bias: (n,), the shift, or None for 0.
        eps: added to the variance (default 1e-5); must be non-negative.

    Returns:
        A tensor of x's shape (statistics in float32 for 16-bit inputs).

    Raises:
        ValueError: weight or bias not of shape (n,), a 0-d x, or a negative eps.

    Example:
        >>> [round(v, 3) for v in pcp.layer_norm(pcp.tensor([1.0, 3.0])).tolist()]
        [-1.0, 1.0]
    """

def le(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a <= b, elementwise.

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A bool tensor of the broadcast shape.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.le(pcp.tensor([1, 2]), 2).tolist()
        [True, True]
    """

def log(x: typing.Any) -> Tensor:
    """
    The natural logarithm of x, elementwise (-inf at 0, nan below).

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.log(pcp.tensor([1.0, 4.0])).tolist()
        [0.0, 1.3862943649291992]
    """

def log10(x: typing.Any) -> Tensor:
    """
    The base-10 logarithm of x, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.log10(pcp.tensor([100.0])).tolist()
        [2.0]
    """

def log1p(x: typing.Any) -> Tensor:
    """
    log(1 + x), elementwise, accurate for x near 0.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.log1p(pcp.tensor([0.0])).tolist()
        [0.0]
    """

def log2(x: typing.Any) -> Tensor:
    """
    The base-2 logarithm of x, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.log2(pcp.tensor([8.0])).tolist()
        [3.0]
    """

def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """
    log(softmax(x)) along an axis, computed as x - max - log(sum(exp(x - max))), without the
    cancellation of taking the log of a softmax.

    Args:
        x: a tensor of any shape; integer inputs are promoted to float32.
        axis: the axis to normalise over (default -1).

    Returns:
        A tensor of x's shape; exp of it sums to 1 along `axis`.

    Raises:
        IndexError: axis out of range for x.

    Example:
        >>> [round(v, 4) for v in pcp.log_softmax(pcp.tensor([0.0, 0.0])).tolist()]
        [-0.6931, -0.6931]
    """

def logical_and(a: typing.Any, b: typing.Any) -> Tensor:
    """
    The truth of a and b, elementwise (non-zero is true).

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A bool tensor.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.logical_and(pcp.tensor([True, False]), True).tolist()
        [True, False]
    """

def logical_not(x: typing.Any) -> Tensor:
    """
    The truth of not x, elementwise (non-zero is true); a bool tensor.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.logical_not(pcp.tensor([0, 2])).tolist()
        [True, False]
    """

def logical_or(a: typing.Any, b: typing.Any) -> Tensor:
    """
    The truth of a or b, elementwise (non-zero is true).

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A bool tensor.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.logical_or(pcp.tensor([True, False]), False).tolist()
        [True, False]
    """

def logical_xor(a: typing.Any, b: typing.Any) -> Tensor:
    """
    The truth of a xor b, elementwise (non-zero is true).

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A bool tensor.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.logical_xor(pcp.tensor([True, False]), True).tolist()
        [False, True]
    """

def logsumexp(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
    """
    log(sum(exp(x))) over `axis`, computed without overflow (max + log sum exp(x - max)).

    Args:
        x: a tensor of any shape.
        axis: an int, a tuple of ints, or None (the default) for every axis;
            negative counts from the end.
        keepdims: keep the reduced axes with length 1 (default False).

    Returns:
        A floating tensor without the reduced axes.

    Raises:
        IndexError: an axis out of range for x.
        ValueError: an axis named twice.

    Example:
        >>> round(pcp.logsumexp(pcp.tensor([0.0, 0.0])).item(), 4)
        0.6931
    """

def lt(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a < b, elementwise.

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A bool tensor of the broadcast shape.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.lt(pcp.tensor([1, 2]), 2).tolist()
        [True, False]
    """

def matmul(a: typing.Any, b: typing.Any) -> Tensor:
    """
    Matrix product with NumPy's matmul rules (the @ operator): 1-D operands are promoted to a row or
    column and the added axis removed; leading (batch) axes broadcast.

    Args:
        a: (..., M, K) or (K,).
        b: (..., K, N) or (K,).

    Returns:
        (..., M, N), the broadcast batch shape in front, in the promoted dtype. float16 and
        bfloat16 accumulate in float32 (tensor cores on a GPU that has them).

    Raises:
        ValueError: K differs between a and b, a 0-d operand, or batch shapes that do not
            broadcast; the message names both shapes, e.g. 'matmul: shapes (2, 3) and (4, 5) do not
            align: 3 != 4'.

    Example:
        >>> pcp.matmul(pcp.tensor([[1.0, 2.0], [3.0, 4.0]]), pcp.tensor([1.0, 1.0])).tolist()
        [3.0, 7.0]
    """

def max(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
    """
    The largest of x's elements over `axis` (a NaN wins).

    Args:
        x: a tensor of any shape.
        axis: an int, a tuple of ints, or None (the default) for every axis;
            negative counts from the end.
        keepdims: keep the reduced axes with length 1 (default False).

    Returns:
        A tensor of x's dtype without the reduced axes.

    Raises:
        IndexError: an axis out of range for x.
        ValueError: an axis named twice.

    Example:
        >>> pcp.max(pcp.tensor([[1.0, 5.0], [3.0, 2.0]]), axis=1).tolist()
        [5.0, 3.0]
    """

def maximum(a: typing.Any, b: typing.Any) -> Tensor:
    """
    The larger of a and b, elementwise (nan if either is nan).

    Args:
        a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

    Returns:
        A new tensor of the broadcast shape and the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast (the message names both shapes).
        TypeError: an argument is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.maximum(pcp.tensor([1.0, 5.0]), 3.0).tolist()
        [3.0, 5.0]
    """

def mean(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
    """
    The mean of x's elements over `axis` (all of them by default).

    Args:
        x: a tensor of any shape.
        axis: an int, a tuple of ints, or None for every axis.
        keepdims: keep the reduced axes with length 1 (default False).

    Returns:
        A floating tensor of x's shape without the reduced axes (NaN over no elements).

    Raises:
        IndexError: an axis out of range for x.
        ValueError: an axis named twice.

    Example:
        >>> pcp.mean(pcp.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=1).tolist()
        [1.5, 3.5]
    """

def memory_stats(device: typing.Any = None) -> dict[typing.Any, typing.Any]:
    """
    The caching allocator's statistics for a device: active_bytes (held by tensors), peak_bytes
    (the most active since the last reset), cached_bytes (freed, kept for reuse), num_allocs and
    num_cache_hits.

    Args:
        device: 'cpu', a GPU, or None (default) for the default device.

    Returns:
        A dict of ints.

    Raises:
        ValueError: an unknown device.

    Example:
        >>> sorted(pcp.memory_stats('cpu'))
        ['active_bytes', 'cached_bytes', 'num_allocs', 'num_cache_hits', 'peak_bytes']
    """

def min(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
    """
    The smallest of x's elements over `axis` (a NaN wins).

    Args:
        x: a tensor of any shape.
        axis: an int, a tuple of ints, or None (the default) for every axis;
            negative counts from the end.
        keepdims: keep the reduced axes with length 1 (default False).

    Returns:
        A tensor of x's dtype without the reduced axes.

    Raises:
        IndexError: an axis out of range for x.
        ValueError: an axis named twice.

    Example:
        >>> pcp.min(pcp.tensor([[1.0, 5.0], [3.0, 2.0]]), axis=0).tolist()
        [1.0, 2.0]
    """

def minimum(a: typing.Any, b: typing.Any) -> Tensor:
    """
    The smaller of a and b, elementwise (nan if either is nan).

    Args:
        a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

    Returns:
        A new tensor of the broadcast shape and the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast (the message names both shapes).
        TypeError: an argument is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.minimum(pcp.tensor([1.0, 5.0]), 3.0).tolist()
        [1.0, 3.0]
    """

def mul(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a * b, elementwise with broadcasting (the * operator).

    Args:
        a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

    Returns:
        A new tensor of the broadcast shape and the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast (the message names both shapes).
        TypeError: an argument is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.mul(pcp.tensor([1.5, 2.0]), pcp.tensor([2.0, 3.0])).tolist()
        [3.0, 6.0]
    """

def ne(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a != b, elementwise.

    Args:
        a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do.

    Returns:
        A bool tensor of the broadcast shape.

    Raises:
        ValueError: the shapes do not broadcast.
        TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not
            an integer or bool tensor.

    Example:
        >>> pcp.ne(pcp.tensor([1, 2]), pcp.tensor([1, 3])).tolist()
        [False, True]
    """

def neg(x: typing.Any) -> Tensor:
    """
    -x, elementwise (the unary - operator).

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.neg(pcp.tensor([1.0, -2.0])).tolist()
        [-1.0, 2.0]
    """

def nextafter(a: typing.Any, b: typing.Any) -> Tensor:
    """
    The next representable value after a toward b, in a's floating dtype, elementwise.

    Args:
        a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

    Returns:
        A new tensor of the broadcast shape and the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast (the message names both shapes).
        TypeError: an argument is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.nextafter(pcp.tensor([1.0]), 2.0).item() - 1.0 == 2.0 ** -23
        True
    """

def one_hot(indices: typing.Any, num_classes: int, dtype: typing.Any = None) -> Tensor:
    """
    One-hot rows of integer class indices: out[..., c] = 1 where indices == c.

    Args:
        indices: an integer tensor of any shape, values in [0, num_classes).
        num_classes: C.
        dtype: the element type (default float32).

    Returns:
        indices.shape + (C,).

    Raises:
        IndexError: an index outside [0, C).
        TypeError: indices that are not integers.

    Example:
        >>> pcp.one_hot(pcp.tensor([0, 2]), 3).tolist()
        [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """

def ones(shape: typing.Any, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    """
    A new tensor filled with 1.

    Args:
        shape: an int or a sequence of non-negative ints.
        dtype: the element type (default float32).
        device: 'cpu', 'gpu', 'vulkan:N' (default: pcp.get_default_device()).

    Returns:
        A tensor of that shape, dtype and device.

    Raises:
        ValueError: a negative dimension, or a size that overflows.

    Example:
        >>> pcp.ones((2,), dtype=pcp.int32).tolist()
        [1, 1]
    """

def ones_like(x: Tensor, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    """
    A new tensor of ones with x's shape, and x's dtype and device unless given.

    Args:
        x: a tensor.
        dtype: the element type (default x's).
        device: where (default x's).

    Returns:
        A tensor of x's shape.

    Raises:
        ValueError: an unknown device.

    Example:
        >>> pcp.ones_like(pcp.zeros((1, 2))).tolist()
        [[1.0, 1.0]]
    """

def permute(x: Tensor, axes: typing.Any) -> Tensor:
    """
    x with its axes in the given order (PyTorch's permute, NumPy's transpose with axes): a view.

    Args:
        x: a tensor.
        axes: a permutation of range(x.ndim).

    Returns:
        A view of x.

    Raises:
        ValueError: axes is not a permutation of x's axes.

    Example:
        >>> pcp.permute(pcp.zeros((2, 3, 4)), (1, 2, 0)).shape
        (3, 4, 2)
    """

def plan_from_record(record: dict[typing.Any, typing.Any], device: str | None = None) -> Plan:
    """
    The plan a record (plan_record's dict) describes, placed on `device` when given (plan::placed_on), checked before it is returned
    """

def plan_record(plan: Plan) -> dict[typing.Any, typing.Any]:
    """
    The plan as plain data: what a plan file holds
    """

def pow(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a to the power b, elementwise with broadcasting (the ** operator).

    Args:
        a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

    Returns:
        A new tensor of the broadcast shape and the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast (the message names both shapes).
        TypeError: an argument is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.pow(pcp.tensor([2.0, 3.0]), 2).tolist()
        [4.0, 9.0]
    """

def primitive_names() -> list[str]:
    """
    The name of every primitive a plan may hold, sorted
    """

def primitives() -> list[typing.Any]:
    """
    Every primitive's record, sorted by name: a dict of its name, the input counts it takes (None: any, which its check decides), the inputs a plan file may leave out, whether its attributes are checked against its inputs when a plan file is loaded, whether it runs on a GPU (gpu), and how autocast casts its floating inputs (autocast: 'low', 'float32' or 'keep')
    """

def prod(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
    """
    The product of x's elements over `axis` (1 for an empty one); integers and bools count
    in int64. Differentiable, exactly where x has zeros. A GPU tensor is computed on the
    host (no GPU kernel yet).

    Args:
        x: a tensor of any shape.
        axis: an int, a tuple of ints, or None (the default) for every axis;
            negative counts from the end.
        keepdims: keep the reduced axes with length 1 (default False).

    Returns:
        A tensor without the reduced axes, of x's floating dtype or int64.

    Raises:
        IndexError: an axis out of range for x.
        ValueError: an axis named twice.

    Example:
        >>> pcp.prod(pcp.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=1).tolist()
        [2.0, 12.0]
    """

def profile_results() -> list[typing.Any]:
    """
    [(primitive name, calls, seconds)] sorted by time
    """

def qkv_attention(qkv: Tensor, num_heads: int, causal: bool = False, scale: typing.SupportsFloat | typing.SupportsIndex | None = None, dropout_p: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> Tensor:
    """
    Multi-head self-attention on a packed projection: qkv (B, T, 3C) holds q, k and v side by side
    (GPT-2's c_attn output); heads are read in place, no split copies, and the result is merged
    back to (B, T, C). The same attention as scaled_dot_product_attention.

    Args:
        qkv: (B, T, 3C), C divisible by num_heads.
        num_heads: H; each head is C / H wide.
        causal: query t attends to keys 0..t only (default False).
        scale: multiplies the scores (default 1 / sqrt(C / H)).
        dropout_p: the probability of dropping an attention weight (default 0).

    Returns:
        (B, T, C).

    Raises:
        ValueError: qkv not (B, T, 3C) with C divisible by num_heads, num_heads not positive, or
            dropout_p outside [0, 1].

    Example:
        >>> pcp.qkv_attention(pcp.ones((1, 2, 12)), 2, causal=True).shape
        (1, 2, 4)
    """

def rand(shape: typing.Any, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    """
    Samples from the uniform distribution on [0, 1), drawn by the seeded counter-based generator
    (pcp.random.seed): the same values for the same seed on every device.

    Args:
        shape: an int or a sequence of ints.
        dtype: a floating type (default float32).
        device: where (default: pcp.get_default_device()).

    Returns:
        A tensor of that shape.

    Raises:
        ValueError: a negative dimension.

    Example:
        >>> pcp.random.seed(0)
        >>> x = pcp.rand((1000,))
        >>> bool(((x >= 0) & (x < 1)).all())
        True
    """

def randint(low: int, high: int, shape: typing.Any, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    """
    Integers drawn uniformly from [low, high) by the seeded counter-based generator
    (pcp.random.seed), the same on every device.

    Args:
        low, high: the range (high > low).
        shape: an int or a sequence of ints.
        dtype: an integer type (default int64).
        device: where (default: pcp.get_default_device()).

    Returns:
        A tensor of that shape.

    Raises:
        ValueError: high <= low, or a negative dimension.

    Example:
        >>> pcp.random.seed(0)
        >>> bool(((pcp.randint(0, 3, (100,)) >= 0) & (pcp.randint(0, 3, (100,)) < 3)).all())
        True
    """

def randn(shape: typing.Any, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    """
    Samples from the standard normal distribution, drawn by the seeded counter-based generator
    (pcp.random.seed): the same values for the same seed on every device.

    Args:
        shape: an int or a sequence of ints.
        dtype: a floating type (default float32).
        device: where (default: pcp.get_default_device()).

    Returns:
        A tensor of that shape.

    Raises:
        ValueError: a negative dimension.

    Example:
        >>> pcp.random.seed(0)
        >>> abs(pcp.randn((10000,)).mean().item()) < 0.05
        True
    """

def relu(x: typing.Any) -> Tensor:
    """
    max(x, 0), elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.relu(pcp.tensor([-1.0, 2.0])).tolist()
        [0.0, 2.0]
    """

def remainder(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a - b * floor_divide(a, b), elementwise: Python's %, whose result takes b's sign
    (integer division by zero gives 0, as NumPy).

    Args:
        a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

    Returns:
        A new tensor of the broadcast shape and the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast (the message names both shapes).
        TypeError: an argument is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.remainder(pcp.tensor([7, -7]), 3).tolist()
        [1, 2]
    """

def reset_peak_memory_stats(device: typing.Any = None) -> None:
    """
    Starts a device's peak_bytes (memory_stats) again from its current active bytes.

    Args:
        device: 'cpu', a GPU, or None (default) for the default device.

    Returns:
        None.

    Raises:
        ValueError: an unknown device.

    Example:
        >>> pcp.reset_peak_memory_stats('cpu')
    """

def reset_profile() -> None:
    ...

def reshape(x: Tensor, shape: typing.Any) -> Tensor:
    """
    x with a new shape of the same number of elements: a view when the strides allow (as NumPy's
    reshape), else a copy. One dimension may be -1, inferred from the others.

    Args:
        x: a tensor.
        shape: ints, or one tuple or list of ints.

    Returns:
        A tensor of the new shape holding x's elements in row-major order.

    Raises:
        ValueError: the sizes differ, more than one -1, or a negative dimension.

    Example:
        >>> pcp.arange(6).reshape(2, -1).tolist()
        [[0, 1, 2], [3, 4, 5]]
    """

def round(x: typing.Any) -> Tensor:
    """
    x rounded to the nearest integer, halves to even, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape and numeric dtype.

    Returns:
        A new tensor of x's shape and dtype (an integer tensor's values are already whole).

    Raises:
        TypeError: x is a bool tensor, or not a tensor, an array, a list or a number.

    Example:
        >>> pcp.round(pcp.tensor([0.5, 1.5, -2.5])).tolist()
        [0.0, 2.0, -2.0]
    """

def rsqrt(x: typing.Any) -> Tensor:
    """
    1 / sqrt(x), elementwise (inf at 0).

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.rsqrt(pcp.tensor([4.0])).tolist()
        [0.5]
    """

def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False, scale: typing.SupportsFloat | typing.SupportsIndex | None = None, dropout_p: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> Tensor:
    """
    softmax(scale q k^T [causal]) v over the last two axes: attention as PyTorch's
    F.scaled_dot_product_attention. A fused kernel where it pays (the T x S scores are never held),
    composed of products and a softmax otherwise; under autocast on a GPU, in the autocast type.

    Args:
        q: (..., T, D) queries.
        k: (..., S, D) keys.
        v: (..., S, Dv) values.
        causal: query t attends to keys 0..t only (default False).
        scale: multiplies the scores (default 1 / sqrt(D)).
        dropout_p: the probability of dropping an attention weight (default 0).

    Returns:
        (..., T, Dv), the batch axes broadcast.

    Raises:
        ValueError: q and k differ in D, k and v in S, batch axes that do not broadcast, or
            dropout_p outside [0, 1].

    Example:
        >>> q = pcp.ones((1, 2, 4))
        >>> pcp.scaled_dot_product_attention(q, q, q, causal=True).shape
        (1, 2, 4)
    """

def searchsorted(sorted: typing.Any, values: typing.Any, side: str = 'left') -> Tensor:
    """
    Where each of `values` would be inserted into the ascending 1-D `sorted` to keep it sorted:
    before the equal elements (side='left') or after them ('right'). NaNs order last. GPU tensors
    are searched on the host (no GPU kernel yet).

    Args:
        sorted: a 1-D tensor in ascending order (not checked).
        values: a tensor of any shape.
        side: 'left' (default) or 'right'.

    Returns:
        An int64 tensor of values' shape.

    Raises:
        ValueError: sorted is not 1-D, or side is neither 'left' nor 'right'.

    Example:
        >>> pcp.searchsorted(pcp.tensor([1, 3, 5]), pcp.tensor([3, 6])).tolist()
        [1, 3]
    """

def seed(seed: typing.Any) -> None:
    """
    Seeds the global counter-based (Philox) generator that rand, randn, randint, dropout and
    sampling draw from, and restarts its counter: the same seed gives the same numbers on every
    device and thread count.

    Args:
        seed: an int in [0, 2**64).

    Returns:
        None.

    Raises:
        TypeError: seed is not an int.
        ValueError: seed is negative or 2**64 or more.

    Example:
        >>> pcp.random.seed(7)
        >>> a = pcp.rand(3).tolist()
        >>> pcp.random.seed(7)
        >>> pcp.rand(3).tolist() == a
        True
    """

def set_autocast_dtype(dtype: DType | None) -> None:
    """
    Turns autocast on with a float16 or bfloat16 compute type, or off with None (use pcp.autocast)
    """

def set_default_device(device: str) -> None:
    """
    The device creation functions (zeros, tensor, randn, ...) use when not given device=.

    Args:
        device: 'cpu', 'gpu', 'gpu:N' or 'vulkan:N'.

    Returns:
        None.

    Raises:
        ValueError: an unknown device, or a GPU this machine does not have.

    Example:
        >>> pcp.set_default_device('cpu')
    """

def set_float32_matmul_precision(precision: str) -> None:
    """
    How float32 matmuls may compute where NVIDIA's libraries run them (pcp[cuda] on an NVIDIA
    GPU), as torch.set_float32_matmul_precision: 'highest' (the default) in float32, 'high' or
    'medium' in TF32 on tensor cores (10-bit mantissas, float32 accumulation). PCP's own kernels
    always compute float32 in float32.

    Args:
        precision: 'highest', 'high' or 'medium'.

    Returns:
        None.

    Raises:
        ValueError: another string.

    Example:
        >>> pcp.set_float32_matmul_precision('highest')
    """

def set_gpu_profiling(enabled: bool, device: typing.Any = None) -> bool:
    """
    Time every GPU command with device timestamps (default device: the first GPU); False when the device cannot
    """

def set_grad_enabled(enabled: bool) -> None:
    """
    Turns graph recording on or off for this thread (what pcp.no_grad and pcp.enable_grad do for a
    scope).

    Args:
        enabled: True to record.

    Returns:
        None.

    Raises:
        TypeError: enabled is not a bool.

    Example:
        >>> pcp.set_grad_enabled(True)
    """

def set_isa(isa: str) -> None:
    """
    Force the CPU kernels' instruction set (baseline, avx2, avx512; neon on arm64); for tests and benchmarks
    """

def set_num_threads(n: int) -> None:
    """
    The number of threads CPU kernels use (the default: one per core).

    Args:
        n: threads; 0 or less restores the default.

    Returns:
        None.

    Raises:
        TypeError: n is not an int.

    Example:
        >>> pcp.set_num_threads(0)
    """

def set_profiling(enabled: bool, record_shapes: bool = False) -> None:
    """
    Collect per-primitive call counts and times (with record_shapes, per primitive and input shapes)
    """

def set_rng_state(seed: typing.Any, offset: typing.Any) -> None:
    """
    Restores the global generator to a state get_rng_state returned: the numbers drawn next are
    those drawn after that state was taken.

    Args:
        seed: the seed, an int in [0, 2**64).
        offset: the counter, an int in [0, 2**64).

    Returns:
        None.

    Raises:
        TypeError: an argument that is not a non-negative int.

    Example:
        >>> state = pcp.random.get_rng_state()
        >>> a = pcp.randn(2).tolist()
        >>> pcp.random.set_rng_state(*state)
        >>> pcp.randn(2).tolist() == a
        True
    """

def sgd_step(params: collections.abc.Sequence[Tensor], grads: collections.abc.Sequence[Tensor], momentum_buffers: collections.abc.Sequence[Tensor], first_step: typing.Any, lr: typing.Any, momentum: typing.SupportsFloat | typing.SupportsIndex, dampening: typing.SupportsFloat | typing.SupportsIndex, weight_decay: typing.SupportsFloat | typing.SupportsIndex, nesterov: bool) -> None:
    """
    One fused SGD step (momentum, Nesterov, weight decay) over every parameter, in place; first_step and lr may be HostScalars
    """

def sigmoid(x: typing.Any) -> Tensor:
    """
    1 / (1 + exp(-x)), elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.sigmoid(pcp.tensor([0.0])).tolist()
        [0.5]
    """

def sign(x: typing.Any) -> Tensor:
    """
    -1, 0 or 1 by the sign of x, elementwise (nan stays nan).

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.sign(pcp.tensor([-3.0, 0.0, 2.0])).tolist()
        [-1.0, 0.0, 1.0]
    """

def silu(x: typing.Any) -> Tensor:
    """
    x * sigmoid(x), elementwise (also called swish).

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.silu(pcp.tensor([0.0])).tolist()
        [0.0]
    """

def sin(x: typing.Any) -> Tensor:
    """
    The sine of x (radians), elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.sin(pcp.tensor([0.0])).tolist()
        [0.0]
    """

def sinh(x: typing.Any) -> Tensor:
    """
    The hyperbolic sine of x, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.sinh(pcp.tensor([0.0])).tolist()
        [0.0]
    """

def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """
    Softmax along an axis: exp(x - max) / sum(exp(x - max)), stable for large inputs.

    Args:
        x: a tensor of any shape; integer inputs are promoted to float32.
        axis: the axis to normalise over (default -1, the last); negative counts from the end.

    Returns:
        A tensor of x's shape whose values along `axis` are non-negative and sum to 1. float16
        and bfloat16 inputs are computed in float32 and rounded once; a NaN makes its whole row NaN.

    Raises:
        IndexError: axis out of range for x.

    Example:
        >>> [round(v, 4) for v in pcp.softmax(pcp.tensor([1.0, 2.0, 3.0])).tolist()]
        [0.09, 0.2447, 0.6652]
    """

def sort(x: typing.Any, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """
    x sorted along `axis` (x taken at argsort's indices: differentiable), NaNs last ascending.

    Args:
        x: a tensor.
        axis: the axis to sort along (default -1).
        descending: largest first (default False).
        stable: accepted; the sort is always stable.

    Returns:
        A tensor of x's shape and dtype.

    Raises:
        IndexError: axis out of range for x.

    Example:
        >>> pcp.sort(pcp.tensor([3, 1, 2]), descending=True).tolist()
        [3, 2, 1]
    """

def split(x: Tensor, indices_or_sections: typing.Any, axis: int = 0) -> list[Tensor]:
    """
    x cut along an axis into a list of views: into n equal sections, or at the given indices (as
    NumPy's split; indices beyond the axis clamp).

    Args:
        x: a tensor.
        indices_or_sections: an int n dividing the axis, or a sequence of split points.
        axis: the axis to cut (default 0).

    Returns:
        A list of tensors.

    Raises:
        ValueError: n does not divide the axis.
        TypeError: split points that are not ints.

    Example:
        >>> [a.tolist() for a in pcp.split(pcp.arange(6), [1, 4])]
        [[0], [1, 2, 3], [4, 5]]
    """

def sqrt(x: typing.Any) -> Tensor:
    """
    The square root of x, elementwise (nan below 0).

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.sqrt(pcp.tensor([4.0, 9.0])).tolist()
        [2.0, 3.0]
    """

def square(x: typing.Any) -> Tensor:
    """
    x * x, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.square(pcp.tensor([3.0])).tolist()
        [9.0]
    """

def squeeze(x: Tensor, axis: typing.Any = None) -> Tensor:
    """
    x without axes of length 1 (all of them, or those given): a view.

    Args:
        x: a tensor.
        axis: an int, a tuple of ints, or None (default) for every length-1 axis.

    Returns:
        A view of x.

    Raises:
        ValueError: a named axis whose length is not 1.
        IndexError: an axis out of range.

    Example:
        >>> pcp.squeeze(pcp.zeros((1, 3, 1))).shape
        (3,)
    """

def stack(tensors: collections.abc.Sequence[typing.Any], axis: int = 0) -> Tensor:
    """
    The tensors joined along a new axis.

    Args:
        tensors: a sequence of tensors of one shape.
        axis: where the new axis goes (default 0).

    Returns:
        A tensor of one more dimension, of length len(tensors) along `axis`.

    Raises:
        ValueError: no tensors, shapes that differ, or tensors on different devices.

    Example:
        >>> pcp.stack([pcp.zeros(2), pcp.ones(2)], axis=1).shape
        (2, 2)
    """

def sub(a: typing.Any, b: typing.Any) -> Tensor:
    """
    a - b, elementwise with broadcasting (the - operator).

    Args:
        a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do, and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's dtype).

    Returns:
        A new tensor of the broadcast shape and the promoted dtype.

    Raises:
        ValueError: the shapes do not broadcast (the message names both shapes).
        TypeError: an argument is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.sub(pcp.tensor([5.0, 7.0]), 2).tolist()
        [3.0, 5.0]
    """

def sum(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Tensor:
    """
    The sum of x's elements over `axis` (all of them by default).

    Args:
        x: a tensor of any shape.
        axis: an int, a tuple of ints, or None for every axis; negative counts from the end.
        keepdims: keep the summed axes with length 1 (default False).

    Returns:
        A tensor of x's shape without the summed axes; bool and integer inputs sum as int64,
        float16 and bfloat16 in float32 (rounded once).

    Raises:
        IndexError: an axis out of range for x.
        ValueError: an axis named twice.

    Example:
        >>> pcp.sum(pcp.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=0).tolist()
        [4.0, 6.0]
    """

def sum_to(x: Tensor, shape: typing.Any) -> Tensor:
    """
    x summed over its broadcast axes down to `shape`: the reverse of broadcast_to, as a gradient
    of a broadcast operand needs.

    Args:
        x: a tensor.
        shape: a shape that broadcasts to x's.

    Returns:
        A tensor of that shape.

    Raises:
        ValueError: shape does not broadcast to x's.

    Example:
        >>> pcp.sum_to(pcp.ones((2, 3)), (3,)).tolist()
        [2.0, 2.0, 2.0]
    """

def swapaxes(x: Tensor, axis1: int, axis2: int) -> Tensor:
    """
    x with two axes exchanged: a view.

    Args:
        x: a tensor.
        axis1, axis2: the axes to exchange.

    Returns:
        A view of x.

    Raises:
        IndexError: an axis out of range.

    Example:
        >>> pcp.swapaxes(pcp.zeros((2, 3, 4)), 0, 2).shape
        (4, 3, 2)
    """

def synchronize(device: typing.Any = None) -> None:
    """
    Waits until the work recorded for a GPU has finished (GPU work runs asynchronously; reading a
    value with item() or numpy() waits by itself). For timing, and before measuring memory.

    Args:
        device: a GPU, or None (default) for every GPU; 'cpu' returns at once.

    Returns:
        None.

    Raises:
        ValueError: an unknown device.

    Example:
        >>> pcp.synchronize()
    """

def take(x: Tensor, indices: typing.Any, axis: int | None = None) -> Tensor:
    """
    Elements of x at integer indices along an axis (NumPy's take): the flattened x when axis is None.

    Args:
        x: a tensor.
        indices: an integer tensor of any shape (negative counts from the end).
        axis: an int, or None (default).

    Returns:
        x.shape[:axis] + indices.shape + x.shape[axis + 1:] (indices.shape when axis is None).

    Raises:
        IndexError: an index out of bounds, or axis out of range.

    Example:
        >>> pcp.take(pcp.arange(10, 15), pcp.tensor([4, 0])).tolist()
        [14, 10]
    """

def take_along_axis(x: typing.Any, indices: typing.Any, axis: int) -> Tensor:
    """
    x's elements at `indices` along `axis`, the other axes broadcast between them (NumPy's
    take_along_axis; negative indices count from the end). Differentiable in x.

    Args:
        x: a tensor.
        indices: an integer tensor with as many dimensions as x.
        axis: the axis the indices pick along.

    Returns:
        A tensor of x's dtype and the broadcast shape.

    Raises:
        ValueError: the dimensions differ, or the other axes do not broadcast.
        IndexError: an index out of range.

    Example:
        >>> pcp.take_along_axis(pcp.tensor([[5, 6], [7, 8]]), pcp.tensor([[1], [0]]), 1).tolist()
        [[6], [7]]
    """

def tan(x: typing.Any) -> Tensor:
    """
    The tangent of x (radians), elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.tan(pcp.tensor([0.0])).tolist()
        [0.0]
    """

def tanh(x: typing.Any) -> Tensor:
    """
    The hyperbolic tangent of x, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs are promoted to float32 where the result is fractional.

    Returns:
        A new tensor of x's shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.

    Raises:
        TypeError: x is not a tensor, an array, a list or a number.

    Example:
        >>> pcp.tanh(pcp.tensor([0.0])).tolist()
        [0.0]
    """

def to_device(x: Tensor, device: str) -> Tensor:
    """
    x on a device: a copy there, or x itself when it is already there.

    Args:
        x: a tensor.
        device: 'cpu', 'gpu' (the first GPU), 'gpu:N' or 'vulkan:N'.

    Returns:
        A tensor of x's shape and dtype on that device.

    Raises:
        ValueError: an unknown device, or a GPU this machine does not have.

    Example:
        >>> pcp.to_device(pcp.ones(2), 'cpu').tolist()
        [1.0, 1.0]
    """

def transpose(x: Tensor, axes: typing.Any = None) -> Tensor:
    """
    x with its axes permuted (reversed when no axes are given): a view, no data moves.

    Args:
        x: a tensor.
        axes: a permutation of range(x.ndim), or none for the reverse order.

    Returns:
        A view of x with shape [x.shape[a] for a in axes].

    Raises:
        ValueError: axes is not a permutation of x's axes.

    Example:
        >>> pcp.transpose(pcp.zeros((2, 3, 4)), (2, 0, 1)).shape
        (4, 2, 3)
    """

def tril(x: Tensor, k: int = 0) -> Tensor:
    """
    x with the elements above the k-th diagonal zeroed (of its last two axes).

    Args:
        x: a tensor of at least 2 dimensions.
        k: the diagonal (default 0; positive above the main one).

    Returns:
        A tensor of x's shape.

    Raises:
        ValueError: x has fewer than 2 dimensions.

    Example:
        >>> pcp.tril(pcp.ones((2, 2))).tolist()
        [[1.0, 0.0], [1.0, 1.0]]
    """

def triu(x: Tensor, k: int = 0) -> Tensor:
    """
    x with the elements below the k-th diagonal zeroed (of its last two axes).

    Args:
        x: a tensor of at least 2 dimensions.
        k: the diagonal (default 0; positive above the main one).

    Returns:
        A tensor of x's shape.

    Raises:
        ValueError: x has fewer than 2 dimensions.

    Example:
        >>> pcp.triu(pcp.ones((2, 2))).tolist()
        [[1.0, 1.0], [0.0, 1.0]]
    """

def trunc(x: typing.Any) -> Tensor:
    """
    x rounded toward zero, elementwise.

    Args:
        x: a tensor (or anything pcp.asarray takes) of any shape and numeric dtype.

    Returns:
        A new tensor of x's shape and dtype (an integer tensor's values are already whole).

    Raises:
        TypeError: x is a bool tensor, or not a tensor, an array, a list or a number.

    Example:
        >>> pcp.trunc(pcp.tensor([-1.5, 2.5])).tolist()
        [-1.0, 2.0]
    """

def unique(x: typing.Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False) -> typing.Any:
    """
    The distinct values of x, ascending, as NumPy's unique (NaNs are each distinct, as the
    Array API standard says; -0.0 equals 0.0). For a GPU tensor the host finds them (the count
    depends on the data) and the indices come back as int32.

    Args:
        x: a tensor (flattened).
        return_index: also each value's first flat index in x.
        return_inverse: also each element's index into the values (x's shape).
        return_counts: also how often each value occurs.

    Returns:
        The values (a 1-D tensor of x's dtype), or a tuple of them and the int64 tensors
        asked for, in that order.

    Raises:
        ValueError: a GPU tensor of 2**31 elements or more (its indices are int32).

    Example:
        >>> pcp.unique(pcp.tensor([3, 1, 3, 2])).tolist()
        [1, 2, 3]
    """

def unsqueeze(x: Tensor, axis: int) -> Tensor:
    """
    x with a new axis of length 1 at `axis` (NumPy's expand_dims): a view.

    Args:
        x: a tensor.
        axis: the new axis's position in the result (negative counts from its end).

    Returns:
        A view of x with one more dimension.

    Raises:
        IndexError: axis out of range.

    Example:
        >>> pcp.unsqueeze(pcp.zeros(3), 0).shape
        (1, 3)
    """

def var(x: typing.Any, axis: typing.Any = None, ddof: typing.SupportsFloat | typing.SupportsIndex = 0, keepdims: bool = False) -> Tensor:
    """
    The variance of x's elements over `axis`: the mean of squared deviations, divided by n - ddof.

    Args:
        x: a tensor of any shape.
        axis: an int, a tuple of ints, or None (default) for every axis.
        ddof: delta degrees of freedom (default 0; 1 gives the unbiased estimate).
        keepdims: keep the reduced axes with length 1 (default False).

    Returns:
        A floating tensor without the reduced axes (NaN where n - ddof <= 0).

    Raises:
        IndexError: an axis out of range for x.
        ValueError: an axis named twice.

    Example:
        >>> pcp.var(pcp.tensor([1.0, 2.0, 3.0, 4.0])).item()
        1.25
    """

def where(condition: typing.Any, x: typing.Any, y: typing.Any) -> Tensor:
    """
    Elementwise choice: x where cond is true, else y, with broadcasting.

    Args:
        cond: a bool tensor (or anything that converts to one).
        x, y: tensors or numbers; their dtypes promote.

    Returns:
        A tensor of the broadcast shape of cond, x and y.

    Raises:
        ValueError: the shapes do not broadcast.

    Example:
        >>> pcp.where(pcp.tensor([True, False]), 1.0, 0.0).tolist()
        [1.0, 0.0]
    """

def zeros(shape: typing.Any, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    """
    A new tensor filled with 0.

    Args:
        shape: an int or a sequence of non-negative ints.
        dtype: the element type (default float32).
        device: 'cpu', 'gpu', 'vulkan:N' (default: pcp.get_default_device()).

    Returns:
        A tensor of that shape, dtype and device.

    Raises:
        ValueError: a negative dimension, or a size that overflows.

    Example:
        >>> pcp.zeros((2, 3)).shape
        (2, 3)
    """

def zeros_like(x: Tensor, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    """
    A new tensor of zeros with x's shape, and x's dtype and device unless given.

    Args:
        x: a tensor.
        dtype: the element type (default x's).
        device: where (default x's).

    Returns:
        A tensor of x's shape.

    Raises:
        ValueError: an unknown device.

    Example:
        >>> pcp.zeros_like(pcp.ones((2,), dtype=pcp.int32)).tolist()
        [0, 0]
    """
