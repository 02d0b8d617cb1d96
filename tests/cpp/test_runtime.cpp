// Runtime pieces: ISA dispatch, the thread pool, the counter-based random generator, and the
// embedded GPU kernels' push-constant layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "pcp/backend/cpu/kernel_table.h"
#include "pcp/backend/cpu/thread_pool.h"
#include "pcp/backend/gpu/runtime.h"
#include "pcp/core/random.h"
#include "pcp/ops/ops.h"
#include "test_util.h"

using namespace pcp;
using namespace pcp_test;

// ---------------------------------------------------------------- ISA dispatch

TEST(Isa, ListSwitchAndRestore) {
  auto isas = isa_list();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.back(), "baseline") << "baseline is always available and listed last";
  IsaRestore restore;
  for (const std::string& isa : isas) {
    cpu::set_isa(isa.c_str());
    EXPECT_STREQ(cpu::kernels().isa, isa.c_str());
    const cpu::KernelTable& k = cpu::kernels();
    EXPECT_GT(k.gemm_mr, 0);
    EXPECT_GT(k.gemm_nr, 0);
    EXPECT_NE(k.unary, nullptr);
    EXPECT_NE(k.gemm_micro, nullptr);
  }
  PCP_EXPECT_THROW_MSG(cpu::set_isa("sse9000"), ValueError, "set_isa", "sse9000");
  for (const char* name : {"baseline", "avx2", "avx512", "neon"}) {
    bool listed = std::find(isas.begin(), isas.end(), name) != isas.end();
    if (!listed) EXPECT_THROW(cpu::set_isa(name), ValueError) << name;
  }
}

TEST(Isa, BestIsRestoredAfterSweeps) {
  // Every for_each_isa sweep in this suite ends on the best ISA again.
  for_each_isa([] {});
  EXPECT_STREQ(cpu::kernels().isa, isa_list().front().c_str());
}

// ---------------------------------------------------------------- thread pool

namespace {

struct NumThreads {
  explicit NumThreads(int n) { set_num_threads(n); }
  ~NumThreads() { set_num_threads(0); }
};

}  // namespace

TEST(ThreadPool, ParallelForCoversRangeExactlyOnce) {
  for (int threads : {1, 2, 4}) {
    NumThreads nt(threads);
    EXPECT_EQ(get_num_threads(), threads);
    for (int64_t n : {int64_t(1), int64_t(2), int64_t(7), int64_t(1000), int64_t(100003)}) {
      for (int64_t grain : {int64_t(0), int64_t(1), int64_t(16), int64_t(1000), int64_t(1) << 20}) {
        SCOPED_TRACE("threads=" + std::to_string(threads) + " n=" + std::to_string(n) +
                     " grain=" + std::to_string(grain));
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        for (auto& h : hits) h.store(0);
        std::atomic<int> calls{0}, bad_ranges{0};
        std::mutex mu;
        std::vector<std::thread::id> ids;
        parallel_for(n, grain, [&](int64_t b, int64_t e) {
          calls++;
          if (!(0 <= b && b < e && e <= n)) {
            bad_ranges++;
            return;
          }
          for (int64_t i = b; i < e; ++i) hits[size_t(i)]++;
          std::lock_guard<std::mutex> lock(mu);
          ids.push_back(std::this_thread::get_id());
        });
        EXPECT_EQ(bad_ranges.load(), 0);
        int64_t wrong = 0;
        for (auto& h : hits) wrong += h.load() != 1;
        EXPECT_EQ(wrong, 0) << "every index runs exactly once";
        EXPECT_GE(calls.load(), 1);
        EXPECT_LE(calls.load(), threads);
      }
    }
  }
  // n <= 0 never calls fn.
  int called = 0;
  parallel_for(0, 1, [&](int64_t, int64_t) { ++called; });
  parallel_for(-5, 1, [&](int64_t, int64_t) { ++called; });
  EXPECT_EQ(called, 0);
}

