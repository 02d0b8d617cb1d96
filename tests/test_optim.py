"""pcp.optim: SGD / Adam / AdamW trajectories against torch.optim, parameter groups, gradient
clipping against torch.nn.utils.clip_grad_norm_, the nanoGPT warmup-cosine schedule, optimizer
state dicts, and the validation of the fused C++ kernels."""
import math

import numpy as np
import pytest

import pcp
from pcp import _core, nn, optim
from conftest import requires_torch, to_np, torch, on_each_device

pytestmark = on_each_device

F32 = pcp.float32
STEPS = 10
# float32 parameters of size O(1) (up to ~3): torch and the fused kernels order a few float32
# operations differently (lerp vs b1*m + (1-b1)*g, lr/bc1 folded differently, FMA contraction), so
# each step may differ by an ulp or two, and torch's own float32 trajectories deviate from an exact
# float64 evaluation of the same update rule by up to ~4e-7 absolute here. Hence atol = 5e-7 (about
# 4 ulp at 1.0; it matters only where a parameter passes near zero) on top of rtol = 1e-6. The
# learning rates are large enough (Adam: 0.05-0.1) that a systematic 1e-5 relative error in the
# updates (~5e-6 absolute over 10 steps) is still well outside this tolerance.
TRAJ_TOL = dict(rtol=1e-6, atol=5e-7)
# Vulkan lets division and sqrt be 2.5 ulp off (lavapipe is); over a trajectory that grows.
GPU_TRAJ_TOL = dict(rtol=4e-6, atol=1e-6)

SHAPES = [(3, 4), (5,), (2, 2, 3)]


def t32(a, requires_grad=False):
    return pcp.tensor(np.asarray(a, dtype=np.float32), dtype=F32, requires_grad=requires_grad)


def init_params(seed=0):
    r = np.random.default_rng(seed)
    return [r.standard_normal(s).astype(np.float32) for s in SHAPES]


