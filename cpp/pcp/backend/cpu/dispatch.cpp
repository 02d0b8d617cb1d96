// Picks the best kernel table this CPU supports (or the one PCP_SIMD names).
#include <cstdlib>
#include <cstring>
#include <string>

#include "pcp/backend/cpu/kernel_table.h"
#include "pcp/core/error.h"

namespace pcp::cpu {

namespace baseline { const KernelTable& kernel_table(); }
#ifdef PCP_HAVE_avx2
namespace avx2 { const KernelTable& kernel_table(); }
#endif
#ifdef PCP_HAVE_avx512
namespace avx512 { const KernelTable& kernel_table(); }
#endif
#ifdef PCP_HAVE_neon
namespace neon { const KernelTable& kernel_table(); }
#endif

void kernel_error(const char* kernel, const char* problem, const char* detail) {
  fail<TypeError>(kernel, ": ", problem, detail);
}

void* kernel_scratch(const char* kernel, size_t bytes) {
  void* p = std::malloc(bytes > 0 ? bytes : 1);
  if (!p) fail<MemoryError>(kernel, ": out of memory for ", bytes, " bytes of scratch space");
  return p;
}

namespace {

const KernelTable* table_for(const std::string& isa) {
#if defined(__x86_64__) || defined(_M_X64)
  __builtin_cpu_init();
#endif
#ifdef PCP_HAVE_avx512
  if (isa == "avx512")
    return (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
               ? &avx512::kernel_table()
               : nullptr;
#endif
#ifdef PCP_HAVE_avx2
  if (isa == "avx2")
    return (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ? &avx2::kernel_table() : nullptr;
#endif
#ifdef PCP_HAVE_neon
  if (isa == "neon") return &neon::kernel_table();  // every arm64 CPU has it
#endif
  if (isa == "baseline") return &baseline::kernel_table();
  return nullptr;
}

const KernelTable* best() {
  if (const char* forced = std::getenv("PCP_SIMD"); forced && *forced) {
    if (auto* t = table_for(forced)) return t;
    fail<ValueError>("PCP_SIMD=", forced, " is not available on this CPU/build (available: ", available_isas(), ")");
  }
  for (const char* isa : {"avx512", "avx2", "neon", "baseline"})
    if (auto* t = table_for(isa)) return t;
  return &baseline::kernel_table();
}

const KernelTable* g_active = nullptr;

}  // namespace

const KernelTable& kernels() {
  if (!g_active) g_active = best();
  return *g_active;
}

const char* available_isas() {
  static std::string list = [] {
    std::string s;
    for (const char* isa : {"avx512", "avx2", "neon", "baseline"})
      if (table_for(isa)) s += std::string(s.empty() ? "" : ",") + isa;
    return s;
  }();
  return list.c_str();
}

void set_isa(const char* name) {
  const KernelTable* t = table_for(name);
  if (!t) fail<ValueError>("set_isa: '", name, "' is not available (available: ", available_isas(), ")");
  g_active = t;
}

}  // namespace pcp::cpu
