"""VJPs of every differentiable op, checked by central finite differences in float64 and
against torch.autograd (float32 and float64) when PyTorch is installed.

Each case is (id, pcp function, torch function, input factory, differentiated inputs). The loss
is sum_i sum(out_i * w_i) with fixed random cotangents w_i, so the cotangent is never all ones.
Non-differentiable arguments (indices, masks, targets) are closed over by the functions.
"""
import contextlib
import zlib

import numpy as np
import pytest

import pcp
from conftest import numeric_grad, requires_torch, to_np, torch, on_each_device

pytestmark = on_each_device

if torch is not None:
    import torch.nn.functional as TF
else:  # pragma: no cover
    TF = None

F64 = pcp.float64
FD_TOL = dict(rtol=1e-6, atol=1e-7)
TORCH_TOL = {
    pcp.float64: dict(rtol=1e-9, atol=1e-10),
    pcp.float32: dict(rtol=1e-4, atol=2e-5),
}


# --------------------------------------------------------------------------- machinery


class Case:
    def __init__(self, id, fn, tfn, make, wrt=None):
        self.id, self.fn, self.tfn, self.make = id, fn, tfn, make
        self.wrt = wrt  # indices of differentiable inputs; None: all

    def inputs(self):
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        xs = [np.asarray(a, dtype=np.float64) for a in self.make(rng)]
        wrt = list(range(len(xs))) if self.wrt is None else list(self.wrt)
        return xs, wrt, rng


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _cotangents(rng, shapes):
    return [np.asarray(rng.uniform(-1.5, 1.5, size=s), dtype=np.float64) for s in shapes]


def _pcp_run(case, xs, wrt, dtype, ws=None, rng=None):
    ts = [pcp.tensor(a, dtype=dtype, requires_grad=(i in wrt)) for i, a in enumerate(xs)]
    outs = _as_list(case.fn(*ts))
    if ws is None:
        ws = _cotangents(rng, [o.shape for o in outs])
    loss = None
    for o, w in zip(outs, ws):
        term = (o * pcp.tensor(w, dtype=o.dtype)).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    grads = []
    for i in wrt:
        g = ts[i].grad
        assert g is not None, f"input {i} got no gradient"
        assert g.shape == ts[i].shape, f"input {i}: gradient shape {g.shape} != input shape {ts[i].shape}"
        assert g.dtype == dtype, f"input {i}: gradient dtype {g.dtype} != {dtype}"
        grads.append(to_np(g))
    return [to_np(o) for o in outs], ws, grads


@contextlib.contextmanager
def _on_host():
    """The CPU as the default device (what a case makes inside too: masks, constants): float64
    references are computed there, never on the device a test checks."""
    device = pcp.get_default_device()
    pcp.set_default_device("cpu")
    try:
        yield
    finally:
        pcp.set_default_device(device)


def _fd_loss(case, xs, ws, i):
    """The loss as a function of input i, in float64 on the host."""
    def f(xi):
        args = list(xs)
        args[i] = xi
        with _on_host(), pcp.no_grad():
            outs = _as_list(case.fn(*[pcp.tensor(a, dtype=F64) for a in args]))
        return sum(float((to_np(o) * w).sum()) for o, w in zip(outs, ws))
    return f


def _torch_run(case, xs, wrt, tdtype, ws):
    ts = [torch.tensor(a, dtype=tdtype, requires_grad=(i in wrt)) for i, a in enumerate(xs)]
    outs = _as_list(case.tfn(*ts))
    loss = sum((o * torch.tensor(w, dtype=o.dtype)).sum() for o, w in zip(outs, ws))
    grads = torch.autograd.grad(loss, [ts[i] for i in wrt], allow_unused=True)
    grads = [np.zeros(xs[i].shape) if g is None else g.double().numpy() for i, g in zip(wrt, grads)]
    return [o.detach().double().numpy() for o in outs], grads


# --------------------------------------------------------------------------- input helpers


def normal(*shape, scale=1.0):
    return lambda r: r.normal(size=shape) * scale


def away(r, shape, margin=0.2, hi=2.0):
    """Values with |v| in [margin, hi): away from the kink at 0."""
    return r.choice([-1.0, 1.0], size=shape) * r.uniform(margin, hi, size=shape)


def positive(r, shape, lo=0.3, hi=3.0):
    return r.uniform(lo, hi, size=shape)


def ints(*vals):
    return np.array(vals, dtype=np.int64)


