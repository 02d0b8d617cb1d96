"""Autograd engine semantics: accumulation, broadcasting, detach / no_grad, retain_grad, explicit
cotangents, errors, higher-order gradients, the grad / value_and_grad transforms, and memory."""
import gc

import numpy as np
import pytest

import pcp
from conftest import numeric_grad, requires_torch, to_np, torch, on_each_device

pytestmark = on_each_device

F64 = pcp.float64


def t64(a, requires_grad=False):
    return pcp.tensor(np.asarray(a, dtype=np.float64), dtype=F64, requires_grad=requires_grad)


def rng(seed=0):
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------- accumulation


def test_tensor_used_twice_accumulates():
    x_np = np.array([[0.5, -1.0, 2.0], [3.0, -0.25, 1.5]])
    x = t64(x_np, True)
    y = x * x + x
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 2 * x_np + 1, rtol=1e-15)


def test_diamond_graph_accumulates():
    # a feeds two branches that meet again: d/dx [2x * exp(2x)] = 2 exp(2x) (1 + 2x)
    x_np = np.array([-0.3, 0.1, 0.7])
    x = t64(x_np, True)
    a = x * 2.0
    y = a * pcp.exp(a)
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 2 * np.exp(2 * x_np) * (1 + 2 * x_np), rtol=1e-13)


def test_same_input_to_both_operands_and_deep_reuse():
    x_np = np.array([1.5, -0.5])
    x = t64(x_np, True)
    y = x
    for _ in range(5):  # y = x * 2^5 ... through a chain that reuses x at every step
        y = y + x
    (y * y).sum().backward()  # (6x)^2 -> 72 x
    np.testing.assert_allclose(to_np(x.grad), 72 * x_np, rtol=1e-15)


def test_two_backward_calls_accumulate_into_grad():
    x_np = np.array([1.0, -2.0, 0.5])
    x = t64(x_np, True)
    (x * x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 2 * x_np)
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 2 * x_np + 3)
    x.grad = None
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), np.full(3, 3.0))


