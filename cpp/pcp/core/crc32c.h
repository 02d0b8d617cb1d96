// CRC32C (Castagnoli), the checksum PCP writes per tensor into its safetensors files: it catches
// every burst of up to 32 flipped bits, and x86's SSE4.2 and ARMv8 compute it in hardware, so
// checksumming a checkpoint costs a small part of writing it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pcp {

// The CRC32C of n bytes at data, continuing from `crc` (the result for the bytes before; 0 to
// start), so crc32c(b, crc32c(a)) == crc32c(a + b).
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);

}  // namespace pcp
