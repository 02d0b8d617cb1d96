"""The child process: runs cases one after another, answering each with one JSON line.

Started by runner.Pool as `python -m fuzz.worker` (tests/ on PYTHONPATH). Its address space is
capped (RLIMIT_AS, PCP_FUZZ_MEM_GB, default 4 GiB) so that a real attempt to allocate 2**40
bytes fails at once with MemoryError instead of swapping the machine; when a case kills the
process by a signal the parent records a CRASH and starts a new one.
"""
import faulthandler
import json
import math
import os
import resource
import sys
import traceback
import warnings

import numpy as np

from . import reference as R
from .inputs import Lit, Seq, TensorArg


class Counterpart(np.ndarray):
    """The NumPy twin of a tensor argument (finite-difference references perturb these)."""


def broadcast_twin(a, shape):
    """NumPy's twin of PCP's broadcast_to: read-only only where a dimension is really expanded
    (PCP returns the tensor itself, writable, when nothing is: same shape, or new axes of 1)."""
    view = np.broadcast_to(a, shape)
    if any(s > 1 and st == 0 for s, st in zip(view.shape, view.strides)):
        return view
    return np.lib.stride_tricks.as_strided(a, view.shape, view.strides)  # same strides, writable


def counterpart(t):
    v = R.round_to(eval(t.np, {"np": np}), t.dtype)
    if t.view:
        v = eval(t.view[1].format("_v").replace("np.broadcast_to(", "broadcast_twin("),
                 {"np": np, "_v": v, "broadcast_twin": broadcast_twin})
    v = v.view(Counterpart)
    v.pdt = t.dtype  # the pcp dtype, for references that depend on it (item, astype, ...)
    v.dev = t.device
    return v


def _np_value(a, npenv, names):
    if isinstance(a, TensorArg):
        return npenv[names[id(a)]]
    if isinstance(a, Seq):
        items = [_np_value(i, npenv, names) for i in a.items]
        return tuple(items) if a.tuple else items
    v = eval(a.code(), npenv)
    if isinstance(v, np.ndarray) and v.dtype.kind == "f":
        v = v.astype(np.float64)  # native byte order, the values the array means
    elif isinstance(v, np.ndarray) and v.dtype.kind in "iu" and v.dtype.itemsize < 4 or \
            isinstance(v, np.ndarray) and v.dtype == np.uint32:
        v = v.astype(np.int64)  # docs/guide.md: narrower NumPy integers widen to int64
    elif isinstance(v, np.ndarray) and v.dtype == np.uint64:
        # the numbers it holds: as int64 where they fit, else as float64 (a wrapped int64 is wrong)
        v = v.astype(np.int64) if not v.size or v.max() < 2**63 else v.astype(np.float64)
    return v


def _kind(a):
    return a.kind if isinstance(a, (TensorArg, Lit)) else None


def _summary(result):
    import pcp
    if isinstance(result, pcp.Tensor):
        try:
            return f"Tensor{tuple(result.shape)} {result.dtype.name}"
        except Exception:
            return "Tensor"
    s = repr(result)
    return s if len(s) < 80 else s[:77] + "..."


def _gpu_declared(exc, case):
    """A GPU case's NotImplementedError for an (op, dtype) tests/gpu_gaps.py declares (docs/gpu.md:
    float64 and int64 are CPU-only on the GPU and say so). A CPU case may meet one only where it
    asks for a tensor on the GPU (zeros_like(x, device='gpu')). Any other is a lost kernel."""
    from gpu_gaps import declared_gap
    asks_gpu = "gpu" in repr(case.args) + repr(case.kwargs)
    return (case.device != "cpu" or asks_gpu) and declared_gap(exc)


def _too_big_for_memory(exc, expected):
    """A MemoryError (or OverflowError) for a result of more than 2**28 elements (1 GiB of float32)
    is an honest answer under the worker's address-space limit (one_hot(x, 2**31), arange(2**40))."""
    if not isinstance(exc, (MemoryError, OverflowError)):
        return False
    shape = expected.shape if isinstance(expected, R.Shape) else np.shape(getattr(expected, "value", ()))
    return math.prod(shape) > 2**28