def tdims(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return (axis,) if isinstance(axis, int) else tuple(axis)


CASES = []


def case(id, fn, tfn, make, wrt=None):
    CASES.append(Case(id, fn, tfn, make, wrt))


# --------------------------------------------------------------------------- elementwise unary

S34 = (3, 4)
case("neg", pcp.neg, torch and torch.neg, lambda r: [r.normal(size=S34)])
case("neg_operator", lambda x: -x, lambda x: -x, lambda r: [r.normal(size=S34)])
case("abs", pcp.abs, torch and torch.abs, lambda r: [away(r, S34)])
case("exp", pcp.exp, torch and torch.exp, lambda r: [r.normal(size=S34)])
case("exp_method", lambda x: x.exp(), lambda x: x.exp(), lambda r: [r.normal(size=(2, 3, 2))])
case("log", pcp.log, torch and torch.log, lambda r: [positive(r, S34)])
case("sqrt", pcp.sqrt, torch and torch.sqrt, lambda r: [positive(r, S34)])
case("rsqrt", pcp.rsqrt, torch and torch.rsqrt, lambda r: [positive(r, S34)])
case("sin", pcp.sin, torch and torch.sin, lambda r: [r.normal(size=S34) * 2])
case("cos", pcp.cos, torch and torch.cos, lambda r: [r.normal(size=S34) * 2])
case("tanh", pcp.tanh, torch and torch.tanh, lambda r: [r.normal(size=S34)])
case("sigmoid", pcp.sigmoid, torch and torch.sigmoid, lambda r: [r.normal(size=S34) * 2])
case("relu", pcp.relu, torch and torch.relu, lambda r: [away(r, S34)])
case("gelu_none", lambda x: pcp.gelu(x), lambda x: TF.gelu(x), lambda r: [r.normal(size=S34) * 2])
case("gelu_none_explicit", lambda x: pcp.gelu(x, approximate="none"), lambda x: TF.gelu(x, approximate="none"),
     lambda r: [r.normal(size=(5,)) * 3])
case("gelu_tanh", lambda x: pcp.gelu(x, approximate="tanh"), lambda x: TF.gelu(x, approximate="tanh"),
     lambda r: [r.normal(size=S34) * 2])
case("gelu_tanh_method", lambda x: x.gelu("tanh"), lambda x: TF.gelu(x, approximate="tanh"),
     lambda r: [r.normal(size=(7,)) * 3])
case("silu", pcp.silu, torch and TF.silu, lambda r: [r.normal(size=S34) * 2])
case("square", pcp.square, torch and torch.square, lambda r: [r.normal(size=S34)])
case("erf", pcp.erf, torch and torch.erf, lambda r: [r.normal(size=S34)])
for _name, _domain in (("tan", 1.2), ("asin", 0.9), ("acos", 0.9), ("atan", 3), ("sinh", 3), ("cosh", 3),
                       ("asinh", 3), ("atanh", 0.9), ("expm1", 3)):
    case(_name, getattr(pcp, _name), torch and getattr(torch, _name),
         lambda r, d=_domain: [r.uniform(-d, d, size=S34)])
case("acosh", pcp.acosh, torch and torch.acosh, lambda r: [r.uniform(1.1, 4, size=S34)])
for _name in ("log1p", "log2", "log10"):
    case(_name, getattr(pcp, _name), torch and getattr(torch, _name), lambda r: [r.uniform(0.1, 4, size=S34)])
for _name in ("floor", "ceil", "trunc", "round"):  # zero almost everywhere: away from the jumps
    case(_name, getattr(pcp, _name), torch and getattr(torch, _name),
         lambda r: [np.round(r.uniform(-3, 3, size=S34)) + r.uniform(0.2, 0.3, size=S34)])
case("atan2", pcp.atan2, torch and torch.atan2, lambda r: [r.normal(size=S34), away(r, (4,), 0.3)])
case("hypot", pcp.hypot, torch and torch.hypot, lambda r: [away(r, S34), r.normal(size=(4,))])
case("copysign", pcp.copysign, torch and torch.copysign, lambda r: [away(r, S34), away(r, S34)])
case("nextafter", pcp.nextafter, torch and (lambda a, b: a + 0 * b), lambda r: [r.normal(size=S34), r.normal(size=S34)])
# a / b kept 0.2 away from the integers, where the remainder jumps
case("remainder", pcp.remainder, torch and torch.remainder,
     lambda r: [(np.round(r.uniform(-4, 4, size=S34)) + r.uniform(0.2, 0.8, size=S34)) * 1.5, np.full(S34, 1.5)])
case("remainder_negative_divisor", lambda a, b: a % b, lambda a, b: a % b,
     lambda r: [(np.round(r.uniform(-4, 4, size=S34)) + r.uniform(0.2, 0.8, size=S34)) * 0.7, np.full((4,), -0.7)])
case("floor_divide", pcp.floor_divide, torch and (lambda a, b: torch.floor(a / b)),  # torch has no floor_divide VJP
     lambda r: [np.round(r.uniform(-4, 4, size=S34)) + r.uniform(0.2, 0.8, size=S34), np.full(S34, 1.0)])
# Sorting and scans: values kept distinct (sort) and away from zero where torch divides (cumprod).
case("sort", lambda x: pcp.sort(x, axis=1), lambda x: torch.sort(x, dim=1, stable=True).values,
     lambda r: [r.permutation(12).reshape(3, 4) + r.uniform(0, 0.5, size=S34)])
case("sort_descending_axis0", lambda x: pcp.sort(x, axis=0, descending=True),
     lambda x: torch.sort(x, dim=0, descending=True, stable=True).values,
     lambda r: [r.permutation(12).reshape(3, 4) + r.uniform(0, 0.5, size=S34)])
case("take_along_axis", lambda x: pcp.take_along_axis(x, pcp.tensor([[2, 0, -1], [1, 1, 0], [3, 2, 1]]), 1),
     lambda x: torch.take_along_dim(x, torch.tensor([[2, 0, 3], [1, 1, 0], [3, 2, 1]]), 1), lambda r: [r.normal(size=S34)])
case("cumsum", lambda x: pcp.cumsum(x, axis=1), lambda x: torch.cumsum(x, 1), lambda r: [r.normal(size=S34)])
case("cumsum_flat", pcp.cumsum, lambda x: torch.cumsum(x.reshape(-1), 0), lambda r: [r.normal(size=S34)])
case("cumprod", lambda x: pcp.cumprod(x, axis=0), lambda x: torch.cumprod(x, 0), lambda r: [away(r, S34, 0.5)])
case("prod", lambda x: pcp.prod(x, axis=1), lambda x: torch.prod(x, 1), lambda r: [away(r, S34, 0.5)])
case("prod_all_keepdims", lambda x: pcp.prod(x, keepdims=True), lambda x: torch.prod(x).reshape(1, 1),
     lambda r: [away(r, S34, 0.7, 1.3)])
case("unary_chain", lambda x: pcp.tanh(pcp.exp(pcp.sin(x)) * 0.5),
     lambda x: torch.tanh(torch.exp(torch.sin(x)) * 0.5), lambda r: [r.normal(size=S34)])
case("unary_0d", pcp.sigmoid, torch and torch.sigmoid, lambda r: [np.array(0.7)])

# --------------------------------------------------------------------------- elementwise binary


def _not_tied(r, shape_a, shape_b):
    """(a, b) with |a - b| >= 0.1 everywhere after broadcasting."""
    b = r.normal(size=shape_b)
    a = np.broadcast_to(b, np.broadcast_shapes(shape_a, shape_b)) + away(r, np.broadcast_shapes(shape_a, shape_b),
                                                                             0.1, 1.0)
    # a must have shape_a: only reduce when shape_a is the full broadcast shape (how we use it)
    assert a.shape == tuple(shape_a)
    return [a, b]


case("add", pcp.add, torch and torch.add, lambda r: [r.normal(size=S34), r.normal(size=S34)])
case("add_broadcast", pcp.add, torch and torch.add, lambda r: [r.normal(size=(3, 1)), r.normal(size=(4,))])
case("add_operator_broadcast", lambda a, b: a + b, lambda a, b: a + b,
     lambda r: [r.normal(size=(2, 1, 4)), r.normal(size=(3, 1))])
case("sub", pcp.sub, torch and torch.sub, lambda r: [r.normal(size=S34), r.normal(size=S34)])
case("sub_broadcast", lambda a, b: a - b, lambda a, b: a - b,
     lambda r: [r.normal(size=(2, 3, 4)), r.normal(size=(3, 1))])
case("mul", pcp.mul, torch and torch.mul, lambda r: [r.normal(size=S34), r.normal(size=S34)])
case("mul_broadcast", lambda a, b: a * b, lambda a, b: a * b, lambda r: [r.normal(size=S34), r.normal(size=(4,))])
case("div", pcp.div, torch and torch.div, lambda r: [r.normal(size=S34), away(r, S34, 0.5)])
case("div_broadcast", lambda a, b: a / b, lambda a, b: a / b, lambda r: [r.normal(size=S34), away(r, (1, 4), 0.5)])
case("pow", pcp.pow, torch and torch.pow, lambda r: [positive(r, S34, 0.5, 2.0), r.normal(size=S34)])
case("pow_broadcast", lambda a, b: a ** b, lambda a, b: a ** b,
     lambda r: [positive(r, S34, 0.5, 2.0), r.normal(size=(4,))])
case("pow_scalar_exponent", lambda a: a ** 3, lambda a: a ** 3, lambda r: [r.normal(size=S34)])
case("pow_scalar_2", lambda a: a ** 2, lambda a: a ** 2, lambda r: [r.normal(size=S34)])
case("pow_scalar_half", lambda a: a ** 0.5, lambda a: a ** 0.5, lambda r: [positive(r, S34)])
case("pow_negative_base_int_exp", lambda a: pcp.pow(a, 3.0), lambda a: torch.pow(a, 3.0),
     lambda r: [away(r, S34)])
case("rpow_scalar_base", lambda b: 2.0 ** b, lambda b: 2.0 ** b, lambda r: [r.normal(size=S34)])
case("scalar_mul", lambda a: a * 2.5, lambda a: a * 2.5, lambda r: [r.normal(size=S34)])
case("scalar_rsub", lambda a: 3.0 - a, lambda a: 3.0 - a, lambda r: [r.normal(size=S34)])
case("scalar_rdiv", lambda a: 1.5 / a, lambda a: 1.5 / a, lambda r: [away(r, S34, 0.5)])
case("maximum", pcp.maximum, torch and torch.maximum, lambda r: _not_tied(r, S34, S34))
case("maximum_broadcast", pcp.maximum, torch and torch.maximum, lambda r: _not_tied(r, S34, (4,)))
case("minimum", pcp.minimum, torch and torch.minimum, lambda r: _not_tied(r, S34, S34))
case("minimum_broadcast", pcp.minimum, torch and torch.minimum, lambda r: _not_tied(r, S34, (1, 4)))

_COND = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]])
case("where", lambda x, y: pcp.where(pcp.tensor(_COND), x, y),
     lambda x, y: torch.where(torch.tensor(_COND), x, y), lambda r: [r.normal(size=S34), r.normal(size=S34)])
