// pcp._core: the pybind11 module. Error translation and module-level utilities.
#include "convert.h"
#include "named.h"
#include "pcp/autograd/engine.h"
#include "pcp/core/grad_mode.h"
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/cpu/thread_pool.h"
#include "pcp/core/allocator.h"
#include "pcp/core/crc32c.h"
#include "pcp/core/device_memory.h"
#include "pcp/core/error.h"
#include "pcp/core/random.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/backend/gpu/runtime.h"
#include "pcp/backend/gpu/vendor/vendor.h"
#include "pcp/backend/cuda/compile.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"

using namespace pcp;
using namespace pcp::bindings;

PYBIND11_MODULE(_core, m) {
  m.doc() = "PCP native core: tensors, CPU and GPU kernels, and autodiff";

  register_errors();
  // Large CPU ops run without the GIL (a thread that does not hold it, e.g. inside backward,
  // which releases it as a whole, leaves it as it is).
  set_blocking_hooks({[]() -> void* { return PyGILState_Check() ? PyEval_SaveThread() : nullptr; },
                      [](void* state) {
                        if (state) PyEval_RestoreThread(static_cast<PyThreadState*>(state));
                      }});

  py::enum_<DType> dtype_cls(m, "DType", op_doc("DType"));
  dtype_cls
      .value("bool", DType::Bool)
      .value("int32", DType::Int32)
      .value("int64", DType::Int64)
      .value("float16", DType::Float16)
      .value("bfloat16", DType::BFloat16)
      .value("float32", DType::Float32)
      .value("float64", DType::Float64)
      .def_property_readonly("itemsize", [](DType d) { return itemsize(d); }, op_doc("DType.itemsize"))
      .def_property_readonly("is_floating_point", [](DType d) { return is_floating(d); },
                             op_doc("DType.is_floating_point"));
  // Replace (not overload) pybind11's enum repr/str: pcp.float32 prints as pcp.float32.
  // DType(x) for anything else than a valid code: a name, a NumPy dtype, or an error naming DType.
  dtype_cls.def(py::init(named("DType", [](py::object v) { return to_dtype(v); })), py::arg("value"));
  py::setattr(dtype_cls, "__repr__", py::cpp_function([](DType d) { return std::string("pcp.") + dtype_name(d); },
                                                      py::is_method(dtype_cls)));
  py::setattr(dtype_cls, "__str__", py::cpp_function([](DType d) { return std::string(dtype_name(d)); },
                                                     py::is_method(dtype_cls)));

  py::class_<Tensor> tensor_cls = bind_tensor(m);
  bind_ops(m, tensor_cls);
  bind_interop(m, tensor_cls);
  bind_optim(m);
  bind_plan(m);

  // Autograd.
  def(m, "is_grad_enabled", &grad_enabled);
  def(m, "set_grad_enabled", &set_grad_enabled, py::arg("enabled"));
  def(m, "_set_gpu_attention", [](const std::string& mode) {
    if (mode != "auto" && mode != "fused" && mode != "composed")
      fail<ValueError>("_set_gpu_attention: mode must be auto, fused or composed, got '", mode, "'");
    set_gpu_attention(mode == "auto" ? GpuAttention::Auto : mode == "fused" ? GpuAttention::Fused : GpuAttention::Composed);
  }, py::arg("mode"), "Which attention GPUs run: auto, fused (the flash kernels) or composed (tests, benchmarks)");
  def(m, "autocast_dtype", &autocast_dtype, "The dtype of the enclosing pcp.autocast scope, or None");
  def(m, "set_autocast_dtype", &set_autocast_dtype, py::arg("dtype"),
      "Turns autocast on with a float16 or bfloat16 compute type, or off with None (use pcp.autocast)");
  def(m, 
      "autograd_grad",
      [](const Tensor& root, const std::vector<Tensor>& wrt, py::object grad, bool create_graph,
         std::optional<bool> retain_graph) {
        Tensor g = to_tensor_or_none(grad, "grad");
        py::gil_scoped_release release;
        return pcp::grad(root, wrt, g, create_graph, retain_graph);
      },
      py::arg("output"), py::arg("inputs"), py::arg("grad") = py::none(), py::arg("create_graph") = false,
      py::arg("retain_graph") = py::none(),
      "Gradients of `output` with respect to each of `inputs`, without touching .grad");

  // Profiling at the dispatch point (nested primitives count in their callers too).
  def(m, "set_profiling", &set_profiling, py::arg("enabled"), py::arg("record_shapes") = false,
        "Collect per-primitive call counts and times (with record_shapes, per primitive and input shapes)");
  def(m, "reset_profile", &reset_profile);
  def(m, "profile_results", [] {
    py::list out;
    for (auto& [name, p] : profile_results()) out.append(py::make_tuple(name, p.calls, p.seconds));
    return out;
  }, "[(primitive name, calls, seconds)] sorted by time");

  // Devices.
  def(m, "devices", [] {
    std::vector<std::pair<std::string, std::string>> out{{"cpu", "CPU"}};
    if (gpu::Runtime* rt = gpu::runtime())
      for (int i = 0; i < rt->device_count(); ++i) {
        const gpu::DeviceInfo info = rt->device_info(i);
        out.emplace_back(gpu_device(i).str(), info.software ? info.name + "; software, on the CPU" : info.name);
      }
    return out;
  }, "[(device, description)] for the CPU and every GPU (hardware GPUs first; a software one says so)");
  def(m, "device", [](const Str& name) { return parse_device(name).str(); }, py::arg("name"),
        "The canonical name of a device: 'gpu' -> 'vulkan:0'; a ValueError when it does not exist");
  def(m, "gpu_info", [](const Str& name) {
    const Device d = parse_device(name);
    if (!d.is_gpu()) fail<ValueError>("gpu_info: ", d.str(), " is not a GPU");
    const gpu::DeviceInfo info = gpu::runtime()->device_info(d.index);
    py::dict out;
    out["name"] = info.name;
    out["software"] = info.software;
    out["api"] = gpu::runtime()->api();
    out["memory_bytes"] = info.memory_bytes;
    out["uuid"] = info.uuid;
    out["pci_bus"] = info.pci_bus;
    out["tensor_core_float16"] = info.tensor_core_f16;
    out["tensor_core_bfloat16"] = info.tensor_core_bf16;
    out["tensor_core_note"] = info.tensor_core_note;
    out["cooperative_matrix2"] = info.coopmat2;
    out["buffer_addresses"] = info.buffer_addresses;
    out["float64"] = info.wide;  // float64 and int64 kernels
    out["float64_note"] = info.wide_missing.empty() ? "" : "the device lacks " + info.wide_missing;
    out["tensor_core_attention"] = gpu::attention_on_tensor_cores(DType::BFloat16, d.index)   ? "bfloat16 and float16"
                                   : gpu::attention_on_tensor_cores(DType::Float16, d.index) ? "float16"
                                                                                            : "none";
    const gpu::vendor::Status vs = gpu::vendor::status(d.index);
    py::dict vendor;
    vendor["matmul"] = vs.matmul ? py::object(py::str("cuBLASLt")) : py::object(py::none());
    vendor["attention"] = vs.attention ? py::object(py::str("cuDNN")) : py::object(py::none());
    vendor["runtime"] = gpu::runtime()->api();
    vendor["cublaslt"] = vs.cublaslt;
    vendor["cudnn"] = vs.cudnn;
    vendor["note"] = vs.note;
    out["vendor"] = vendor;
    py::list kernels;
    for (const gpu::KernelSource& k : gpu::all_kernels()) kernels.append(k.name);
    out["kernels"] = kernels;
    return out;
  }, py::arg("device") = "gpu");
  def(m, "gpu_unavailable_reason", [] { return gpu_unavailable_reason(); });
  def(m, "set_default_device", [](const Str& name) { set_default_device(parse_device(name)); },
        py::arg("device"));
  def(m, "get_default_device", [] { return default_device().str(); });
  def(m, "synchronize", [](py::object device) {
    // Read the argument while holding the GIL; only the wait runs without it.
    const bool all = device.is_none();
    const Device d = all ? cpu_device() : parse_device(py::str(device));
    py::gil_scoped_release release;
    if (!all) return memory_of(d).synchronize(d.index);
    if (GpuBackend* gpu = gpu_backend())
      for (int i = 0; i < gpu->device_count(); ++i) gpu->synchronize(i);
  }, py::arg("device") = py::none());
  def(m, "set_gpu_profiling", [](bool on, py::object device) {
    const Device d = parse_device(device.is_none() ? std::string("gpu") : std::string(py::str(device)));
    if (!d.is_gpu()) fail<ValueError>("set_gpu_profiling: ", d.str(), " is not a GPU");
    return gpu::runtime()->set_profiling(d.index, on);
  }, py::arg("enabled"), py::arg("device") = py::none(),
     "Time every GPU command with device timestamps (default device: the first GPU); False when the device cannot");
  def(m, "gpu_profile_results", [](py::object device) {
    const Device d = parse_device(device.is_none() ? std::string("gpu") : std::string(py::str(device)));
    if (!d.is_gpu()) fail<ValueError>("gpu_profile_results: ", d.str(), " is not a GPU");
    std::vector<gpu::Runtime::KernelTime> times;
    {
      py::gil_scoped_release release;
      times = gpu::runtime()->profile(d.index);
    }
    py::list out;
    for (auto& t : times) out.append(py::make_tuple(t.name, t.count, t.seconds));
    return out;
  }, py::arg("device") = py::none(), "[(kernel, launches, seconds on the GPU)] since the last call, sorted by time");
  def(m, "_gpu_kernels", [] {
    py::dict out;
    for (const gpu::KernelSource& k : gpu::all_kernels())
      out[k.name] = py::make_tuple(py::bytes(reinterpret_cast<const char*>(k.spirv), k.spirv_words * 4),
                                   k.msl ? py::object(py::str(k.msl)) : py::object(py::none()), k.local_size,
                                   k.cuda ? py::object(py::str(k.cuda)) : py::object(py::none()));
    return out;
  }, "{name: (SPIR-V bytes, MSL source or None, workgroup size, CUDA source or None)} of the embedded GPU kernels");
  def(m, "_cuda_compile_kernel", [](const std::string& name, std::vector<uint32_t> constants, int arch) {
    py::gil_scoped_release release;
    return cuda::compile_kernel(name, constants, arch).size();
  }, py::arg("name"), py::arg("constants"), py::arg("arch"),
     "Compiles a kernel's CUDA translation with NVRTC (no GPU needed): the cubin's size in bytes");

  // Memory.
  auto stats_dict = [](const MemoryStats& s) {
    py::dict d;
    d["active_bytes"] = s.active_bytes;
    d["peak_bytes"] = s.peak_bytes;
    d["cached_bytes"] = s.cached_bytes;
    d["num_allocs"] = s.num_allocs;
    d["num_cache_hits"] = s.num_cache_hits;
    return d;
  };
  def(m, "memory_stats", [=](py::object device) {
    Device d = device.is_none() ? default_device() : parse_device(py::str(device));
    return stats_dict(memory_of(d).stats(d.index));
  }, py::arg("device") = py::none());
  def(m, "reset_peak_memory_stats", [](py::object device) {
    Device d = device.is_none() ? default_device() : parse_device(py::str(device));
    memory_of(d).reset_peak(d.index);
  }, py::arg("device") = py::none());
  def(m, "clear_cache", [](py::object device) {
    Device d = device.is_none() ? default_device() : parse_device(py::str(device));
    memory_of(d).clear_cache(d.index);
  }, py::arg("device") = py::none());

  // Threads and SIMD.
  def(m, "set_num_threads", [](Int n) { set_num_threads(n); }, py::arg("n"));
  def(m, "set_float32_matmul_precision", [](const Str& precision) {
    const std::string& p = precision;
    if (p != "highest" && p != "high" && p != "medium")
      fail<ValueError>("set_float32_matmul_precision: expected 'highest', 'high' or 'medium', got '", p, "'");
    gpu::vendor::set_allow_tf32(p != "highest");
  }, py::arg("precision"));
  def(m, "get_float32_matmul_precision", [] { return gpu::vendor::allow_tf32() ? "high" : "highest"; });
  def(m, "_set_gpu_vendor", [](bool on) { gpu::vendor::set_enabled(on); }, py::arg("enabled"),
        "NVIDIA's libraries for products and attention where they loaded (on by default), or PCP's own kernels");
  def(m, "get_num_threads", &get_num_threads);
  def(m, "cpu_features", [] {
    py::dict d;
    d["isa"] = cpu::kernels().isa;
    d["available"] = std::string(cpu::available_isas());
    d["threads"] = get_num_threads();
    d["bf16_matmul"] = cpu::has_gemm_bf16();
    return d;
  }, "The SIMD level the CPU kernels run at, the levels available, and whether bfloat16 matmuls run on "
     "AVX512_BF16 dot products (else on float32 copies)");
  def(m, "set_isa", [](const Str& isa) { cpu::set_isa(isa.value.c_str()); }, py::arg("isa"),
        "Force the CPU kernels' instruction set (baseline, avx2, avx512; neon on arm64); for tests and benchmarks");

  // Random numbers.
  // An int in [0, 2**64) (a seed, as torch's, or a generator offset), else a TypeError or ValueError
  // naming the function and the argument.
  const auto u64_arg = [](const char* fn, const char* what, py::object s) -> uint64_t {
    if (!is_int_like(s))
      fail<TypeError>(fn, ": ", what, " must be an int, got ", std::string(py::str(py::type::of(s).attr("__name__"))));
    const unsigned long long v = PyLong_AsUnsignedLongLong(py::int_(s).ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      fail<ValueError>(fn, ": ", what, " must be an integer in [0, 2**64), got ", std::string(py::str(s)));
    }
    return v;
  };
  def(m, "seed", [u64_arg](py::object s) { Generator::global().seed(u64_arg("seed", "the seed", s)); },
      py::arg("seed"));
  def(m, "get_rng_state", [] {
    auto& g = Generator::global();
    return py::make_tuple(g.initial_seed(), g.offset());
  });
  def(m, "set_rng_state", [u64_arg](py::object seed, py::object offset) {
    Generator::global().set_state(u64_arg("set_rng_state", "seed", seed), u64_arg("set_rng_state", "offset", offset));
  }, py::arg("seed"), py::arg("offset"));
  m.def("_crc32c", [](py::buffer data, uint32_t crc) {
    py::buffer_info info = data.request();  // any contiguous buffer: bytes, memoryview, a NumPy array
    if (!PyBuffer_IsContiguous(info.view(), 'A'))
      fail<ValueError>("_crc32c: the buffer must be contiguous");
    const size_t n = static_cast<size_t>(info.size) * static_cast<size_t>(info.itemsize);
    py::gil_scoped_release release;
    return crc32c(info.ptr, n, crc);
  }, py::arg("data"), py::arg("crc") = 0,
     "CRC32C (Castagnoli) of a contiguous buffer's bytes, continuing from crc (the CRC32C of the "
     "bytes before; 0 to start): what PCP's safetensors files carry per tensor");
}
