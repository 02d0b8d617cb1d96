// Loading NVIDIA's libraries at run time: the driver's libcuda, and cuBLASLt and cuDNN from
// NVIDIA's pip wheels (pcp[cuda]) or the system.
#pragma once
#include <string>
#include <type_traits>
#include <vector>

namespace pcp::cuda {

struct Library {
  void* handle = nullptr;  // dlopen's, or nullptr when none loaded
  std::string path;        // the file loaded
  std::string error;       // why none loaded
};

// The first of `names` (sonames, newest first) that loads: looked for in the directories of
// PCP_CUDA_LIBRARY_PATH (colon-separated; the Python package sets it to the library folders of
// NVIDIA's pip wheels when it is unset), then where dlopen looks by default. Never throws.
Library load_library(const std::vector<std::string>& names);

// The address of `name` in `lib`, or nullptr.
void* find_symbol(const Library& lib, const char* name);

// Table entries of a PCP_*_FNS list: X(member, "symbol", type). PCP_DECLARE_FN_ declares a
// member; PCP_RESOLVE_FN_ fills one from `lib` into `fns`, keeping the first symbol missing in
// `missing` (the names of a resolve function's parameters and local).
#define PCP_RESOLVE_FN_(member, symbol, type)                                        \
  fns.member = reinterpret_cast<type>(::pcp::cuda::find_symbol(lib, symbol)); \
  if (!fns.member && missing.empty()) missing = symbol;
#define PCP_DECLARE_FN_(member, symbol, type) std::type_identity_t<type> member = nullptr;

// One line on stderr, at most once per `key` in the process: why the vendor path is off where a
// user installed it (a library of the wrong version, an import that failed).
void warn_once(const std::string& key, const std::string& message);

}  // namespace pcp::cuda