case("where_broadcast", lambda x, y: pcp.where(pcp.tensor(_COND), x, y),
     lambda x, y: torch.where(torch.tensor(_COND), x, y), lambda r: [r.normal(size=(3, 1)), r.normal(size=(4,))])
case("where_cond_from_x", lambda x, y: pcp.where(x > 0, x * y, y * 2.0),
     lambda x, y: torch.where(x > 0, x * y, y * 2.0), lambda r: [away(r, S34), r.normal(size=S34)])


def _clip_input(r):
    # |x -/+ 0.5| >= 0.1: away from both bounds
    x = r.uniform(-1.5, 1.5, size=(4, 5))
    x[np.abs(np.abs(x) - 0.5) < 0.1] += 0.25
    return [x]


case("clip_both", lambda x: pcp.clip(x, -0.5, 0.5), lambda x: torch.clamp(x, -0.5, 0.5), _clip_input)
case("clip_min", lambda x: pcp.clip(x, min=-0.5), lambda x: torch.clamp(x, min=-0.5), _clip_input)
case("clip_max", lambda x: x.clip(max=0.5), lambda x: torch.clamp(x, max=0.5), _clip_input)



def _clip_tensor_bounds(r):
    lo = r.uniform(-1.0, -0.2, size=(4,))
    hi = r.uniform(0.2, 1.0, size=(3, 1))
    x = r.uniform(-1.5, 1.5, size=(3, 4))
    lob = np.broadcast_to(lo, x.shape)
    hib = np.broadcast_to(hi, x.shape)
    bad = (np.abs(x - lob) < 0.05) | (np.abs(x - hib) < 0.05)
    x[bad] += 0.11
    return [x, lo, hi]


case("clip_tensor_bounds", lambda x, lo, hi: pcp.clip(x, lo, hi), lambda x, lo, hi: torch.clamp(x, lo, hi),
     _clip_tensor_bounds)

# --------------------------------------------------------------------------- reductions

_RED_AXES = [None, 0, -1, 1, (0, 2), (0, 1, 2)]
for _ax in _RED_AXES:
    for _kd in (False, True):
        _sfx = f"axis={_ax}-keepdims={_kd}"
        mk = lambda r: [r.normal(size=(2, 3, 4))]
        case(f"sum-{_sfx}", (lambda a, k: lambda x: pcp.sum(x, axis=a, keepdims=k))(_ax, _kd),
             (lambda a, k: lambda x: torch.sum(x, dim=tdims(a, 3), keepdim=k))(_ax, _kd), mk)
        case(f"mean-{_sfx}", (lambda a, k: lambda x: x.mean(axis=a, keepdims=k))(_ax, _kd),
             (lambda a, k: lambda x: torch.mean(x, dim=tdims(a, 3), keepdim=k))(_ax, _kd), mk)
        case(f"max-{_sfx}", (lambda a, k: lambda x: pcp.max(x, axis=a, keepdims=k))(_ax, _kd),
             (lambda a, k: lambda x: torch.amax(x, dim=tdims(a, 3), keepdim=k))(_ax, _kd), mk)
        case(f"min-{_sfx}", (lambda a, k: lambda x: x.min(axis=a, keepdims=k))(_ax, _kd),
             (lambda a, k: lambda x: torch.amin(x, dim=tdims(a, 3), keepdim=k))(_ax, _kd), mk)
        case(f"var-{_sfx}", (lambda a, k: lambda x: pcp.var(x, axis=a, keepdims=k))(_ax, _kd),
             (lambda a, k: lambda x: torch.var(x, dim=tdims(a, 3), correction=0, keepdim=k))(_ax, _kd), mk)
        case(f"logsumexp-{_sfx}", (lambda a, k: lambda x: pcp.logsumexp(x, axis=a, keepdims=k))(_ax, _kd),
             (lambda a, k: lambda x: torch.logsumexp(x, dim=tdims(a, 3), keepdim=k))(_ax, _kd), mk)
for _ax in (None, 0, (1, 2)):
    case(f"var-ddof1-axis={_ax}", (lambda a: lambda x: x.var(axis=a, ddof=1))(_ax),
         (lambda a: lambda x: torch.var(x, dim=tdims(a, 3), correction=1))(_ax), lambda r: [r.normal(size=(2, 3, 4))])
case("logsumexp_large_values", lambda x: pcp.logsumexp(x, axis=1), lambda x: torch.logsumexp(x, dim=1),
     lambda r: [r.normal(size=(3, 5)) * 3 + 200.0])
case("sum_transposed_input", lambda x: pcp.sum(x.T, axis=0), lambda x: torch.sum(x.T, dim=0),
     lambda r: [r.normal(size=(3, 5))])

# --------------------------------------------------------------------------- softmax

for _ax in (0, 1, 2, -1, -2):
    case(f"softmax-axis={_ax}", (lambda a: lambda x: pcp.softmax(x, axis=a))(_ax),
         (lambda a: lambda x: torch.softmax(x, dim=a))(_ax), lambda r: [r.normal(size=(2, 3, 4)) * 2])
    case(f"log_softmax-axis={_ax}", (lambda a: lambda x: pcp.log_softmax(x, axis=a))(_ax),
         (lambda a: lambda x: torch.log_softmax(x, dim=a))(_ax), lambda r: [r.normal(size=(2, 3, 4)) * 2])
case("softmax_1d", lambda x: x.softmax(), lambda x: torch.softmax(x, dim=-1), lambda r: [r.normal(size=(6,))])
case("log_softmax_1d", lambda x: x.log_softmax(), lambda x: torch.log_softmax(x, dim=-1),
     lambda r: [r.normal(size=(6,))])

# --------------------------------------------------------------------------- matmul

for _sa, _sb in [((4,), (4,)), ((4,), (4, 3)), ((3, 4), (4,)), ((3, 4), (4, 5)), ((2, 3, 4), (4, 5)),
                 ((4, 5), (2, 5, 3)), ((3, 1, 2, 4), (2, 4, 3)), ((2, 1, 3, 4), (1, 3, 4, 2)), ((2, 3, 4), (4,)),
                 ((4,), (2, 4, 3))]:
    case(f"matmul-{_sa}@{_sb}", pcp.matmul, torch and torch.matmul,
         (lambda sa, sb: lambda r: [r.normal(size=sa), r.normal(size=sb)])(_sa, _sb))
case("matmul_operator_transposed", lambda a, b: a.T @ b, lambda a, b: a.T @ b,
     lambda r: [r.normal(size=(4, 3)), r.normal(size=(4, 2))])
case("matmul_same_tensor", lambda a: a @ a, lambda a: a @ a, lambda r: [r.normal(size=(3, 3))])

