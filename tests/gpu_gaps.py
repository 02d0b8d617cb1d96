"""What the GPU backend does not run (yet), declared once for the pytest suite (conftest.py's
skips) and the fuzzer (tests/fuzz/worker.py): dtype -> the ops that lack it ("*": every op).
tests/test_gpu.py checks that each declared gap still raises, so a kernel that lands must
remove its entry, and an error that is not declared here fails a run."""
import re

GPU_GAPS = {
    "float64": "*",  # the GPU computes in float32 (as PyTorch's MPS and MLX's GPU backends)
    "int64": "*",
    # Integer and bool math: elementwise arithmetic, comparisons, casts, copies and gathers run
    # on int32 and bool (bools through the int32 kernels); reductions and products do not.
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
