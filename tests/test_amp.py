"""Mixed precision: pcp.autocast's per-op policy, its gradients, GradScaler, and a small GPT trained
under bfloat16 autocast against its float32 run and against PyTorch's autocast."""
import threading

import numpy as np
import pytest

import pcp
from conftest import on_each_device

BF16, F16, F32, F64 = pcp.bfloat16, pcp.float16, pcp.float32, pcp.float64


def bf16_round(a):
    """float32 values rounded to the nearest bfloat16 (ties to even), as float64."""
    return pcp.tensor(np.asarray(a, np.float32), device="cpu").astype(BF16).astype(F64).numpy()


def _x(shape, seed=0, dtype=F32):
    return pcp.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32)).astype(dtype)


# (what is called, the result dtype under bfloat16 autocast). The inputs are float32 unless the
# case says bfloat16: products go down to the low type, touchy ops up to float32, the rest follow
# their inputs' promotion.
POLICY = [
    ("matmul f32", lambda: _x((4, 8)) @ _x((8, 6), 1), BF16),
    ("matmul f64 stays", lambda: _x((4, 8), 0, F64) @ _x((8, 6), 1, F64), F64),
    ("matmul f16 input", lambda: _x((4, 8), 0, F16) @ _x((8, 6), 1), BF16),
    ("linear", lambda: pcp.nn.Linear(8, 6, bias=False)(_x((4, 8))), BF16),
    ("linear adds its bias in the product's type", lambda: pcp.nn.Linear(8, 6)(_x((4, 8))), BF16),
    ("softmax", lambda: pcp.softmax(_x((4, 8), 0, BF16)), F32),
    ("log_softmax", lambda: pcp.log_softmax(_x((4, 8), 0, BF16)), F32),
    ("layer_norm", lambda: pcp.layer_norm(_x((4, 8), 0, BF16), pcp.ones((8,)), pcp.zeros((8,))), F32),
    ("cross_entropy", lambda: pcp.cross_entropy(_x((4, 8), 0, BF16), pcp.tensor([1, 2, 3, 0])), F32),
    ("sum", lambda: pcp.sum(_x((4, 8), 0, BF16)), F32),
    ("exp", lambda: pcp.exp(_x((4, 8), 0, BF16)), F32),
    ("log", lambda: pcp.log(pcp.abs(_x((4, 8), 0, BF16)) + 1), F32),
    ("rsqrt", lambda: pcp.rsqrt(pcp.abs(_x((4, 8), 0, BF16)) + 1), F32),
    ("pow keeps (computed in float32, rounded once)", lambda: pcp.pow(_x((4, 8), 0, BF16), 3.0), BF16),
    ("logsumexp", lambda: pcp.logsumexp(_x((4, 8), 0, BF16), -1), F32),
    ("gelu keeps", lambda: pcp.gelu(_x((4, 8), 0, BF16)), BF16),
    ("add promotes", lambda: _x((4, 8), 0, BF16) + _x((4, 8), 1), F32),
    ("mul by a Python float keeps", lambda: _x((4, 8), 0, BF16) * 0.5, BF16),
    ("max keeps", lambda: pcp.max(_x((4, 8), 0, BF16)), BF16),
    # composed attention (k and v broadcast over heads): its products in the low type
    ("attention composed", lambda: pcp.scaled_dot_product_attention(
        _x((1, 2, 5, 4)), _x((1, 1, 5, 4), 1), _x((1, 1, 5, 4), 2), causal=True), BF16),
]


@on_each_device
@pytest.mark.parametrize("case", POLICY, ids=[c[0] for c in POLICY])
def test_policy_per_op(case):
    _, fn, want = case
    with pcp.autocast(dtype=BF16):
        got = fn()
    assert got.dtype == want


