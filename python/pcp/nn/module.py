"""Module: parameters registered by attribute assignment, submodules, train/eval, state dicts."""
from collections import OrderedDict

import pcp
from pcp import Tensor


class Module:
    """Base class of layers and models.

    Assigning a floating Tensor to an attribute registers it as a parameter (requires_grad is
    turned on); assigning a Module registers a submodule. Tensors that are state but not
    parameters (masks, running statistics) go through register_buffer.
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
        """Registers a tensor that is saved in state_dict but not trained."""
        self._buffers[name] = tensor

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def children(self):
        return iter(self._modules.values())

    def named_modules(self, prefix=""):
        yield prefix, self
        for name, m in self._modules.items():
            yield from m.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self):
        return (m for _, m in self.named_modules())

    def named_parameters(self, prefix=""):
        """(dotted name, parameter) pairs; a parameter shared by two modules appears once."""
        seen = set()
        for mod_name, m in self.named_modules(prefix):
            for name, p in m._parameters.items():
                if id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mod_name}.{name}" if mod_name else name), p

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def num_parameters(self):
        return sum(p.size for p in self.parameters())

    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None

    def state_dict(self):
        """Dotted names to tensors (parameters and buffers), detached from the graph."""
        out = OrderedDict()
        for mod_name, m in self.named_modules():
            for name, t in list(m._parameters.items()) + list(m._buffers.items()):
                key = f"{mod_name}.{name}" if mod_name else name
                if key not in out:
                    out[key] = t.detach()
        return out

    def load_state_dict(self, state, strict=True):
        """Copies values into the existing parameters and buffers (shapes must match). Everything is
        checked before anything is written, so a bad state dict leaves the module as it was."""
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
        return ""

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, m in self._modules.items():
            sub = repr(m).replace("\n", "\n  ")
            lines.append(f"  ({name}): {sub}")
        return "\n".join(lines) + (")" if len(lines) == 1 else "\n)")


class Sequential(Module):
    """Applies its modules in order."""

    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x


class ModuleList(Module):
    """A list of submodules, registered so their parameters are found."""

    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, m):
        setattr(self, str(len(self._modules)), m)
        return self

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, i):
        return list(self._modules.values())[i]
