"""pcp.nn: Module registration, traversal, train/eval, state dicts; layers and losses against
NumPy float64 references and (where available) the equivalent torch.nn layers."""
import math

import numpy as np
import pytest

import pcp
from pcp import nn
from conftest import requires_torch, to_np, torch, on_each_device

pytestmark = on_each_device

F32 = pcp.float32
F64 = pcp.float64
TOL32 = dict(rtol=1e-5, atol=1e-6)


def rng(seed=0):
    return np.random.default_rng(seed)


def t32(a, requires_grad=False):
    return pcp.tensor(np.asarray(a, dtype=np.float32), dtype=F32, requires_grad=requires_grad)


def t64(a, requires_grad=False):
    return pcp.tensor(np.asarray(a, dtype=np.float64), dtype=F64, requires_grad=requires_grad)


def np_gelu(x):
    from math import erf
    return 0.5 * x * (1.0 + np.vectorize(erf)(x / math.sqrt(2.0)))


def np_layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    y = y * w
    return y + b if b is not None else y


class MLP(nn.Module):
    def __init__(self, d_in=4, d_hidden=8, d_out=3):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.act = nn.GELU()
        self.drop = nn.Dropout(0.5)
        self.fc2 = nn.Linear(d_hidden, d_out)
        self.scale = pcp.ones((d_out,))  # a plain parameter on the root module

    def forward(self, x):
        return self.fc2(self.drop(self.act(self.fc1(x)))) * self.scale


# --------------------------------------------------------------------------- registration


def test_floating_tensor_attribute_becomes_parameter():
    m = nn.Module()
    w = pcp.zeros((2, 3))
    assert not w.requires_grad
    m.w = w
    m.idx = pcp.tensor(np.arange(3, dtype=np.int64))  # integer tensors are not parameters
    m.k = 7  # plain attributes stay plain
    names = [n for n, _ in m.named_parameters()]
    assert names == ["w"]
    assert m.w is w and m.w.requires_grad and m.w.is_leaf
    assert m.k == 7
    assert to_np(m.idx).tolist() == [0, 1, 2]
    assert m.num_parameters() == 6


def test_non_leaf_tensor_is_detached_into_a_leaf_parameter():
    base = t32(np.ones((3,)), requires_grad=True)
    derived = base * 2.0
    assert not derived.is_leaf
    m = nn.Module()
    m.w = derived
    assert m.w.is_leaf and m.w.requires_grad
    np.testing.assert_array_equal(to_np(m.w), [2.0, 2.0, 2.0])
    # gradients of the parameter stop at it
    (m.w * 3.0).sum().backward()
    np.testing.assert_array_equal(to_np(m.w.grad), [3.0, 3.0, 3.0])
    assert base.grad is None


def test_reassignment_replaces_registration():
    m = nn.Module()
    m.a = pcp.ones((2,))
    m.a = nn.Linear(2, 2)  # parameter -> submodule
    assert [n for n, _ in m.named_parameters()] == ["a.weight", "a.bias"]
    m.a = 3  # submodule -> plain attribute
    assert m.a == 3 and m.parameters() == [] and list(m.children()) == []
    del m.a
    assert not hasattr(m, "a")


def test_plain_attribute_then_tensor_is_visible_as_parameter():
    # PyTorch allows `self.bias = None` followed later by `self.bias = Parameter(...)`;
    # attribute access must then return the tensor, not the stale plain value.
    m = nn.Module()
    m.bias = None
    t = pcp.ones((3,))
    m.bias = t
    assert [n for n, _ in m.named_parameters()] == ["bias"]
    assert m.bias is t


def test_plain_attribute_then_submodule_is_visible():
    m = nn.Module()
    m.head = None
    lin = nn.Linear(2, 2)
    m.head = lin
    assert m.head is lin


def test_setattr_before_super_init_raises():
    class Bad(nn.Module):
        def __init__(self):
            self.w = pcp.ones((2,))

    with pytest.raises(AttributeError, match="super"):
        Bad()


def test_missing_attribute_raises_attribute_error():
    with pytest.raises(AttributeError, match="nope"):
        nn.Linear(2, 2).nope


