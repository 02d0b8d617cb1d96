#include "pcp/core/random.h"

#include "pcp/core/trace_hooks.h"

namespace pcp {

void Philox::generate(uint64_t key, uint64_t counter_hi, uint64_t counter_lo, uint32_t out[4]) {
  uint32_t c0 = uint32_t(counter_lo), c1 = uint32_t(counter_lo >> 32);
  uint32_t c2 = uint32_t(counter_hi), c3 = uint32_t(counter_hi >> 32);
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  const uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = uint64_t(M0) * c0, p1 = uint64_t(M1) * c2;
    uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0;
    uint32_t n1 = uint32_t(p1);
    uint32_t n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
    uint32_t n3 = uint32_t(p0);
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += W0; k1 += W1;
  }
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

Generator& Generator::global() {
  static Generator g;
  return g;
}

void Generator::seed(uint64_t s) {
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = s;
  offset_ = 0;
}

void Generator::set_state(uint64_t seed, uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = offset;
}

uint64_t Generator::reserve(uint64_t n, const char* what) {
  report_random_draw(what);
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t start = offset_;
  offset_ += n;
  return start;
}

void Generator::redraw(RandomDraw& d) {
  std::lock_guard<std::mutex> lock(mu_);
  d.key = seed_;
  d.start = offset_;
  offset_ += d.n;
}

RandomDrawPtr Generator::draw(uint64_t n) {
  auto d = std::make_shared<RandomDraw>();
  d->n = n;
  redraw(*d);
  report_replayable_draw(d);
  return d;
}

}  // namespace pcp