@pytest.mark.cpu_only
def test_the_records_policies_are_documented_and_each_has_a_case():
    """The autocast policy each primitive's record declares (_core.primitives()) is the one
    pcp.amp's docstring states, and every primitive that casts has a case above."""
    import re
    declared = {p: {r["name"] for r in pcp._core.primitives() if r["autocast"] == p} for p in ("low", "float32")}
    doc = pcp.amp.__doc__
    bullets = {"low": doc.split("- products compute")[1].split("\n- ")[0],
               "float32": doc.split("- touchy ops compute")[1].split("\n- ")[0]}
    for policy, text in bullets.items():
        stated = set(re.findall(r"``(\w+)``", re.sub(r"\([^)]*\)", "", text)))
        assert stated == declared[policy], f"{policy}: documented {sorted(stated)}, records {sorted(declared[policy])}"
    cased = {c[0].split()[0] for c in POLICY}
    missing = (declared["low"] | declared["float32"]) - cased
    assert not missing, f"no POLICY case for {sorted(missing)}"


def test_fused_cpu_attention_keeps_float32():
    q = _x((1, 2, 5, 4))
    with pcp.autocast():
        assert pcp.scaled_dot_product_attention(q, q, q, causal=True).dtype == F32


@on_each_device
@pytest.mark.parametrize("dtype", [BF16, F16])
def test_matmul_values_are_the_low_type_product_accumulated_in_float32(dtype):
    a, b = _x((17, 33)), _x((33, 9), 1)
    with pcp.autocast(dtype=dtype):
        y = a @ b
    assert y.dtype == dtype
    lo = lambda t: t.astype(dtype).to("cpu").astype(F64).numpy()  # noqa: E731
    ref = lo(a) @ lo(b)  # exact products of the rounded inputs, float64 sums
    ulp = np.abs(ref) * (2.0 ** -8 if dtype == BF16 else 2.0 ** -11) + 1e-6
    assert np.all(np.abs(y.to("cpu").astype(F64).numpy() - ref) <= ulp)


@on_each_device
def test_gradients_reach_float32_parameters_through_bfloat16_products():
    x, w = _x((6, 8)), _x((8, 5), 1)
    w.requires_grad = True
    x.requires_grad = True
    with pcp.autocast():
        y = pcp.gelu(x @ w, approximate="tanh")
        loss = pcp.sum(y * y)
    loss.backward()
    assert w.grad.dtype == F32 and x.grad.dtype == F32
    # Reference: the same computation in float64 from the bfloat16-rounded x and w.
    xl, wl = bf16_round(x.numpy()), bf16_round(w.numpy())
    z = bf16_round(xl @ wl)
    c = np.sqrt(2 / np.pi)
    t = np.tanh(c * (z + 0.044715 * z ** 3))
    gelu = 0.5 * z * (1 + t)
    dgelu = 0.5 * (1 + t) + 0.5 * z * (1 - t ** 2) * c * (1 + 3 * 0.044715 * z ** 2)
    gz = 2 * gelu * dgelu
    np.testing.assert_allclose(w.grad.numpy(), xl.T @ gz, rtol=0.05, atol=0.05 * np.abs(xl.T @ gz).max())
    # The backward product ran in bfloat16: its result is a bfloat16 value widened.
    np.testing.assert_array_equal(x.grad.numpy(), bf16_round(x.grad.numpy()))


def test_backward_inside_the_scope_equals_backward_outside():
    def run(inside):
        w = _x((8, 5), 1)
        w.requires_grad = True
        with pcp.autocast():
            loss = pcp.sum(pcp.square(_x((6, 8)) @ w).astype(F32))
            if inside:
                loss.backward()
        if not inside:
            loss.backward()
        return w.grad.numpy()
    np.testing.assert_array_equal(run(True), run(False))


def test_scopes_nest_disable_decorate_and_stay_in_their_thread():
    a, b = _x((3, 4)), _x((4, 2), 1)
    with pcp.autocast(dtype=pcp.float16):
        assert pcp.amp.get_autocast_dtype() == F16
        with pcp.autocast(enabled=False):
            assert (a @ b).dtype == F32 and not pcp.amp.is_autocast_enabled()
        with pcp.autocast(dtype="bfloat16"):
            assert (a @ b).dtype == BF16
        assert (a @ b).dtype == F16
        seen = []
        t = threading.Thread(target=lambda: seen.append((a @ b).dtype))
        t.start()
        t.join()
        assert seen == [F32]
    assert pcp.amp.get_autocast_dtype() is None and (a @ b).dtype == F32

    @pcp.autocast()
    def f():
        return a @ b
    assert f().dtype == BF16 and (a @ b).dtype == F32