def test_forward_not_defined():
    with pytest.raises(NotImplementedError):
        nn.Module()(pcp.ones((1,)))


# --------------------------------------------------------------------------- traversal


def test_named_parameters_dotted_names_and_children():
    m = MLP()
    names = [n for n, _ in m.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    params = m.parameters()
    assert [tuple(p.shape) for p in params] == [(3,), (8, 4), (8,), (3, 8), (3,)]
    assert params[1] is m.fc1.weight and params[4] is m.fc2.bias
    kids = list(m.children())
    assert len(kids) == 4 and kids[0] is m.fc1 and kids[3] is m.fc2
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "act", "drop", "fc2"]
    assert m.num_parameters() == 3 + 8 * 4 + 8 + 3 * 8 + 3


def test_nested_names_and_children_are_direct_only():
    inner = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.Linear(3, 1, bias=False)))
    outer = nn.Sequential(inner, nn.Linear(1, 1))
    names = [n for n, _ in outer.named_parameters()]
    assert names == ["0.0.weight", "0.0.bias", "0.1.0.weight", "1.weight", "1.bias"]
    assert list(outer.children()) == [outer[0], outer[1]]
    assert outer.num_parameters() == 6 + 3 + 3 + 2


def test_shared_parameter_listed_once():
    a, b = nn.Linear(4, 4), nn.Linear(4, 4)
    b.weight = a.weight  # weight tying
    model = nn.Sequential(a, b)
    named = list(model.named_parameters())
    assert [n for n, _ in named] == ["0.weight", "0.bias", "1.bias"]
    assert len(model.parameters()) == 3
    assert model.num_parameters() == 16 + 4 + 4
    # the shared tensor gets gradient contributions from both uses:
    # L = sum(W (W x + b0) + b1)  =>  dL/dW = 1 h^T + (W^T 1) x^T summed over the batch
    x_np = rng(1).standard_normal((2, 4))
    W, b0 = to_np(a.weight), to_np(a.bias)
    h = x_np @ W.T + b0
    ones = np.ones((2, 4))
    expect = ones.T @ h + (ones @ W).T @ x_np
    model(t32(x_np)).sum().backward()
    np.testing.assert_allclose(to_np(model[0].weight.grad), expect, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_np(model[1].bias.grad), [2.0] * 4, rtol=1e-6)


def test_module_list_registers_and_iterates():
    layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 3)])
    layers.append(nn.LayerNorm(3))
    assert len(layers) == 3
    assert [type(m).__name__ for m in layers] == ["Linear", "Linear", "LayerNorm"]
    assert layers[2] is list(layers)[2]
    assert [n for n, _ in layers.named_parameters()] == [
        "0.weight", "0.bias", "1.weight", "1.bias", "2.weight", "2.bias"]
    assert layers.num_parameters() == 6 + 9 + 6


def test_zero_grad_clears_all_grads():
    m = MLP().eval()
    m(t32(np.ones((2, 4)))).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())


def test_repr_lists_submodules():
    r = repr(nn.Sequential(nn.Linear(2, 3), nn.GELU(approximate="tanh")))
    assert "(0): Linear(2, 3, bias=True)" in r and "(1): GELU(approximate='tanh')" in r


# --------------------------------------------------------------------------- train / eval


def test_train_eval_propagate():
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(0.3), nn.GELU()))
    assert all(mod.training for mod in m.modules())
    assert m.eval() is m
    assert not any(mod.training for mod in m.modules())
    m.train()
    assert all(mod.training for mod in m.modules())
    m.train(False)
    assert not m[1][0].training


def test_dropout_identity_in_eval_and_scaled_in_train():
    x_np = rng(2).standard_normal((200, 50)).astype(np.float32) + 3.0  # nonzero everywhere
    x = t32(x_np)
    d = nn.Dropout(0.25)
    y = to_np(d(x))
    zero = y == 0
    assert 0.2 < zero.mean() < 0.3
    np.testing.assert_allclose(y[~zero], x_np.astype(np.float64)[~zero] / 0.75, rtol=1e-6)
    d.eval()
    np.testing.assert_array_equal(to_np(d(x)), x_np)
    # eval of a parent switches the dropout inside it off too
    model = nn.Sequential(nn.Dropout(0.9)).eval()
    np.testing.assert_array_equal(to_np(model(x)), x_np)


