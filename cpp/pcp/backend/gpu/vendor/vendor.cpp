// Which devices take the vendor path, set up once per device (prepare) before its first
// allocation.
#include "pcp/backend/gpu/vendor/vendor.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "pcp/backend/gpu/vendor/state.h"
#include "pcp/core/error.h"

namespace pcp::gpu::vendor {
namespace {

constexpr int kMaxDevices = 64;
std::mutex g_mu;
std::array<Status, kMaxDevices> g_status;                         // under g_mu
std::array<bool, kMaxDevices> g_prepared{};                         // under g_mu
std::array<std::atomic<VendorDevice*>, kMaxDevices> g_devices{};  // set once, live for the process

bool disabled() {
  const char* v = std::getenv("PCP_GPU_VENDOR");
  return v && std::strcmp(v, "0") == 0;
}

Status set_up(int index, VendorDevice*& out) {
  Status st;
  if (disabled()) return st.note = "off (PCP_GPU_VENDOR=0)", st;
  const DeviceInfo info = rt().device_info(index);
  if (info.uuid.empty()) return st.note = "the device reports no UUID", st;
  auto v = std::make_unique<VendorDevice>();
  try {
    v->cuda = std::make_unique<CudaDevice>(index, info);
  } catch (const std::exception& e) {
    return st.note = e.what(), st;
  }
  st.cuda = "libcuda";
  std::string why_lt, why_dnn;
  v->lt = create_cublaslt(*v->cuda, st.cublaslt, why_lt);
  v->cudnn = create_cudnn(*v->cuda, st.cudnn, why_dnn);
  if (!v->lt && !v->cudnn) {
    warn_once("libraries", info.name + ": " + why_lt + "; " + why_dnn +
                               ": products and attention run on PCP's Vulkan kernels (pip install 'pcp[cuda]' "
                               "adds NVIDIA's libraries)");
    return st.note = why_lt + "; " + why_dnn, st;
  }
  if (!rt().share(index, v->cuda->foreign()))
    return st.note = "the Vulkan device cannot export its memory (VK_KHR_external_memory_fd, timeline semaphores)", st;
  try {
    v->cuda->import_timeline();
  } catch (const std::exception& e) {
    warn_once("timeline", std::string(e.what()) + ": NVIDIA's libraries are not used");
    return st.note = e.what(), st;
  }
  st.matmul = v->lt != nullptr;
  st.attention = v->cudnn != nullptr;
  st.note = !v->lt ? why_lt : !v->cudnn ? why_dnn : "";
  out = v.release();
  return st;
}

std::atomic<bool> g_enabled{true};

}  // namespace

void set_enabled(bool enabled) { g_enabled = enabled; }
void fail_imports(int n) { CudaDevice::fail_imports(n); }

VendorDevice* vendor_device(int index) {
  if (index < 0 || index >= kMaxDevices || !g_enabled.load(std::memory_order_relaxed)) return nullptr;
  return g_devices[index].load(std::memory_order_acquire);
}

void prepare(int index) {
  if (index < 0 || index >= kMaxDevices) return;
  std::lock_guard<std::mutex> g(g_mu);
  if (g_prepared[index]) return;
  g_prepared[index] = true;
  VendorDevice* v = nullptr;
  g_status[index] = set_up(index, v);
  g_devices[index].store(v, std::memory_order_release);
}

Status status(int index) {
  if (index < 0 || index >= kMaxDevices) return {};
  prepare(index);
  std::lock_guard<std::mutex> g(g_mu);
  return g_status[index];
}

}  // namespace pcp::gpu::vendor
