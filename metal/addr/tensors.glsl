// The tensors of a multi-tensor kernel (metal/addr/*.comp): a table of entries in binding 1, one
// per tensor, with the device addresses of its buffers (buffer device addresses: Vulkan 1.2's
// bufferDeviceAddress, CUDA's pointers) and its length. The kernel's work is the tensors cut into
// chunks of CHUNK elements, numbered in table order: entry t's first chunk is `start`.
// A workgroup takes one chunk at a time, so every value it reads from the table is uniform.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#define CHUNK 4096u
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
struct Entry {
  uvec2 a, b, c, d;  // up to four float32 buffers of the tensor (each kernel says which)
  uint n, start, pad0, pad1;
};
layout(std430, set = 0, binding = 1) readonly buffer Table { Entry entries[]; };

// The entry whose chunks include chunk c (table order; `count` entries).
uint entry_of(uint c, uint count) {
  uint lo = 0u, hi = count - 1u;
  while (lo < hi) {
    const uint mid = (lo + hi + 1u) / 2u;
    if (entries[mid].start <= c) lo = mid;
    else hi = mid - 1u;
  }
  return lo;
}