def test_dropout_extreme_p_in_train():
    x_np = rng(21).standard_normal((4, 5)).astype(np.float32)
    np.testing.assert_array_equal(to_np(nn.Dropout(1.0)(t32(x_np))), np.zeros((4, 5)))  # torch: all zeros
    np.testing.assert_array_equal(to_np(nn.Dropout(0.0)(t32(x_np))), x_np)


def test_dropout_bad_p():
    with pytest.raises(ValueError, match="p must be"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError):
        nn.Dropout(-0.1)


def test_mlp_output_deterministic_in_eval():
    m = MLP().eval()
    x = t32(rng(3).standard_normal((5, 4)))
    np.testing.assert_array_equal(to_np(m(x)), to_np(m(x)))


# --------------------------------------------------------------------------- state dicts


def test_state_dict_keys_and_values_are_copies_of_the_detached_parameters():
    m = MLP()
    sd = m.state_dict()
    assert list(sd) == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    for (name, p), (key, t) in zip(m.named_parameters(), sd.items()):
        assert name == key
        assert not t.requires_grad
        np.testing.assert_array_equal(to_np(t), to_np(p))


def test_state_dict_includes_buffers():
    m = nn.Linear(2, 2)
    m.register_buffer("mask", pcp.ones((2, 2)))
    sd = m.state_dict()
    assert list(sd) == ["weight", "bias", "mask"]
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]  # buffers are not parameters
    assert not m.mask.requires_grad


def test_state_dict_round_trip_into_fresh_model():
    pcp.random.seed(1)
    src = MLP().eval()
    pcp.random.seed(2)
    dst = MLP().eval()
    x = t32(rng(4).standard_normal((6, 4)))
    assert not np.array_equal(to_np(src(x)), to_np(dst(x)))
    missing, unexpected = dst.load_state_dict(src.state_dict())
    assert missing == [] and unexpected == []
    np.testing.assert_array_equal(to_np(dst(x)), to_np(src(x)))
    for (n1, p1), (n2, p2) in zip(src.named_parameters(), dst.named_parameters()):
        assert n1 == n2 and p1 is not p2
        np.testing.assert_array_equal(to_np(p1), to_np(p2))
        assert p2.requires_grad and p2.is_leaf
    # the loaded model still trains: gradients reach its parameters
    dst(x).sum().backward()
    assert all(p.grad is not None for p in dst.parameters())


def test_load_state_dict_accepts_numpy_arrays():
    src = nn.Linear(3, 2)
    dst = nn.Linear(3, 2)
    dst.load_state_dict({k: to_np(v).astype(np.float32) for k, v in src.state_dict().items()})
    np.testing.assert_array_equal(to_np(dst.weight), to_np(src.weight))
    np.testing.assert_array_equal(to_np(dst.bias), to_np(src.bias))
    assert dst.weight.dtype == F32
    # float64 arrays are cast into the float32 parameters, as torch's copy_ does
    w64 = np.arange(6, dtype=np.float64).reshape(2, 3) / 7
    dst.load_state_dict({"weight": w64, "bias": np.zeros(2)})
    assert dst.weight.dtype == F32
    np.testing.assert_allclose(to_np(dst.weight), w64, rtol=1e-7)


def test_load_state_dict_shape_mismatch_names_key():
    m = nn.Sequential(nn.Linear(3, 2))
    sd = m.state_dict()
    sd["0.weight"] = pcp.zeros((3, 2))
    with pytest.raises(ValueError, match=r"0\.weight"):
        m.load_state_dict(sd)
    with pytest.raises(ValueError, match=r"0\.weight"):
        m.load_state_dict(sd, strict=False)