# --------------------------------------------------------------------------- shapes

X234 = lambda r: [r.normal(size=(2, 3, 4))]
case("reshape", lambda x: pcp.reshape(x, (4, -1)), lambda x: x.reshape(4, -1), X234)
case("reshape_method", lambda x: x.reshape(6, 4), lambda x: x.reshape(6, 4), X234)
case("reshape_of_transposed", lambda x: x.transpose().reshape(-1), lambda x: x.permute(2, 1, 0).reshape(-1), X234)
case("flatten", lambda x: pcp.flatten(x, 1), lambda x: torch.flatten(x, 1), X234)
case("transpose_default", pcp.transpose, lambda x: x.permute(2, 1, 0), X234)
case("transpose_axes", lambda x: pcp.transpose(x, (1, 0, 2)), lambda x: x.permute(1, 0, 2), X234)
case("permute", lambda x: x.permute(2, 0, 1), lambda x: x.permute(2, 0, 1), X234)
case("swapaxes", lambda x: pcp.swapaxes(x, 0, 2), lambda x: torch.swapaxes(x, 0, 2), X234)
case("mT", lambda x: x.mT, lambda x: x.mT, X234)
case("concatenate_axis1", lambda a, b, c: pcp.concatenate([a, b, c], axis=1),
     lambda a, b, c: torch.cat([a, b, c], dim=1),
     lambda r: [r.normal(size=(2, 3)), r.normal(size=(2, 1)), r.normal(size=(2, 4))])
case("concatenate_axis0", lambda a, b: pcp.concatenate((a, b)), lambda a, b: torch.cat([a, b], dim=0),
     lambda r: [r.normal(size=(2, 3)), r.normal(size=(4, 3))])
case("concatenate_same_tensor", lambda a: pcp.concatenate([a, a * 2.0], axis=-1),
     lambda a: torch.cat([a, a * 2.0], dim=-1), lambda r: [r.normal(size=(2, 3))])
case("stack_axis0", lambda a, b, c: pcp.stack([a, b, c]), lambda a, b, c: torch.stack([a, b, c]),
     lambda r: [r.normal(size=S34) for _ in range(3)])
case("stack_axis_last", lambda a, b: pcp.stack([a, b], axis=-1), lambda a, b: torch.stack([a, b], dim=-1),
     lambda r: [r.normal(size=S34) for _ in range(2)])
case("split_sections", lambda x: pcp.split(x, 3, axis=1), lambda x: torch.split(x, 2, dim=1),
     lambda r: [r.normal(size=(2, 6))])
case("split_indices", lambda x: x.split([1, 4], axis=1), lambda x: torch.split(x, [1, 3, 2], dim=1),
     lambda r: [r.normal(size=(2, 6))])
case("split_partial_use", lambda x: pcp.split(x, 2)[1], lambda x: torch.split(x, 2)[1],
     lambda r: [r.normal(size=(4, 3))])
case("squeeze_all", lambda x: pcp.squeeze(x), lambda x: torch.squeeze(x), lambda r: [r.normal(size=(2, 1, 3, 1))])
case("squeeze_axis", lambda x: x.squeeze(axis=1), lambda x: torch.squeeze(x, 1),
     lambda r: [r.normal(size=(2, 1, 3, 1))])
case("unsqueeze", lambda x: pcp.unsqueeze(x, 1), lambda x: torch.unsqueeze(x, 1), lambda r: [r.normal(size=S34)])
case("unsqueeze_last", lambda x: x.unsqueeze(-1), lambda x: x.unsqueeze(-1), lambda r: [r.normal(size=S34)])
case("expand_dims", lambda x: pcp.expand_dims(x, 0), lambda x: x.unsqueeze(0), lambda r: [r.normal(size=S34)])
case("broadcast_to", lambda x: pcp.broadcast_to(x, (2, 3, 4)), lambda x: torch.broadcast_to(x, (2, 3, 4)),
     lambda r: [r.normal(size=(3, 1))])
case("broadcast_to_method", lambda x: x.broadcast_to(2, 4), lambda x: x.expand(2, 4), lambda r: [r.normal(size=(4,))])
for _k in (0, 1, -1):
    case(f"tril-k={_k}", (lambda k: lambda x: pcp.tril(x, k))(_k), (lambda k: lambda x: torch.tril(x, k))(_k),
         lambda r: [r.normal(size=(3, 4))])
    case(f"triu-k={_k}", (lambda k: lambda x: x.triu(k))(_k), (lambda k: lambda x: torch.triu(x, k))(_k),
         lambda r: [r.normal(size=(2, 3, 3))])
case("copy", pcp.copy, lambda x: x.clone(), lambda r: [r.normal(size=S34)])
case("contiguous_of_transposed", lambda x: pcp.contiguous(x.T) * 2.0, lambda x: x.T.contiguous() * 2.0,
     lambda r: [r.normal(size=S34)])

# --------------------------------------------------------------------------- indexing

X56 = lambda r: [r.normal(size=(5, 6))]
X456 = lambda r: [r.normal(size=(4, 5, 6))]
T = lambda v: torch.tensor(v)
case("index_slice", lambda x: x[1:4], lambda x: x[1:4], X56)
case("index_slice_steps", lambda x: x[::2, 1::3], lambda x: x[::2, 1::3], X56)
case("index_slice_negative_step", lambda x: x[4:0:-2], lambda x: x[T([4, 2])], X56)
case("index_reverse", lambda x: x[::-1, ::-2], lambda x: x[T([4, 3, 2, 1, 0])][:, T([5, 3, 1])], X56)
case("index_int", lambda x: x[1], lambda x: x[1], X456)
case("index_negative_int", lambda x: x[-1, :, 2], lambda x: x[-1, :, 2], X456)
case("index_int_and_slice", lambda x: x[2, 1:4:2], lambda x: x[2, 1:4:2], X456)
case("index_none", lambda x: x[None, 1, :, None], lambda x: x[None, 1, :, None], X56)
case("index_ellipsis", lambda x: x[..., 2], lambda x: x[..., 2], X456)
case("index_ellipsis_slice", lambda x: x[1:, ..., ::3], lambda x: x[1:, ..., ::3], X456)
case("index_tensor_repeated", lambda x: x[pcp.tensor(ints(0, 2, 2, 4, 0, 2))], lambda x: x[T(ints(0, 2, 2, 4, 0, 2))],
     X56)
case("index_tensor_negative", lambda x: x[pcp.tensor(ints(-1, 0, -1))], lambda x: x[T(ints(4, 0, 4))], X56)
case("index_tensor_2d", lambda x: x[pcp.tensor(ints(1, 1, 3, 0).reshape(2, 2))],
     lambda x: x[T(ints(1, 1, 3, 0).reshape(2, 2))], X56)
case("index_tensor_axis1", lambda x: x[:, pcp.tensor(ints(5, 1, 5, 5))], lambda x: x[:, T(ints(5, 1, 5, 5))], X56)
case("index_slice_then_tensor", lambda x: x[1:3, pcp.tensor(ints(0, 0, 4))], lambda x: x[1:3, T(ints(0, 0, 4))], X456)
case("index_two_tensors", lambda x: x[pcp.tensor(ints(0, 2, 0)), pcp.tensor(ints(1, 3, 1))],
     lambda x: x[T(ints(0, 2, 0)), T(ints(1, 3, 1))], X56)