// Many short regions back to back with more workers than cores, so that workers are preempted
// between reading a region's job and claiming its chunks: a late claim must not take a chunk of
// the next region (run twice, counted twice: the caller then waits forever or returns early).
TEST(ThreadPool, BackToBackRegionsWithPreemptedWorkers) {
  NumThreads nt(16);
  std::vector<std::atomic<int>> hits(16);
  int64_t wrong = 0;
  for (int region = 0; region < 20000; ++region) {
    const int64_t n = region % 3 == 0 ? 3 : 16;  // the chunk count changes between regions
    for (int64_t i = 0; i < n; ++i) hits[size_t(i)].store(0);
    parallel_for(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[size_t(i)]++;
    });
    for (int64_t i = 0; i < n; ++i) wrong += hits[size_t(i)].load() != 1;
  }
  EXPECT_EQ(wrong, 0) << "every index of every region runs exactly once";
}

TEST(ThreadPool, UsesSeveralThreadsAndNestedLoopsRunInline) {
  NumThreads nt(4);
  std::mutex mu;
  std::vector<std::thread::id> ids;
  std::atomic<int> arrived{0};
  parallel_for(4, 1, [&](int64_t b, int64_t e) {
    EXPECT_EQ(e - b, 1);
    // Wait (bounded) until all four chunks have started: they run concurrently.
    arrived++;
    for (int spin = 0; spin < 2000 && arrived.load() < 4; ++spin) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard<std::mutex> lock(mu);
    ids.push_back(std::this_thread::get_id());
  });
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()) - ids.begin(), 4) << "four chunks on four threads";

  // Nested: the inner loop runs inline on the calling worker and still covers its range.
  const int64_t outer = 8, inner = 1000;
  std::vector<std::atomic<int>> hits(static_cast<size_t>(outer * inner));
  for (auto& h : hits) h.store(0);
  parallel_for(outer, 1, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      std::thread::id me = std::this_thread::get_id();
      parallel_for(inner, 1, [&](int64_t ib, int64_t ie) {
        EXPECT_EQ(std::this_thread::get_id(), me) << "nested parallel_for must run inline";
        for (int64_t i = ib; i < ie; ++i) hits[size_t(o * inner + i)]++;
      });
    }
  });
  int64_t wrong = 0;
  for (auto& h : hits) wrong += h.load() != 1;
  EXPECT_EQ(wrong, 0);
}

TEST(ThreadPool, ExceptionsPropagateAndPoolStaysUsable) {
  for (int threads : {1, 4}) {
    NumThreads nt(threads);
    SCOPED_TRACE("threads=" + std::to_string(threads));
    // Thrown in one chunk (not necessarily the caller's), rethrown to the caller with its type.
    try {
      parallel_for(1000, 1, [&](int64_t b, int64_t e) {
        if (b <= 777 && 777 < e) throw IndexError("chunk with 777 failed");
      });
      ADD_FAILURE() << "no exception";
    } catch (const IndexError& err) {
      EXPECT_STREQ(err.what(), "chunk with 777 failed");
    } catch (...) {
      ADD_FAILURE() << "wrong exception type";
    }
    // Every chunk throws: exactly one exception comes out.
    EXPECT_THROW(parallel_for(1000, 1, [](int64_t, int64_t) { throw std::runtime_error("all"); }),
                 std::runtime_error);
    // Still works afterwards.
    std::atomic<int64_t> total{0};
    parallel_for(10000, 1, [&](int64_t b, int64_t e) {
      int64_t s = 0;
      for (int64_t i = b; i < e; ++i) s += i;
      total += s;
    });
    EXPECT_EQ(total.load(), int64_t(10000) * 9999 / 2);
    // And ops that use it give right answers.
    Tensor x = make({50000}, std::vector<double>(50000, 1.0), DType::Float32);
    EXPECT_EQ(sum(mul(x, weak_scalar(2.0))).item_double(), 100000.0);
  }
}

TEST(ThreadPool, ChunksHaveAtLeastGrainElements) {
  // thread_pool.h: "Runs fn(begin, end) over [0, n) in chunks of at least `grain` elements."
  // Allow one remainder chunk to be smaller; no other chunk may be.
  NumThreads nt(4);
  for (auto [n, grain] : {std::pair<int64_t, int64_t>{10, 4}, {100, 30}, {1000, 300}, {9, 2}}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " grain=" + std::to_string(grain));
    std::mutex mu;
    std::vector<int64_t> sizes;
    parallel_for(n, grain, [&](int64_t b, int64_t e) {
      std::lock_guard<std::mutex> lock(mu);
      sizes.push_back(e - b);
    });
    int64_t small = 0, total = 0;
    for (int64_t s : sizes) {
      small += s < grain;
      total += s;
    }
    EXPECT_EQ(total, n);
    EXPECT_LE(small, 1) << "chunk sizes: " << ::testing::PrintToString(sizes);
  }
}

