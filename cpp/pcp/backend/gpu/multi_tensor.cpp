#include "pcp/backend/gpu/multi_tensor.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <mutex>

namespace pcp::gpu {
namespace {

// A table's words on the device. A training loop hands the same tensors every step, so recent
// tables are kept by content (addresses and lengths: the same words are the same table, whatever
// tensors they came from) and uploaded once. Not while a command list is recorded: its upload
// runs only with the list.
Tensor uploaded_table(Device dev, const std::vector<int32_t>& words) {
  if (rt().capturing(dev.index)) return upload_ints(words, dev);
  static std::mutex mu;
  static auto* recent = new std::vector<std::pair<std::vector<int32_t>, Tensor>>;  // never destroyed (exit order)
  std::lock_guard<std::mutex> g(mu);
  for (const auto& [w, t] : *recent)
    if (w == words && t.device() == dev) return t;
  if (recent->size() >= 8) recent->erase(recent->begin());
  recent->push_back({words, upload_ints(words, dev)});
  return recent->back().second;
}

}  // namespace

bool tabled(Device dev, const std::vector<Row>& rows) {
  const char* env = std::getenv("PCP_GPU_MULTI_TENSOR");
  if ((env && env[0] == '0') || !rt().device_info(dev.index).buffer_addresses) return false;
  int64_t chunks = 0;
  for (const Row& r : rows) {
    if (r[0]->numel() > int64_t(std::numeric_limits<uint32_t>::max()) - kChunk) return false;
    chunks += (r[0]->numel() + kChunk - 1) / kChunk;
  }
  return chunks <= int64_t(std::numeric_limits<uint32_t>::max());
}

Table table(Device dev, const std::vector<Row>& rows) {
  std::vector<uint32_t> units;
  for (const Row& r : rows) units.push_back(uint32_t((r[0]->numel() + kChunk - 1) / kChunk));
  return table(dev, rows, units, std::vector<uint32_t>(rows.size(), 0));
}

Table table(Device dev, const std::vector<Row>& rows, const std::vector<uint32_t>& units,
            const std::vector<uint32_t>& extra) {
  Table t;
  std::vector<int32_t> words;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const int64_t n = r[0]->numel();
    if (!n) continue;
    uint32_t e[12] = {};
    for (size_t k = 0; k < 4; ++k) {
      if (!r[k]) continue;
      Buffer* b = buffer_of(*r[k]);
      const uint64_t at = rt().address(b) + uint64_t(r[k]->offset()) * itemsize(r[k]->dtype());
      e[2 * k] = uint32_t(at), e[2 * k + 1] = uint32_t(at >> 32);
      if (std::find(t.buffers.begin(), t.buffers.end(), b) == t.buffers.end()) t.buffers.push_back(b);
    }
    e[8] = uint32_t(n), e[9] = t.chunks, e[10] = extra[i];
    words.insert(words.end(), reinterpret_cast<const int32_t*>(e), reinterpret_cast<const int32_t*>(e) + 12);
    t.chunks += units[i];
    ++t.count;
  }
  if (t.count) t.entries = uploaded_table(dev, words);
  return t;
}

}  // namespace pcp::gpu
