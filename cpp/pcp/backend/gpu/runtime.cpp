// The process-wide runtime (made by the backend that was built) and lookups of the embedded kernels.
#include <algorithm>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "pcp/backend/gpu/runtime.h"
#include "pcp/core/error.h"

namespace pcp::gpu {
namespace {
std::string g_reason;
}  // namespace

Runtime* runtime() {
  static Runtime* rt = []() -> Runtime* {  // lives for the whole process
    std::string cuda_why;
    try {
      if (Runtime* cuda = create_cuda_runtime(cuda_why)) return cuda;
    } catch (const std::exception& e) {  // PCP_GPU_RUNTIME=cuda, and it could not start
      g_reason = e.what();
      return nullptr;
    }
    try {
      return create_runtime();
    } catch (const std::exception& e) {
      g_reason = e.what();
      if (!cuda_why.empty()) g_reason += "; CUDA: " + cuda_why;
      return nullptr;
    }
  }();
  return rt;
}

std::string unavailable_reason() {
  runtime();
  return g_reason;
}

Runtime& rt() {
  Runtime* r = runtime();
  if (!r) fail<ValueError>("gpu: no GPU is available (", unavailable_reason(), ")");
  return *r;
}

// A runtime without command lists never returns one from begin_capture(), so these are unreachable.
Runtime::CommandList* Runtime::end_capture(int) { fail<RuntimeError>("gpu: ", api(), " records no command lists"); }
void Runtime::abort_capture(int) {}
void Runtime::replay(int, CommandList*) { fail<RuntimeError>("gpu: ", api(), " records no command lists"); }
void Runtime::free_list(int, CommandList*) {}
void Runtime::run_library(int, const char* name, const std::function<void(void*)>&) {
  fail<RuntimeError>("gpu: ", name, " needs the CUDA runtime; this one is ", api());
}

const KernelSource* find_kernel(const std::string& name) {
  for (const KernelSource& k : all_kernels())
    if (name == k.name) return &k;
  return nullptr;
}

const KernelSource& kernel_named(const std::string& name) {
  const KernelSource* src = find_kernel(name);
  if (!src) fail<ValueError>("gpu: no kernel named '", name, "'");
  return *src;
}

uint32_t push_constant_bytes(const KernelSource& kernel) {
  // SPIR-V: a 5-word header, then instructions whose first word is (word count << 16) | opcode.
  enum : uint32_t { kTypeInt = 21, kTypeFloat = 22, kTypeVector = 23, kTypeArray = 28, kTypeStruct = 30,
                    kTypePointer = 32, kConstant = 43, kVariable = 59, kDecorate = 71, kMemberDecorate = 72,
                    kArrayStride = 6, kOffset = 35, kPushConstant = 9 };
  struct Type {
    uint32_t op = 0;
    std::vector<uint32_t> args;  // the instruction's words after the result id
  };
  std::unordered_map<uint32_t, Type> types;
  std::unordered_map<uint32_t, uint32_t> constants, array_stride;
  std::unordered_map<uint32_t, std::unordered_map<uint32_t, uint32_t>> offsets;  // struct -> member -> offset
  uint32_t block = 0;  // the struct type of the push-constant variable
  const uint32_t* w = kernel.spirv;
  for (size_t i = 5; i < kernel.spirv_words;) {
    const uint32_t count = w[i] >> 16, op = w[i] & 0xffff;
    if (count == 0 || i + count > kernel.spirv_words) break;
    const uint32_t* a = w + i + 1;
    switch (op) {
      case kTypeInt: case kTypeFloat: case kTypeVector: case kTypeArray: case kTypeStruct: case kTypePointer:
        types[a[0]] = Type{op, std::vector<uint32_t>(a + 1, a + count - 1)};
        break;
      case kConstant: constants[a[1]] = a[2]; break;
      case kDecorate: if (a[1] == kArrayStride) array_stride[a[0]] = a[2]; break;
      case kMemberDecorate: if (a[2] == kOffset) offsets[a[0]][a[1]] = a[3]; break;
      case kVariable:
        if (a[2] == kPushConstant && types.count(a[0])) block = types[a[0]].args.at(1);
        break;
      default: break;
    }
    i += count;
  }
  if (!block) return 0;
  std::function<uint32_t(uint32_t)> size_of = [&](uint32_t id) -> uint32_t {
    const Type& t = types.at(id);
    switch (t.op) {
      case kTypeInt: case kTypeFloat: return t.args.at(0) / 8;
      case kTypeVector: return t.args.at(1) * size_of(t.args.at(0));
      case kTypeArray: {
        auto stride = array_stride.find(id);
        return constants.at(t.args.at(1)) * (stride != array_stride.end() ? stride->second : size_of(t.args.at(0)));
      }
      case kTypeStruct: {
        uint32_t end = 0;
        for (uint32_t m = 0; m < t.args.size(); ++m) end = std::max(end, offsets[id][m] + size_of(t.args[m]));
        return end;
      }
      default: fail<ValueError>("gpu kernel ", kernel.name, ": unexpected type in its push constants");
    }
  };
  return size_of(block);
}

void check_push_constants(const std::string& kernel, size_t push_bytes) {
  static std::mutex mu;
  static std::unordered_map<std::string, uint32_t> sizes;
  uint32_t expected;
  {
    std::lock_guard<std::mutex> g(mu);
    auto it = sizes.find(kernel);
    if (it == sizes.end()) it = sizes.emplace(kernel, push_constant_bytes(kernel_named(kernel))).first;
    expected = it->second;
  }
  if (push_bytes != expected)
    fail<ValueError>("gpu kernel ", kernel, ": the host passes ", push_bytes, " push-constant bytes but the kernel's ",
                     "block is ", expected, " bytes: the C++ struct and the GLSL block disagree");
}

void check_bindings(const std::string& name, uint32_t pipeline_bindings, uint32_t nbuf) {
  if (pipeline_bindings != nbuf)
    fail<ValueError>("gpu kernel ", name, ": dispatched with ", nbuf, " buffers, earlier with ", pipeline_bindings);
}

}  // namespace pcp::gpu
