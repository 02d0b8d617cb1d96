"""float64 and int64 on the GPU (metal/wide/): each elementwise op, reduction, product and cast
against NumPy at float64's accuracy (the transcendentals are PCP's own: GLSL has no double exp,
log or sin), integer arithmetic at 64 bits, and the error a device without shaderFloat64 gives.
The op suites (test_vjp.py, test_autograd.py) run every VJP on the GPU in float64 as well."""
import os
import subprocess
import sys

import numpy as np
import pytest

import pcp

GPUS = [d.split()[0] for d in pcp.devices() if d != "cpu"]
WIDE = bool(GPUS) and pcp.gpu_info(GPUS[0])["float64"]
pytestmark = pytest.mark.skipif(not WIDE, reason="no GPU with float64 kernels here")
scipy_special = pytest.importorskip("scipy.special")


def on_gpu(fn, *arrays):
    return fn(*(pcp.tensor(a, device=GPUS[0]) for a in arrays)).numpy()


def max_relative_error(got, ref):
    ref = np.asarray(ref, dtype=np.float64)
    both_nan = np.isnan(got) & np.isnan(ref)
    same = (got == ref) | both_nan
    with np.errstate(invalid="ignore"):  # inf - inf where both are the same infinity
        err = np.abs(got - ref) / np.maximum(np.abs(ref), np.finfo(np.float64).tiny)
    return float(np.max(np.where(same, 0.0, err), initial=0.0))


rng = np.random.default_rng(64)
normal = rng.standard_normal(4000) * 3
wide = np.concatenate([normal, 10.0 ** rng.uniform(-300, 300, 2000) * rng.choice([-1, 1], 2000),
                       [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -5e-324]])
positive = np.abs(wide)
unit = rng.uniform(-1, 1, 4000)
huge_angles = np.concatenate([10.0 ** rng.uniform(5, 308, 3000) * rng.choice([-1, 1], 3000),
                              [5.319372648326541e255, 1.7976931348623157e308, 1647099.0, 2.0 ** 52]])

# (op, inputs, NumPy reference, rtol): rtol in units of float64's epsilon (2.2e-16).
UNARY = [
    ("exp", np.clip(wide, -745, 709), np.exp, 4), ("log", positive, np.log, 4), ("sqrt", positive, np.sqrt, 1),
    ("sin", wide[np.abs(wide) < 1e300], np.sin, 4), ("cos", wide[np.abs(wide) < 1e300], np.cos, 4),
    ("sin", huge_angles, np.sin, 16), ("cos", huge_angles, np.cos, 16), ("tan", normal, np.tan, 8),
    ("tanh", normal, np.tanh, 4), ("sinh", np.clip(normal, -700, 700), np.sinh, 4),
    ("cosh", np.clip(normal, -700, 700), np.cosh, 4), ("erf", normal, scipy_special.erf, 8),
    ("atan", wide, np.arctan, 4), ("asin", unit, np.arcsin, 8), ("acos", unit, np.arccos, 8),
    ("asinh", wide[np.abs(wide) < 1e300], np.arcsinh, 4), ("acosh", 1 + positive, np.arccosh, 8),
    ("atanh", unit, np.arctanh, 8), ("expm1", np.clip(normal, -700, 700), np.expm1, 4),
    ("log1p", positive, np.log1p, 4), ("log2", positive, np.log2, 4), ("log10", positive, np.log10, 4),
    ("sigmoid", normal, scipy_special.expit, 4), ("floor", wide, np.floor, 0), ("round", wide, np.round, 0),
    # v / sqrt 2 is rounded (here and in the reference): erfc of it differs by about 2 v^2 ulps
    ("gelu", normal * 3, lambda v: 0.5 * v * scipy_special.erfc(-v / np.sqrt(2)), 2048),
]