def test_backward_twice_through_same_graph_accumulates_with_retain_graph():
    x_np = np.array([0.2, 0.4])
    x = t64(x_np, True)
    y = pcp.sin(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(to_np(x.grad), 2 * np.cos(x_np), rtol=1e-15)
    with pytest.raises(RuntimeError, match=r"backward: the graph through sum .*retain_graph=True"):
        y.backward()  # the last pass freed what the graph saved, as in PyTorch
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        pcp._core.autograd_grad(y, [x])


def test_backward_frees_the_saved_activations_unless_retain_graph():
    """Without retain_graph each op lets go of what it saved once its gradient is taken: with
    the loss still alive, the activations are gone after backward (retained, they stay)."""
    x = pcp.tensor(np.full((128, 128), 0.01, np.float32), requires_grad=True)
    left = {}
    for retain in (True, False):
        h = x
        for _ in range(6):
            h = pcp.tanh(h @ x)
        loss = h.sum()
        del h
        loss.backward(retain_graph=retain)
        left[retain] = pcp.memory_stats()["active_bytes"]
        x.grad = None
        del loss
    assert left[True] - left[False] >= 6 * 2 * 128 * 128 * 4, left  # each layer's product and tanh


def test_broadcast_gradients_reduce_to_input_shape():
    r = rng(1)
    x_np, y_np, w_np = r.normal(size=(3, 1)), r.normal(size=(4,)), r.normal(size=(3, 4))
    x, y = t64(x_np, True), t64(y_np, True)
    ((x + y) * t64(w_np)).sum().backward()
    assert x.grad.shape == (3, 1) and y.grad.shape == (4,)
    np.testing.assert_allclose(to_np(x.grad), w_np.sum(1, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(to_np(y.grad), w_np.sum(0), rtol=1e-14)
    x.grad = y.grad = None
    ((x * y) * t64(w_np)).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), (w_np * y_np).sum(1, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(to_np(y.grad), (w_np * x_np).sum(0), rtol=1e-14)


def test_broadcast_against_scalar_tensor():
    s = t64(2.0, True)
    x_np = np.arange(6.0).reshape(2, 3)
    (s * t64(x_np)).sum().backward()
    assert s.grad.shape == ()
    assert s.grad.item() == pytest.approx(x_np.sum())


# --------------------------------------------------------------------------- graph cutting


def test_detach_stops_gradient():
    x_np = np.array([1.0, 2.0, -3.0])
    x = t64(x_np, True)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    np.testing.assert_array_equal(to_np(d), x_np)
    (d * x).sum().backward()  # only the non-detached factor carries gradient
    np.testing.assert_array_equal(to_np(x.grad), x_np)


def test_detach_of_intermediate():
    x_np = np.array([0.5, 1.5])
    x = t64(x_np, True)
    h = pcp.exp(x)
    y = (h.detach() * h).sum()
    y.backward()
    np.testing.assert_allclose(to_np(x.grad), np.exp(2 * x_np), rtol=1e-14)


def test_no_grad_records_nothing():
    x = t64([1.0, 2.0], True)
    assert pcp.is_grad_enabled()
    with pcp.no_grad():
        assert not pcp.is_grad_enabled()
        y = pcp.exp(x) * 2.0 + x
        z = y.sum()
    assert pcp.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and not z.requires_grad
    np.testing.assert_allclose(to_np(y), 2 * np.exp([1.0, 2.0]) + [1.0, 2.0], rtol=1e-15)
    with pytest.raises(ValueError):
        z.backward()
    # outside the block recording resumes
    w = x * 3.0
    assert w.requires_grad and w.grad_fn is not None


def test_no_grad_as_decorator_and_nesting():
    x = t64([1.0, -1.0], True)

    @pcp.no_grad()
    def f(t):
        assert not pcp.is_grad_enabled()
        return t * t

    y = f(x)
    assert not y.requires_grad
    np.testing.assert_array_equal(to_np(y), [1.0, 1.0])
    assert pcp.is_grad_enabled()

    @pcp.enable_grad()
    def g(t):
        return t * 2.0

    with pcp.no_grad():
        inner = g(x)
        with pcp.enable_grad():
            inner2 = x + 1.0
        outer = x + 1.0
    assert inner.requires_grad and inner2.requires_grad and not outer.requires_grad
    inner.sum().backward()
    np.testing.assert_array_equal(to_np(x.grad), [2.0, 2.0])


def test_no_grad_restores_state_on_exception():
    with pytest.raises(RuntimeError):
        with pcp.no_grad():
            raise RuntimeError("boom")
    assert pcp.is_grad_enabled()


def test_retain_grad_on_intermediate():
    x_np = np.array([0.5, -1.0, 2.0])
    x = t64(x_np, True)
    h = x * 2.0
    h.retain_grad()
    k = h + 1.0  # not retained
    y = (k * h).sum()
    y.backward()
    h_np = 2 * x_np
    np.testing.assert_allclose(to_np(h.grad), 2 * h_np + 1, rtol=1e-15)
    np.testing.assert_allclose(to_np(x.grad), 2 * (2 * h_np + 1), rtol=1e-15)
    assert k.grad is None
    assert not h.is_leaf and x.is_leaf


def test_backward_with_explicit_cotangent():
    r = rng(2)
    x_np, g_np = r.normal(size=(3, 4)), r.normal(size=(3, 4))
    x = t64(x_np, True)
    y = x * x
    y.backward(t64(g_np))
    np.testing.assert_allclose(to_np(x.grad), 2 * x_np * g_np, rtol=1e-15)
    # NumPy cotangent accepted too
    x.grad = None
    pcp.tanh(x).backward(g_np)
    np.testing.assert_allclose(to_np(x.grad), g_np * (1 - np.tanh(x_np) ** 2), rtol=1e-13)


def test_backward_explicit_cotangent_wrong_shape_raises():
    x = t64(np.ones((2, 3)), True)
    with pytest.raises(ValueError):
        (x * 2.0).backward(t64(np.ones((3, 2))))


def test_backward_non_scalar_without_grad_raises():
    x = t64(np.ones((2, 3)), True)
    with pytest.raises(ValueError):
        (x * 2.0).backward()
    assert x.grad is None


def test_backward_one_element_non_scalar_is_allowed():
    x = t64([[3.0]], True)
    (x * x).backward()
    np.testing.assert_array_equal(to_np(x.grad), [[6.0]])


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(ValueError):
        t64([1.0, 2.0]).sum().backward()


def test_requires_grad_on_integer_raises():
    t = pcp.tensor([1, 2, 3])
    with pytest.raises(TypeError):
        t.requires_grad = True
    with pytest.raises(TypeError):
        pcp.tensor([1, 2, 3], requires_grad=True)
    with pytest.raises(TypeError):
        pcp.tensor([True, False]).requires_grad_()
    assert not t.requires_grad


def test_integer_outputs_do_not_require_grad():
    x = t64([0.5, 2.5, 1.0], True)
    assert not pcp.argmax(x).requires_grad
    assert not (x > 1.0).requires_grad
    assert (x * 1).requires_grad


# --------------------------------------------------------------------------- higher order


def test_second_derivative_of_cube_autograd_grad():
    x_np = np.array([-1.5, 0.5, 2.0])
    x = t64(x_np, True)
    y = (x ** 3).sum()
    g, = pcp._core.autograd_grad(y, [x], None, True)
    assert g.requires_grad
    np.testing.assert_allclose(to_np(g), 3 * x_np ** 2, rtol=1e-14)
    h, = pcp._core.autograd_grad(g.sum(), [x], None, True)
    np.testing.assert_allclose(to_np(h), 6 * x_np, rtol=1e-14)
    k, = pcp._core.autograd_grad(h.sum(), [x])
    np.testing.assert_allclose(to_np(k), np.full(3, 6.0), rtol=1e-14)
    assert x.grad is None  # autograd_grad does not touch .grad


def test_second_derivative_of_cube_backward_create_graph():
    x_np = np.array([-1.5, 0.5, 2.0])
    x = t64(x_np, True)
    (x ** 3).sum().backward(create_graph=True)
    gx = x.grad
    assert gx.requires_grad
    np.testing.assert_allclose(to_np(gx), 3 * x_np ** 2, rtol=1e-14)
    x.grad = None
    gx.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 6 * x_np, rtol=1e-14)


def test_second_derivative_mixed_partial():
    # f = x^2 y^3: d/dx = 2 x y^3, d2/dxdy = 6 x y^2
    x, y = t64(1.5, True), t64(-0.5, True)
    gx, = pcp._core.autograd_grad(x * x * y * y * y, [x], None, True)
    gxy, = pcp._core.autograd_grad(gx, [y])
    assert gxy.item() == pytest.approx(6 * 1.5 * 0.25, rel=1e-14)


# Second derivatives of elementwise ops: d2/dx2 of sum(f(x)) against the analytic second derivative.
_SECOND = {
    "exp": (pcp.exp, lambda x: np.exp(x)),
    "log": (pcp.log, lambda x: -1 / x ** 2),
    "sqrt": (pcp.sqrt, lambda x: -0.25 * x ** -1.5),
    "rsqrt": (pcp.rsqrt, lambda x: 0.75 * x ** -2.5),
    "sin": (pcp.sin, lambda x: -np.sin(x)),
    "cos": (pcp.cos, lambda x: -np.cos(x)),
    "tanh": (pcp.tanh, lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    "sigmoid": (pcp.sigmoid, lambda x: (s := 1 / (1 + np.exp(-x))) * (1 - s) * (1 - 2 * s)),
    "square": (pcp.square, lambda x: np.full_like(x, 2.0)),
    "reciprocal": (lambda x: 1.0 / x, lambda x: 2 / x ** 3),
    "div_by_self_plus": (lambda x: x / (x + 2.0), lambda x: -4 / (x + 2) ** 3),
    "pow_tensor_exponent": (lambda x: pcp.pow(t64([2.0, 2.0, 2.0]), x), lambda x: np.log(2) ** 2 * 2 ** x),
}


@pytest.mark.parametrize("name", list(_SECOND))
def test_second_derivative_elementwise(name):
    f, d2 = _SECOND[name]
    x_np = np.array([0.4, 1.1, 2.3])
    x = t64(x_np, True)
    g, = pcp._core.autograd_grad(f(x).sum(), [x], None, True)
    assert g.requires_grad, f"{name}: create_graph=True gave a first derivative that does not require grad"
    h, = pcp._core.autograd_grad(g.sum(), [x])
    np.testing.assert_allclose(to_np(h), d2(x_np), rtol=1e-10, atol=1e-12)


def _hvp_pcp(f, x_np, v_np):
    x = t64(x_np, True)
    g, = pcp._core.autograd_grad(f(x), [x], None, True)
    assert g.requires_grad
    h, = pcp._core.autograd_grad((g * t64(v_np)).sum(), [x])
    return to_np(h)


def _hvp_fd(f, x_np, v_np, eps=1e-5):
    def grad_at(a):
        x = t64(a, True)
        g, = pcp._core.autograd_grad(f(x), [x])
        return to_np(g)
    return (grad_at(x_np + eps * v_np) - grad_at(x_np - eps * v_np)) / (2 * eps)


_W = np.random.default_rng(42).normal(size=(3, 4))
_HVP = {
    "softmax": lambda x: (pcp.softmax(x, axis=-1) * t64(_W)).sum(),
    "log_softmax": lambda x: (pcp.log_softmax(x, axis=0) * t64(_W)).sum(),
    "logsumexp": lambda x: (pcp.logsumexp(x, axis=1) * t64(_W[:, 0])).sum(),
    "layer_norm": lambda x: (pcp.layer_norm(x) * t64(_W)).sum(),
    "matmul_tanh": lambda x: pcp.tanh(x @ t64(_W.T)).sum(),
    "gelu": lambda x: (pcp.gelu(x) * t64(_W)).sum(),
    "gelu_tanh": lambda x: (pcp.gelu(x, approximate="tanh") * t64(_W)).sum(),
    "silu": lambda x: (pcp.silu(x) * t64(_W)).sum(),
    "var": lambda x: (pcp.var(x, axis=0) ** 2).sum(),
    "slice_reverse": lambda x: (x[::-1] * x).sum(),
    "slice_step": lambda x: (x[:, ::2] * x[:, 1::2]).sum() * 1.0 + (x[::2] ** 3).sum(),
    "index_gather": lambda x: (x[pcp.tensor(np.array([0, 2, 2]))] ** 3).sum(),
    "cross_entropy": lambda x: pcp.cross_entropy(x, pcp.tensor(np.array([1, 0, 2]))),
}


def _fused_attention_loss(x, dtype):
    # float32 4-D self-attention takes the fused kernel; float64 composes ops.
    q = x.astype(dtype).reshape(1, 2, 3, 2)
    y = pcp.scaled_dot_product_attention(q, q * 0.5, pcp.tanh(q), causal=True)
    return (y.astype(pcp.float64) * t64(_W.reshape(1, 2, 3, 2))).sum()


def test_hessian_vector_product_through_fused_attention():
    r = rng(9)
    x_np, v_np = r.normal(size=(3, 4)).astype(np.float32), r.normal(size=(3, 4))
    got = _hvp_pcp(lambda x: _fused_attention_loss(x, pcp.float32), x_np.astype(np.float64), v_np)
    ref = _hvp_pcp(lambda x: _fused_attention_loss(x, pcp.float64), x_np.astype(np.float64), v_np)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_hessian_vector_product_through_fused_qkv_attention():
    r = rng(10)
    x_np, v_np = r.normal(size=(3, 4)).astype(np.float32), r.normal(size=(3, 4))
    w = t64(r.normal(size=(2, 3, 2)))

    def loss(x, dtype):  # a packed (2, 3, 6) projection: two heads of width 1
        a = x.astype(dtype).reshape(2, 3, 2)
        y = pcp.qkv_attention(pcp.concatenate([a, pcp.tanh(a), a * 0.5], 2), 2, causal=True)
        return (y.astype(pcp.float64) * w).sum()
    got = _hvp_pcp(lambda x: loss(x, pcp.float32), x_np.astype(np.float64), v_np)
    ref = _hvp_pcp(lambda x: loss(x, pcp.float64), x_np.astype(np.float64), v_np)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", list(_HVP))
def test_hessian_vector_product_matches_finite_differences(name):
    f = _HVP[name]
    r = rng(8)
    x_np = r.normal(size=(3, 4))
    v_np = r.normal(size=(3, 4))
    np.testing.assert_allclose(_hvp_pcp(f, x_np, v_np), _hvp_fd(f, x_np, v_np), rtol=1e-6, atol=1e-7)


@requires_torch
def test_hessian_vector_product_matches_torch():
    r = rng(9)
    x_np, w_np, v_np = r.normal(size=(3, 4)), r.normal(size=(4, 2)), r.normal(size=(3, 4))

    def f_pcp(x):
        return (pcp.log_softmax(pcp.tanh(x) @ t64(w_np), axis=-1) * t64(w_np[:3])).sum() + pcp.exp(x).sum()

    def f_torch(x):
        return (torch.log_softmax(torch.tanh(x) @ torch.tensor(w_np), dim=-1) * torch.tensor(w_np[:3])).sum() + \
            torch.exp(x).sum()

    tx = torch.tensor(x_np, requires_grad=True)
    g, = torch.autograd.grad(f_torch(tx), [tx], create_graph=True)
    h, = torch.autograd.grad((g * torch.tensor(v_np)).sum(), [tx])
    np.testing.assert_allclose(_hvp_pcp(f_pcp, x_np, v_np), h.numpy(), rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------- grad / value_and_grad


def test_grad_argnums_int():
    r = rng(3)
    x_np, y_np = r.normal(size=(2, 3)), r.normal(size=(2, 3))

    def f(x, y):
        return (x * y + pcp.sin(x)).sum()

    gx = pcp.grad(f)(t64(x_np), t64(y_np))
    np.testing.assert_allclose(to_np(gx), y_np + np.cos(x_np), rtol=1e-14)
    gy = pcp.grad(f, argnums=1)(t64(x_np), t64(y_np))
    np.testing.assert_allclose(to_np(gy), x_np, rtol=1e-14)
    gneg = pcp.grad(f, argnums=-1)(t64(x_np), t64(y_np))
    np.testing.assert_allclose(to_np(gneg), x_np, rtol=1e-14)


def test_grad_argnums_tuple():
    r = rng(4)
    x_np, y_np, z_np = r.normal(size=3), r.normal(size=3), r.normal(size=3)

    def f(x, y, z):
        return (x * y * z).sum()

    out = pcp.grad(f, argnums=(0, 2))(t64(x_np), t64(y_np), t64(z_np))
    assert isinstance(out, tuple) and len(out) == 2
    np.testing.assert_allclose(to_np(out[0]), y_np * z_np, rtol=1e-15)
    np.testing.assert_allclose(to_np(out[1]), x_np * y_np, rtol=1e-15)
    single = pcp.grad(f, argnums=(1,))(t64(x_np), t64(y_np), t64(z_np))
    assert isinstance(single, tuple) and len(single) == 1
    np.testing.assert_allclose(to_np(single[0]), x_np * z_np, rtol=1e-15)


def test_value_and_grad():
    x_np = np.array([0.3, -1.2, 2.0])

    def f(x):
        return (pcp.exp(x) * x).sum()

    x = t64(x_np)
    v, g = pcp.value_and_grad(f)(x)
    assert not v.requires_grad
    assert v.item() == pytest.approx(float((np.exp(x_np) * x_np).sum()), rel=1e-14)
    np.testing.assert_allclose(to_np(g), np.exp(x_np) * (1 + x_np), rtol=1e-14)


def test_grad_pytree_dict_list_tuple():
    r = rng(5)
    x_np = r.normal(size=(4, 3))
    w1, b1, w2, b2 = r.normal(size=(3, 5)), r.normal(size=5), r.normal(size=(5, 2)), r.normal(size=2)
    params = {"l1": (t64(w1), t64(b1)), "l2": [t64(w2), {"b": t64(b2)}]}

    def loss(p, x):
        (wa, ba), (wb, bd) = p["l1"], p["l2"]
        h = pcp.tanh(x @ wa + ba)
        return ((h @ wb + bd["b"]) ** 2).sum()

    value, g = pcp.value_and_grad(loss)(params, t64(x_np))
    assert isinstance(g, dict) and list(g) == ["l1", "l2"]
    assert isinstance(g["l1"], tuple) and len(g["l1"]) == 2
    assert isinstance(g["l2"], list) and isinstance(g["l2"][1], dict) and list(g["l2"][1]) == ["b"]
    # NumPy reference by hand
    h = np.tanh(x_np @ w1 + b1)
    o = h @ w2 + b2
    do = 2 * o
    dh = do @ w2.T
    dz = dh * (1 - h ** 2)
    assert value.item() == pytest.approx(float((o ** 2).sum()), rel=1e-13)
    np.testing.assert_allclose(to_np(g["l1"][0]), x_np.T @ dz, rtol=1e-12)
    np.testing.assert_allclose(to_np(g["l1"][1]), dz.sum(0), rtol=1e-12)
    np.testing.assert_allclose(to_np(g["l2"][0]), h.T @ do, rtol=1e-12)
    np.testing.assert_allclose(to_np(g["l2"][1]["b"]), do.sum(0), rtol=1e-12)
    for leaf in (*params["l1"], params["l2"][0], params["l2"][1]["b"]):
        assert leaf.grad is None and not leaf.requires_grad  # inputs untouched


def test_grad_list_argument_with_tuple_argnums():
    xs = [t64([1.0, 2.0]), t64([3.0])]
    y = t64([0.5, -0.5])

    def f(xs, y):
        return (xs[0] * xs[1] * y).sum()

    gxs, gy = pcp.grad(f, argnums=(0, 1))(xs, y)
    assert isinstance(gxs, list) and len(gxs) == 2
    np.testing.assert_allclose(to_np(gxs[0]), [1.5, -1.5])
    np.testing.assert_allclose(to_np(gxs[1]), [0.5 - 1.0])
    np.testing.assert_allclose(to_np(gy), [3.0, 6.0])


def test_grad_non_scalar_output_raises():
    with pytest.raises(ValueError):
        pcp.grad(lambda x: x * 2.0)(t64([1.0, 2.0]))


def test_grad_one_element_output_allowed():
    g = pcp.grad(lambda x: (x * x).sum(axis=0, keepdims=True))(t64([1.0, 2.0]))
    np.testing.assert_allclose(to_np(g), [2.0, 4.0])


def test_grad_unused_argument_is_zeros():
    x_np = np.array([1.0, 2.0, 3.0])
    gx, gy = pcp.grad(lambda x, y: (x * x).sum(), argnums=(0, 1))(t64(x_np), t64(np.ones((2, 2))))
    np.testing.assert_allclose(to_np(gx), 2 * x_np)
    assert gy.shape == (2, 2) and gy.dtype == F64
    np.testing.assert_array_equal(to_np(gy), np.zeros((2, 2)))
    # output depends on no argument at all
    c = t64([4.0])
    g = pcp.grad(lambda x: (c * 2.0).sum())(t64(np.ones(3)))
    assert g.shape == (3,)
    np.testing.assert_array_equal(to_np(g), np.zeros(3))
    # argument used only through detach
    g = pcp.grad(lambda x: (x.detach() * 2.0).sum())(t64(np.ones(3)))
    np.testing.assert_array_equal(to_np(g), np.zeros(3))


def test_grad_works_under_no_grad_and_leaves_mode():
    with pcp.no_grad():
        g = pcp.grad(lambda x: (x ** 3).sum())(t64([2.0]))
        assert not pcp.is_grad_enabled()
    np.testing.assert_allclose(to_np(g), [12.0])


def test_grad_errors():
    with pytest.raises(TypeError):
        pcp.grad(lambda x: x.sum())(pcp.tensor([1, 2]))
    with pytest.raises(ValueError):
        pcp.grad(lambda x: x.sum(), argnums=1)(t64([1.0]))
    with pytest.raises(TypeError):
        pcp.grad(lambda x: 3.0)(t64([1.0]))


def test_grad_of_grad():
    # d/dx of (d/dx x^4) = 12 x^2, via nested pcp.grad on autograd_grad with create_graph
    x_np = np.array([0.5, -2.0])

    def df(x):
        g, = pcp._core.autograd_grad((x ** 4).sum(), [x], None, True)
        return g.sum()

    np.testing.assert_allclose(to_np(pcp.grad(df)(t64(x_np))), 12 * x_np ** 2, rtol=1e-14)


def test_grad_finite_differences_pytree():
    r = rng(6)
    a_np, b_np = r.normal(size=(2, 3)), r.normal(size=3)

    def f(p):
        return (pcp.log_softmax(p["a"] * p["b"], axis=-1) ** 2).sum()

    g = pcp.grad(f)({"a": t64(a_np), "b": t64(b_np)})

    def f_np_a(a):
        with pcp.no_grad():
            return f({"a": t64(a), "b": t64(b_np)}).item()

    def f_np_b(b):
        with pcp.no_grad():
            return f({"a": t64(a_np), "b": t64(b)}).item()

    np.testing.assert_allclose(to_np(g["a"]), numeric_grad(f_np_a, a_np), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(to_np(g["b"]), numeric_grad(f_np_b, b_np), rtol=1e-6, atol=1e-7)


# --------------------------------------------------------------------------- memory


def _gelu_np(x):
    from math import erf
    return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))


def _mlp_reference(x, w1, b1, g, bb, w2, b2, t):
    h = _gelu_np(x @ w1 + b1)
    mu = h.mean(-1, keepdims=True)
    var = h.var(-1, keepdims=True)
    hn = (h - mu) / np.sqrt(var + 1e-5) * g + bb
    z = hn @ w2 + b2
    z = z - z.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -logp[np.arange(len(t)), t].mean()


def _run_mlp(arrays, targets, check_torch):
    params = [pcp.tensor(a, dtype=pcp.float32, requires_grad=True) for a in arrays[1:]]
    x = pcp.tensor(arrays[0], dtype=pcp.float32)
    t = pcp.tensor(targets)
    w1, b1, g, bb, w2, b2 = params
    h = pcp.gelu(x @ w1 + b1)
    h = pcp.layer_norm(h, g, bb)
    logits = h @ w2 + b2
    loss = pcp.cross_entropy(logits, t)
    loss.backward()
    loss_value = loss.item()
    grads = [np.array(to_np(p.grad)) for p in params]
    assert all(np.isfinite(gr).all() and np.abs(gr).sum() > 0 for gr in grads)
    ref = _mlp_reference(*[a.astype(np.float32).astype(np.float64) for a in arrays], targets)
    assert loss_value == pytest.approx(ref, rel=1e-5)
    if check_torch:
        tp = [torch.tensor(a, dtype=torch.float32, requires_grad=True) for a in arrays[1:]]
        tw1, tb1, tg, tbb, tw2, tb2 = tp
        th = torch.nn.functional.gelu(torch.tensor(arrays[0], dtype=torch.float32) @ tw1 + tb1)
        th = torch.nn.functional.layer_norm(th, (th.shape[-1],), tg, tbb)
        tl = torch.nn.functional.cross_entropy(th @ tw2 + tb2, torch.tensor(targets))
        tl.backward()
        for gr, tpar in zip(grads, tp):
            np.testing.assert_allclose(gr, tpar.grad.double().numpy(), rtol=1e-4, atol=1e-5)


def test_mlp_memory_returns_to_baseline():
    r = rng(10)
    arrays = [r.normal(size=(16, 8)), r.normal(size=(8, 32)) * 0.3, r.normal(size=32) * 0.1,
              1 + 0.1 * r.normal(size=32), 0.1 * r.normal(size=32), r.normal(size=(32, 4)) * 0.3,
              r.normal(size=4) * 0.1]
    targets = r.integers(0, 4, size=16)
    gc.collect()
    baseline = pcp.memory_stats()["active_bytes"]
    _run_mlp(arrays, targets, check_torch=torch is not None)
    gc.collect()
    assert pcp.memory_stats()["active_bytes"] == baseline
    # a second run (graph built and freed again) leaks nothing either
    _run_mlp(arrays, targets, check_torch=False)
    gc.collect()
    assert pcp.memory_stats()["active_bytes"] == baseline


def test_mlp_memory_explicit_del():
    r = rng(11)
    gc.collect()
    baseline = pcp.memory_stats()["active_bytes"]
    w1 = pcp.tensor(r.normal(size=(8, 16)), dtype=pcp.float32, requires_grad=True)
    b1 = pcp.tensor(np.zeros(16), dtype=pcp.float32, requires_grad=True)
    w2 = pcp.tensor(r.normal(size=(16, 3)), dtype=pcp.float32, requires_grad=True)
    x = pcp.tensor(r.normal(size=(5, 8)), dtype=pcp.float32)
    t = pcp.tensor(np.array([0, 2, 1, 1, 0]))
    h = pcp.layer_norm(pcp.gelu(x @ w1 + b1))
    loss = pcp.cross_entropy(h @ w2, t)
    loss.backward()
    assert pcp.memory_stats()["active_bytes"] > baseline
    assert w1.grad.shape == (8, 16) and b1.grad.shape == (16,) and w2.grad.shape == (16, 3)
    del w1, b1, w2, x, t, h, loss
    gc.collect()
    assert pcp.memory_stats()["active_bytes"] == baseline


def test_views_keep_storage_alive():
    gc.collect()
    baseline = pcp.memory_stats()["active_bytes"]
    base_np = np.arange(24.0).reshape(4, 6)
    base = t64(base_np)
    v = base[1:3, ::2]
    vt = base.T[2]  # column 2, a strided view
    vv = v[:, 1:]  # a view of a view
    del base
    gc.collect()
    junk = [pcp.full((4, 6), -7.0, dtype=F64) for _ in range(4)]  # reuse any freed blocks
    np.testing.assert_array_equal(to_np(v), base_np[1:3, ::2])
    np.testing.assert_array_equal(to_np(vt), base_np[:, 2])
    np.testing.assert_array_equal(to_np(vv), base_np[1:3, ::2][:, 1:])
    assert pcp.memory_stats()["active_bytes"] >= baseline + base_np.nbytes
    del junk, v, vt
    gc.collect()
    np.testing.assert_array_equal(to_np(vv), base_np[1:3, 2::2])
    del vv
    gc.collect()
    assert pcp.memory_stats()["active_bytes"] == baseline


def test_graph_keeps_inputs_alive_until_backward():
    x_np = np.array([0.5, 1.0, 1.5])
    x = t64(x_np, True)
    y = pcp.exp(x[1:] * 2.0)
    del_me = pcp.sum(y)
    gc.collect()
    del y
    gc.collect()
    del_me.backward()
    np.testing.assert_allclose(to_np(x.grad), [0.0, *(2 * np.exp(2 * x_np[1:]))], rtol=1e-14)