case("index_two_tensors_broadcast", lambda x: x[pcp.tensor(ints(0, 3, 3)).reshape(3, 1), pcp.tensor(ints(2, 2))],
     lambda x: x[T(ints(0, 3, 3)).reshape(3, 1), T(ints(2, 2))], X456)
case("index_int_and_tensor", lambda x: x[1, pcp.tensor(ints(4, 4, 0))], lambda x: x[1, T(ints(4, 4, 0))], X456)
case("index_separated_tensors", lambda x: x[pcp.tensor(ints(0, 3)), :, pcp.tensor(ints(5, 5))],
     lambda x: x[T(ints(0, 3)), :, T(ints(5, 5))], X456)
_MASK = np.array([True, False, True, True, False])
case("index_bool_mask", lambda x: x[pcp.tensor(_MASK)], lambda x: x[T(_MASK)], X56)
case("take_flat", lambda x: pcp.take(x, pcp.tensor(ints(0, 7, 7, 29, -1, 3).reshape(2, 3))),
     lambda x: torch.take(x, T(ints(0, 7, 7, 29, 29, 3).reshape(2, 3))), X56)
case("take_axis0", lambda x: pcp.take(x, pcp.tensor(ints(1, 1, 4, 1)), axis=0),
     lambda x: torch.index_select(x, 0, T(ints(1, 1, 4, 1))), X56)
case("take_axis1_2d_indices", lambda x: x.take(pcp.tensor(ints(0, 4, 4, 2).reshape(2, 2)), axis=1),
     lambda x: x[:, T(ints(0, 4, 4, 2).reshape(2, 2))], X456)
case("take_axis_last", lambda x: pcp.take(x, pcp.tensor(ints(3, 3, 3)), axis=-1),
     lambda x: x[..., T(ints(3, 3, 3))], X456)
_EMB_IDX = ints(0, 2, 2, 5, 0, 2).reshape(2, 3)
case("embedding", lambda w: pcp.embedding(w, pcp.tensor(_EMB_IDX)), lambda w: TF.embedding(T(_EMB_IDX), w),
     lambda r: [r.normal(size=(6, 3))])
case("embedding_1d_indices", lambda w: pcp.embedding(w, pcp.tensor(ints(3, 3, 3, 1))),
     lambda w: TF.embedding(T(ints(3, 3, 3, 1)), w), lambda r: [r.normal(size=(4, 5))])

# --------------------------------------------------------------------------- neural network

case("layer_norm", lambda x, w, b: pcp.layer_norm(x, w, b), lambda x, w, b: TF.layer_norm(x, (6,), w, b),
     lambda r: [r.normal(size=(4, 6)) * 2 + 1, r.normal(size=(6,)), r.normal(size=(6,))])
case("layer_norm_3d", lambda x, w, b: pcp.layer_norm(x, w, b, eps=1e-3),
     lambda x, w, b: TF.layer_norm(x, (5,), w, b, eps=1e-3),
     lambda r: [r.normal(size=(2, 3, 5)), r.normal(size=(5,)), r.normal(size=(5,))])
case("layer_norm_no_affine", lambda x: pcp.layer_norm(x), lambda x: TF.layer_norm(x, (6,)),
     lambda r: [r.normal(size=(3, 6))])
case("layer_norm_weight_only", lambda x, w: pcp.layer_norm(x, w), lambda x, w: TF.layer_norm(x, (4,), w),
     lambda r: [r.normal(size=(3, 4)), r.normal(size=(4,))])
case("layer_norm_transposed_input", lambda x, w, b: pcp.layer_norm(x.T, w, b),
     lambda x, w, b: TF.layer_norm(x.T, (3,), w, b),
     lambda r: [r.normal(size=(3, 5)), r.normal(size=(3,)), r.normal(size=(3,))])


def _ce(targets, reduction, ignore_index=-100):
    C = None

    def f(logits):
        return pcp.cross_entropy(logits, pcp.tensor(targets), ignore_index=ignore_index, reduction=reduction)

    def tf(logits):
        nonlocal C
        C = logits.shape[-1]
        out = TF.cross_entropy(logits.reshape(-1, C), T(targets).reshape(-1), ignore_index=ignore_index,
                               reduction=reduction)
        return out.reshape(targets.shape) if reduction == "none" else out
    return f, tf


_CE_T = ints(0, 4, -100, 2, 2, 1)
for _red in ("mean", "sum", "none"):
    _f, _tf = _ce(_CE_T, _red)
    case(f"cross_entropy-{_red}", _f, _tf, lambda r: [r.normal(size=(6, 5)) * 2])
    _f, _tf = _ce(ints(1, 3, 3, 0, 2, 3).reshape(2, 3), _red, ignore_index=3)
    case(f"cross_entropy_3d_ignore3-{_red}", _f, _tf, lambda r: [r.normal(size=(2, 3, 4)) * 2])
_f, _tf = _ce(ints(2, 0, 1, 1), "mean")
case("cross_entropy_no_ignored", _f, _tf, lambda r: [r.normal(size=(4, 3))])

for _name, _kw, _shapes in [
    ("sdpa", dict(), [(2, 3, 4), (2, 5, 4), (2, 5, 3)]),
    ("sdpa_causal", dict(causal=True), [(2, 4, 4), (2, 4, 4), (2, 4, 3)]),
    ("sdpa_causal_rect", dict(causal=True), [(2, 3, 4), (2, 5, 4), (2, 5, 2)]),
    ("sdpa_scale", dict(scale=0.3), [(1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4)]),
    ("sdpa_causal_scale_4d", dict(causal=True, scale=0.7), [(2, 2, 4, 3), (2, 2, 4, 3), (2, 2, 4, 5)]),
    # equal 4-D shapes: float32 runs the fused attention kernel and its fused backward
    ("sdpa_fused", dict(), [(2, 3, 5, 4)] * 3),
    ("sdpa_fused_causal", dict(causal=True), [(2, 3, 5, 4)] * 3),
]:
    _tkw = dict(is_causal=_kw.get("causal", False))
    if "scale" in _kw:
        _tkw["scale"] = _kw["scale"]
    case(_name, (lambda kw: lambda q, k, v: pcp.scaled_dot_product_attention(q, k, v, **kw))(_kw),
         (lambda kw: lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, **kw))(_tkw),
         (lambda shapes: lambda r: [r.normal(size=s) for s in shapes])(_shapes))