@pytest.mark.parametrize("name, x, ref, ulps", UNARY, ids=[f"{u[0]}-{i}" for i, u in enumerate(UNARY)])
def test_unary_float64_to_within_a_few_ulps(name, x, ref, ulps):
    with np.errstate(all="ignore"):
        expected = ref(x)
    got = on_gpu(getattr(pcp, name), x)
    assert got.dtype == np.float64
    assert max_relative_error(got, expected) <= max(ulps, 1e-9) * np.finfo(np.float64).eps, name


BINARY = [
    ("pow", np.abs(normal) + 0.1, normal / 3, np.power, 64), ("pow", normal, np.round(normal), np.power, 16),
    ("atan2", normal, normal[::-1], np.arctan2, 4), ("hypot", wide, wide[::-1], np.hypot, 2),
    ("remainder", normal * 100, normal[::-1], np.remainder, 0), ("floor_divide", normal * 100, normal[::-1],
                                                                 np.floor_divide, 0),
    ("nextafter", normal, normal[::-1], np.nextafter, 0), ("copysign", normal, normal[::-1], np.copysign, 0),
    ("maximum", wide, wide[::-1], np.maximum, 0), ("div", wide, wide[::-1], np.divide, 0),
]


@pytest.mark.parametrize("name, a, b, ref, ulps", BINARY, ids=[f"{u[0]}-{i}" for i, u in enumerate(BINARY)])
def test_binary_float64(name, a, b, ref, ulps):
    with np.errstate(all="ignore"):
        expected = ref(a, b)
    got = on_gpu(getattr(pcp, name), a, b)
    assert max_relative_error(got, expected) <= max(ulps, 1e-9) * np.finfo(np.float64).eps, name


def test_reductions_products_and_comparisons_in_float64():
    x = rng.standard_normal((37, 300))
    np.testing.assert_allclose(on_gpu(lambda t: t.sum(axis=1), x), x.sum(axis=1), rtol=1e-13)
    np.testing.assert_array_equal(on_gpu(lambda t: pcp.max(t, axis=0), x), x.max(axis=0))
    np.testing.assert_array_equal(on_gpu(lambda t: pcp.argmin(t, axis=1), x), x.argmin(axis=1))
    a, b = rng.standard_normal((3, 65, 70)), rng.standard_normal((3, 70, 33))
    np.testing.assert_allclose(on_gpu(lambda p, q: p @ q, a, b), a @ b, rtol=1e-13, atol=1e-13)
    # Differences below float32's resolution are seen.
    u = np.array([1.0, 1.0 + 2.0 ** -40, 1.0 - 2.0 ** -52])
    np.testing.assert_array_equal(on_gpu(lambda p, q: p < q, u, u[::-1]), u < u[::-1])
    np.testing.assert_array_equal(on_gpu(lambda p: pcp.softmax(p, axis=-1), x[:4]),
                                  on_gpu(lambda p: pcp.softmax(p, axis=-1), x[:4]))  # deterministic
    s = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(on_gpu(lambda p: pcp.softmax(p, axis=-1), x), s / s.sum(1, keepdims=True), rtol=1e-13)


def test_int64_arithmetic_at_64_bits():
    big = np.array([2 ** 62 + 3, -(2 ** 63), 2 ** 53 + 1, -7, 0, 9], dtype=np.int64)
    small = np.array([3, -1, 2, 2, 5, -4], dtype=np.int64)
    with np.errstate(all="ignore"):
        for name, ref in [("add", np.add), ("mul", np.multiply), ("sub", np.subtract),
                          ("floor_divide", np.floor_divide), ("remainder", np.remainder), ("maximum", np.maximum),
                          ("bitwise_xor", np.bitwise_xor)]:
            np.testing.assert_array_equal(on_gpu(getattr(pcp, name), big, small), ref(big, small), err_msg=name)
    np.testing.assert_array_equal(on_gpu(lambda t: t << 3, small), small << 3)
    np.testing.assert_array_equal(on_gpu(lambda t: t.sum(), big), big.sum())
    np.testing.assert_array_equal(on_gpu(lambda t: pcp.argmax(t), big), big.argmax())
    np.testing.assert_array_equal(on_gpu(lambda p, q: p == q, big, big + 1), big == big + 1)  # beyond 2^53
    m = rng.integers(-1000, 1000, (20, 30)).astype(np.int64)
    np.testing.assert_array_equal(on_gpu(lambda p: p @ p.T, m), m @ m.T)