def test_a_disabled_scope_takes_any_dtype():
    # As torch.autocast(enabled=False): one loop can pass its dtype whatever it is.
    with pcp.autocast(dtype=F32, enabled=False):
        assert (_x((3, 4)) @ _x((4, 2), 1)).dtype == F32


def test_bad_autocast_dtype_is_a_clear_error():
    with pytest.raises(ValueError, match="autocast: dtype must be bfloat16 or float16"):
        pcp.autocast(dtype=F32)
    with pytest.raises(ValueError, match="autocast"):
        pcp._core.set_autocast_dtype(pcp.int32)
    assert pcp.amp.get_autocast_dtype() is None


def test_an_error_inside_the_scope_restores_the_state():
    with pytest.raises(ValueError):
        with pcp.autocast():
            pcp.matmul(_x((2, 3)), _x((4, 5)))
    assert pcp.amp.get_autocast_dtype() is None


# --- GradScaler ---

def _model_and_opt():
    w = _x((4, 3))
    w.requires_grad = True
    return w, pcp.optim.SGD([w], lr=0.1)


def test_grad_scaler_scales_unscales_and_steps():
    w, opt = _model_and_opt()
    w0, x = w.numpy().copy(), _x((5, 4), 1)
    scaler = pcp.amp.GradScaler(init_scale=1024.0)
    loss = pcp.sum(x @ w)
    scaled = scaler.scale(loss)
    assert abs(scaled.item() - 1024.0 * loss.item()) <= 1e-3 * abs(scaled.item())
    scaled.backward()
    np.testing.assert_allclose(w.grad.numpy(), 1024.0 * np.repeat(x.numpy().sum(0)[:, None], 3, 1), rtol=1e-6)
    scaler.step(opt)
    scaler.update()
    true_grad = np.repeat(x.numpy().sum(0)[:, None], 3, 1)
    np.testing.assert_allclose(w.numpy(), w0 - 0.1 * true_grad, rtol=1e-5, atol=1e-6)
    assert scaler.get_scale() == 1024.0


def test_grad_scaler_skips_non_finite_steps_and_halves_the_scale():
    w, opt = _model_and_opt()
    scaler = pcp.amp.GradScaler(init_scale=8.0, growth_interval=3)
    for bad in (np.inf, np.nan):
        w0 = w.numpy().copy()
        opt.zero_grad()
        x = np.ones((5, 4), np.float32)
        x[2, 1] = bad
        scaler.scale(pcp.sum(pcp.tensor(x) @ w)).backward()
        assert scaler.step(opt) is None and scaler.found_inf(opt)
        scaler.update()
        np.testing.assert_array_equal(w.numpy(), w0)  # skipped
    assert scaler.get_scale() == 2.0


def test_grad_scaler_grows_after_growth_interval_clean_steps():
    w, opt = _model_and_opt()
    scaler = pcp.amp.GradScaler(init_scale=4.0, growth_factor=3.0, growth_interval=3)
    scales = []
    for _ in range(7):
        opt.zero_grad()
        scaler.scale(pcp.sum(_x((2, 4)) @ w)).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    assert scales == [4.0, 4.0, 12.0, 12.0, 12.0, 36.0, 36.0]
    state = scaler.state_dict()
    other = pcp.amp.GradScaler()
    other.load_state_dict(state)
    assert other.get_scale() == 36.0 and other.state_dict() == state


def test_grad_scaler_unscale_before_clipping_and_misuse():
    w, opt = _model_and_opt()
    scaler = pcp.amp.GradScaler(init_scale=2.0 ** 10)
    scaler.scale(pcp.sum(_x((5, 4), 1) @ w)).backward()
    scaler.unscale_(opt)
    norm = pcp.optim.clip_grad_norm([w], 1.0)
    assert norm < 100  # the true gradient's norm, not the scaled one's
    with pytest.raises(RuntimeError, match="unscale_: already called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step: already called"):
        scaler.step(opt)
    scaler.update()
    with pytest.raises(ValueError, match="growth_factor"):
        pcp.amp.GradScaler(growth_factor=0.5)
    with pytest.raises(TypeError, match="GradScaler.scale"):
        scaler.scale("loss")