def test_load_state_dict_missing_and_unexpected_keys_strict():
    m = nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2))
    before = {k: to_np(v).copy() for k, v in m.state_dict().items()}
    sd = m.state_dict()
    del sd["1.bias"]
    with pytest.raises(ValueError, match=r"1\.bias"):
        m.load_state_dict(sd)
    sd = {k: pcp.zeros(tuple(v.shape)) for k, v in m.state_dict().items()}
    sd["2.weight"] = pcp.zeros((2,))
    with pytest.raises(ValueError, match=r"2\.weight"):
        m.load_state_dict(sd)
    # a failed strict load changes nothing
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(to_np(v), before[k])


def test_load_state_dict_non_strict_loads_matching_keys():
    m = nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2))
    old_w = to_np(m[0].weight).copy()
    new_bias = np.array([0.5, -0.25], dtype=np.float32)
    new_ln_w = np.array([2.0, 3.0], dtype=np.float32)
    missing, unexpected = m.load_state_dict(
        {"0.bias": t32(new_bias), "1.weight": t32(new_ln_w), "extra": pcp.ones((4,))}, strict=False)
    assert sorted(missing) == ["0.weight", "1.bias"]
    assert unexpected == ["extra"]
    np.testing.assert_array_equal(to_np(m[0].bias), new_bias)
    np.testing.assert_array_equal(to_np(m[1].weight), new_ln_w)
    np.testing.assert_array_equal(to_np(m[0].weight), old_w)
    np.testing.assert_array_equal(to_np(m[1].bias), [0.0, 0.0])


def test_load_state_dict_into_tied_model():
    def make():
        a, b = nn.Linear(3, 3), nn.Linear(3, 3)
        b.weight = a.weight
        return nn.Sequential(a, b)

    pcp.random.seed(5)
    src = make()
    pcp.random.seed(6)
    dst = make()
    dst.load_state_dict(src.state_dict())
    x = t32(rng(5).standard_normal((2, 3)))
    np.testing.assert_array_equal(to_np(dst(x)), to_np(src(x)))
    assert dst[0].weight is dst[1].weight


# --------------------------------------------------------------------------- layers vs NumPy


def test_linear_forward_vs_numpy_float64():
    m = nn.Linear(5, 3, dtype=F64)
    assert m.weight.dtype == F64 and tuple(m.weight.shape) == (3, 5) and tuple(m.bias.shape) == (3,)
    x_np = rng(6).standard_normal((2, 4, 5))
    w, b = to_np(m.weight), to_np(m.bias)
    np.testing.assert_allclose(to_np(m(t64(x_np))), x_np @ w.T + b, rtol=1e-12, atol=1e-12)


def test_linear_no_bias_vs_numpy():
    m = nn.Linear(4, 2, bias=False)
    assert m.bias is None
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    x_np = rng(7).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(to_np(m(t32(x_np))), x_np.astype(np.float64) @ to_np(m.weight).T, **TOL32)


def test_linear_init_bounds():
    for fan_in in (1, 16, 300):
        m = nn.Linear(fan_in, 64)
        bound = 1.0 / math.sqrt(fan_in)
        w, b = to_np(m.weight), to_np(m.bias)
        assert np.abs(w).max() <= bound * (1 + 1e-6)
        assert np.abs(b).max() <= bound * (1 + 1e-6)
        # uniform on [-bound, bound]: it fills the range and has std bound/sqrt(3)
        if w.size >= 1000:
            assert np.abs(w).max() > 0.95 * bound
            assert abs(w.mean()) < 0.05 * bound
            assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound


def test_linear_init_differs_between_layers():
    a, b = nn.Linear(8, 8), nn.Linear(8, 8)
    assert not np.array_equal(to_np(a.weight), to_np(b.weight))


def test_embedding_forward_and_init():
    e = nn.Embedding(1000, 64)
    w = to_np(e.weight)
    assert w.shape == (1000, 64) and e.weight.dtype == F32
    assert abs(w.mean()) < 0.02  # standard error 1/sqrt(64000) ~ 0.004
    assert abs(w.std() - 1.0) < 0.02
    idx_np = np.array([[3, 999, 0], [3, 17, 42]], dtype=np.int64)
    out = e(pcp.tensor(idx_np))
    assert tuple(out.shape) == (2, 3, 64)
    np.testing.assert_array_equal(to_np(out), w[idx_np])


