// The Metal runtime (macOS): runs the embedded kernels, which SPIRV-Cross translated to Metal
// Shading Language at build time, on every Metal device (on Apple silicon: one). Written with
// Apple's metal-cpp. It is built and run on macOS only; this project's CI never compiles it.
//
// One in-order stream per device: an MTLCommandBuffer holding a serial compute encoder that stays
// open across dispatches (each dispatch sees the writes of the ones before it: the encoder runs
// them one after another and Metal tracks the hazards of the buffers, all created tracked), with
// short blit encoders in between for copies and uploads. The command buffer is committed, without
// waiting, after kMaxOpsPerCommandBuffer operations, and at synchronize() and download(), which
// wait for everything committed.
// Buffers use shared storage (Apple silicon has unified memory), so download() reads them through
// contents() once the stream has drained. upload() writes through contents() only when nothing is
// recorded or running; otherwise it records a blit from a fresh staging buffer, so it never
// overwrites memory that earlier-recorded kernels have yet to read.
#define NS_PRIVATE_IMPLEMENTATION   // metal-cpp's selectors and classes: defined in this file only
#define MTL_PRIVATE_IMPLEMENTATION
#include <Foundation/Foundation.hpp>
#include <Metal/Metal.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "pcp/backend/gpu/runtime.h"
#include "pcp/core/error.h"

namespace pcp::gpu {

struct Buffer {
  MTL::Buffer* buffer = nullptr;  // owned (+1)
  size_t size = 0;                // bytes requested by allocate()
};

namespace {

constexpr uint32_t kMaxOpsPerCommandBuffer = 512;
constexpr size_t kMaxInFlight = 2;  // committed, unfinished command buffers; commit() waits beyond that
constexpr uint32_t kMaxBindings = 12;  // storage buffers a kernel binds (attention's backward: 9)
constexpr const char* kEntryPoint = "main0";  // SPIRV-Cross renames GLSL's main (reserved in MSL)

// Frees, at scope exit, the autoreleased objects that metal-cpp calls return (command buffers,
// encoders, strings, errors): the calling thread, Python's for one, has no pool of its own.
class AutoreleasePool {
 public:
  AutoreleasePool() : pool_(NS::AutoreleasePool::alloc()->init()) {}
  ~AutoreleasePool() { pool_->release(); }
  AutoreleasePool(const AutoreleasePool&) = delete;
  AutoreleasePool& operator=(const AutoreleasePool&) = delete;

 private:
  NS::AutoreleasePool* pool_;
};

NS::String* ns_string(const char* s) { return NS::String::string(s, NS::UTF8StringEncoding); }  // autoreleased

std::string describe(const NS::Error* error) {
  const NS::String* s = error ? error->localizedDescription() : nullptr;
  const char* c = s ? s->utf8String() : nullptr;
  return c ? c : "no description";
}

void check_range(const Buffer* b, size_t offset, size_t nbytes, const char* what) {
  if (!b) fail<ValueError>("metal ", what, ": null buffer");
  if (offset > b->size || nbytes > b->size - offset)
    fail<ValueError>("metal ", what, ": bytes [", offset, ", ", offset + nbytes, ") lie outside a ", b->size,
                     "-byte buffer");
}

// On macOS a buffer-to-buffer blit needs offsets and size that are multiples of 4.
bool blit_aligned(size_t a, size_t b, size_t n) { return (a % 4 == 0) && (b % 4 == 0) && (n % 4 == 0); }

struct Pipeline {
  MTL::ComputePipelineState* state = nullptr;  // owned
  uint32_t bindings = 0;
  uint32_t local_size = 0;
};

struct Device {
  MTL::Device* dev = nullptr;          // owned
  MTL::CommandQueue* queue = nullptr;  // owned
  DeviceInfo info;
  MTL::CommandBuffer* cmd = nullptr;              // the open command buffer (retained), or null
  MTL::ComputeCommandEncoder* encoder = nullptr;  // the open compute encoder on cmd (retained), or null
  uint32_t recorded = 0;                          // operations recorded into cmd
  std::vector<MTL::Buffer*> garbage;              // released when cmd completes
  std::deque<MTL::CommandBuffer*> in_flight;      // committed (retained), oldest first
  std::unordered_map<std::string, Pipeline> pipelines;
  std::mutex mu;

  void begin() {
    if (cmd) return;
    // commandBuffer(), unlike commandBufferWithUnretainedReferences(), keeps every resource its
    // commands use alive until it completes.
    MTL::CommandBuffer* c = queue->commandBuffer();  // autoreleased
    if (!c) fail<RuntimeError>("metal: could not create a command buffer on ", info.name);
    cmd = c->retain();
    recorded = 0;
  }

