#include "pcp/backend/cuda/library.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>

namespace pcp::cuda {

Library load_library(const std::vector<std::string>& names) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PCP_CUDA_LIBRARY_PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');)
      if (!dir.empty()) dirs.push_back(dir);
  }
  Library lib;
  for (const std::string& name : names) {
    for (const std::string& dir : dirs) {
      const std::string file = dir + "/" + name;
      if (void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) return {h, file, ""};
      if (const char* e = dlerror(); e && lib.error.empty()) lib.error = e;  // kept when it exists but fails
    }
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return {h, name, ""};
  }
  std::string tried;
  for (const std::string& name : names) tried += (tried.empty() ? "" : ", ") + name;
  if (lib.error.empty() || lib.error.find("No such file") != std::string::npos)
    lib.error = "none of " + tried + " found";
  return lib;
}

void* find_symbol(const Library& lib, const char* name) { return lib.handle ? dlsym(lib.handle, name) : nullptr; }

void warn_once(const std::string& key, const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> g(mu);
  if (said.insert(key).second) std::fprintf(stderr, "pcp: %s\n", message.c_str());
}

}  // namespace pcp::cuda