def test_disabled_grad_scaler_is_a_pass_through():
    w, opt = _model_and_opt()
    scaler = pcp.amp.GradScaler(enabled=False)
    loss = pcp.sum(_x((5, 4), 1) @ w)
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0
    loss.backward()
    w0 = w.numpy().copy()
    scaler.step(opt)
    scaler.update()
    assert not np.array_equal(w.numpy(), w0) and scaler.state_dict() == {}


def test_grad_scaler_matches_pytorch_on_the_same_sequence():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((12, 5, 4)).astype(np.float32)
    xs[[2, 3, 7]] *= np.float32(1e38)  # overflowing steps
    w0 = rng.standard_normal((4, 3)).astype(np.float32)
    w = pcp.tensor(w0)
    w.requires_grad = True
    tw = torch.tensor(w0, requires_grad=True)
    opt, topt = pcp.optim.SGD([w], lr=0.01), torch.optim.SGD([tw], lr=0.01)
    ours = pcp.amp.GradScaler(init_scale=2.0 ** 8, growth_interval=2)
    theirs = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=2)
    for x in xs:
        opt.zero_grad()
        topt.zero_grad()
        ours.scale(pcp.sum(pcp.square(pcp.tensor(x) @ w))).backward()
        theirs.scale(((torch.tensor(x) @ tw) ** 2).sum()).backward()
        ours.step(opt)
        theirs.step(topt)
        ours.update()
        theirs.update()
        assert ours.get_scale() == theirs.get_scale()
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)


# --- a GPT trained under bfloat16 autocast ---

def _char_batches(text_file, steps, batch, block, seed=0):
    text = open(text_file, encoding="utf-8").read()[:200_000]
    chars = sorted(set(text))
    data = np.array([chars.index(c) for c in text], np.int64)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        starts = rng.integers(0, len(data) - block - 1, batch)
        yield (np.stack([data[s:s + block] for s in starts]), np.stack([data[s + 1:s + 1 + block] for s in starts]))