// ---------------------------------------------------------------- random numbers

TEST(Random, PhiloxKnownAnswers) {
  // Random123's known-answer vectors for Philox4x32-10 (counter words c0..c3, key words k0, k1).
  struct Kat {
    uint32_t ctr[4], key[2], out[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    uint64_t key = uint64_t(k.key[0]) | uint64_t(k.key[1]) << 32;
    uint64_t lo = uint64_t(k.ctr[0]) | uint64_t(k.ctr[1]) << 32;
    uint64_t hi = uint64_t(k.ctr[2]) | uint64_t(k.ctr[3]) << 32;
    uint32_t out[4];
    Philox::generate(key, hi, lo, out);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], k.out[i]) << std::hex << "word " << i << " of ctr " << k.ctr[0];
  }
}

TEST(Random, UnitConversions) {
  EXPECT_EQ(uint_to_unit_float(0), 0.0f);
  EXPECT_LT(uint_to_unit_float(0xffffffffu), 1.0f);
  EXPECT_EQ(uint_to_unit_float(0x80000000u), 0.5f);
  EXPECT_EQ(uints_to_unit_double(0, 0), 0.0);
  EXPECT_LT(uints_to_unit_double(0xffffffffu, 0xffffffffu), 1.0);
  EXPECT_EQ(uints_to_unit_double(0x80000000u, 0), 0.5);
}

namespace {

struct SeedRestore {
  uint64_t seed, offset;
  SeedRestore() : seed(Generator::global().initial_seed()), offset(Generator::global().offset()) {}
  ~SeedRestore() { Generator::global().set_state(seed, offset); }
};

}  // namespace

TEST(Random, SameSeedSameValuesDifferentSeedsDiffer) {
  SeedRestore restore;
  Generator& g = Generator::global();
  for (DType dt : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(dt));
    g.seed(1234);
    std::vector<double> a = values(rand({1000}, dt));
    std::vector<double> a2 = values(rand({1000}, dt));  // the stream moves on
    g.seed(1234);
    std::vector<double> b = values(rand({1000}, dt));
    std::vector<double> b2 = values(rand({1000}, dt));
    g.seed(1235);
    std::vector<double> c = values(rand({1000}, dt));
    EXPECT_EQ(a, b);
    EXPECT_EQ(a2, b2);
    EXPECT_NE(a, a2);
    int same = 0;
    for (size_t i = 0; i < a.size(); ++i) same += a[i] == c[i];
    EXPECT_LT(same, 5) << "different seeds give different streams";
    // Range and moments of a uniform [0, 1) draw.
    double m = 0, v = 0;
    for (double x : a) {
      ASSERT_GE(x, 0.0);
      ASSERT_LT(x, 1.0);
      m += x;
    }
    m /= double(a.size());
    for (double x : a) v += (x - m) * (x - m);
    v /= double(a.size());
    EXPECT_NEAR(m, 0.5, 0.05);
    EXPECT_NEAR(v, 1.0 / 12, 0.01);
  }
  // set_state replays a stream from an offset.
  g.seed(99);
  (void)rand({10});
  uint64_t off = g.offset();
  std::vector<double> x1 = values(rand({37}));
  g.set_state(99, off);
  EXPECT_EQ(values(rand({37})), x1);
}

TEST(Random, Float32DrawMatchesPhiloxWords) {
  // rand() is counter-based: element i of a float32 draw that starts at counter `start` is
  // word i % 4 of Philox(seed, start + i / 4), scaled by 2^-24 from its top 24 bits.
  SeedRestore restore;
  Generator& g = Generator::global();
  g.seed(777);
  (void)rand({5});  // move the offset off zero
  uint64_t start = g.offset();
  std::vector<double> got = values(rand({103}));
  for (int64_t i = 0; i < 103; ++i) {
    uint32_t w[4];
    Philox::generate(777, 0, start + uint64_t(i) / 4, w);
    ASSERT_EQ(got[size_t(i)], double(float(w[i % 4] >> 8) / 16777216.0f)) << i;
  }
}