  MTL::ComputeCommandEncoder* compute() {
    begin();
    if (!encoder) {
      MTL::ComputeCommandEncoder* e = cmd->computeCommandEncoder(MTL::DispatchTypeSerial);  // autoreleased
      if (!e) fail<RuntimeError>("metal: could not create a compute encoder on ", info.name);
      encoder = e->retain();
    }
    return encoder;
  }

  void end_compute() {
    if (!encoder) return;
    encoder->endEncoding();
    encoder->release();
    encoder = nullptr;
  }

  // Records a buffer-to-buffer copy after everything recorded so far.
  void blit(const MTL::Buffer* src, size_t src_offset, const MTL::Buffer* dst, size_t dst_offset, size_t nbytes) {
    begin();
    end_compute();
    MTL::BlitCommandEncoder* b = cmd->blitCommandEncoder();  // autoreleased
    if (!b) fail<RuntimeError>("metal: could not create a blit encoder on ", info.name);
    b->copyFromBuffer(src, src_offset, dst, dst_offset, nbytes);
    b->endEncoding();
    recorded_one();
  }

  void recorded_one() {
    if (++recorded >= kMaxOpsPerCommandBuffer) commit();
  }

  // Submits the open command buffer without waiting; its completion releases its garbage.
  void commit() {
    if (!cmd) return;
    end_compute();
    if (!garbage.empty()) {
      std::vector<MTL::Buffer*> done;
      done.swap(garbage);
      // Runs on a Metal thread once the GPU has finished cmd (also when it failed).
      std::function<void(MTL::CommandBuffer*)> handler = [done](MTL::CommandBuffer*) {
        for (MTL::Buffer* b : done) b->release();
      };
      cmd->addCompletedHandler(handler);
    }
    cmd->commit();
    in_flight.push_back(cmd);  // keeps the retain taken in begin()
    cmd = nullptr;
    recorded = 0;
    while (in_flight.size() > kMaxInFlight) wait_oldest();
  }

  void wait_oldest() {
    MTL::CommandBuffer* c = in_flight.front();
    in_flight.pop_front();
    c->waitUntilCompleted();
    const bool failed = c->status() == MTL::CommandBufferStatusError;
    const std::string why = failed ? describe(c->error()) : std::string();
    c->release();
    if (failed) fail<RuntimeError>("metal: GPU work on ", info.name, " failed: ", why);
  }

  // Retires the committed command buffers that have finished, without blocking.
  void reap() {
    while (!in_flight.empty()) {
      const MTL::CommandBufferStatus s = in_flight.front()->status();
      if (s != MTL::CommandBufferStatusCompleted && s != MTL::CommandBufferStatusError) break;
      wait_oldest();
    }
  }

  // Submits what was recorded and waits for all submitted work.
  void drain() {
    commit();
    while (!in_flight.empty()) wait_oldest();
  }

  // Nothing recorded and nothing running: the host may touch any buffer directly.
  bool idle() {
    reap();
    return !cmd && in_flight.empty();
  }

