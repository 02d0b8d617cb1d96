// Counter-based random numbers (Philox4x32-10): element i of a draw depends only on
// (seed, offset + i), so the same seed gives the same numbers on any thread count or device.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>

namespace pcp {

struct Philox {
  // Four 32-bit random words for (key, counter).
  static void generate(uint64_t key, uint64_t counter_hi, uint64_t counter_lo, uint32_t out[4]);
};

// n counters drawn from a generator under its key (the seed): what a dropout mask is made from.
// Shared by the op that uses it, which reads key and start when it runs, so a plan that replays
// the op can draw again (Plan::run redraws every draw it recorded, in order, as the eager code
// would have).
struct RandomDraw {
  uint64_t n = 0, key = 0, start = 0;
};
using RandomDrawPtr = std::shared_ptr<RandomDraw>;

class Generator {
 public:
  static Generator& global();
  void seed(uint64_t s);
  uint64_t initial_seed() const { return seed_; }
  // Reserves `n` counters and returns the first; draws of size n use counters [start, start+n).
  // `what` names the op drawing (a trace refuses draws it cannot replay: core/trace_hooks.h).
  uint64_t reserve(uint64_t n, const char* what);
  // A draw of n counters under the current key, which a trace records as replayable.
  RandomDrawPtr draw(uint64_t n);
  // Draws d again: the current key and the next d.n counters.
  void redraw(RandomDraw& d);
  uint64_t offset() const { return offset_; }
  void set_state(uint64_t seed, uint64_t offset);

 private:
  uint64_t seed_ = 0;
  uint64_t offset_ = 0;
  std::mutex mu_;
};

// Uniform float in [0, 1) with 24 random bits, and a double with 53.
inline float uint_to_unit_float(uint32_t x) { return float(x >> 8) * (1.0f / 16777216.0f); }
inline double uints_to_unit_double(uint32_t a, uint32_t b) {
  return double(((uint64_t(a) << 21) ^ (b >> 11)) & ((uint64_t(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
}

}  // namespace pcp