def fixed_grads(seed=1, steps=STEPS):
    r = np.random.default_rng(seed)
    return [[r.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(steps)]


def quad_coeffs(seed=2):
    # loss = sum_i sum(a_i * (p_i - c_i)^2) + sum_i sum(p_i^3) / 3: gradients depend on the trajectory
    r = np.random.default_rng(seed)
    return [(r.uniform(0.5, 2.0, s).astype(np.float32), r.standard_normal(s).astype(np.float32)) for s in SHAPES]


# --------------------------------------------------------------------------- runners


def run_pcp(make_opt, init, grads=None, steps=STEPS, groups=None, lr_at=None):
    """Runs `steps` optimizer steps; grads: list of per-step gradient lists, None: the loss of quad_coeffs."""
    params = [t32(a, requires_grad=True) for a in init]
    opt = make_opt(params if groups is None else [dict(g, params=[params[i] for i in g["params"]]) for g in groups])
    coeffs = quad_coeffs()
    for t in range(steps):
        if lr_at is not None:
            for g in opt.param_groups:
                g["lr"] = lr_at(t)
        opt.zero_grad()
        if grads is None:
            loss = None
            for p, (a, c) in zip(params, coeffs):
                term = (t32(a) * pcp.square(p - t32(c))).sum() + (p * p * p).sum() * (1.0 / 3.0)
                loss = term if loss is None else loss + term
            loss.backward()
        else:
            for p, g in zip(params, grads[t]):
                if g is not None:
                    p.grad = t32(g)
        opt.step()
    return [to_np(p) for p in params]


def run_torch(make_opt, init, grads=None, steps=STEPS, groups=None, lr_at=None):
    params = [torch.tensor(a, requires_grad=True) for a in init]
    opt = make_opt(params if groups is None else [dict(g, params=[params[i] for i in g["params"]]) for g in groups])
    coeffs = [(torch.from_numpy(a), torch.from_numpy(c)) for a, c in quad_coeffs()]
    for t in range(steps):
        if lr_at is not None:
            for g in opt.param_groups:
                g["lr"] = lr_at(t)
        opt.zero_grad(set_to_none=True)
        if grads is None:
            loss = sum((a * (p - c) ** 2).sum() + (p * p * p).sum() * (1.0 / 3.0) for p, (a, c) in zip(params, coeffs))
            loss.backward()
        else:
            for p, g in zip(params, grads[t]):
                p.grad = None if g is None else torch.from_numpy(g.copy())
        opt.step()
    return [p.detach().numpy().astype(np.float64) for p in params]


def assert_same_trajectory(ours, ref, init, **tol):
    tol = tol or (TRAJ_TOL if pcp.get_default_device() == "cpu" else GPU_TRAJ_TOL)
    moved = 0.0
    for i, (a, b, p0) in enumerate(zip(ours, ref, init)):
        np.testing.assert_allclose(a, b, err_msg=f"parameter {i}", **tol)
        moved = max(moved, np.abs(b - p0).max())
    assert moved > 1e-3, "the reference trajectory should actually move the parameters"


SGD_CASES = {
    "plain": dict(lr=0.1),
    "momentum": dict(lr=0.05, momentum=0.9),
    "dampening": dict(lr=0.05, momentum=0.9, dampening=0.3),
    "nesterov": dict(lr=0.05, momentum=0.8, nesterov=True),
    "weight_decay": dict(lr=0.1, weight_decay=0.05),
    "momentum_wd": dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
    "nesterov_wd": dict(lr=0.03, momentum=0.95, nesterov=True, weight_decay=0.1),
}

ADAM_CASES = {
    "Adam": (optim.Adam, "Adam", dict(lr=0.1)),
    "Adam_wd": (optim.Adam, "Adam", dict(lr=0.05, weight_decay=0.1)),
    "Adam_betas": (optim.Adam, "Adam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.01)),
    "AdamW_default_wd": (optim.AdamW, "AdamW", dict(lr=0.1)),
    "AdamW_wd": (optim.AdamW, "AdamW", dict(lr=0.05, weight_decay=0.1)),
    "AdamW_betas_eps": (optim.AdamW, "AdamW", dict(lr=0.05, betas=(0.85, 0.95), eps=1e-5, weight_decay=0.2)),
}


def torch_sgd(**kw):
    return lambda ps: torch.optim.SGD(ps, foreach=False, **kw)


def torch_adam(name, **kw):
    cls = getattr(torch.optim, name)
    if name == "AdamW" and "weight_decay" not in kw:
        kw = dict(kw, weight_decay=1e-2)  # both default to 1e-2; made explicit
    return lambda ps: cls(ps, foreach=False, **kw)


# --------------------------------------------------------------------------- trajectories vs torch


@requires_torch
@pytest.mark.parametrize("case", list(SGD_CASES))
@pytest.mark.parametrize("grad_mode", ["fixed", "loss"])
def test_sgd_trajectory_vs_torch(case, grad_mode):
    kw = SGD_CASES[case]
    init = init_params()
    grads = fixed_grads() if grad_mode == "fixed" else None
    ours = run_pcp(lambda ps: optim.SGD(ps, **kw), init, grads)
    ref = run_torch(torch_sgd(**kw), init, grads)
    assert_same_trajectory(ours, ref, init)


@requires_torch
@pytest.mark.parametrize("case", list(ADAM_CASES))
@pytest.mark.parametrize("grad_mode", ["fixed", "loss"])
def test_adam_trajectory_vs_torch(case, grad_mode):
    cls, tname, kw = ADAM_CASES[case]
    init = init_params()
    grads = fixed_grads() if grad_mode == "fixed" else None
    ours = run_pcp(lambda ps: cls(ps, **kw), init, grads)
    ref = run_torch(torch_adam(tname, **kw), init, grads)
    assert_same_trajectory(ours, ref, init)


def test_adam_first_step_vs_numpy_float64():
    # an independent reference for one step: m = (1-b1) g, v = (1-b2) g^2, p -= lr * m_hat / (sqrt(v_hat) + eps);
    # with |g| >> eps the first update is lr * sign(g) (+ decay), exact up to a few float32 roundings
    init = init_params()
    g = fixed_grads(steps=1)
    lr, b1, b2, eps, wd = 0.5, 0.9, 0.999, 1e-8, 0.1
    for cls, decoupled in ((optim.Adam, False), (optim.AdamW, True)):
        ours = run_pcp(lambda ps: cls(ps, lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd), init, g, steps=1)
        for p0, gi, o in zip(init, g[0], ours):
            p0, gi = p0.astype(np.float64), gi.astype(np.float64)
            if not decoupled:
                gi = gi + wd * p0
            m, v = (1 - b1) * gi, (1 - b2) * gi * gi
            upd = lr * (m / (1 - b1)) / (np.sqrt(v / (1 - b2)) + eps)
            ref = p0 * (1 - lr * wd) - upd if decoupled else p0 - upd
            np.testing.assert_allclose(o, ref, rtol=1e-6, atol=1e-7)


def test_sgd_momentum_vs_numpy_float64():
    init = init_params()
    grads = fixed_grads()
    lr, mom, damp, wd = 0.05, 0.9, 0.2, 0.01
    ours = run_pcp(lambda ps: optim.SGD(ps, lr=lr, momentum=mom, dampening=damp, weight_decay=wd), init, grads)
    for i, p in enumerate(init):
        p = p.astype(np.float64)
        buf = None
        for t in range(STEPS):
            d = grads[t][i] + wd * p
            buf = d if buf is None else mom * buf + (1 - damp) * d
            p = p - lr * buf
        np.testing.assert_allclose(ours[i], p, rtol=1e-5, atol=1e-6)


@requires_torch
@pytest.mark.parametrize("kind", ["sgd", "adamw"])
def test_param_groups_vs_torch(kind):
    init = init_params()
    grads = fixed_grads()
    # nanoGPT-style: decayed weights in one group; biases/norms with weight_decay=0 and their own lr
    groups = [dict(params=[0, 2]), dict(params=[1], weight_decay=0.0, lr=0.05)]
    if kind == "sgd":
        ours = run_pcp(lambda gs: optim.SGD(gs, lr=0.1, momentum=0.9, weight_decay=0.1), init, grads, groups=groups)
        ref = run_torch(lambda gs: torch.optim.SGD(gs, lr=0.1, momentum=0.9, weight_decay=0.1, foreach=False),
                        init, grads, groups=groups)
    else:
        ours = run_pcp(lambda gs: optim.AdamW(gs, lr=0.01, betas=(0.9, 0.95), weight_decay=0.1), init, grads,
                       groups=groups)
        ref = run_torch(lambda gs: torch.optim.AdamW(gs, lr=0.01, betas=(0.9, 0.95), weight_decay=0.1,
                                                     foreach=False), init, grads, groups=groups)
    assert_same_trajectory(ours, ref, init)


def test_param_groups_hyperparameters():
    ps = [t32(a) for a in init_params()]
    opt = optim.AdamW([dict(params=ps[:2]), dict(params=ps[2:], weight_decay=0.0, lr=0.5)], lr=0.1, weight_decay=0.2)
    assert len(opt.param_groups) == 2
    g0, g1 = opt.param_groups
    assert g0["lr"] == 0.1 and g0["weight_decay"] == 0.2 and g0["betas"] == (0.9, 0.999) and g0["eps"] == 1e-8
    assert g1["lr"] == 0.5 and g1["weight_decay"] == 0.0
    assert len(g0["params"]) == 2 and g0["params"][0] is ps[0] and g0["params"][1] is ps[1]
    assert len(g1["params"]) == 1 and g1["params"][0] is ps[2]
    with pytest.raises(ValueError, match="more than one group"):
        optim.SGD([dict(params=[ps[0]]), dict(params=[ps[0], ps[1]])])


@requires_torch
def test_lr_schedule_via_param_groups_vs_torch():
    init = init_params()
    grads = fixed_grads()
    sched = optim.warmup_cosine(0.05, 0.005, warmup_iters=3, decay_iters=8)
    # nanoGPT's optimizer settings: betas (0.9, 0.95), weight_decay 0.1, lr set on every group each step
    ours = run_pcp(lambda ps: optim.AdamW(ps, lr=1.0, betas=(0.9, 0.95), weight_decay=0.1), init, grads, lr_at=sched)
    ref = run_torch(lambda ps: torch.optim.AdamW(ps, lr=1.0, betas=(0.9, 0.95), weight_decay=0.1, foreach=False),
                    init, grads, lr_at=sched)
    assert_same_trajectory(ours, ref, init)


@requires_torch
@pytest.mark.parametrize("kind", ["sgd_momentum", "adam"])
def test_parameter_without_grad_at_first_vs_torch(kind):
    # parameter 1 gets no gradient in the first 3 steps (e.g. an unused head); torch skips it and
    # gives it its own step count / momentum buffer; the others keep their state untouched.
    init = init_params()
    grads = fixed_grads()
    for t in range(3):
        grads[t][1] = None
    if kind == "sgd_momentum":
        ours = run_pcp(lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9), init, grads)
        ref = run_torch(torch_sgd(lr=0.05, momentum=0.9), init, grads)
    else:
        # betas (0.9, 0.95): keeps this test independent of beta2 = 0.999's float32 precision
        ours = run_pcp(lambda ps: optim.Adam(ps, lr=0.05, betas=(0.9, 0.95)), init, grads)
        ref = run_torch(torch_adam("Adam", lr=0.05, betas=(0.9, 0.95)), init, grads)
    assert_same_trajectory(ours, ref, init)


def test_params_without_grad_are_not_updated():
    init = init_params()
    grads = fixed_grads()
    for t in range(STEPS):
        grads[t][2] = None
    for make in (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.1),
                 lambda ps: optim.AdamW(ps, lr=0.1, weight_decay=0.1)):
        ours = run_pcp(make, init, grads)
        np.testing.assert_array_equal(ours[2], init[2])
        assert not np.allclose(ours[0], init[0])