def test_int32_and_bool_reductions_and_products():
    m = rng.integers(-1000, 1000, (20, 30)).astype(np.int32)
    np.testing.assert_array_equal(on_gpu(lambda t: t.sum(axis=0), m), m.sum(axis=0))
    np.testing.assert_array_equal(on_gpu(lambda t: pcp.max(t, axis=1), m), m.max(axis=1))
    np.testing.assert_array_equal(on_gpu(lambda p: p @ p.T, m), m @ m.T)
    b = m > 0
    np.testing.assert_array_equal(on_gpu(lambda t: t.sum(axis=1), b), b.sum(axis=1))
    np.testing.assert_array_equal(on_gpu(lambda t: pcp.argmax(t, axis=1), b), b.argmax(axis=1))


@pytest.mark.parametrize("src, dst", [("float64", "int64"), ("int64", "float64"), ("float64", "float32"),
                                      ("float64", "float16"), ("float64", "bool_"), ("int64", "int32"),
                                      ("int32", "int64"), ("bool_", "float64"), ("bfloat16", "float64")])
def test_casts_into_and_out_of_64_bits(src, dst):
    x = np.concatenate([normal * 1000, [0.0, -0.0, 2.0 ** 40 + 0.5]])
    host = pcp.tensor(x).astype(getattr(pcp, src))
    got = host.to(GPUS[0]).astype(getattr(pcp, dst)).astype(pcp.float64).numpy()
    np.testing.assert_array_equal(got, host.astype(getattr(pcp, dst)).astype(pcp.float64).numpy())


@pytest.mark.skipif(not GPUS or pcp.gpu_info(GPUS[0])["api"] != "vulkan", reason="hides a Vulkan feature")
def test_a_device_without_shader_float64_names_what_it_lacks():
    """Where the device lacks shaderFloat64 (Intel Arc, Apple), float64 is refused with the op,
    the device and the missing feature named, and the op suites' declared gaps hold."""
    env = dict(os.environ, PCP_VULKAN_HIDE_FEATURES="shaderFloat64")
    code = ("import numpy as np, pcp\n"
            "assert not pcp.gpu_info()['float64'], pcp.gpu_info()['float64_note']\n"
            "try:\n    pcp.exp(pcp.tensor(np.ones(3), device='gpu'))\nexcept NotImplementedError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "exp: float64 is not supported on vulkan:0" in out.stdout and "lacks shaderFloat64" in out.stdout
    here = os.path.dirname(os.path.abspath(__file__))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "declared_gap",
                          os.path.join(here, "test_gpu.py")], env=env, capture_output=True, text=True, timeout=300,
                         cwd=here)
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout[-2000:]


def test_fixed_float64_cases_stay_fixed():
    """Found by the fuzzer's GPU grid: a negative base to an exponent from 2^53 on (every such
    double is an even integer) gave NaN; a float64 cross-entropy with int32 targets on the GPU
    took its mean in float32."""
    x = np.array([-2.0, -0.5, 0.25, 3.0])
    for y in (2.0 ** 63 - 1, -(2.0 ** 60), 2.0 ** 53):
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(on_gpu(lambda t: t ** y, x), np.power(x, y))
    logits = (np.arange(6) * 5 % 17 - 8).reshape(2, 3) / 4.0
    targets = np.array([0, 1], np.int32)
    got = pcp.cross_entropy(pcp.tensor(logits, device=GPUS[0]), pcp.tensor(targets, device=GPUS[0])).item()
    lse = np.log(np.exp(logits).sum(axis=1))
    assert got == pytest.approx(float(np.mean(lse - logits[[0, 1], targets])), rel=1e-14)
