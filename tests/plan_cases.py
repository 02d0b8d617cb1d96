"""Functions that use every primitive family, with example arguments: the cases the StableHLO
export tests (test_export.py) and the plan-file tests (test_compile.py) both run, so that each
can check it reaches every primitive (_core.primitive_names())."""
import numpy as np

import pcp


def rnd(*shape, seed=0, positive=False):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return pcp.tensor(np.abs(x) + 0.1 if positive else x)


# Each case: a function and its example arguments; its outputs are compared one by one.
def elementwise_case():
    def f(x, p, i):
        unary = [pcp.negative(x) if hasattr(pcp, "negative") else -x, x.abs(), x.exp(), p.log(), p.sqrt(), pcp.rsqrt(p),
                 x.sin(), x.cos(), x.tanh(), pcp.sigmoid(x), pcp.relu(x), pcp.gelu(x), pcp.gelu(x, approximate="tanh"),
                 pcp.silu(x), pcp.square(x), pcp.sign(x), pcp.erf(x), pcp.floor(x * 3), pcp.ceil(x * 3),
                 pcp.trunc(x * 3), pcp.round(x * 3), pcp.tan(x), pcp.asin(x * 0.3), pcp.acos(x * 0.3), pcp.atan(x),
                 pcp.sinh(x), pcp.cosh(x), pcp.asinh(x), pcp.acosh(p + 1.0), pcp.atanh(x * 0.3), pcp.expm1(x),
                 pcp.log1p(p), pcp.log2(p), pcp.log10(p)]
        binary = [x + p, x - p, x * p, x / p, p ** x, pcp.maximum(x, p), pcp.minimum(x, 0.5), x == p, x != 0.0,
                  x < p, x <= p, x > 0.1, x >= p, pcp.where(x > 0, x, p * 2.0), pcp.atan2(x, p - 1.0),
                  pcp.atan2(x, x * 0.0), pcp.hypot(x, p), pcp.copysign(p, x), pcp.nextafter(x, p), (x * 5.0) % p,
                  (x * 5.0) // p, (x * 3.0) % -0.7, (x * 3.0) // -0.7, x // 0.0]
        ints = [i & 6, i | 1, i ^ 3, ~i, pcp.logical_not(i > 2), i * 3 + 1, (x > 0) & (p > 1.0), (i - 3) // 2,
                (i - 3) % -2, i // 0, i % 0, i << 2, (i - 3) >> 1, 1 << i]
        reductions = [x.sum(), x.sum(axis=0, keepdims=True), x.max(axis=1), x.min(axis=0), x.argmax(axis=1),
                      x.argmin(), x.mean(axis=-1), i.sum(axis=1), x.astype(pcp.int32), i.astype(pcp.float32),
                      x.astype(pcp.float64) * 3.0]
        return unary + binary + ints + reductions
    return f, (rnd(4, 5, seed=1), rnd(4, 5, seed=2, positive=True), pcp.tensor(np.arange(20).reshape(4, 5) % 7))


def shapes_case():
    def f(x, idx):
        parts = x.split([1, 2, 2], axis=1)
        return [x.reshape(5, 4), x.T, x.transpose(1, 0)[1:4:2], x[::-2], x[:, 3:0:-1], x[1:1],
                pcp.broadcast_to(x[:, :1], (4, 5)), pcp.concatenate([x, x * 2.0], axis=0), parts[0], parts[2],
                x[idx], pcp.take(x, idx, axis=1), x.T @ x, pcp.matmul(rnd(2, 3, 4), rnd(4, 2, seed=3)),
                pcp.matmul(rnd(3, 1, 4, 5), rnd(2, 5, 3, seed=4))]
    return f, (rnd(4, 5), pcp.tensor([3, 0, -1, 2]))


def sorting_case():
    """Sorts and searches with NaNs and ties; running sums and products (of finite values: the
    checks' tolerance scales by the largest) and the products' gradient; a gather at indices
    checked on each call."""
    def f(x, y, i, s):
        return [pcp.argsort(x), pcp.argsort(x, axis=0, descending=True), pcp.sort(x, axis=1), pcp.argsort(i),
                pcp.searchsorted(s, x), pcp.searchsorted(s, x, side="right"), pcp.cumsum(y, axis=1),
                pcp.cumsum(i, axis=0), pcp.cumsum(y), pcp.cumprod(y * 0.5, axis=0), pcp.prod(i + 1, axis=1),
                pcp.grad(lambda a: (pcp.cumprod(a, axis=1) * y).sum())(y), pcp.take_along_axis(y, i, axis=1)]
    x = np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32)
    x[1, 2], x[2, 3] = np.nan, x[2, 1]
    return f, (pcp.tensor(x), rnd(4, 5, seed=3), pcp.tensor(np.arange(20).reshape(4, 5) % 3),
               pcp.tensor(np.array([-1.0, 0.0, 0.5, 1.0, np.nan], np.float32)))


def nn_case():
    """A loss through every differentiable nn op, with its gradients: the backward primitives."""
    w_ln, b_ln = rnd(8, seed=5), rnd(8, seed=6)

    def loss(x, qkv, q, k, v, emb, tok, tgt):
        h = pcp.layer_norm(x, w_ln, b_ln) + pcp.layer_norm(x)
        e = emb[tok]  # (2, 3, 8)
        s = (pcp.softmax(h, -1) * pcp.log_softmax(e, -1)).sum()
        a = pcp.qkv_attention(qkv, 2, causal=True).sum() + pcp.scaled_dot_product_attention(q, k, v).mean()
        c = pcp.cross_entropy(h.reshape(6, 8), tgt.reshape(6)) + pcp.cross_entropy(e, tgt, ignore_index=2)
        g = (pcp.gelu(h) * pcp.gelu(e, approximate="tanh")).sum()
        sl = (x[:, ::2] * 3.0).sum() + pcp.concatenate([x[:, 1:], x], axis=1).max()
        return s + a + c + g + sl

    vg = pcp.value_and_grad(loss, argnums=(0, 1, 2, 3, 4, 5))
    args = (rnd(2, 3, 8, seed=8), rnd(2, 4, 12, seed=9), rnd(2, 2, 4, 3, seed=10), rnd(2, 2, 5, 3, seed=11),
            rnd(2, 2, 5, 3, seed=12), rnd(10, 8, seed=7), pcp.tensor([[1, 2, 3], [9, 0, 2]]), pcp.tensor([[0, 2, 7], [2, 5, 1]]))
    return (lambda *a: [vg(*a)[0], *vg(*a)[1]]), args


def optimizers_case():
    ps = [rnd(3, 4, seed=13), rnd(5, seed=14)]
    sgd_ps = [rnd(3, 4, seed=15), rnd(5, seed=16)]
    for p in ps + sgd_ps:
        p.requires_grad = True
    adam = pcp.optim.Adam(ps, lr=0.01, weight_decay=0.1)
    sgd = pcp.optim.SGD(sgd_ps, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)

    def step(x):
        loss = ((ps[0] @ x).tanh().sum() + ps[1].square().sum()) * ((sgd_ps[0] @ x).sum() + sgd_ps[1].sum())
        adam.zero_grad(), sgd.zero_grad()
        loss.backward()
        norm = pcp.optim.clip_grad_norm(ps + sgd_ps, 0.5)
        adam.step(), sgd.step()
        return loss, norm
    return step, (rnd(4, 2, seed=17),), ps + sgd_ps, (adam, sgd)


def gpt(bias):
    from pcp.models import GPT2, GPT2Config
    cfg = GPT2Config(vocab_size=32, n_positions=16, n_embd=32, n_layer=2, n_head=4, bias=bias, dropout=0.0)
    pcp.random.seed(0)
    rng = np.random.default_rng(0)
    batch = (pcp.tensor(rng.integers(0, 32, (3, 16))), pcp.tensor(rng.integers(0, 32, (3, 16))))
    return GPT2(cfg), batch


GPU = any(name != "cpu" for name in pcp.devices())


def batched_casts_case():
    """Casts a GPU plan batches into one cast_multi node (a transposed view among them)."""
    a, b, c = (rnd(4, 6, seed=41), rnd(3, 5, seed=42), rnd(6, 2, seed=43))
    return (lambda a, b, c: [a.astype(pcp.bfloat16), b.astype(pcp.bfloat16), c.T.astype(pcp.bfloat16)]), tuple(
        x.to("gpu") for x in (a, b, c))


def batched_norm_sums_case():
    """Layer norm gradients whose weight sums a GPU plan batches (partial_rows, sum_rows_multi)."""
    ws = [rnd(16, seed=44 + i).to("gpu") for i in range(3)]

    def loss(x, *ws):
        for w in ws:
            x = pcp.layer_norm(x, w) * 1.5
        return (x * x).sum()
    vg = pcp.value_and_grad(loss, argnums=(0, 1, 2, 3))
    return (lambda *a: [vg(*a)[0], *vg(*a)[1]]), (rnd(20, 16, seed=47).to("gpu"), *ws)