def test_zero_grad():
    ps = [t32(a, requires_grad=True) for a in init_params()]
    opt = optim.SGD(ps, lr=0.1)
    for p in ps:
        p.grad = pcp.ones_like(p)
    opt.zero_grad(set_to_none=False)
    for p in ps:
        np.testing.assert_array_equal(to_np(p.grad), np.zeros(tuple(p.shape)))
    opt.zero_grad()
    assert all(p.grad is None for p in ps)


def test_optimizer_on_module_parameters_reduces_loss():
    # end to end: Linear regression with AdamW; the fitted weights approach the least-squares solution
    r = np.random.default_rng(3)
    x_np = r.standard_normal((64, 3)).astype(np.float32)
    w_true = np.array([[1.5, -2.0, 0.5]], dtype=np.float32)
    y_np = x_np @ w_true.T + 0.25
    model = nn.Linear(3, 1)
    opt = optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.0)
    x, y = t32(x_np), t32(y_np)
    for _ in range(300):
        opt.zero_grad()
        loss = nn.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    np.testing.assert_allclose(to_np(model.weight), w_true, atol=2e-2)
    np.testing.assert_allclose(to_np(model.bias), [0.25], atol=2e-2)


# --------------------------------------------------------------------------- clipping


@requires_torch
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm_vs_torch(max_norm, device):
    grads = fixed_grads(seed=4, steps=1)[0]
    ps = [t32(a, requires_grad=True) for a in init_params()]
    tps = [torch.tensor(a, requires_grad=True) for a in init_params()]
    for p, tp, g in zip(ps, tps, grads):
        p.grad = t32(g)
        tp.grad = torch.from_numpy(g.copy())
    extra = t32(np.ones(3), requires_grad=True)  # no grad: ignored by both
    textra = torch.ones(3, requires_grad=True)
    total = optim.clip_grad_norm(ps + [extra], max_norm)
    ttotal = torch.nn.utils.clip_grad_norm_(tps + [textra], max_norm, foreach=False)
    ref_total = math.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in grads))
    assert isinstance(total, float if device == "cpu" else pcp.Tensor)  # a GPU norm stays there
    total = float(total)
    np.testing.assert_allclose(total, ttotal.item(), rtol=1e-6)
    np.testing.assert_allclose(total, ref_total, rtol=1e-6)
    clipped = max_norm < ref_total
    for p, tp, g in zip(ps, tps, grads):
        np.testing.assert_allclose(to_np(p.grad), tp.grad.numpy(), rtol=1e-6, atol=1e-8)
        if not clipped:
            np.testing.assert_array_equal(to_np(p.grad), g)
    assert extra.grad is None
    new_norm = math.sqrt(sum(float((to_np(p.grad) ** 2).sum()) for p in ps))
    np.testing.assert_allclose(new_norm, min(max_norm, ref_total), rtol=1e-5)


