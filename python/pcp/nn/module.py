"""Module: parameters registered by attribute assignment, submodules, train/eval, state dicts."""
from collections import OrderedDict

import pcp
from pcp import Tensor


class Module:
    """Base class of layers and models, as PyTorch's ``nn.Module``: subclass it, call
    ``super().__init__()`` first, assign parameters and submodules as attributes, and define
    ``forward``; calling the module runs forward.

    Assigning a floating Tensor to an attribute registers it as a parameter (requires_grad is
    turned on; a tensor that is not a leaf is detached first); assigning a Module registers a
    submodule. Tensors that are state but not parameters (masks, running statistics) go through
    register_buffer. Other values are plain attributes.

    Raises:
        AttributeError: an attribute assigned before ``super().__init__()`` ran.

    Example:
        >>> from pcp import nn
        >>> class Scale(nn.Module):
        ...     def __init__(self, n):
        ...         super().__init__()
        ...         self.gain = pcp.ones(n)
        ...     def forward(self, x):
        ...         return x * self.gain
        >>> m = Scale(3)
        >>> [name for name, _ in m.named_parameters()], m(pcp.full(3, 2.0)).tolist()
        (['gain'], [2.0, 2.0, 2.0])
    """

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}.__init__ must call super().__init__() before assigning attributes")
        for d in (self._parameters, self._buffers, self._modules):
            d.pop(name, None)
        if isinstance(value, (Tensor, Module)):
            self.__dict__.pop(name, None)  # a plain attribute of that name would shadow it
        if isinstance(value, Tensor) and value.dtype.is_floating_point:
            if not value.is_leaf:
                value = value.detach()
            value.requires_grad = True
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        for key in ("_parameters", "_buffers", "_modules"):
            d = self.__dict__.get(key)
            if d is not None and name in d:
                return d[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for d in (self._parameters, self._buffers, self._modules):
            if name in d:
                del d[name]
                return
        object.__delattr__(self, name)

    def register_buffer(self, name, tensor):
        """Registers a tensor that state_dict saves and load_state_dict restores but that is not a
        parameter (not trained, requires_grad untouched), such as a mask. It raises nothing.

        Args:
            name: the attribute name it is reached by.
            tensor: the tensor.

        Returns:
            None.

        Example:
            >>> from pcp import nn
            >>> m = nn.Module()
            >>> m.register_buffer("mask", pcp.ones(2))
            >>> list(m.state_dict()), m.parameters()
            (['mask'], [])
        """
        self._buffers[name] = tensor

    def forward(self, *args, **kwargs):
        """The computation of the module, which subclasses define (call the module, not forward).

        Args:
            *args: the inputs, as the subclass defines them.
            **kwargs: keyword inputs, likewise.

        Returns:
            The outputs, as the subclass defines them.

        Raises:
            NotImplementedError: the subclass does not define forward.

        Example:
            >>> from pcp import nn
            >>> nn.Linear(2, 3).forward(pcp.ones((4, 2))).shape
            (4, 3)
        """
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args, **kwargs):
        """``module(*args, **kwargs)``: runs forward with those arguments.

        Args:
            *args: forward's positional arguments.
            **kwargs: forward's keyword arguments.

        Returns:
            What forward returns.

        Raises:
            Exception: whatever forward raises.

        Example:
            >>> from pcp import nn
            >>> nn.GELU()(pcp.zeros(2)).tolist()
            [0.0, 0.0]
        """
        return self.forward(*args, **kwargs)

    def children(self):
        """The direct submodules, in the order they were assigned. It raises nothing.

        Returns:
            An iterator of Modules.

        Example:
            >>> from pcp import nn
            >>> [type(m).__name__ for m in nn.Sequential(nn.Linear(2, 2), nn.GELU()).children()]
            ['Linear', 'GELU']
        """
        return iter(self._modules.values())

    def named_modules(self, prefix=""):
        """(dotted name, module) of this module ('' or prefix) and every submodule below it, depth
        first. It raises nothing.

        Args:
            prefix: the name given to this module (default '').

        Returns:
            An iterator of (str, Module) pairs.

        Example:
            >>> from pcp import nn
            >>> [name for name, _ in nn.Sequential(nn.Linear(2, 2)).named_modules()]
            ['', '0']
        """
        yield prefix, self
        for name, m in self._modules.items():
            yield from m.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self):
        """This module and every submodule below it, depth first. It raises nothing.

        Returns:
            An iterator of Modules.

        Example:
            >>> from pcp import nn
            >>> len(list(nn.Sequential(nn.Linear(2, 2), nn.GELU()).modules()))
            3
        """
        return (m for _, m in self.named_modules())

    def named_parameters(self, prefix=""):
        """(dotted name, parameter) of every parameter of this module and its submodules, in the
        order they were assigned; a parameter shared by two modules (tied weights) appears once.
        It raises nothing.

        Args:
            prefix: put before every name (default '').

        Returns:
            An iterator of (str, Tensor) pairs.

        Example:
            >>> from pcp import nn
            >>> [name for name, _ in nn.Sequential(nn.Linear(2, 3)).named_parameters()]
            ['0.weight', '0.bias']
        """
        seen = set()
        for mod_name, m in self.named_modules(prefix):
            for name, p in m._parameters.items():
                if id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mod_name}.{name}" if mod_name else name), p

    def parameters(self):
        """Every parameter of this module and its submodules (each once), as named_parameters
        orders them: what an optimizer takes. It raises nothing.

        Returns:
            A list of Tensors.

        Example:
            >>> from pcp import nn
            >>> [p.shape for p in nn.Linear(2, 3).parameters()]
            [(3, 2), (3,)]
        """
        return [p for _, p in self.named_parameters()]

    def num_parameters(self):
        """The number of trainable numbers: the sum of the parameters' sizes. It raises nothing.

        Returns:
            An int.

        Example:
            >>> from pcp import nn
            >>> nn.Linear(2, 3).num_parameters()
            9
        """
        return sum(p.size for p in self.parameters())

    def train(self, mode=True):
        """Puts this module and its submodules in training mode (mode=True) or evaluation mode:
        the ``training`` flag layers such as Dropout read. It raises nothing.

        Args:
            mode: True for training (the default), False for evaluation.

        Returns:
            This module.

        Example:
            >>> from pcp import nn
            >>> nn.Sequential(nn.Dropout(0.5)).train(False)[0].training
            False
        """
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        """Puts this module and its submodules in evaluation mode: train(False). It raises nothing.

        Returns:
            This module.

        Example:
            >>> from pcp import nn
            >>> nn.Dropout(0.5).eval().training
            False
        """
        return self.train(False)

    def zero_grad(self):
        """Clears the gradient of every parameter (sets .grad to None). It raises nothing.

        Returns:
            None.

        Example:
            >>> from pcp import nn
            >>> layer = nn.Linear(2, 1)
            >>> layer(pcp.ones((1, 2))).sum().backward()
            >>> layer.zero_grad()
            >>> layer.weight.grad is None
            True
        """
        for p in self.parameters():
            p.grad = None

    def state_dict(self):
        """Every parameter and buffer by dotted name, detached from the graph (sharing storage with
        the module's tensors: copy them to keep a snapshot). What load_state_dict, checkpoints and
        safetensors files take. It raises nothing.

        Returns:
            An OrderedDict of str to Tensor.

        Example:
            >>> from pcp import nn
            >>> {k: v.shape for k, v in nn.Linear(2, 3).state_dict().items()}
            {'weight': (3, 2), 'bias': (3,)}
        """
        out = OrderedDict()
        for mod_name, m in self.named_modules():
            for name, t in list(m._parameters.items()) + list(m._buffers.items()):
                key = f"{mod_name}.{name}" if mod_name else name
                if key not in out:
                    out[key] = t.detach()
        return out

    def load_state_dict(self, state, strict=True):
        """Copies values into the existing parameters and buffers, in place (their dtype and device
        stay). Everything is checked before anything is written, so a bad state dict leaves the
        module as it was.

        Args:
            state: a dict of dotted name to tensor (or anything pcp.tensor takes), as state_dict
                gives.
            strict: refuse missing and unexpected names (default True); with False they are
                skipped and reported.

        Returns:
            (missing, unexpected): the lists of names the module has and state lacks, and the
            reverse.

        Raises:
            TypeError: state is not a dict, or a value is not a tensor.
            ValueError: strict and names differ, or a value whose shape differs from the module's.

        Example:
            >>> from pcp import nn
            >>> a, b = nn.Linear(2, 2), nn.Linear(2, 2)
            >>> b.load_state_dict(a.state_dict())
            ([], [])
            >>> b.weight.tolist() == a.weight.tolist()
            True
        """
        if not hasattr(state, "keys") or not hasattr(state, "__getitem__"):
            raise TypeError(f"load_state_dict: expected a dict of tensors, got {type(state).__name__}")
        own = self.state_dict()
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        if strict and (missing or unexpected):
            raise ValueError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        values = {}
        for key, target in own.items():
            if key not in state:
                continue
            value = state[key]
            try:
                value = value if isinstance(value, Tensor) else pcp.tensor(value)
            except (TypeError, ValueError, OverflowError) as e:
                raise type(e)(f"load_state_dict: '{key}' is not a tensor ({e})") from None
            if tuple(value.shape) != tuple(target.shape):
                raise ValueError(f"load_state_dict: '{key}' has shape {tuple(value.shape)} in the state dict "
                                 f"but {tuple(target.shape)} in the model")
            values[key] = value
        with pcp.no_grad():
            for key, value in values.items():
                own[key][...] = value
        return missing, unexpected

    def extra_repr(self):
        """The text repr() puts in this module's brackets (its settings); subclasses override it.
        It raises nothing.

        Returns:
            A str ('' here).

        Example:
            >>> from pcp import nn
            >>> nn.Linear(2, 3).extra_repr()
            '2, 3, bias=True'
        """
        return ""

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, m in self._modules.items():
            sub = repr(m).replace("\n", "\n  ")
            lines.append(f"  ({name}): {sub}")
        return "\n".join(lines) + (")" if len(lines) == 1 else "\n)")