def test_embedding_gradient_scatters_rows():
    e = nn.Embedding(5, 3)
    idx_np = np.array([1, 3, 1, 4], dtype=np.int64)
    g_np = rng(8).standard_normal((4, 3)).astype(np.float32)
    (e(pcp.tensor(idx_np)) * t32(g_np)).sum().backward()
    expect = np.zeros((5, 3))
    np.add.at(expect, idx_np, g_np.astype(np.float64))
    np.testing.assert_allclose(to_np(e.weight.grad), expect, **TOL32)


def test_layer_norm_vs_numpy_float64():
    ln = nn.LayerNorm(6, eps=1e-5, dtype=F64)
    np.testing.assert_array_equal(to_np(ln.weight), np.ones(6))
    np.testing.assert_array_equal(to_np(ln.bias), np.zeros(6))
    r = rng(9)
    w_np, b_np = r.standard_normal(6), r.standard_normal(6)
    ln.load_state_dict({"weight": t64(w_np), "bias": t64(b_np)})
    x_np = r.standard_normal((3, 4, 6)) * 3 + 1
    np.testing.assert_allclose(to_np(ln(t64(x_np))), np_layer_norm(x_np, w_np, b_np, 1e-5), rtol=1e-10, atol=1e-10)


def test_layer_norm_no_bias_vs_numpy():
    ln = nn.LayerNorm(5, eps=1e-3, bias=False)
    assert ln.bias is None and [n for n, _ in ln.named_parameters()] == ["weight"]
    x_np = rng(10).standard_normal((4, 5)).astype(np.float32)
    np.testing.assert_allclose(to_np(ln(t32(x_np))), np_layer_norm(x_np.astype(np.float64), 1.0, None, 1e-3),
                               **TOL32)


def test_gelu_vs_numpy():
    x_np = np.linspace(-5, 5, 41)
    np.testing.assert_allclose(to_np(nn.GELU()(t64(x_np))), np_gelu(x_np), rtol=1e-12, atol=1e-12)
    tanh_ref = 0.5 * x_np * (1 + np.tanh(math.sqrt(2 / math.pi) * (x_np + 0.044715 * x_np ** 3)))
    np.testing.assert_allclose(to_np(nn.GELU("tanh")(t64(x_np))), tanh_ref, rtol=1e-12, atol=1e-12)


def test_sequential_forward_vs_numpy():
    model = nn.Sequential(nn.Linear(4, 6, dtype=F64), nn.GELU(), nn.LayerNorm(6, dtype=F64),
                          nn.Linear(6, 2, dtype=F64))
    assert len(model) == 4 and isinstance(model[1], nn.GELU)
    x_np = rng(11).standard_normal((5, 4))
    h = x_np @ to_np(model[0].weight).T + to_np(model[0].bias)
    h = np_gelu(h)
    h = np_layer_norm(h, to_np(model[2].weight), to_np(model[2].bias), 1e-5)
    h = h @ to_np(model[3].weight).T + to_np(model[3].bias)
    np.testing.assert_allclose(to_np(model(t64(x_np))), h, rtol=1e-10, atol=1e-10)