def test_clip_grad_norm_no_grads():
    assert optim.clip_grad_norm([t32(np.ones(2))], 1.0) == 0.0


@pytest.mark.parametrize("dtype", [pcp.float32, pcp.float64], ids=str)
def test_clip_grad_norm_scales_each_leaf_once(dtype):
    # a + b hands one gradient tensor to both leaves, and sum's VJP is a broadcast view: each
    # leaf's .grad must still own its memory, so clipping scales it exactly once.
    a = pcp.tensor(np.full(4, 3.0), dtype=dtype, requires_grad=True)
    b = pcp.tensor(np.full(4, 4.0), dtype=dtype, requires_grad=True)
    ((a + b) * 2.0).sum().backward()
    total = optim.clip_grad_norm([a, b], 1.0)
    np.testing.assert_allclose(total, math.sqrt(8 * 4.0), rtol=1e-6)
    for p in (a, b):
        np.testing.assert_allclose(to_np(p.grad), np.full(4, 2.0 / math.sqrt(32.0)), rtol=1e-6)


def test_fused_steps_over_many_tensors_vs_numpy_float64(device):
    # One parallel loop covers all tensors' concatenation: pieces cross tensor and block edges
    # (sizes around the 32768-element chunks and 65536-element norm blocks, an empty tensor).
    shapes = [(300, 257), (7,), (0,), (40000,), (3, 70001), (1,)]
    r = np.random.default_rng(7)
    init = [r.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [r.standard_normal(s).astype(np.float32) for s in shapes]
    max_norm, lr, b1, b2, eps, wd = 100.0, 0.01, 0.9, 0.95, 1e-8, 0.1
    ps = [t32(p, requires_grad=True) for p in init]
    for p, g in zip(ps, grads):
        p.grad = t32(g)
    total = float(optim.clip_grad_norm(ps, max_norm))
    ref_total = math.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in grads))
    np.testing.assert_allclose(total, ref_total, rtol=1e-6)  # float32 sums within 1024-element blocks
    scale = max_norm / (ref_total + 1e-6)
    assert scale < 1
    opt = optim.AdamW(ps, lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    opt.step()
    for i, (p, p0, g) in enumerate(zip(ps, init, grads)):
        g = g.astype(np.float64) * scale
        np.testing.assert_allclose(to_np(p.grad), g, rtol=1e-6, atol=1e-9, err_msg=f"gradient {i}")
        m, v = (1 - b1) * g, (1 - b2) * g * g
        ref = p0 * (1 - lr * wd) - lr * (m / (1 - b1)) / (np.sqrt(v / (1 - b2)) + eps)
        np.testing.assert_allclose(to_np(p), ref, rtol=1e-6, atol=1e-6, err_msg=f"parameter {i}")


LIST_CASES = {
    "AdamW": lambda ps: optim.AdamW(ps, lr=0.05, betas=(0.85, 0.95), weight_decay=0.1),
    "Adam_wd": lambda ps: optim.Adam(ps, lr=0.05, weight_decay=0.1),
    "SGD_nesterov_wd": lambda ps: optim.SGD(ps, lr=0.03, momentum=0.9, nesterov=True, weight_decay=0.1),
    "SGD_plain": lambda ps: optim.SGD(ps, lr=0.1),
}
# Sizes around the GPU's 4096-element chunks, an empty tensor and one of one element.
LIST_SHAPES = [(3, 5), (4096,), (0,), (4097,), (70, 130), (1,), (2, 8191)]


def list_steps(make_opt, groups, steps=3):
    """The parameters after `steps` steps with fixed gradients, one optimizer per list of
    parameter indices in `groups`."""
    r = np.random.default_rng(11)
    init = [r.standard_normal(s).astype(np.float32) for s in LIST_SHAPES]
    grads = [[r.standard_normal(s).astype(np.float32) for s in LIST_SHAPES] for _ in range(steps)]
    ps = [t32(a, requires_grad=True) for a in init]
    opts = [make_opt([ps[i] for i in g]) for g in groups]
    for t in range(steps):
        for p, g in zip(ps, grads[t]):
            p.grad = t32(g)
        for opt in opts:
            opt.step()
    return [to_np(p) for p in ps]


@pytest.mark.parametrize("case", list(LIST_CASES))
def test_list_step_matches_one_tensor_at_a_time(case, device, monkeypatch):
    """An optimizer over a list updates each tensor as one over that tensor alone: bit for bit on
    the CPU; on a GPU, one dispatch for the list (buffer addresses) within 1 ulp of the
    one-dispatch-per-tensor kernels, also with the dispatch limit lowered so that workgroups
    loop over the chunks."""
    make, every = LIST_CASES[case], [list(range(len(LIST_SHAPES)))]
    if device == "cpu":
        ref = list_steps(make, [[i] for i in range(len(LIST_SHAPES))])
        for a, b in zip(list_steps(make, every), ref):
            np.testing.assert_array_equal(a, b)
        return
    monkeypatch.setenv("PCP_GPU_MULTI_TENSOR", "0")
    ref = list_steps(make, every)
    monkeypatch.setenv("PCP_GPU_MULTI_TENSOR", "1")
    for max_groups in ("65535", "3"):
        monkeypatch.setenv("PCP_GPU_MAX_GROUPS", max_groups)
        for a, b in zip(list_steps(make, every), ref):
            np.testing.assert_array_max_ulp(a, b, maxulp=1)
    moved = max(np.abs(a - b).max() for a, b in zip(ref, list_steps(make, every, steps=0)) if a.size)
    assert moved > 1e-2


def test_one_dispatch_updates_every_parameter(device):
    """On a GPU with buffer addresses, clip_grad_norm and AdamW's step over 7 tensors are 3
    dispatches and 1 (plus the upload of each table), against float64."""
    if device == "cpu" or not pcp.gpu_info(device)["buffer_addresses"]:
        pytest.skip("a GPU with buffer addresses")
    r = np.random.default_rng(3)
    init = [r.standard_normal(s).astype(np.float32) for s in LIST_SHAPES]
    grads = [r.standard_normal(s).astype(np.float32) for s in LIST_SHAPES]
    ps = [t32(a, requires_grad=True) for a in init]
    for p, g in zip(ps, grads):
        p.grad = t32(g)
    opt = optim.AdamW(ps, lr=0.01, weight_decay=0.1)
    pcp.synchronize(device)
    assert _core.set_gpu_profiling(True, device)
    try:
        norm = optim.clip_grad_norm(ps, 1.0)
        opt.step()
        pcp.synchronize(device)
    finally:
        _core.set_gpu_profiling(False, device)
    counts = {name: n for name, n, _ in _core.gpu_profile_results(device)}
    assert counts.pop("upload") == 2
    counts.pop("fill")  # the first step makes m and v
    assert counts == {"sum_squares_multi": 1, "clip_scale": 1, "scale_multi": 1, "adam_multi": 1}
    total = math.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in grads))
    np.testing.assert_allclose(float(norm), total, rtol=1e-6)
    for p, p0, g in zip(ps, init, grads):
        g = g.astype(np.float64) / (total + 1e-6)
        ref = p0 * (1 - 0.01 * 0.1) - 0.01 * g / (np.abs(g) + 1e-8)  # the first step: m / sqrt(v) = g / |g|
        np.testing.assert_allclose(to_np(p), ref, rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_rejects_bad_max_norm():
    p = t32(np.ones(2), requires_grad=True)
    p.grad = t32(np.ones(2))
    with pytest.raises(ValueError, match="clip_grad_norm: max_norm must be positive"):
        optim.clip_grad_norm([p], 0.0)


# --------------------------------------------------------------------------- schedule


def nanogpt_get_lr(it, learning_rate, min_lr, warmup_iters, lr_decay_iters):
    # 1) linear warmup for warmup_iters steps
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    # 2) if it > lr_decay_iters, return min learning rate
    if it > lr_decay_iters:
        return min_lr
    # 3) in between, use cosine decay down to min learning rate
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    assert 0 <= decay_ratio <= 1
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


@pytest.mark.parametrize("lr,min_lr,warmup,decay", [(6e-4, 6e-5, 100, 1000), (1e-3, 1e-4, 0, 50), (0.1, 0.0, 5, 6)])
def test_warmup_cosine_matches_nanogpt(lr, min_lr, warmup, decay):
    f = optim.warmup_cosine(lr, min_lr, warmup, decay)
    for it in range(decay + 20):
        assert f(it) == pytest.approx(nanogpt_get_lr(it, lr, min_lr, warmup, decay), rel=1e-12, abs=1e-15), it
    # landmarks
    assert f(decay) == pytest.approx(min_lr, abs=1e-15)
    assert f(decay + 1000) == min_lr
    assert f(warmup) == pytest.approx(lr, rel=1e-12)


def test_warmup_cosine_bad_arguments():
    with pytest.raises(ValueError):
        optim.warmup_cosine(1e-3, 1e-4, 10, 5)
    with pytest.raises(ValueError):
        optim.warmup_cosine(1e-3, 1e-4, -1, 5)


# --------------------------------------------------------------------------- state dicts


@pytest.mark.parametrize("make", [
    lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
    lambda ps: optim.Adam(ps, lr=0.01, weight_decay=0.05),
    lambda ps: optim.AdamW([dict(params=ps[:2]), dict(params=ps[2:], weight_decay=0.0, lr=0.03)],
                           lr=0.01, betas=(0.9, 0.95), weight_decay=0.1),
], ids=["sgd_nesterov", "adam", "adamw_groups"])
def test_optimizer_state_dict_resume_matches_uninterrupted(make):
    init = init_params()
    grads = fixed_grads()

    def step(ps, opt, t):
        opt.zero_grad()
        for p, g in zip(ps, grads[t]):
            p.grad = t32(g)
        opt.step()

    # uninterrupted
    ps_a = [t32(a, requires_grad=True) for a in init]
    opt_a = make(ps_a)
    for t in range(STEPS):
        step(ps_a, opt_a, t)

    # 5 steps, save, load into a fresh optimizer over a copy of the params, 5 more steps
    ps_b = [t32(a, requires_grad=True) for a in init]
    opt_b = make(ps_b)
    for t in range(5):
        step(ps_b, opt_b, t)
    sd = opt_b.state_dict()
    assert sd["step"] == 5 and len(sd["state"]) == len(init)
    ps_c = [pcp.tensor(p, requires_grad=True) for p in ps_b]
    opt_c = make(ps_c)
    opt_c.load_state_dict(sd)
    for t in range(5, STEPS):
        step(ps_c, opt_c, t)
        step(ps_b, opt_b, t)  # the old optimizer keeps going: the new one must not share its state

    for a, c, b in zip(ps_a, ps_c, ps_b):
        np.testing.assert_array_equal(to_np(c), to_np(a))
        np.testing.assert_array_equal(to_np(b), to_np(a))


def test_optimizer_state_dict_restores_hyperparameters():
    ps = [t32(a, requires_grad=True) for a in init_params()]
    opt = optim.AdamW(ps, lr=0.123, betas=(0.8, 0.9), weight_decay=0.3)
    sd = opt.state_dict()
    assert sd["param_groups"][0]["params"] == [0, 1, 2]
    assert sd["param_groups"][0]["lr"] == 0.123 and sd["state"] == {}
    fresh = optim.AdamW([pcp.tensor(p) for p in ps])
    fresh.load_state_dict(sd)
    g = fresh.param_groups[0]
    assert g["lr"] == 0.123 and tuple(g["betas"]) == (0.8, 0.9) and g["weight_decay"] == 0.3


def test_optimizer_load_state_dict_mismatch():
    ps = [t32(a, requires_grad=True) for a in init_params()]
    opt = optim.SGD(ps, lr=0.1, momentum=0.9)
    for p in ps:
        p.grad = pcp.ones_like(p)
    opt.step()
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="number of parameters"):
        optim.SGD(ps[:2], lr=0.1, momentum=0.9).load_state_dict(sd)
    with pytest.raises(ValueError, match="groups"):
        optim.SGD([dict(params=ps[:1]), dict(params=ps[1:])], lr=0.1, momentum=0.9).load_state_dict(sd)
    swapped = [t32(np.zeros(s)) for s in [(5,), (3, 4), (2, 2, 3)]]
    with pytest.raises(ValueError, match="shape"):
        optim.SGD(swapped, lr=0.1, momentum=0.9).load_state_dict(sd)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam, optim.AdamW])
