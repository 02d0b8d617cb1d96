"""The op profiler (pcp._core.set_profiling): call counts, times, and per-shape entries."""
import numpy as np

import pcp


def _profile(fn, record_shapes):
    pcp._core.reset_profile()
    pcp._core.set_profiling(True, record_shapes=record_shapes)
    try:
        fn()
    finally:
        pcp._core.set_profiling(False)
    out = {name: (calls, seconds) for name, calls, seconds in pcp._core.profile_results()}
    pcp._core.reset_profile()
    return out


def _ops():
    a = pcp.from_numpy(np.ones((3, 4), np.float32))
    b = pcp.from_numpy(np.ones((5, 4), np.float32))
    c = a @ b.T
    c + c
    c + c
    pcp.exp(a)


def test_counts_calls_per_op():
    prof = _profile(_ops, record_shapes=False)
    assert prof["matmul"][0] == 1 and prof["add"][0] == 2 and prof["exp"][0] == 1
    assert all(seconds >= 0 for _, seconds in prof.values())


def test_record_shapes_keys_ops_by_input_shapes_and_marks_transposed_views():
    prof = _profile(_ops, record_shapes=True)
    assert prof["matmul (3,4) (4,5)T"][0] == 1
    assert prof["add (3,5) (3,5)"][0] == 2
    assert prof["exp (3,4)"][0] == 1
    assert "matmul" not in prof


def test_nothing_is_recorded_while_off():
    pcp._core.reset_profile()
    _ops()
    assert pcp._core.profile_results() == []