TEST(Random, SameValuesOnAnyThreadCount) {
  SeedRestore restore;
  Generator& g = Generator::global();
  std::vector<double> one, four;
  {
    NumThreads nt(1);
    g.seed(5);
    one = values(rand({200000}));
    auto n1 = values(randn({70000}, DType::Float64));
    one.insert(one.end(), n1.begin(), n1.end());
  }
  {
    NumThreads nt(4);
    g.seed(5);
    four = values(rand({200000}));
    auto n4 = values(randn({70000}, DType::Float64));
    four.insert(four.end(), n4.begin(), n4.end());
  }
  EXPECT_EQ(one, four);
}

TEST(Random, RandnAndRandintDistributions) {
  SeedRestore restore;
  Generator& g = Generator::global();
  g.seed(42);
  std::vector<double> n = values(randn({20000}, DType::Float64));
  double m = 0, v = 0;
  for (double x : n) m += x;
  m /= double(n.size());
  for (double x : n) v += (x - m) * (x - m);
  v /= double(n.size());
  EXPECT_NEAR(m, 0.0, 0.05);
  EXPECT_NEAR(v, 1.0, 0.05);
  g.seed(42);
  EXPECT_EQ(values(randn({20000}, DType::Float64)), n);

  Tensor r = randint(-3, 4, {5000});
  EXPECT_EQ(r.dtype(), DType::Int64);
  std::vector<int> counts(7, 0);
  for (double x : values(r)) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 4);
    counts[size_t(x + 3)]++;
  }
  for (int c : counts) EXPECT_GT(c, 5000 / 7 / 2) << "every value in [low, high) appears";
}

TEST(Random, SixteenBitUniformStaysBelowOne) {
  // ops.h: rand() is "uniform [0, 1)" for every floating dtype.
  SeedRestore restore;
  Generator::global().seed(2024);
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    std::vector<double> v = values(rand({100000}, dt));
    int64_t at_or_above_one = 0;
    for (double x : v) {
      ASSERT_GE(x, 0.0);
      at_or_above_one += x >= 1.0;
    }
    EXPECT_EQ(at_or_above_one, 0) << "values equal to 1.0 in a [0, 1) draw of " << dtype_name(dt);
  }
}

TEST(Random, DropoutKeepsOrZeroesAndRescales) {
  SeedRestore restore;
  Generator::global().seed(31337);
  const int64_t n = 20000;
  std::vector<double> xv(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) xv[size_t(i)] = 1.0 + double(i % 17);
  Tensor x = make({n}, xv);
  std::vector<double> y = values(dropout(x, 0.25));
  int64_t dropped = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (y[size_t(i)] == 0) {
      ++dropped;
      continue;
    }
    ASSERT_FLOAT_EQ(float(y[size_t(i)]), float(xv[size_t(i)] / 0.75)) << i;
  }
  EXPECT_NEAR(double(dropped) / double(n), 0.25, 0.02);
  EXPECT_TRUE(dropout(x, 0.25, /*training=*/false).is_same(x));
  EXPECT_EQ(values(dropout(x, 1.0)), std::vector<double>(size_t(n), 0.0));
}

// The push-constant sizes read from SPIR-V, against blocks written out here by hand: softmax.comp
// declares { uint rows, n, x_off, y_off, log_, causal, T; } and layer_norm.comp eight uints, a
// float and five uints. A host struct of another size is refused, naming the kernel.
TEST(GpuKernels, PushConstantSizesComeFromTheSpirv) {
  const gpu::KernelSource* softmax = gpu::find_kernel("softmax");
  const gpu::KernelSource* layer_norm = gpu::find_kernel("layer_norm");
  if (!softmax || !layer_norm) GTEST_SKIP() << "built without the GPU kernels";
  EXPECT_EQ(gpu::push_constant_bytes(*softmax), 7u * 4);
  EXPECT_EQ(gpu::push_constant_bytes(*layer_norm), 14u * 4);
  EXPECT_NO_THROW(gpu::check_push_constants("softmax", 28));
  PCP_EXPECT_THROW_MSG(gpu::check_push_constants("softmax", 24), ValueError, "softmax");
  for (const gpu::KernelSource& k : gpu::all_kernels()) {
    const uint32_t bytes = gpu::push_constant_bytes(k);
    EXPECT_GT(bytes, 0u) << k.name;
    EXPECT_LE(bytes, uint32_t(gpu::kMaxPushBytes)) << k.name;
    EXPECT_EQ(bytes % 4, 0u) << k.name;
  }
}
