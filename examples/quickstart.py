"""PCP in one page: tensors, NumPy interop, autodiff, and a small MLP trained by gradient descent.

Run:  python examples/quickstart.py
"""
import numpy as np

import pcp

pcp.random.seed(0)

# Tensors behave like NumPy arrays, and share memory with them.
x = pcp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print("x =", x)
print("x.T @ x =", x.T @ x)
print("numpy view:", x.numpy().sum(axis=0))

# Reverse-mode autodiff: backward() or the function transforms grad / value_and_grad.
w = pcp.tensor([0.5, -1.0, 2.0], requires_grad=True)
loss = (x @ w).tanh().sum()
loss.backward()
print("d loss / d w =", w.grad)
print("pcp.grad:", pcp.grad(lambda w: (x @ w).tanh().sum())(w.detach()))

# A two-layer MLP learns a noisy sine with full-batch gradient descent.
n, hidden = 256, 64
inputs = pcp.rand((n, 1)) * 6.0 - 3.0
targets = pcp.sin(inputs) + pcp.randn((n, 1)) * 0.05
params = {
    "w1": pcp.randn((1, hidden)) * 1.0,
    "b1": pcp.zeros((hidden,)),
    "w2": pcp.randn((hidden, 1)) * (1.0 / hidden ** 0.5),
    "b2": pcp.zeros((1,)),
}


def mse(params, inputs, targets):
    h = pcp.gelu(inputs @ params["w1"] + params["b1"], approximate="tanh")
    return ((h @ params["w2"] + params["b2"] - targets) ** 2).mean()


step = pcp.value_and_grad(mse)
lr = 0.02
for it in range(2001):
    value, grads = step(params, inputs, targets)
    params = {k: p - lr * grads[k] for k, p in params.items()}
    if it % 500 == 0:
        print(f"step {it:3d}  mse {value.item():.4f}")

test = pcp.tensor(np.linspace(-3, 3, 7, dtype=np.float32).reshape(-1, 1))
pred = pcp.gelu(test @ params["w1"] + params["b1"], approximate="tanh") @ params["w2"] + params["b2"]
print("sin(x)   :", np.round(np.sin(test.numpy()).ravel(), 3))
print("mlp(x)   :", np.round(pred.numpy().ravel(), 3))
print("memory   :", {k: v for k, v in pcp.memory_stats().items() if k.endswith("bytes")})