  const Pipeline& pipeline(const std::string& name, uint32_t nbuf) {
    if (const Pipeline* cached = cached_pipeline(pipelines, name, nbuf)) return *cached;
    const KernelSource* src = &kernel_named(name);
    if (!src->msl) fail<RuntimeError>("metal: kernel '", name, "' has no Metal translation (built without spirv-cross)");
    MTL::CompileOptions* options = MTL::CompileOptions::alloc()->init();
    options->setFastMathEnabled(false);  // keep IEEE semantics (NaN propagation, exact exp/pow), as on Vulkan
    NS::Error* error = nullptr;
    MTL::Library* library = dev->newLibrary(ns_string(src->msl), options, &error);
    options->release();
    if (!library) fail<RuntimeError>("metal: compiling kernel '", name, "' failed: ", describe(error));
    MTL::Function* function = library->newFunction(ns_string(kEntryPoint));
    if (!function) {
      library->release();
      fail<RuntimeError>("metal: kernel '", name, "' has no entry point ", kEntryPoint);
    }
    error = nullptr;  // newLibrary may have set it to compiler warnings
    MTL::ComputePipelineState* state = dev->newComputePipelineState(function, &error);
    function->release();
    library->release();
    if (!state) fail<RuntimeError>("metal: building the pipeline of kernel '", name, "' failed: ", describe(error));
    const NS::UInteger most = state->maxTotalThreadsPerThreadgroup();
    if (most < src->local_size) {
      state->release();
      fail<RuntimeError>("metal: kernel '", name, "' needs ", src->local_size, " threads per threadgroup; ",
                         info.name, " runs at most ", most);
    }
    Pipeline p;
    p.state = state;
    p.bindings = nbuf;
    p.local_size = src->local_size;
    return pipelines.emplace(name, p).first->second;
  }
};

class MetalRuntime : public Runtime {
 public:
  MetalRuntime() {
    AutoreleasePool pool;
    for (const KernelSource& k : all_kernels())
      if (!k.msl)
        throw std::runtime_error("PCP was built without spirv-cross, so its kernels have no Metal translation "
                                 "(brew install spirv-cross, then rebuild)");
    // The system's default GPU first, then any other (Intel Macs may have two; Apple silicon has one).
    // MTLCopyAllDevices also finds GPUs where MTLCreateSystemDefaultDevice returns nil in a
    // process without a window server connection.
    std::vector<MTL::Device*> found;  // owned
    if (MTL::Device* d = MTL::CreateSystemDefaultDevice()) found.push_back(d);
    if (NS::Array* all = MTL::CopyAllDevices()) {
      for (NS::UInteger i = 0; i < all->count(); ++i) {
        MTL::Device* d = all->object<MTL::Device>(i);
        if (!d) continue;
        const bool seen = std::any_of(found.begin(), found.end(),
                                      [&](MTL::Device* f) { return f->registryID() == d->registryID(); });
        if (!seen) found.push_back(d->retain());
      }
      all->release();
    }
    for (MTL::Device* m : found) {
      MTL::CommandQueue* queue = m->newCommandQueue();
      if (!queue) {
        m->release();
        continue;
      }
      auto d = std::make_unique<Device>();
      d->dev = m;
      d->queue = queue;
      const NS::String* name = m->name();
      d->info.name = name && name->utf8String() ? name->utf8String() : "Metal device";
      d->info.memory_bytes = m->recommendedMaxWorkingSetSize();
      d->info.wide_missing = "float64 (Metal has none)";
      devices_.push_back(std::move(d));
    }
    if (devices_.empty()) throw std::runtime_error("no Metal device found");
  }

  ~MetalRuntime() override {
    // runtime() keeps its runtime for the whole process, so this does not run there.
    for (auto& d : devices_) {
      AutoreleasePool pool;
      std::lock_guard<std::mutex> g(d->mu);
      try {
        d->drain();
      } catch (...) {
      }
      for (auto& entry : d->pipelines) entry.second.state->release();
      d->queue->release();
      d->dev->release();
    }
  }

  const char* api() const override { return "metal"; }
  int device_count() const override { return int(devices_.size()); }
  DeviceInfo device_info(int device) const override { return devices_.at(device)->info; }

  Buffer* allocate(int device, size_t nbytes) override {
    Device& d = *devices_.at(device);
    std::lock_guard<std::mutex> g(d.mu);
    AutoreleasePool pool;
    auto b = std::make_unique<Buffer>();
    b->size = nbytes;
    // Shared storage: the CPU and the GPU address the same memory on Apple silicon. Hazard tracking
    // (the default for buffers, spelled out) makes Metal order the encoders that use the buffer.
    b->buffer = d.dev->newBuffer(std::max<size_t>(nbytes, 4),
                                 MTL::ResourceStorageModeShared | MTL::ResourceHazardTrackingModeTracked);
    if (!b->buffer) fail<MemoryError>("metal: out of memory allocating ", nbytes, " bytes on ", d.info.name);
    return b.release();
  }

  void release(int device, Buffer* b) override {
    if (!b) return;
    Device& d = *devices_.at(device);
    std::lock_guard<std::mutex> g(d.mu);
    AutoreleasePool pool;
    // Work recorded into the open command buffer may still use b: free it when that command buffer
    // completes. Committed command buffers hold strong references to the buffers they use (see
    // begin()), so without an open one it can go at once: Metal frees it after them.
    if (d.cmd)
      d.garbage.push_back(b->buffer);
    else
      b->buffer->release();
    delete b;
  }