def run_case(case):
    """{'status', 'detail'} for one case (see the table in reference.py)."""
    import pcp
    from .cases import OPS, name_tensors
    op = OPS[case.op]
    named, args_src, kw_src = name_tensors(case)
    names = {id(t): n for n, t in named}
    env = {"np": np, "pcp": pcp, "math": math}
    from .cases import call_source
    stmt, expr = call_source(case, op, named, args_src, kw_src)
    if "torch." in " ".join([t.code(case.device) for _, t in named] + [stmt, expr]):
        try:
            import torch
        except ImportError:
            return {"status": "SKIP", "detail": "torch is not installed"}
        env["torch"] = torch
    for n, t in named:
        try:
            env[n] = eval(t.code(case.device), env)
        except Exception as e:
            return {"status": "SKIP", "detail": f"setup {n}: {type(e).__name__}: {e}"[:300]}

    # The reference, before PCP runs (so a case that corrupts memory cannot change it).
    npenv = dict(env, **{n: counterpart(t) for n, t in named})
    if op.ref is None:
        expected = R.Expect.ANY
    else:
        try:
            np_args = [_np_value(a, npenv, names) for a in case.args]
            np_kw = {k: _np_value(v, npenv, names) for k, v in case.kwargs.items()}
        except Exception as e:  # e.g. object() where NumPy needs a number
            np_args, np_kw = None, None
            expected = R.Expect.ERROR if isinstance(e, (TypeError, ValueError)) else R.Expect.ANY
        if np_args is not None:
            R.DEVICE = case.device
            expected = R.expectation(op.ref, np_args, np_kw)
    if case.expect:
        expected = case.expect
    try:
        out_dtype = op.dtype([_kind(a) for a in case.args], case.kwargs) if op.dtype else None
    except Exception:
        out_dtype = None
    if not _supported(op, named, case.device):
        out_dtype = None  # no declared result dtype for an input dtype the op does not declare

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if stmt:
                exec(stmt, env)
            result = eval(expr, env)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        unclear = R.check_exception(exc, op, case.device)
        if unclear:
            return {"status": unclear[0], "detail": unclear[1]}
        detail = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
        if isinstance(expected, (R.Value, R.Shape, R.Check)) and case.must_work and _supported(op, named, case.device) \
                and not _gpu_declared(exc, case) and not _too_big_for_memory(exc, expected):
            return {"status": "WRONG", "detail": f"raised {detail}; the reference has a value"}
        return {"status": "OK", "detail": detail}

    if expected == R.Expect.ERROR:
        late = _deferred_error(result, case.device)
        if late is not None:  # docs/gpu.md: the GPU reports some bad inputs at the next synchronisation
            unclear = R.check_exception(late, op, case.device)
            return {"status": unclear[0], "detail": unclear[1]} if unclear else \
                {"status": "OK", "detail": f"{type(late).__name__} at synchronisation: {late}"[:200]}
        return {"status": "WRONG", "detail": f"returned {_summary(result)} for an invalid input"}
    if expected == R.Expect.ANY:
        return {"status": "OK", "detail": f"returned {_summary(result)}"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            diff = R.compare(result, expected, out_dtype, case.device)
    except Exception as e:
        return {"status": "WRONG", "detail": f"returned {_summary(result)} that cannot be read back: "
                                             f"{type(e).__name__}: {str(e)[:150]}"}
    if diff:
        return {"status": "WRONG", "detail": diff}
    if os.environ.get("PCP_FUZZ_REPLAY") == "1":
        return _replay(case, named, stmt, expr, env)
    return {"status": "OK", "detail": ""}


def _fresh(t):
    """Other values of t's shape, dtype, device and layout, a leaf as t is: floats x 1.5 + 0.25,
    integers + 1, booleans negated (an index may then be out of range: eager and the plan must
    both refuse)."""
    import pcp
    with pcp.no_grad():
        if t.dtype == pcp.bool_:
            f = pcp.logical_not(t)
        elif t.dtype in (pcp.int32, pcp.int64):
            f = t + 1
        else:
            f = (t * 1.5 + 0.25).astype(t.dtype)
    if t.requires_grad:
        f.requires_grad = True
    return f


def _outcome(fn, args, seed):
    """(the tensors it returns as NumPy arrays, flattened; None) or (None, the exception). Python
    ints and others it returns are the trace's in a plan (a hash, a shape), so they are not
    compared; a Python float is (clip_grad_norm's norm, a 0-d tensor in a plan)."""
    import pcp
    pcp.random.seed(seed)  # a plan draws what eager draws from the same generator state
    try:
        out = fn(*args)
        flat = []

        def walk(v):
            if isinstance(v, dict):
                v = list(v.values())
            if isinstance(v, (list, tuple)):
                for x in v:
                    walk(x)
            elif isinstance(v, pcp.Tensor):
                flat.append(v.astype(pcp.float64).numpy() if v.dtype == pcp.bfloat16 else v.to("cpu").numpy())
            elif isinstance(v, float):
                flat.append(np.asarray(v))
        walk(out)
        return flat, None
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:
        return None, e


def _replay(case, named, stmt, expr, env):
    """The call compiled (pcp.compile) on this case's tensors, then replayed on fresh values of
    them: it must give what eager gives on those (or raise what eager raises), so a plan never
    replays a value it read on the host once. A refusal at trace time is an answer too."""
    import pcp
    names = [n for n, t in named if isinstance(env.get(n), pcp.Tensor) and env[n].is_contiguous()]
    if not names or len(names) != len(named):
        return {"status": "OK", "detail": "replay: no contiguous tensor arguments"}
    body = "".join(f"    {line}\n" for line in stmt.splitlines()) if stmt else ""
    scope = dict(env)
    exec(f"def __fn({', '.join(names)}):\n{body}    return {expr}\n", scope)
    fn = scope["__fn"]
    tensors = [env[n] for n in names]
    try:  # one set for eager, one for the plan: a call may write into its arguments or their .grad
        fresh, fresh_too = [_fresh(t) for t in tensors], [_fresh(t) for t in tensors]
    except Exception:
        return {"status": "OK", "detail": "replay: no fresh values of this dtype"}
    step = pcp.compile(fn)
    _, traced = _outcome(step, tensors, 1)
    if traced is not None:  # refused while tracing: an answer too
        return {"status": "OK", "detail": f"replay: refused at trace time: {str(traced)[:150]}"}
    want, want_err = _outcome(fn, fresh, 2)
    got, got_err = _outcome(step, fresh_too, 2)
    if got_err is not None and want_err is None and "pcp.compile" in str(got_err):
        # new values of another signature (a leaf where a view was traced) trace anew: refused there
        return {"status": "OK", "detail": f"replay: refused when traced again: {str(got_err)[:150]}"}
    if want_err is not None or got_err is not None:
        if want_err is not None and got_err is not None and type(want_err) is type(got_err):
            return {"status": "OK", "detail": f"replay: both raise {type(got_err).__name__}"}
        what = lambda e: "returns" if e is None else f"raises {type(e).__name__}: {str(e)[:150]}"
        return {"status": "WRONG", "detail": f"replayed on new values the plan {what(got_err)}; eager {what(want_err)}"}
    if len(got) != len(want):
        return {"status": "WRONG", "detail": f"replay: {len(got)} outputs, eager {len(want)}"}
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape == w.shape and w.size > 2**24:
            continue  # a broadcast view of a huge shape: its values are the few it views
        same = g.shape == w.shape and np.array_equal(g, w, equal_nan=w.dtype.kind in "fc")
        if not same and g.shape == w.shape and w.dtype.kind in "fc":
            same = np.allclose(g, w, rtol=1e-5, atol=1e-6, equal_nan=True)  # a fused chain on a GPU
        if not same:
            return {"status": "WRONG", "detail": f"replayed on new values, output {i} differs from eager: "
                                                 f"{str(g)[:120]} against {str(w)[:120]}"}
    return {"status": "OK", "detail": "replay: equal"}


def _deferred_error(result, device):
    """The exception a GPU result raises when it is read back, or None."""
    import pcp
    if device == "cpu":
        return None
    try:
        pcp.synchronize()
        if isinstance(result, pcp.Tensor):
            result.to("cpu")
    except Exception as e:
        return e
    return None


def _supported(op, named, device):
    return all(t.dtype in op.dtypes and t.device == device for _, t in named)


def _reset(device, threads):
    """Undo what a case may have changed in the process-wide state."""
    import pcp
    try:
        pcp.set_grad_enabled(True)
        pcp.set_default_device(device)
        if pcp.get_num_threads() != threads:
            pcp.set_num_threads(threads)
        pcp.random.seed(0)
    except Exception:
        pass


def main():
    gib = float(os.environ.get("PCP_FUZZ_MEM_GB", "4"))
    if gib > 0:
        limit = int(gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # stray prints (C++ or Python) go to stderr, not into the answers
    faulthandler.enable()
    warnings.simplefilter("ignore")  # NumPy's warnings from references would hide crash messages
    import pcp
    from .cases import Case
    if os.environ.get("PCP_FUZZ_PLANT"):  # a planted fault (tests/test_fuzz.py proves the fuzzer sees it)
        exec(os.environ["PCP_FUZZ_PLANT"], {"pcp": pcp})
    threads = pcp.get_num_threads()
    for line in sys.stdin:
        case = Case.from_json(line)
        _reset(case.device, threads)
        try:
            res = run_case(case)
        except Exception:  # a bug of the harness, not of PCP
            res = {"status": "HARNESS", "detail": traceback.format_exc()[-600:]}
        _reset(case.device, threads)
        proto.write(json.dumps(res) + "\n")


if __name__ == "__main__":
    main()