class Sequential(Module):
    """Applies its modules in order, each to the previous one's output; they are registered
    under the names '0', '1', ... and reached by index (seq[0]) and len(). It raises nothing.

    Args:
        *modules: the modules, in order.

    Example:
        >>> from pcp import nn
        >>> mlp = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2))
        >>> mlp(pcp.ones((3, 4))).shape, len(mlp)
        ((3, 2), 3)
    """

    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def forward(self, x):
        """Runs the modules in order.

        Args:
            x: the first module's input.

        Returns:
            The last module's output (x itself when there is no module).

        Raises:
            Exception: whatever the modules raise.

        Example:
            >>> from pcp import nn
            >>> nn.Sequential(nn.GELU(), nn.GELU())(pcp.zeros(2)).tolist()
            [0.0, 0.0]
        """
        for m in self._modules.values():
            x = m(x)
        return x


class ModuleList(Module):
    """A list of submodules, registered (as '0', '1', ...) so their parameters are found; it is
    iterated, indexed and appended to, and has no forward of its own. It raises nothing.

    Args:
        modules: an iterable of Modules (default none).

    Example:
        >>> from pcp import nn
        >>> blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        >>> len(blocks), blocks.num_parameters()
        (3, 18)
    """

    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, m):
        """Adds a module at the end. It raises nothing.

        Args:
            m: a Module.

        Returns:
            This list.

        Example:
            >>> from pcp import nn
            >>> len(nn.ModuleList().append(nn.GELU()))
            1
        """
        setattr(self, str(len(self._modules)), m)
        return self

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, i):
        return list(self._modules.values())[i]
