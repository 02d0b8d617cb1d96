"""What the GPU backend does not run (yet), declared once for the pytest suite (conftest.py's
skips) and the fuzzer (tests/fuzz/worker.py): dtype -> the ops that lack it ("*": every op).
tests/test_gpu.py checks that each declared gap still raises, so a kernel that lands must
remove its entry, and an error that is not declared here fails a run."""
import re

import pcp


def _has_wide_kernels():
    """Whether the first GPU runs float64 and int64 (Vulkan's shaderFloat64 and shaderInt64)."""
    if not any(name != "cpu" for name in pcp.devices()):
        return True  # no GPU: nothing is skipped for it
    return pcp.gpu_info()["float64"]


GPU_GAPS = {} if _has_wide_kernels() else {
    # A device without shaderFloat64 / shaderInt64 (Intel Arc, Apple): float64 and int64 are
    # storage only there, and integer reductions and products (which run as int64) are missing.
    "float64": "*",
    "int64": "*",
    "int32": {"sum", "max", "min", "argmax", "argmin", "matmul"},
    "bool": {"sum", "max", "min", "argmax", "argmin"},
}

# "<op>: <dtype> is not supported on vulkan:0 yet" and the like, as the GPU backend words them.
GPU_GAP_ERROR = re.compile(r"^(\w+): (\w+) (?:is not supported|copies are not supported|tensors cannot be created|"
                           r"values are not supported) on (?:vulkan|metal|cuda)")


def declared_gap(error):
    """Whether error is a NotImplementedError for an (op, dtype) GPU_GAPS declares."""
    match = GPU_GAP_ERROR.search(str(error)) if isinstance(error, NotImplementedError) else None
    if not match:
        return False
    ops = GPU_GAPS.get(match.group(2), ())
    return ops == "*" or match.group(1) in ops
