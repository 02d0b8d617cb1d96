"""The CUDA runtime's kernels: every kernel of metal/*.comp, translated to CUDA C++ at build time
(metal/glsl_to_cuda.py), compiles with NVRTC for the architectures PCP's CUDA runtime targets.
NVRTC needs no GPU, so this runs in CI (NVIDIA's nvidia-cuda-nvrtc wheel); the kernels' results
are checked on an NVIDIA GPU by the whole GPU suite under PCP_GPU_RUNTIME=cuda."""
import pytest

import pcp
from pcp import _core
from pcp._cuda_libraries import library_dirs

KERNELS = _core._gpu_kernels()
TRANSLATED = sorted(name for name, k in KERNELS.items() if k[3] is not None)
COOP = sorted(name for name, k in KERNELS.items() if k[3] is None)


def nvrtc_missing():
    try:
        _core._cuda_compile_kernel("fill", [], 90)
        return None
    except RuntimeError as e:
        if "NVRTC not loaded" in str(e):
            return str(e)
        raise


pytestmark = pytest.mark.skipif(not KERNELS, reason="this build has no GPU kernels")
MISSING = nvrtc_missing() if KERNELS else None


def test_every_kernel_but_the_tensor_core_ones_is_translated():
    assert TRANSLATED and all(name.startswith(("matmul_coop", "matmul_cm2", "attention_coop", "attention_cm2",
                                               "attention_dq_c", "attention_dkv_c")) for name in COOP), COOP


@pytest.mark.skipif(MISSING is not None, reason=f"NVRTC is not installed ({MISSING}; pip install nvidia-cuda-nvrtc)")
@pytest.mark.parametrize("arch", [90])
@pytest.mark.parametrize("name", TRANSLATED)
def test_kernel_compiles_with_nvrtc(name, arch):
    assert _core._cuda_compile_kernel(name, [], arch) > 0


@pytest.mark.skipif(MISSING is not None, reason=f"NVRTC is not installed ({MISSING})")
def test_specialization_constants_reach_the_source():
    # fused.comp's program is its specialization constants: N_IN, N_CODE, N_OUT, OUTS, C0..
    assert _core._cuda_compile_kernel("fused", [2, 3, 1, 0], 90) > 0


def test_a_kernel_without_cuda_source_is_refused():
    with pytest.raises(NotImplementedError, match="no CUDA translation"):
        _core._cuda_compile_kernel(COOP[0], [], 90)
    with pytest.raises(ValueError, match="no kernel named"):
        _core._cuda_compile_kernel("no_such_kernel", [], 90)
