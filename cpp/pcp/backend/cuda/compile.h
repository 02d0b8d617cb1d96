// Compiling PCP's kernels for CUDA (cuda_runtime.cpp): their CUDA C++ (metal/glsl_to_cuda.py) by
// NVRTC into a cubin for one architecture, through the disk cache. Needs NVRTC, not a GPU: the
// tests compile every kernel on machines without one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace pcp::cuda {

// The cubin of kernel `name` (a ValueError for an unknown one, NotImplementedError for one
// without CUDA source) specialized with `constants`, for compute capability `arch` (90: sm_90);
// RuntimeError with NVRTC's log where it does not compile, or NVRTC is missing.
std::string compile_kernel(const std::string& name, const std::vector<uint32_t>& constants, int arch);

}  // namespace pcp::cuda