def test_non_float32_params_type_error(cls):
    with pytest.raises(TypeError, match="float32"):
        cls([pcp.zeros((3,), pcp.float64)])
    with pytest.raises(TypeError, match="float32"):
        cls([pcp.zeros((3,)), pcp.zeros((3,), pcp.float16)])
    with pytest.raises(TypeError):
        cls([np.zeros(3, dtype=np.float32)])


@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam, optim.AdamW])
def test_empty_params_value_error(cls):
    with pytest.raises(ValueError, match="empty"):
        cls([])
    with pytest.raises(ValueError, match="empty"):
        cls(iter([]))


def test_invalid_hyperparameters():
    p = [pcp.zeros((2,))]
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)
    with pytest.raises(ValueError):
        optim.SGD(p, lr=-0.1)
    with pytest.raises(ValueError):
        optim.Adam(p, lr=-1e-3)
    with pytest.raises(ValueError):
        optim.AdamW(p, betas=(1.0, 0.999))
    with pytest.raises(ValueError):
        optim.Adam(p, eps=-1.0)


def _adam_args(ps, gs, ms, vs, step=1, decoupled=False):
    return (ps, gs, ms, vs, step, 1e-3, 0.9, 0.999, 1e-8, 0.0, decoupled)


@pytest.mark.parametrize("decoupled,name", [(False, "adam_step"), (True, "adamw_step")])
def test_adam_kernel_validation(decoupled, name):
    def fresh():
        return [pcp.ones((3,)), pcp.ones((2, 2))]

    ps = fresh()
    with pytest.raises(ValueError, match=name):
        _core.adam_step(*_adam_args(ps, fresh(), fresh(), fresh()[:1], decoupled=decoupled))
    with pytest.raises(ValueError, match=name):
        _core.adam_step(*_adam_args(ps, fresh()[:1], fresh(), fresh(), decoupled=decoupled))
    bad_shape = [pcp.ones((3,)), pcp.ones((4,))]
    with pytest.raises(ValueError, match=name):
        _core.adam_step(*_adam_args(ps, fresh(), bad_shape, fresh(), decoupled=decoupled))
    with pytest.raises(ValueError, match=name):
        _core.adam_step(*_adam_args(ps, bad_shape, fresh(), fresh(), decoupled=decoupled))
    with pytest.raises(ValueError, match=name):
        _core.adam_step(*_adam_args(ps, fresh(), fresh(), fresh(), step=0, decoupled=decoupled))
    with pytest.raises(TypeError, match=name):
        _core.adam_step(*_adam_args(ps, [pcp.ones((3,), pcp.float64), pcp.ones((2, 2))], fresh(), fresh(),
                                    decoupled=decoupled))
    with pytest.raises(TypeError, match=name):
        _core.adam_step(*_adam_args(ps, [pcp.ones((3,)), pcp.ones((2, 2)).T], fresh(), fresh(),
                                    decoupled=decoupled))
    # validation happens before any tensor is touched
    np.testing.assert_array_equal(to_np(ps[0]), np.ones(3))


def test_sgd_kernel_validation():
    ps = [pcp.ones((3,)), pcp.ones((2, 2))]
    gs = [pcp.ones((3,)), pcp.ones((2, 2))]
    with pytest.raises(ValueError, match="sgd_step"):
        _core.sgd_step(ps, gs[:1], [], False, 0.1, 0.0, 0.0, 0.0, False)
    with pytest.raises(ValueError, match="sgd_step"):
        _core.sgd_step(ps, gs, [pcp.zeros((3,))], True, 0.1, 0.9, 0.0, 0.0, False)
    with pytest.raises(ValueError, match="sgd_step"):
        _core.sgd_step(ps, [pcp.ones((3,)), pcp.ones((4,))], [], False, 0.1, 0.0, 0.0, 0.0, False)
    with pytest.raises(ValueError, match="sgd_step"):
        _core.sgd_step(ps, gs, [], False, 0.1, 0.0, 0.0, 0.0, True)
    np.testing.assert_array_equal(to_np(ps[0]), np.ones(3))
    # a valid plain step: p -= lr * g
    _core.sgd_step(ps, gs, [], False, 0.25, 0.0, 0.0, 0.0, False)
    np.testing.assert_array_equal(to_np(ps[1]), np.full((2, 2), 0.75))