def _torch_qkv_attention(heads, **kw):
    def f(qkv):
        B, T, C3 = qkv.shape
        q, k, v = (t.reshape(B, T, heads, C3 // 3 // heads).transpose(1, 2) for t in qkv.split(C3 // 3, dim=2))
        return TF.scaled_dot_product_attention(q, k, v, **kw).transpose(1, 2).reshape(B, T, C3 // 3)
    return f


# packed (B, T, 3C): float32 runs the fused kernel on the heads in place, float64 composes ops
case("qkv_attention", lambda x: pcp.qkv_attention(x, 2), _torch_qkv_attention(2), lambda r: [r.normal(size=(2, 5, 12))])
case("qkv_attention_causal", lambda x: pcp.qkv_attention(x, 3, causal=True, scale=0.4),
     _torch_qkv_attention(3, is_causal=True, scale=0.4), lambda r: [r.normal(size=(2, 6, 18))])

# A small composite (MLP block) to exercise the engine's accumulation across many ops.
case("mlp_block", lambda x, w1, b1, w2: pcp.layer_norm(pcp.gelu(x @ w1 + b1) @ w2).sum(axis=0),
     lambda x, w1, b1, w2: TF.layer_norm(TF.gelu(x @ w1 + b1) @ w2, (3,)).sum(dim=0),
     lambda r: [r.normal(size=(4, 5)), r.normal(size=(5, 6)) * 0.5, r.normal(size=(6,)), r.normal(size=(6, 3))])

# Ops whose gradient is zero almost everywhere, or that only move or reshape values.
case("sign", lambda x: pcp.sign(x) * x, lambda x: torch.sign(x) * x, lambda r: [away(r, S34)])
case("sum_to", lambda x: pcp.sum_to(x, (1, 4)), lambda x: x.sum(dim=0, keepdim=True), lambda r: [r.normal(size=S34)])
case("to_device", lambda x: pcp.to_device(pcp.to_device(x, "cpu"), x.device) * x, lambda x: x * x,
     lambda r: [r.normal(size=S34)])

CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)

# Every public pcp function has VJP cases above (ids starting with its name, or the alias here),
# a dedicated test below, or is declared without a gradient, with the reason.
CASE_ALIASES = {"scaled_dot_product_attention": "sdpa"}
DEDICATED = {"astype": "test_astype_gradient_casts_back", "dropout": "test_dropout_gradient_is_mask_over_keep_prob"}
NOT_DIFFERENTIABLE = {
    **{n: "comparisons, logical and bitwise ops return bool or integer tensors" for n in (
        "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not",
        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
        "any", "all")},
    **{n: "returns integer indices" for n in ("argmax", "argmin", "one_hot", "argsort", "searchsorted")},
    "unique": "returns distinct values found on the host, whose number depends on the data",
    **{n: "creates a tensor from values, not from differentiable inputs" for n in (
        "tensor", "asarray", "from_numpy", "from_dlpack", "zeros", "ones", "full", "eye", "arange", "zeros_like",
        "ones_like", "rand", "randn", "randint")},
    **{n: "device, memory, thread or grad-mode control, not a tensor op" for n in (
        "clear_cache", "cpu_features", "device", "devices", "get_default_device", "set_default_device",
        "get_num_threads", "set_num_threads", "gpu_info", "memory_stats", "reset_peak_memory_stats",
        "get_float32_matmul_precision", "set_float32_matmul_precision",
        "synchronize", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled")},
    "autocast": "a dtype-policy scope (tests/test_amp.py checks gradients through its casts)",
    "grad": "a function transform (tests/test_autograd.py checks it against backward)",
    "value_and_grad": "a function transform (tests/test_autograd.py checks it against backward)",
    "compile": "a function transform whose outputs carry no graph (tests/test_compile.py checks compiled "
               "gradients against eager ones)",
    "load_plan": "reads a plan file (tests/test_compile.py runs one in a fresh process)",
    "Tensor": "the class; its methods are the functions above",
    "DType": "the dtype class",
}


def test_every_public_function_has_a_vjp_case_or_says_why_not():
    public = {n for n in dir(pcp) if not n.startswith("_") and callable(getattr(pcp, n))
              and not isinstance(getattr(pcp, n), type(pcp))}
    def has_case(name):
        prefix = CASE_ALIASES.get(name, name)
        return any(i == prefix or i.startswith(prefix + "_") or i.startswith(prefix + "-") for i in CASE_IDS)
    missing = sorted(n for n in public if not has_case(n) and n not in DEDICATED and n not in NOT_DIFFERENTIABLE)
    assert not missing, f"public functions with no VJP case in tests/test_vjp.py: {missing}"
    stale = sorted(n for n in set(NOT_DIFFERENTIABLE) | set(DEDICATED) if n not in public)
    assert not stale, f"declarations for names that are no longer public: {stale}"
    for name, test in DEDICATED.items():
        assert callable(globals().get(test)), f"{name}: its dedicated test {test} is gone"


# Primitives no VJP case reaches, and why. Every other primitive must be reached (forward or
# backward) by a case of CASES run in float32 and float64.
PRIMITIVES_WITHOUT_A_VJP_CASE = {
    **{n: "integer or boolean results: no gradient flows" for n in (
        "argmax", "argmin", "searchsorted", "ne", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
        "bitwise_not", "bitwise_left_shift", "bitwise_right_shift")},
    **{n: "an optimizer step, writing parameters in place (tests/test_optim.py checks it against PyTorch)"
       for n in ("adam_step", "adamw_step", "sgd_step", "clip_grad_norm")},
    **{n: "made only by a plan's passes (tests/test_plan_passes.py checks each against the unfused ops)"
       for n in ("alias", "cast_multi", "sum_rows_multi", "fused_elementwise")},
    "dropout": "random: its dedicated tests (test_dropout_*) check the gradient is the mask over keep",
    "to_device": "a move between devices (tests/test_gpu.py checks gradients across the move)",
}


@pytest.mark.cpu_only
def test_every_primitive_is_reached_by_a_vjp_case_or_says_why_not():
    """The VJP cases are written per public function; this walks _core.primitives() so a new
    primitive (or one a refactor stops using) cannot go untested by them."""
    names = set(pcp._core.primitive_names())
    pcp._core.reset_profile()
    pcp._core.set_profiling(True)
    try:
        for c in CASES:
            xs, wrt, rng = c.inputs()
            _pcp_run(c, xs, wrt, F64, rng=rng)
            _pcp_run(c, [a.astype(np.float32).astype(np.float64) for a in xs], wrt, pcp.float32, rng=rng)
    finally:
        pcp._core.set_profiling(False)
    seen = {name for name, *_ in pcp._core.profile_results()}
    pcp._core.reset_profile()
    missing = sorted(names - seen - set(PRIMITIVES_WITHOUT_A_VJP_CASE))
    assert not missing, f"primitives no case in tests/test_vjp.py reaches: {missing}"
    stale = sorted(set(PRIMITIVES_WITHOUT_A_VJP_CASE) - names)
    assert not stale, f"declared without a case but no longer primitives: {stale}"
    reached = sorted(set(PRIMITIVES_WITHOUT_A_VJP_CASE) & seen)
    assert not reached, f"declared without a case but a case reaches them (remove them): {reached}"


# --------------------------------------------------------------------------- the checks


# A GPU computes in float32: its gradients against the host's float64 finite differences of the
# same float32-representable inputs, at float32's accuracy.
GPU_FD_TOL = dict(rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("c", CASES, ids=CASE_IDS)
def test_vjp_matches_finite_differences(c, device):
    xs, wrt, rng = c.inputs()
    dtype, tol = (F64, FD_TOL) if device == "cpu" else (pcp.float32, GPU_FD_TOL)
    if dtype == pcp.float32:
        xs = [a.astype(np.float32).astype(np.float64) for a in xs]
    _, ws, grads = _pcp_run(c, xs, wrt, dtype, rng=rng)
    for i, g in zip(wrt, grads):
        ref = numeric_grad(_fd_loss(c, xs, ws, i), xs[i], eps=1e-6)
        atol = tol["atol"] * (1.0 if dtype == F64 else max(1.0, float(np.abs(ref).max(initial=0.0))))
        np.testing.assert_allclose(g, ref, rtol=tol["rtol"], atol=atol, err_msg=f"{c.id}: gradient of input {i} on {device}")


@requires_torch
@pytest.mark.parametrize("dtype", [pcp.float32, pcp.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("c", CASES, ids=CASE_IDS)
def test_vjp_matches_torch(c, dtype):
    xs, wrt, rng = c.inputs()
    if dtype == pcp.float32:  # same values in both libraries
        xs = [a.astype(np.float32).astype(np.float64) for a in xs]
    outs, ws, grads = _pcp_run(c, xs, wrt, dtype, rng=rng)
    tdtype = torch.float32 if dtype == pcp.float32 else torch.float64
    touts, tgrads = _torch_run(c, xs, wrt, tdtype, ws)
    tol = TORCH_TOL[dtype]
    assert len(outs) == len(touts)
    for o, t in zip(outs, touts):
        assert o.shape == t.shape
        np.testing.assert_allclose(o, t, **tol, err_msg=f"{c.id}: forward")
    for i, g, t in zip(wrt, grads, tgrads):
        np.testing.assert_allclose(g, t, **tol, err_msg=f"{c.id}: gradient of input {i}")


FUSED_BACKWARD = ["gelu_none", "gelu_tanh", "softmax-axis=-1", "log_softmax-axis=-1", "softmax-axis=0",
                  "sdpa_fused", "sdpa_fused_causal", "qkv_attention", "qkv_attention_causal",
                  "layer_norm", "layer_norm_3d", "layer_norm_no_affine", "layer_norm_weight_only", "mlp_block"]
LOW_TOL = {pcp.float32: dict(rtol=2e-5, atol=2e-6), pcp.bfloat16: dict(rtol=4e-2, atol=4e-2),
           pcp.float16: dict(rtol=5e-3, atol=5e-3)}


@pytest.mark.parametrize("dtype", list(LOW_TOL), ids=str)
@pytest.mark.parametrize("cid", FUSED_BACKWARD)
def test_fused_backward_matches_float64(cid, dtype):
    """Below float64, first-order backward passes run fused kernels (softmax, layer norm, gelu,
    attention);
    they must agree with the float64 gradients, which compose ops."""
    c = next(c for c in CASES if c.id == cid)
    xs, wrt, rng = c.inputs()
    xs = [pcp.tensor(a, dtype=dtype, device="cpu").astype(F64).numpy() for a in xs]  # same values in both
    with _on_host():
        _, ws, ref = _pcp_run(c, xs, wrt, F64, rng=rng)
    _, _, got = _pcp_run(c, xs, wrt, dtype, rng=np.random.default_rng(0), ws=ws)
    for i, g, r in zip(wrt, got, ref):
        np.testing.assert_allclose(g, r, **LOW_TOL[dtype], err_msg=f"{cid}: gradient of input {i}")


# --------------------------------------------------------------------------- special cases


def test_max_min_ties_split_gradient_evenly():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    w = np.array([2.0, -3.0])
    for op, expect in [(pcp.max, [[0, 1, 1, 0], [-0.75] * 4]), (pcp.min, [[0, 0, 0, 2], [-0.75] * 4])]:
        t = pcp.tensor(x, dtype=F64, requires_grad=True)
        (op(t, axis=1) * pcp.tensor(w, dtype=F64)).sum().backward()
        np.testing.assert_allclose(to_np(t.grad), np.array(expect, dtype=np.float64), rtol=0, atol=1e-15)
    if torch is not None:
        tt = torch.tensor(x, requires_grad=True)
        (torch.amax(tt, dim=1) * torch.tensor(w)).sum().backward()
        t = pcp.tensor(x, dtype=F64, requires_grad=True)
        (pcp.max(t, axis=1) * pcp.tensor(w, dtype=F64)).sum().backward()
        np.testing.assert_allclose(to_np(t.grad), tt.grad.numpy(), rtol=0, atol=1e-15)


def test_maximum_minimum_ties_split_gradient():
    a = pcp.tensor([1.0, 2.0, 3.0], dtype=F64, requires_grad=True)
    b = pcp.tensor([1.0, 5.0, 3.0], dtype=F64, requires_grad=True)
    pcp.maximum(a, b).sum().backward()
    np.testing.assert_allclose(to_np(a.grad), [0.5, 0.0, 0.5])
    np.testing.assert_allclose(to_np(b.grad), [0.5, 1.0, 0.5])


@pytest.mark.parametrize("p", [0.25, 0.5, 0.8])
def test_dropout_gradient_is_mask_over_keep_prob(p):
    rng = np.random.default_rng(7)
    x_np = away(rng, (40, 50), 0.1)
    w_np = rng.uniform(-1.5, 1.5, size=x_np.shape)
    pcp.random.seed(123)
    x = pcp.tensor(x_np, dtype=F64, requires_grad=True)
    y = pcp.dropout(x, p)
    (y * pcp.tensor(w_np, dtype=F64)).sum().backward()
    # The same seed draws the same mask: dropout of ones gives mask / (1 - p).
    pcp.random.seed(123)
    with pcp.no_grad():
        m = to_np(pcp.dropout(pcp.ones(x_np.shape, dtype=F64), p)) * (1 - p)
    np.testing.assert_allclose(np.unique(np.round(m, 12)), [0.0, 1.0])
    assert abs(m.mean() - (1 - p)) < 0.05
    np.testing.assert_allclose(to_np(y), x_np * m / (1 - p), rtol=1e-12, atol=0)
    np.testing.assert_allclose(to_np(x.grad), w_np * m / (1 - p), rtol=1e-12, atol=0)


def test_dropout_eval_and_p0_pass_gradient_through():
    x_np = np.linspace(-1, 1, 12).reshape(3, 4)
    w_np = np.arange(12.0).reshape(3, 4) - 5
    for kwargs in (dict(p=0.5, training=False), dict(p=0.0)):
        x = pcp.tensor(x_np, dtype=F64, requires_grad=True)
        y = pcp.dropout(x, **kwargs)
        np.testing.assert_array_equal(to_np(y), x_np)
        (y * pcp.tensor(w_np, dtype=F64)).sum().backward()
        np.testing.assert_array_equal(to_np(x.grad), w_np)


def test_dropout_p1_gives_zero_gradient():
    x = pcp.tensor(np.ones((3, 4)), dtype=F64, requires_grad=True)
    (pcp.dropout(x, 1.0) * 3.0).sum().backward()
    np.testing.assert_array_equal(to_np(x.grad), np.zeros((3, 4)))


@pytest.mark.parametrize("src,dst", [(pcp.float64, pcp.float32), (pcp.float32, pcp.float64),
                                     (pcp.float32, pcp.float32)])
def test_astype_gradient_casts_back(src, dst):
    rng = np.random.default_rng(3)
    x_np = rng.normal(size=(3, 5))
    w_np = rng.normal(size=(3, 5))
    x = pcp.tensor(x_np, dtype=src, requires_grad=True)
    y = x.astype(dst)
    assert y.dtype == dst
    (y * pcp.tensor(w_np, dtype=dst)).sum().backward()
    assert x.grad.dtype == src and x.grad.shape == x.shape
    # d/dx sum(cast(x) * w) = w, rounded to dst then to src
    expect = w_np.astype(np.float32 if dst == pcp.float32 else np.float64)
    expect = expect.astype(np.float32 if src == pcp.float32 else np.float64)
    np.testing.assert_array_equal(to_np(x.grad), expect.astype(np.float64))


def test_astype_roundtrip_chain_finite_differences():
    # float64 -> float32 -> float64 inside a smooth function: gradient is the float64 one up to float32 rounding
    rng = np.random.default_rng(5)
    x_np = rng.normal(size=(4,))
    x = pcp.tensor(x_np, dtype=F64, requires_grad=True)
    y = pcp.exp(x.astype(pcp.float32)).astype(F64) * 2.0
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 2 * np.exp(x_np), rtol=1e-6)


@requires_torch
def test_astype_mixed_precision_matches_torch():
    rng = np.random.default_rng(11)
    x_np = rng.normal(size=(3, 4))
    w_np = rng.normal(size=(4, 2))
    x = pcp.tensor(x_np, dtype=F64, requires_grad=True)
    w = pcp.tensor(w_np, dtype=pcp.float32, requires_grad=True)
    (pcp.tanh(x.astype(pcp.float32) @ w).astype(F64) ** 2).sum().backward()
    tx = torch.tensor(x_np, requires_grad=True)
    tw = torch.tensor(w_np, dtype=torch.float32, requires_grad=True)
    (torch.tanh(tx.float() @ tw).double() ** 2).sum().backward()
    assert x.grad.dtype == F64 and w.grad.dtype == pcp.float32
    np.testing.assert_allclose(to_np(x.grad), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(w.grad), tw.grad.double().numpy(), rtol=1e-5, atol=1e-6)


def test_embedding_repeated_indices_accumulate_exactly():
    w = pcp.tensor(np.zeros((4, 3)), dtype=F64, requires_grad=True)
    idx = pcp.tensor(ints(1, 1, 1, 3, 1))
    g = np.arange(15.0).reshape(5, 3)
    pcp.embedding(w, idx).backward(pcp.tensor(g, dtype=F64))
    expect = np.zeros((4, 3))
    np.add.at(expect, ints(1, 1, 1, 3, 1), g)
    np.testing.assert_array_equal(to_np(w.grad), expect)


def test_gather_repeated_indices_accumulate_exactly():
    x = pcp.tensor(np.zeros((3, 4)), dtype=F64, requires_grad=True)
    idx = ints(2, 0, 2, 2)
    g = np.arange(12.0).reshape(3, 4) + 1
    x[:, pcp.tensor(idx)].backward(pcp.tensor(g, dtype=F64))
    expect = np.zeros((3, 4))
    np.add.at(expect, (slice(None), idx), g)
    np.testing.assert_array_equal(to_np(x.grad), expect)


def test_cross_entropy_ignored_rows_get_zero_gradient():
    logits = pcp.tensor(np.random.default_rng(2).normal(size=(4, 3)), dtype=F64, requires_grad=True)
    t = pcp.tensor(ints(0, -100, 2, -100))
    pcp.cross_entropy(logits, t).backward()
    g = to_np(logits.grad)
    np.testing.assert_array_equal(g[[1, 3]], np.zeros((2, 3)))
    # remaining rows: (softmax - onehot) / number of valid targets
    l = to_np(logits)
    sm = np.exp(l - l.max(1, keepdims=True))
    sm /= sm.sum(1, keepdims=True)
    oh = np.eye(3)[[0, 0, 2, 0]]
    np.testing.assert_allclose(g[[0, 2]], ((sm - oh) / 2)[[0, 2]], rtol=1e-12, atol=1e-14)


def test_sdpa_causal_first_query_ignores_later_keys():
    # with causal masking, output row 0 depends only on key/value 0: their later rows get no gradient from it
    rng = np.random.default_rng(9)
    q = pcp.tensor(rng.normal(size=(1, 4, 3)), dtype=F64, requires_grad=True)
    k = pcp.tensor(rng.normal(size=(1, 4, 3)), dtype=F64, requires_grad=True)
    v = pcp.tensor(rng.normal(size=(1, 4, 3)), dtype=F64, requires_grad=True)
    out = pcp.scaled_dot_product_attention(q, k, v, causal=True)
    out[:, 0].sum().backward()
    np.testing.assert_array_equal(to_np(k.grad)[0, 1:], np.zeros((3, 3)))
    np.testing.assert_array_equal(to_np(v.grad)[0, 1:], np.zeros((3, 3)))
    np.testing.assert_allclose(to_np(v.grad)[0, 0], np.ones(3), rtol=1e-14)
    np.testing.assert_array_equal(to_np(q.grad)[0, 0], np.zeros(3))  # softmax of one element is constant


def test_matmul_gradient_shapes_for_broadcast_batch():
    rng = np.random.default_rng(4)
    for sa, sb in [((3, 1, 2, 4), (2, 4, 3)), ((4,), (5, 4, 2)), ((5, 2, 4), (4,)), ((1, 2, 3), (6, 3, 2))]:
        a = pcp.tensor(rng.normal(size=sa), dtype=F64, requires_grad=True)
        b = pcp.tensor(rng.normal(size=sb), dtype=F64, requires_grad=True)
        out = pcp.matmul(a, b)
        g = rng.normal(size=out.shape)
        out.backward(pcp.tensor(g, dtype=F64))
        assert a.grad.shape == sa and b.grad.shape == sb
        # reference: np.matmul's gradient via einsum on explicitly broadcast operands
        A = np.asarray(to_np(a)).reshape(sa)
        B = np.asarray(to_np(b)).reshape(sb)
        A2 = A[None, :] if A.ndim == 1 else A
        B2 = B[:, None] if B.ndim == 1 else B
        G = g
        if A.ndim == 1:
            G = np.expand_dims(G, -2)
        if B.ndim == 1:
            G = np.expand_dims(G, -1)
        batch = np.broadcast_shapes(A2.shape[:-2], B2.shape[:-2])
        Ab = np.broadcast_to(A2, batch + A2.shape[-2:])
        Bb = np.broadcast_to(B2, batch + B2.shape[-2:])
        gA = G @ np.swapaxes(Bb, -1, -2)
        gB = np.swapaxes(Ab, -1, -2) @ G

        def reduce_to(g_, shape):
            while g_.ndim > len(shape):
                g_ = g_.sum(0)
            for ax, n in enumerate(shape):
                if n == 1 and g_.shape[ax] != 1:
                    g_ = g_.sum(ax, keepdims=True)
            return g_
        gA = reduce_to(gA, A2.shape).reshape(sa)
        gB = reduce_to(gB, B2.shape).reshape(sb)
        np.testing.assert_allclose(to_np(a.grad), gA, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(to_np(b.grad), gB, rtol=1e-12, atol=1e-12)


def test_pow_at_zero_base_matches_torch_convention():
    # d/da a^b at a = 0 (b > 1) is 0; d/db a^b at a = 0 (b >= 0) is 0, not nan (as PyTorch)
    a = pcp.tensor([0.0, 2.0, 0.0], dtype=F64, requires_grad=True)
    b = pcp.tensor([2.0, 3.0, 0.0], dtype=F64, requires_grad=True)
    pcp.pow(a, b).sum().backward()
    np.testing.assert_allclose(to_np(a.grad), [0.0, 12.0, 0.0], rtol=1e-15)
    np.testing.assert_allclose(to_np(b.grad), [0.0, 8 * np.log(2.0), 0.0], rtol=1e-15)
    if torch is not None:
        ta = torch.tensor([0.0, 2.0, 0.0], dtype=torch.float64, requires_grad=True)
        tb = torch.tensor([2.0, 3.0, 0.0], dtype=torch.float64, requires_grad=True)
        torch.pow(ta, tb).sum().backward()
        np.testing.assert_allclose(to_np(a.grad), ta.grad.numpy(), rtol=1e-15)
        np.testing.assert_allclose(to_np(b.grad), tb.grad.numpy(), rtol=1e-15)