  void upload(int device, Buffer* dst, size_t off, const void* src, size_t n) override {
    if (n == 0) return;
    check_range(dst, off, n, "upload");
    Device& d = *devices_.at(device);
    std::lock_guard<std::mutex> g(d.mu);
    AutoreleasePool pool;
    const bool idle = d.idle();
    if (idle || !blit_aligned(0, off, n)) {
      if (!idle) d.drain();  // rare: a range no blit can write, so wait, then write in place
      std::memcpy(static_cast<char*>(dst->buffer->contents()) + off, src, n);
      return;
    }
    // Recorded work may still read dst: copy src now into a fresh staging buffer and blit it in
    // stream order. The staging buffer joins the garbage of the command buffer that holds the blit.
    MTL::Buffer* staging = d.dev->newBuffer(src, n, MTL::ResourceStorageModeShared);
    if (!staging) fail<MemoryError>("metal: out of memory staging an upload of ", n, " bytes on ", d.info.name);
    d.garbage.push_back(staging);
    d.blit(staging, 0, dst->buffer, off, n);
  }

  void download(int device, const Buffer* src, size_t off, void* dst, size_t n) override {
    if (n == 0) return;
    check_range(src, off, n, "download");
    Device& d = *devices_.at(device);
    std::lock_guard<std::mutex> g(d.mu);
    AutoreleasePool pool;
    d.drain();
    std::memcpy(dst, static_cast<const char*>(src->buffer->contents()) + off, n);
  }

  void copy(int device, const Buffer* src, size_t so, Buffer* dst, size_t doff, size_t n) override {
    if (n == 0) return;
    check_range(src, so, n, "copy");
    check_range(dst, doff, n, "copy");
    Device& d = *devices_.at(device);
    std::lock_guard<std::mutex> g(d.mu);
    AutoreleasePool pool;
    const bool overlap = src->buffer == dst->buffer && so < doff + n && doff < so + n;
    if (blit_aligned(so, doff, n) && !overlap) {
      d.blit(src->buffer, so, dst->buffer, doff, n);
      return;
    }
    d.drain();  // rare (odd offsets or an overlapping copy): wait, then copy on the host
    std::memmove(static_cast<char*>(dst->buffer->contents()) + doff,
                 static_cast<const char*>(src->buffer->contents()) + so, n);
  }

  bool specializes() const override { return false; }

  void dispatch(int device, const std::string& kernel, const std::vector<Buffer*>& buffers, const void* push,
                size_t push_bytes, uint32_t groups_x, const std::vector<uint32_t>& constants = {},
                const std::vector<Buffer*>& addressed = {}) override {
    if (groups_x == 0) return;
    if (!addressed.empty())
      fail<NotImplementedError>("gpu kernel ", kernel, ": buffer addresses need the Vulkan or CUDA runtime");
    if (!constants.empty())
      fail<NotImplementedError>("gpu kernel ", kernel, ": specialization constants need the Vulkan runtime");
    if (push_bytes > kMaxPushBytes) fail<ValueError>("gpu kernel ", kernel, ": ", push_bytes, " push-constant bytes");
    check_push_constants(kernel, push_bytes);
    if (buffers.empty() || buffers.size() > kMaxBindings)
      fail<ValueError>("gpu kernel ", kernel, ": ", buffers.size(), " buffers (1 to ", kMaxBindings, ")");
    for (const Buffer* b : buffers)
      if (!b) fail<ValueError>("gpu kernel ", kernel, ": null buffer");
    Device& d = *devices_.at(device);
    std::lock_guard<std::mutex> g(d.mu);
    AutoreleasePool pool;
    const Pipeline& p = d.pipeline(kernel, uint32_t(buffers.size()));
    MTL::ComputeCommandEncoder* enc = d.compute();
    enc->setComputePipelineState(p.state);
    // Push constants at [[buffer(0)]], zero-padded to the full block as on Vulkan (runtime.h);
    // setBytes copies them into the command buffer now.
    alignas(16) unsigned char pc[kMaxPushBytes] = {};
    if (push_bytes) std::memcpy(pc, push, push_bytes);
    enc->setBytes(pc, kMaxPushBytes, 0);
    for (size_t i = 0; i < buffers.size(); ++i) enc->setBuffer(buffers[i]->buffer, 0, i + 1);  // binding i+1
    enc->dispatchThreadgroups(MTL::Size(groups_x, 1, 1), MTL::Size(p.local_size, 1, 1));
    d.recorded_one();
  }

  void synchronize(int device) override {
    Device& d = *devices_.at(device);
    std::lock_guard<std::mutex> g(d.mu);
    AutoreleasePool pool;
    d.drain();
  }

 private:
  std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace

Runtime* create_runtime() { return new MetalRuntime(); }

}  // namespace pcp::gpu