def test_module_list_forward_in_custom_module():
    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(3, 3, dtype=F64) for _ in range(3)])

        def forward(self, x):
            for layer in self.layers:
                x = x + layer(x)
            return x

    m = Stack()
    assert len(m.parameters()) == 6
    assert [n for n, _ in m.named_parameters()][:2] == ["layers.0.weight", "layers.0.bias"]
    x_np = rng(12).standard_normal((2, 3))
    ref = x_np
    for layer in m.layers:
        ref = ref + ref @ to_np(layer.weight).T + to_np(layer.bias)
    np.testing.assert_allclose(to_np(m(t64(x_np))), ref, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- layers vs torch


def _copy_to_torch(pcp_module, torch_module):
    with torch.no_grad():
        for (n, p), (tn, tp) in zip(pcp_module.named_parameters(), torch_module.named_parameters()):
            assert n == tn and tuple(p.shape) == tuple(tp.shape)
            tp.copy_(torch.from_numpy(np.array(p.numpy())))


@requires_torch
def test_layers_vs_torch_nn():
    r = rng(13)
    x_np = r.standard_normal((3, 7, 8)).astype(np.float32)
    cases = [
        (nn.Linear(8, 5), torch.nn.Linear(8, 5)),
        (nn.Linear(8, 5, bias=False), torch.nn.Linear(8, 5, bias=False)),
        (nn.LayerNorm(8), torch.nn.LayerNorm(8)),
        (nn.GELU(), torch.nn.GELU()),
        (nn.GELU("tanh"), torch.nn.GELU(approximate="tanh")),
        (nn.Dropout(0.5).eval(), torch.nn.Dropout(0.5).eval()),
    ]
    for m, tm in cases:
        if m.parameters():
            # non-trivial LayerNorm affine parameters
            with pcp.no_grad():
                for p in m.parameters():
                    p[...] = t32(r.standard_normal(tuple(p.shape)))
        _copy_to_torch(m, tm)
        ref = tm(torch.from_numpy(x_np)).detach().numpy()
        np.testing.assert_allclose(to_np(m(t32(x_np))), ref, rtol=1e-5, atol=1e-5, err_msg=repr(m))


@requires_torch
def test_embedding_vs_torch():
    e = nn.Embedding(10, 4)
    te = torch.nn.Embedding(10, 4)
    _copy_to_torch(e, te)
    idx = np.array([[0, 9, 3], [3, 3, 1]], dtype=np.int64)
    g = rng(14).standard_normal((2, 3, 4)).astype(np.float32)
    out = e(pcp.tensor(idx))
    (out * t32(g)).sum().backward()
    tout = te(torch.from_numpy(idx))
    (tout * torch.from_numpy(g)).sum().backward()
    np.testing.assert_array_equal(to_np(out), tout.detach().numpy())
    np.testing.assert_allclose(to_np(e.weight.grad), te.weight.grad.numpy(), rtol=1e-6, atol=1e-6)


@requires_torch
def test_sequential_gradients_vs_torch():
    model = nn.Sequential(nn.Linear(6, 10), nn.GELU(), nn.LayerNorm(10), nn.Dropout(0.2), nn.Linear(10, 3))
    tmodel = torch.nn.Sequential(torch.nn.Linear(6, 10), torch.nn.GELU(), torch.nn.LayerNorm(10),
                                 torch.nn.Dropout(0.2), torch.nn.Linear(10, 3))
    r = rng(15)
    with pcp.no_grad():
        model[2].weight[...] = t32(r.standard_normal(10))
        model[2].bias[...] = t32(r.standard_normal(10))
    _copy_to_torch(model, tmodel)
    model.eval()
    tmodel.eval()
    x_np = r.standard_normal((4, 6)).astype(np.float32)
    y_np = r.standard_normal((4, 3)).astype(np.float32)

    x = t32(x_np, requires_grad=True)
    loss = nn.mse_loss(model(x), t32(y_np))
    loss.backward()
    tx = torch.from_numpy(x_np).requires_grad_(True)
    tloss = torch.nn.functional.mse_loss(tmodel(tx), torch.from_numpy(y_np))
    tloss.backward()

    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5)
    np.testing.assert_allclose(to_np(x.grad), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    for (n, p), (tn, tp) in zip(model.named_parameters(), tmodel.named_parameters()):
        assert n == tn
        np.testing.assert_allclose(to_np(p.grad), tp.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=n)


# --------------------------------------------------------------------------- losses


def test_mse_loss_reductions_vs_numpy():
    r = rng(16)
    a_np, b_np = r.standard_normal((3, 5)), r.standard_normal((3, 5))
    a, b = t64(a_np), t64(b_np)
    d2 = (a_np - b_np) ** 2
    np.testing.assert_allclose(nn.mse_loss(a, b).item(), d2.mean(), rtol=1e-13)
    np.testing.assert_allclose(nn.mse_loss(a, b, reduction="mean").item(), d2.mean(), rtol=1e-13)
    np.testing.assert_allclose(nn.mse_loss(a, b, reduction="sum").item(), d2.sum(), rtol=1e-13)
    none = nn.mse_loss(a, b, reduction="none")
    assert tuple(none.shape) == (3, 5)
    np.testing.assert_allclose(to_np(none), d2, rtol=1e-13)


def test_mse_loss_broadcast_target_and_gradient():
    r = rng(17)
    a_np, b_np = r.standard_normal((4, 3)), r.standard_normal((3,))
    a = t64(a_np, requires_grad=True)
    loss = nn.mse_loss(a, t64(b_np))
    np.testing.assert_allclose(loss.item(), ((a_np - b_np) ** 2).mean(), rtol=1e-13)
    loss.backward()
    np.testing.assert_allclose(to_np(a.grad), 2 * (a_np - b_np) / a_np.size, rtol=1e-13)


def test_mse_loss_bad_reduction_and_shapes():
    a = pcp.ones((2, 3))
    with pytest.raises(ValueError, match="reduction"):
        nn.mse_loss(a, a, reduction="avg")
    with pytest.raises(ValueError):
        nn.mse_loss(a, pcp.ones((4,)))


@requires_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_vs_torch(reduction):
    r = rng(18)
    logits_np = (r.standard_normal((6, 5)) * 3).astype(np.float32)
    tgt_np = np.array([0, 4, 2, -100, 1, 4], dtype=np.int64)
    logits = t32(logits_np, requires_grad=True)
    loss = nn.cross_entropy(logits, pcp.tensor(tgt_np), reduction=reduction)
    tl = torch.from_numpy(logits_np).requires_grad_(True)
    tloss = torch.nn.functional.cross_entropy(tl, torch.from_numpy(tgt_np), reduction=reduction)
    np.testing.assert_allclose(to_np(loss), tloss.detach().numpy(), rtol=1e-5, atol=1e-6)
    g_np = r.standard_normal(tuple(tloss.shape)).astype(np.float32)
    (loss * t32(g_np)).sum().backward()
    (tloss * torch.from_numpy(g_np)).sum().backward()
    np.testing.assert_allclose(to_np(logits.grad), tl.grad.numpy(), rtol=1e-5, atol=1e-6)


@requires_torch
def test_cross_entropy_3d_classes_last_vs_torch():
    # PCP keeps classes on the last axis; torch wants them on axis 1
    r = rng(19)
    logits_np = r.standard_normal((2, 4, 7)).astype(np.float32)
    tgt_np = r.integers(0, 7, size=(2, 4)).astype(np.int64)
    tgt_np[1, 2] = 3
    loss = nn.cross_entropy(t32(logits_np), pcp.tensor(tgt_np), ignore_index=3)
    ref = torch.nn.functional.cross_entropy(torch.from_numpy(logits_np).permute(0, 2, 1),
                                            torch.from_numpy(tgt_np), ignore_index=3)
    np.testing.assert_allclose(loss.item(), ref.item(), rtol=1e-5)


def test_cross_entropy_vs_numpy_float64():
    r = rng(20)
    logits_np = r.standard_normal((5, 4))
    tgt_np = np.array([3, 0, 1, 1, 2], dtype=np.int64)
    z = logits_np - logits_np.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    ref = -logp[np.arange(5), tgt_np]
    np.testing.assert_allclose(nn.cross_entropy(t64(logits_np), pcp.tensor(tgt_np)).item(), ref.mean(), rtol=1e-12)
    np.testing.assert_allclose(nn.cross_entropy(t64(logits_np), pcp.tensor(tgt_np), reduction="sum").item(),
                               ref.sum(), rtol=1e-12)


def test_gpt2_drops_attention_weights_only_in_training():
    # With every nn.Dropout at p = 0, what still varies with the seed in training is the attention
    # dropout; in eval mode nothing does.
    from pcp.models import GPT2, GPT2Config
    model = GPT2(GPT2Config(vocab_size=11, n_positions=8, n_embd=16, n_layer=1, n_head=2, dropout=0.5))
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
    idx = pcp.tensor(np.random.default_rng(0).integers(0, 11, (2, 8)))

    def logits(seed):
        pcp.random.seed(seed)
        return model(idx)[0].numpy()
    model.train()
    assert not np.allclose(logits(1), logits(2))
    np.testing.assert_array_equal(logits(1), logits(1))
    model.eval()
    np.testing.assert_array_equal(logits(1), logits(2))