def _train_pcp(state, cfg, batches, dtype):
    from pcp.models import GPT2
    pcp.random.seed(0)
    model = GPT2(cfg)
    model.load_state_dict({k: pcp.tensor(v) for k, v in state.items()})
    opt = pcp.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.0)
    losses = []
    for x, y in batches:
        with pcp.autocast(dtype=dtype or BF16, enabled=dtype is not None):
            _, loss = model(pcp.tensor(x), pcp.tensor(y))
        opt.zero_grad()
        loss.backward()
        pcp.optim.clip_grad_norm(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


def _smooth(losses, window=20):
    return np.convolve(losses, np.ones(window) / window, mode="valid")


@pytest.fixture(scope="module")
def gpt_runs(text_file):
    from pcp.models import GPT2, GPT2Config
    cfg = GPT2Config(vocab_size=128, n_positions=32, n_embd=64, n_layer=2, n_head=4, bias=True)
    pcp.random.seed(0)
    state = {k: v.numpy() for k, v in GPT2(cfg).state_dict().items()}
    batches = list(_char_batches(text_file, 200, 16, 32))
    return cfg, state, batches, _train_pcp(state, cfg, batches, None), _train_pcp(state, cfg, batches, BF16)


def test_gpt_under_bfloat16_autocast_follows_its_float32_curve(gpt_runs):
    _, _, _, f32, bf16 = gpt_runs
    assert f32[-20:].mean() < 0.75 * f32[:5].mean()  # it learned something
    rel = np.abs(_smooth(bf16) - _smooth(f32)) / _smooth(f32)
    assert rel.max() <= 0.02, rel.max()


def test_gpt_under_bfloat16_autocast_follows_pytorch_autocast(gpt_runs):
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F
    cfg, state, batches, _, bf16 = gpt_runs
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in state.items()}
    H = cfg.n_head

    def block(x, p, i):
        pre = f"h.{i}."
        a = F.layer_norm(x, (cfg.n_embd,), tp[pre + "ln_1.weight"], tp[pre + "ln_1.bias"])
        qkv = F.linear(a, tp[pre + "attn.c_attn.weight"], tp[pre + "attn.c_attn.bias"])
        B, T, C3 = qkv.shape
        q, k, v = (t.view(B, T, H, C3 // 3 // H).transpose(1, 2) for t in qkv.split(C3 // 3, 2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C3 // 3)
        x = x + F.linear(y, tp[pre + "attn.c_proj.weight"], tp[pre + "attn.c_proj.bias"])
        m = F.layer_norm(x, (cfg.n_embd,), tp[pre + "ln_2.weight"], tp[pre + "ln_2.bias"])
        m = F.gelu(F.linear(m, tp[pre + "mlp.c_fc.weight"], tp[pre + "mlp.c_fc.bias"]), approximate="tanh")
        return x + F.linear(m, tp[pre + "mlp.c_proj.weight"], tp[pre + "mlp.c_proj.bias"])

    opt = torch.optim.AdamW(tp.values(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.0)
    losses = []
    for x, y in batches[:100]:  # PyTorch's bfloat16 is slow on CPUs without AVX512_BF16
        with torch.autocast("cpu", dtype=torch.bfloat16):
            xt = torch.tensor(x)
            h = tp["wte.weight"][xt] + tp["wpe.weight"][: x.shape[1]]
            for i in range(cfg.n_layer):
                h = block(h, tp, i)
            h = F.layer_norm(h, (cfg.n_embd,), tp["ln_f.weight"], tp["ln_f.bias"])
            logits = F.linear(h, tp["wte.weight"])
            loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), torch.tensor(y).view(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(tp.values(), 1.0)
        opt.step()
        losses.append(loss.item())
    torch_bf16 = np.array(losses)
    assert abs(bf16[0] - torch_bf16[0]) <= 0.01 * torch_bf16[0]  # the same model, rounded alike
    rel = np.abs(_smooth(bf16[:100]) - _smooth(torch_bf16)) / _smooth(torch_bf16)
    assert rel.max() <= 0.01, rel.max()


def test_a_parameter_is_cast_once_per_scope_and_every_use_gets_its_gradient():
    # Within one autocast scope a parameter's low-type cast is made once (PyTorch's weight-cast
    # cache), also for a view of it (Linear's weight.T); gradients of every use flow back through
    # it; an in-place write or a backward pass through it makes the next use cast again.
    rng = np.random.default_rng(0)
    w = pcp.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    x = pcp.tensor(rng.standard_normal((2, 4)).astype(np.float32))

    def weight_casts(fn):
        pcp._core.reset_profile()
        pcp._core.set_profiling(True, record_shapes=True)
        try:
            out = fn()
        finally:
            pcp._core.set_profiling(False)
        calls = dict((name, n) for name, n, _ in pcp._core.profile_results())
        pcp._core.reset_profile()
        return out, calls.get("astype (4,3)", 0) + calls.get("astype (3,4)", 0)

    def loss():
        return (x @ w).sum() + (x * 2.0 @ w).sum() + (x[:, :3] @ w.T).sum()

    with pcp.autocast(dtype=pcp.bfloat16):
        y, casts = weight_casts(loss)
        assert casts == 1
        y.backward()
        _, casts = weight_casts(loss)  # the backward pass went through the cast: cast again
        assert casts == 1
    xb = x.astype(pcp.bfloat16).astype(pcp.float32).numpy().astype(np.float64)
    want = 3 * np.broadcast_to(xb.sum(0)[:, None], (4, 3)) + np.broadcast_to(xb[:, :3].sum(0)[None, :], (4, 3))
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-2, atol=1e-2)
    with pcp.autocast(dtype=pcp.bfloat16):
        a = (x @ w).astype(pcp.float32).numpy()
        with pcp.no_grad():
            w[...] = w * 2.0  # an in-place write: the next use casts again
        b = (x @ w).astype(pcp.float32).numpy()
    np.testing.assert_allclose(b, 2 * a, rtol=1e-2)
