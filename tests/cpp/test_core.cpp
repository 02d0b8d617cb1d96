// Core data structures: storage refcounting and views, the caching allocator, shapes and
// strides, dtype promotion, and the 16-bit float conversions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "pcp/autograd/engine.h"
#include "pcp/core/allocator.h"
#include "pcp/core/dtype.h"
#include "pcp/core/half.h"
#include "pcp/core/shape.h"
#include "pcp/core/storage.h"
#include "pcp/core/tensor.h"
#include "pcp/ops/ops.h"
#include "test_util.h"

using namespace pcp;
using namespace pcp_test;

namespace {

std::vector<double> iota(int64_t n, double start = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = start + double(i);
  return v;
}

int64_t active_bytes() { return CpuAllocator::instance().stats().active_bytes; }

}  // namespace

// ---------------------------------------------------------------- refcounting and views

TEST(Refcount, ViewsShareStorageAndCountReferences) {
  const std::vector<double> v = iota(24);
  Tensor base = make({2, 3, 4}, v);
  Storage* s = base.storage().get();
  EXPECT_EQ(base.storage().use_count(), 1);

  Tensor r = reshape(base, {6, 4});
  EXPECT_EQ(r.storage().get(), s);
  EXPECT_EQ(base.storage().use_count(), 2);

  Tensor p = permute(base, {2, 0, 1});
  EXPECT_EQ(p.storage().get(), s);
  EXPECT_EQ(base.storage().use_count(), 3);

  Tensor sl = slice(base, 1, 1, 3);
  EXPECT_EQ(sl.storage().get(), s);
  EXPECT_EQ(base.storage().use_count(), 4);

  Tensor b = broadcast_to(base, {5, 2, 3, 4});
  EXPECT_EQ(b.storage().get(), s);
  EXPECT_EQ(base.storage().use_count(), 5);

  Tensor neg_step = slice(base, 2, 3, 0, -2);  // elements 3, 1 of the last axis
  EXPECT_EQ(neg_step.storage().get(), s);
  EXPECT_EQ(base.storage().use_count(), 6);

  // Values, from the base's row-major data by logical index.
  auto at = [&](int64_t i, int64_t j, int64_t k) { return v[size_t(i * 12 + j * 4 + k)]; };
  EXPECT_EQ(values(r), v);
  std::vector<double> want_p, want_sl, want_b, want_ns;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want_p.push_back(at(i, j, k));
  for (int i = 0; i < 2; ++i)
    for (int j = 1; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want_sl.push_back(at(i, j, k));
  for (int n = 0; n < 5; ++n) want_b.insert(want_b.end(), v.begin(), v.end());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k : {3, 1}) want_ns.push_back(at(i, j, k));
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(values(p), want_p);
  EXPECT_EQ(sl.shape(), (Shape{2, 2, 4}));
  EXPECT_EQ(values(sl), want_sl);
  EXPECT_EQ(b.shape(), (Shape{5, 2, 3, 4}));
  EXPECT_EQ(values(b), want_b);
  EXPECT_EQ(neg_step.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values(neg_step), want_ns);

  // Writes through the base are seen by every view (shared memory, not copies).
  base.data<float>()[1 * 12 + 2 * 4 + 3] = -7.0f;  // base[1, 2, 3]
  EXPECT_EQ(values(p)[3 * 6 + 1 * 3 + 2], -7.0);   // p[3, 1, 2]
  EXPECT_EQ(values(sl)[1 * 8 + 1 * 4 + 3], -7.0);  // sl[1, 1, 3]
  EXPECT_EQ(values(neg_step)[1 * 6 + 2 * 2 + 0], -7.0);  // neg_step[1, 2, 0] = base[1, 2, 3]

  r = Tensor();
  p = Tensor();
  EXPECT_EQ(base.storage().use_count(), 4);
}

TEST(Refcount, CopiesOfAHandleShareTheImpl) {
  Tensor a = make({3}, {1, 2, 3});
  Tensor b = a;
  EXPECT_TRUE(a.is_same(b));
  EXPECT_EQ(a.impl_ptr().use_count(), 2);
  EXPECT_EQ(a.storage().use_count(), 1);  // one impl holds the storage
  Tensor d = a.detach();
  EXPECT_FALSE(d.is_same(a));
  EXPECT_EQ(d.storage().get(), a.storage().get());
  EXPECT_EQ(a.storage().use_count(), 2);
}

TEST(Refcount, ViewKeepsStorageAliveAfterBaseIsDropped) {
  std::weak_ptr<Storage> weak;
  Tensor view;
  const std::vector<double> v = iota(20, 100);
  {
    Tensor base = make({4, 5}, v);
    weak = base.storage();
    view = slice(transpose(base), 0, 1, 5, 2);  // base[:, 1::2].T -> rows 1 and 3 of base.T
  }
  ASSERT_FALSE(weak.expired());
  EXPECT_EQ(view.storage().use_count(), 1);
  std::vector<double> want;
  for (int c : {1, 3})
    for (int r = 0; r < 4; ++r) want.push_back(v[size_t(r * 5 + c)]);
  EXPECT_EQ(view.shape(), (Shape{2, 4}));
  EXPECT_EQ(values(view), want);
  // Ops on the orphaned view read the right memory.
  Tensor s = sum(view, std::vector<int64_t>{1});
  EXPECT_EQ(values(s), (std::vector<double>{v[1] + v[6] + v[11] + v[16], v[3] + v[8] + v[13] + v[18]}));
  view = Tensor();
  EXPECT_TRUE(weak.expired());
}

TEST(Refcount, LastReleaseReturnsMemoryToTheAllocator) {
  const int64_t baseline = active_bytes();
  {
    Tensor a = make({64, 33}, iota(64 * 33));
    const int64_t after_one = active_bytes();
    EXPECT_EQ(after_one - baseline, int64_t(CpuAllocator::round_size(64 * 33 * 4)));
    Tensor v1 = transpose(a), v2 = reshape(a, {33, 64}), v3 = slice(a, 0, 3, 40, 3);
    Tensor v4 = broadcast_to(reshape(a, {1, 64, 33}), {3, 64, 33});
    EXPECT_EQ(active_bytes(), after_one) << "views must not allocate";
    Tensor c = add(v1, v1);          // allocates
    Tensor m = matmul(v1, a);        // allocates
    Tensor red = sum(v4, std::vector<int64_t>{0, 2});
    EXPECT_GT(active_bytes(), after_one);
    a = Tensor();
    v1 = Tensor();
    EXPECT_GT(active_bytes(), after_one);  // v2..v4 still hold a's storage
    // A small autograd graph too: nodes must not form cycles that keep storage alive.
    Tensor x = make({5, 4}, iota(20), DType::Float64);
    x.set_requires_grad(true);
    Tensor y = sum(tanh(matmul(x, transpose(x))));
    backward(y);
    ASSERT_TRUE(x.grad().defined());
  }
  EXPECT_EQ(active_bytes(), baseline);
}

TEST(Refcount, ExternalStorageReleaseRunsExactlyOnce) {
  std::vector<float> buf = {1, 2, 3, 4, 5, 6};
  int releases = 0;
  const int64_t baseline = active_bytes();
  {
    auto st = std::make_shared<Storage>(buf.data(), buf.size() * sizeof(float), cpu_device(),
                                        [&releases] { ++releases; });
    EXPECT_FALSE(st->owned());
    EXPECT_EQ(st->data(), buf.data());
    EXPECT_EQ(active_bytes(), baseline) << "borrowed memory is not from the allocator";
    Tensor t = Tensor::view_of(st, {2, 3}, {3, 1}, 0, DType::Float32);
    st.reset();
    EXPECT_EQ(t.storage().use_count(), 1);
    Tensor tt = transpose(t);
    Tensor tail = slice(t, 1, 1, 3);
    t = Tensor();
    EXPECT_EQ(releases, 0);
    EXPECT_EQ(values(tt), (std::vector<double>{1, 4, 2, 5, 3, 6}));
    Tensor y = mul(tt, weak_scalar(2.0));
    EXPECT_NE(y.storage().get(), tt.storage().get());
    EXPECT_TRUE(y.storage()->owned());
    EXPECT_EQ(values(y), (std::vector<double>{2, 8, 4, 10, 6, 12}));
    tt = Tensor();
    EXPECT_EQ(releases, 0);
    EXPECT_EQ(values(tail), (std::vector<double>{2, 3, 5, 6}));
    // Used in an autograd graph: the node's saved inputs hold the storage, still once.
    tail.set_requires_grad(true);
    Tensor loss = sum(square(tail));
    tail = Tensor();
    EXPECT_EQ(releases, 0);
    backward(loss);
    loss = Tensor();
    EXPECT_EQ(releases, 1);
  }
  EXPECT_EQ(releases, 1);
  EXPECT_EQ(active_bytes(), baseline);
}

// ---------------------------------------------------------------- allocator

TEST(Allocator, PointersAre64ByteAligned) {
  auto& a = CpuAllocator::instance();
  std::vector<std::pair<void*, size_t>> blocks;
  for (size_t n : {size_t(0), size_t(1), size_t(3), size_t(63), size_t(64), size_t(65), size_t(1000), size_t(4095),
                   size_t(4097), size_t(12345), size_t(1) << 20, (size_t(1) << 20) + 7, (size_t(5) << 20) + 3}) {
    void* p = a.allocate(n);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << "size " << n;
    // From 64 KiB on, blocks start on a page (streaming kernels avoid 4K aliasing with inputs).
    if (n >= (size_t(64) << 10)) EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u) << "size " << n;
    std::memset(p, 0xab, n);  // the block really has n usable bytes (ASan checks)
    blocks.push_back({p, n});
  }
  for (auto& [p, n] : blocks) a.deallocate(p, n);
  // Tensors' data pointers too.
  for (int64_t n : {1, 5, 17, 1000}) {
    Tensor t = Tensor::empty({n}, DType::Float64);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  }
}

TEST(Allocator, RoundSizeClasses) {
  // Up to 4 KiB: multiples of 64 (0 bytes still takes one 64-byte unit).
  EXPECT_EQ(CpuAllocator::round_size(0), 64u);
  EXPECT_EQ(CpuAllocator::round_size(1), 64u);
  EXPECT_EQ(CpuAllocator::round_size(64), 64u);
  EXPECT_EQ(CpuAllocator::round_size(65), 128u);
  EXPECT_EQ(CpuAllocator::round_size(4000), 4032u);
  EXPECT_EQ(CpuAllocator::round_size(4096), 4096u);
  // Above: four classes per power of two, p/2 + k*p/8.
  EXPECT_EQ(CpuAllocator::round_size(4097), 5120u);
  EXPECT_EQ(CpuAllocator::round_size(5120), 5120u);
  EXPECT_EQ(CpuAllocator::round_size(5121), 6144u);
  EXPECT_EQ(CpuAllocator::round_size(8192), 8192u);
  EXPECT_EQ(CpuAllocator::round_size(8193), 10240u);
  EXPECT_EQ(CpuAllocator::round_size(1234567), 1310720u);
  EXPECT_EQ(CpuAllocator::round_size(size_t(1) << 20), size_t(1) << 20);
  EXPECT_EQ(CpuAllocator::round_size((size_t(1) << 20) + 1), (size_t(1) << 20) + (size_t(1) << 18));
  // Properties over a sweep: covers n, aligned, monotone, and at most 25% waste above 4 KiB.
  size_t prev = 0;
  for (size_t n = 0; n < (size_t(1) << 22); n = n < 9000 ? n + 1 : n + n / 7 + 3) {
    size_t r = CpuAllocator::round_size(n);
    ASSERT_GE(r, n);
    ASSERT_EQ(r % 64, 0u) << n;
    ASSERT_GE(r, prev) << n;
    if (n > 4096) ASSERT_LE(double(r), 1.25 * double(n)) << n;
    else ASSERT_LT(r - n, 64u + (n == 0 ? 64u : 0u)) << n;
    prev = r;
  }
}

TEST(Allocator, CacheReuseAndClear) {
  auto& a = CpuAllocator::instance();
  const size_t n = 1234567, cls = CpuAllocator::round_size(n);
  a.clear_cache();
  MemoryStats s0 = a.stats();
  EXPECT_EQ(s0.cached_bytes, 0);
  void* p = a.allocate(n);
  MemoryStats s1 = a.stats();
  EXPECT_EQ(s1.num_allocs, s0.num_allocs + 1);
  EXPECT_EQ(s1.num_cache_hits, s0.num_cache_hits) << "cache was empty";
  EXPECT_EQ(s1.active_bytes, s0.active_bytes + int64_t(cls));
  a.deallocate(p, n);
  MemoryStats s2 = a.stats();
  EXPECT_EQ(s2.active_bytes, s0.active_bytes);
  EXPECT_EQ(s2.cached_bytes, int64_t(cls));
  // Same size, and a different size in the same class: both served from the cache.
  void* q = a.allocate(n);
  MemoryStats s3 = a.stats();
  EXPECT_EQ(q, p) << "the cached block is reused";
  EXPECT_EQ(s3.num_cache_hits, s2.num_cache_hits + 1);
  EXPECT_EQ(s3.cached_bytes, 0);
  a.deallocate(q, n);
  void* q2 = a.allocate(cls - 100);  // same size class
  EXPECT_EQ(q2, p);
  EXPECT_EQ(a.stats().num_cache_hits, s3.num_cache_hits + 1);
  a.deallocate(q2, cls - 100);
  // A tensor of that many bytes also hits the cache.
  {
    int64_t hits = a.stats().num_cache_hits;
    Tensor t = Tensor::empty({int64_t(n / 8)}, DType::Float64);  // 1234560 bytes, same class
    EXPECT_EQ(a.stats().num_cache_hits, hits + 1);
    EXPECT_EQ(t.raw_data(), p);
  }
  EXPECT_EQ(a.stats().cached_bytes, int64_t(cls));
  a.clear_cache();
  EXPECT_EQ(a.stats().cached_bytes, 0);
  EXPECT_EQ(a.stats().active_bytes, s0.active_bytes);
  // After clearing, the next allocation of that class misses.
  int64_t hits = a.stats().num_cache_hits;
  void* r = a.allocate(n);
  EXPECT_EQ(a.stats().num_cache_hits, hits);
  a.deallocate(r, n);
}

TEST(Allocator, PeakTracking) {
  auto& a = CpuAllocator::instance();
  a.reset_peak();
  MemoryStats s0 = a.stats();
  EXPECT_EQ(s0.peak_bytes, s0.active_bytes);
  const size_t big = 3 << 20, small = 1000;
  void* p = a.allocate(big);
  void* q = a.allocate(small);
  const int64_t both = int64_t(CpuAllocator::round_size(big) + CpuAllocator::round_size(small));
  EXPECT_EQ(a.stats().peak_bytes, s0.active_bytes + both);
  a.deallocate(p, big);
  MemoryStats s1 = a.stats();
  EXPECT_EQ(s1.active_bytes, s0.active_bytes + int64_t(CpuAllocator::round_size(small)));
  EXPECT_EQ(s1.peak_bytes, s0.active_bytes + both) << "peak is a high-water mark";
  a.reset_peak();
  EXPECT_EQ(a.stats().peak_bytes, s1.active_bytes);
  a.deallocate(q, small);
  EXPECT_EQ(a.stats().active_bytes, s0.active_bytes);
  EXPECT_EQ(a.stats().peak_bytes, s1.active_bytes);
  a.clear_cache();
}

// ---------------------------------------------------------------- shapes and strides

TEST(Shapes, ContiguousStridesAndNumel) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({5}), (Strides{1}));
  EXPECT_EQ(contiguous_strides({}), (Strides{}));
  EXPECT_EQ(contiguous_strides({3, 1, 2}), (Strides{2, 2, 1}));
  EXPECT_EQ(contiguous_strides({7, 6, 5, 4}), (Strides{120, 20, 4, 1}));
  EXPECT_EQ(numel({2, 3, 4}), 24);
  EXPECT_EQ(numel({}), 1);
  EXPECT_EQ(numel({3, 0, 2}), 0);
  EXPECT_EQ(shape_str({2, 3}), "(2, 3)");
  EXPECT_EQ(shape_str({4}), "(4,)");
  EXPECT_EQ(shape_str({}), "()");
  Tensor t = Tensor::empty({2, 3, 4}, DType::Float32);
  EXPECT_EQ(t.strides(), (Strides{12, 4, 1}));
  EXPECT_EQ(t.offset(), 0);
  EXPECT_TRUE(t.is_contiguous());
}

TEST(Shapes, BroadcastShapes) {
  EXPECT_EQ(broadcast_shapes({3, 1, 5}, {4, 5}, "op"), (Shape{3, 4, 5}));
  EXPECT_EQ(broadcast_shapes({4, 5}, {3, 1, 5}, "op"), (Shape{3, 4, 5}));
  EXPECT_EQ(broadcast_shapes({}, {2, 3}, "op"), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({1}, {0}, "op"), (Shape{0}));
  EXPECT_EQ(broadcast_shapes({2, 1}, {1, 3}, "op"), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({6, 1, 1}, {6, 1, 1}, "op"), (Shape{6, 1, 1}));
  PCP_EXPECT_THROW_MSG(broadcast_shapes({3}, {4}, "my_op"), ValueError, "my_op", "(3,)", "(4,)");
  PCP_EXPECT_THROW_MSG(broadcast_shapes({2, 3}, {3, 2}, "frobnicate"), ValueError, "frobnicate", "(2, 3)",
                       "(3, 2)");
  PCP_EXPECT_THROW_MSG(broadcast_shapes({2, 0}, {2, 3}, "zap"), ValueError, "zap");
}

TEST(Shapes, NormalizeAxis) {
  EXPECT_EQ(normalize_axis(0, 3, "op"), 0);
  EXPECT_EQ(normalize_axis(2, 3, "op"), 2);
  EXPECT_EQ(normalize_axis(-1, 3, "op"), 2);
  EXPECT_EQ(normalize_axis(-3, 3, "op"), 0);
  PCP_EXPECT_THROW_MSG(normalize_axis(3, 3, "my_reduce"), IndexError, "my_reduce", "3");
  PCP_EXPECT_THROW_MSG(normalize_axis(-4, 3, "my_reduce"), IndexError, "my_reduce", "-4");
  PCP_EXPECT_THROW_MSG(normalize_axis(0, 0, "scalar_op"), IndexError, "scalar_op");
  EXPECT_EQ(normalize_axes({-1, 0}, 3, "op"), (std::vector<int>{0, 2}));
  PCP_EXPECT_THROW_MSG(normalize_axes({1, -2}, 3, "dup_op"), ValueError, "dup_op");
  PCP_EXPECT_THROW_MSG(normalize_axes({0, 5}, 3, "range_op"), IndexError, "range_op");
}

TEST(Shapes, IsContiguousForViews) {
  Tensor x = make({4, 6}, iota(24));
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_FALSE(transpose(x).is_contiguous());
  EXPECT_TRUE(slice(x, 0, 1, 3).is_contiguous()) << "a row range is contiguous (with an offset)";
  EXPECT_EQ(slice(x, 0, 1, 3).offset(), 6);
  EXPECT_FALSE(slice(x, 1, 0, 3).is_contiguous()) << "a column range is not";
  EXPECT_FALSE(slice(x, 0, 0, 4, 2).is_contiguous()) << "every other row is not";
  EXPECT_FALSE(slice(x, 1, 5, 0, -1).is_contiguous()) << "reversed columns are not";
  EXPECT_TRUE(slice(x, 1, 2, 3).shape() == (Shape{4, 1}));
  EXPECT_FALSE(slice(x, 1, 2, 3).is_contiguous()) << "a column (stride 6) is not";
  EXPECT_TRUE(slice(slice(x, 0, 2, 3), 1, 1, 4).is_contiguous()) << "a piece of one row is";
  EXPECT_FALSE(broadcast_to(make({1, 6}, iota(6)), {4, 6}).is_contiguous());
  EXPECT_TRUE(unsqueeze(x, 1).is_contiguous());
  EXPECT_TRUE(transpose(make({1, 5}, iota(5))).is_contiguous()) << "size-1 axes do not matter";
  Tensor c = contiguous(transpose(x));
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.storage().get(), x.storage().get());
  EXPECT_TRUE(contiguous(x).is_same(x)) << "contiguous() of a contiguous tensor is the tensor itself";
}

TEST(Shapes, ReshapeIsAViewWhenStridesAllowElseACopy) {
  const std::vector<double> v = iota(24);
  Tensor x = make({2, 3, 4}, v);
  // Contiguous: always a view.
  for (const Shape& s : {Shape{6, 4}, Shape{24}, Shape{4, 3, 2}, Shape{1, 2, 1, 12}, Shape{2, 12, 1}}) {
    Tensor r = reshape(x, s);
    EXPECT_EQ(r.storage().get(), x.storage().get()) << shape_str(s);
    EXPECT_EQ(r.shape(), s);
    EXPECT_EQ(values(r), v);
  }
  EXPECT_EQ(reshape(x, {-1, 4}).shape(), (Shape{6, 4}));

  // Transposed (4, 3) view of a (3, 4) matrix: flattening needs a copy.
  Tensor m = make({3, 4}, iota(12));
  Tensor t = transpose(m);
  std::vector<double> tv;  // t's values in its row-major order
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) tv.push_back(double(j * 4 + i));
  Tensor flat = reshape(t, {12});
  EXPECT_NE(flat.storage().get(), m.storage().get()) << "reshape of a transposed matrix must copy";
  EXPECT_TRUE(flat.is_contiguous());
  EXPECT_EQ(values(flat), tv);
  Tensor r34 = reshape(t, {3, 4});
  EXPECT_NE(r34.storage().get(), m.storage().get());
  EXPECT_EQ(values(r34), tv);
  // ... but splitting its first axis only is expressible with strides: a view.
  Tensor split = reshape(t, {2, 2, 3});
  EXPECT_EQ(split.storage().get(), m.storage().get());
  EXPECT_EQ(split.strides(), (Strides{2, 1, 4}));
  EXPECT_EQ(values(split), tv);
  Tensor ones_added = reshape(t, {4, 1, 3, 1});
  EXPECT_EQ(ones_added.storage().get(), m.storage().get());
  EXPECT_EQ(values(ones_added), tv);

  // Every-other-column slices of a (4, 6) matrix. Columns 0, 2, 4 (strides (6, 2)) flatten to
  // a uniform stride-2 view; columns 0, 2 (strides (6, 2), shape (4, 2)) only split as a view
  // and must copy to flatten.
  Tensor w = make({4, 6}, iota(24));
  Tensor s3 = slice(w, 1, 0, 6, 2);
  std::vector<double> s3v, s2v;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; j += 2) s3v.push_back(double(i * 6 + j));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; j += 2) s2v.push_back(double(i * 6 + j));
  Tensor s3_flat = reshape(s3, {12});
  EXPECT_EQ(s3_flat.storage().get(), w.storage().get());
  EXPECT_EQ(s3_flat.strides(), (Strides{2}));
  EXPECT_EQ(values(s3_flat), s3v);
  Tensor s3_split = reshape(s3, {2, 2, 3});
  EXPECT_EQ(s3_split.storage().get(), w.storage().get());
  EXPECT_EQ(values(s3_split), s3v);
  Tensor s2 = slice(w, 1, 0, 4, 2);
  Tensor s2_split = reshape(s2, {2, 2, 2});
  EXPECT_EQ(s2_split.storage().get(), w.storage().get());
  EXPECT_EQ(s2_split.strides(), (Strides{12, 6, 2}));
  EXPECT_EQ(values(s2_split), s2v);
  Tensor s2_flat = reshape(s2, {8});
  EXPECT_NE(s2_flat.storage().get(), w.storage().get());
  EXPECT_TRUE(s2_flat.is_contiguous());
  EXPECT_EQ(values(s2_flat), s2v);
  // A row slice with an offset reshapes as a view and keeps the offset.
  Tensor rows = slice(w, 0, 1, 3);
  Tensor rows_flat = reshape(rows, {12});
  EXPECT_EQ(rows_flat.storage().get(), w.storage().get());
  EXPECT_EQ(rows_flat.offset(), 6);
  EXPECT_EQ(values(rows_flat), iota(12, 6));
}

// ---------------------------------------------------------------- dtypes

TEST(DTypes, NamesSizesAndCategories) {
  const DType all[] = {DType::Bool, DType::Int32, DType::Int64, DType::Float16, DType::BFloat16, DType::Float32,
                       DType::Float64};
  const size_t sizes[] = {1, 4, 8, 2, 2, 4, 8};
  const char* names[] = {"bool", "int32", "int64", "float16", "bfloat16", "float32", "float64"};
  for (int i = 0; i < kNumDTypes; ++i) {
    EXPECT_EQ(itemsize(all[i]), sizes[i]);
    EXPECT_STREQ(dtype_name(all[i]), names[i]);
    EXPECT_EQ(dtype_from_name(names[i]), all[i]);
  }
  EXPECT_EQ(dtype_from_name("f32"), DType::Float32);
  EXPECT_EQ(dtype_from_name("double"), DType::Float64);
  EXPECT_EQ(dtype_from_name("bf16"), DType::BFloat16);
  PCP_EXPECT_THROW_MSG(dtype_from_name("float8"), TypeError, "float8");
  EXPECT_TRUE(is_floating(DType::BFloat16));
  EXPECT_FALSE(is_floating(DType::Int64));
  EXPECT_TRUE(is_integral(DType::Int32));
  EXPECT_FALSE(is_integral(DType::Bool));
  EXPECT_EQ(to_floating(DType::Int32), DType::Float32);
  EXPECT_EQ(to_floating(DType::Float16), DType::Float16);
}

TEST(DTypes, PromotionOfStrongTypes) {
  EXPECT_EQ(promote_types(DType::Bool, DType::Int32), DType::Int32);
  EXPECT_EQ(promote_types(DType::Int32, DType::Int64), DType::Int64);
  EXPECT_EQ(promote_types(DType::Int64, DType::Float16), DType::Float16);  // as PyTorch
  EXPECT_EQ(promote_types(DType::Int32, DType::Float32), DType::Float32);
  EXPECT_EQ(promote_types(DType::Float16, DType::BFloat16), DType::Float32);
  EXPECT_EQ(promote_types(DType::BFloat16, DType::Float16), DType::Float32);
  EXPECT_EQ(promote_types(DType::BFloat16, DType::Float32), DType::Float32);
  EXPECT_EQ(promote_types(DType::Float32, DType::Float64), DType::Float64);
  EXPECT_EQ(promote_types(DType::Bool, DType::Bool), DType::Bool);
}

TEST(DTypes, ResultTypeWithWeakScalars) {
  // A weak operand of the same or lower category never widens the strong one.
  EXPECT_EQ(result_type(DType::Int32, false, DType::Int64, true), DType::Int32);
  EXPECT_EQ(result_type(DType::Float16, false, DType::Float64, true), DType::Float16);
  EXPECT_EQ(result_type(DType::BFloat16, false, DType::Int64, true), DType::BFloat16);
  EXPECT_EQ(result_type(DType::Float32, false, DType::Bool, true), DType::Float32);
  // A weak operand of a higher category lifts to that category's default.
  EXPECT_EQ(result_type(DType::Int32, false, DType::Float64, true), DType::Float32);
  EXPECT_EQ(result_type(DType::Float64, true, DType::Int64, false), DType::Float32);
  EXPECT_EQ(result_type(DType::Bool, false, DType::Int64, true), DType::Int64);
  EXPECT_EQ(result_type(DType::Bool, false, DType::Float64, true), DType::Float32);
  // Both weak or both strong: ordinary promotion.
  EXPECT_EQ(result_type(DType::Int64, true, DType::Float64, true), DType::Float64);
  EXPECT_EQ(result_type(DType::Int32, false, DType::Float64, false), DType::Float64);

  // Through the ops.
  Tensor i32 = make({3}, {1, 2, 3}, DType::Int32);
  Tensor r1 = add(i32, weak_scalar(0.5));
  EXPECT_EQ(r1.dtype(), DType::Float32);
  EXPECT_EQ(values(r1), (std::vector<double>{1.5, 2.5, 3.5}));
  Tensor r2 = mul(i32, weak_scalar_int(4));
  EXPECT_EQ(r2.dtype(), DType::Int32);
  EXPECT_EQ(values(r2), (std::vector<double>{4, 8, 12}));
  Tensor h = make({2}, {1.5, -2}, DType::Float16);
  Tensor r3 = add(h, weak_scalar(1.0));
  EXPECT_EQ(r3.dtype(), DType::Float16);
  EXPECT_EQ(values(r3), (std::vector<double>{2.5, -1}));
  Tensor r4 = add(h, make({2}, {1, 1}, DType::Float32));
  EXPECT_EQ(r4.dtype(), DType::Float32);
  Tensor b = make({3}, {1, 0, 1}, DType::Bool);
  Tensor r5 = add(b, b);
  EXPECT_EQ(r5.dtype(), DType::Bool) << "bool + bool is logical or, as in NumPy";
  EXPECT_EQ(values(r5), (std::vector<double>{1, 0, 1}));
  Tensor r6 = div(i32, make({3}, {2, 2, 2}, DType::Int32));
  EXPECT_EQ(r6.dtype(), DType::Float32) << "true division";
  EXPECT_EQ(values(r6), (std::vector<double>{0.5, 1, 1.5}));
  Tensor r7 = add(weak_scalar(1.0), weak_scalar(2.0));
  EXPECT_TRUE(r7.weak());
  EXPECT_EQ(r7.item_double(), 3.0);
}

// ---------------------------------------------------------------- float16 / bfloat16

namespace {

// IEEE binary16 value of a bit pattern, decoded independently with ldexp.
double half_value(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0x1f) v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (exp == 0) v = std::ldexp(double(man), -24);
  else v = std::ldexp(double(1024 + man), exp - 25);
  return sign ? -v : v;
}

double bf16_value(uint16_t h) {
  int sign = h >> 15, exp = (h >> 7) & 0xff, man = h & 0x7f;
  double v;
  if (exp == 0xff) v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (exp == 0) v = std::ldexp(double(man), -133);
  else v = std::ldexp(double(128 + man), exp - 134);
  return sign ? -v : v;
}

uint16_t to_half_bits(float f) { return float_to_half(f).bits; }
uint16_t to_bf16_bits(float f) { return float_to_bf16(f).bits; }

}  // namespace

TEST(Half, DecodesEveryBitPatternAndRoundTripsExactly) {
  for (uint32_t h = 0; h < 65536; ++h) {
    double want = half_value(uint16_t(h));
    float got = half_to_float(Half{uint16_t(h)});
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << h;
      ASSERT_TRUE(std::isnan(half_to_float(float_to_half(got)))) << std::hex << h;
      continue;
    }
    ASSERT_EQ(double(got), want) << std::hex << h;
    ASSERT_EQ(std::signbit(got), bool(h & 0x8000)) << std::hex << h;
    ASSERT_EQ(to_half_bits(got), h) << "round trip of " << std::hex << h;
  }
}

TEST(Half, RoundsToNearestEven) {
  // Midpoints between neighbours (normal and subnormal) go to the even one; just off the
  // midpoint goes to the nearer one.
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    float lo = float(half_value(uint16_t(h))), hi = float(half_value(uint16_t(h + 1)));
    float mid = float((double(lo) + double(hi)) / 2);  // exact: 12 significant bits
    ASSERT_EQ(double(mid), (double(lo) + double(hi)) / 2);
    uint16_t even = (h & 1) ? uint16_t(h + 1) : uint16_t(h);
    ASSERT_EQ(to_half_bits(mid), even) << "midpoint after " << std::hex << h;
    ASSERT_EQ(to_half_bits(-mid), uint16_t(even | 0x8000)) << "negative midpoint after " << std::hex << h;
    ASSERT_EQ(to_half_bits(std::nextafter(mid, 0.0f)), h) << std::hex << h;
    ASSERT_EQ(to_half_bits(std::nextafter(mid, INFINITY)), h + 1) << std::hex << h;
  }
  // Specific values.
  EXPECT_EQ(to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(to_half_bits(65519.0f), 0x7bff);
  EXPECT_EQ(to_half_bits(65520.0f), 0x7c00) << "the midpoint to 65536 rounds (to even) to inf";
  EXPECT_EQ(to_half_bits(1e6f), 0x7c00);
  EXPECT_EQ(to_half_bits(-1e6f), 0xfc00);
  EXPECT_EQ(to_half_bits(1.0f + 1.0f / 2048), 0x3c00) << "tie goes to even";
  EXPECT_EQ(to_half_bits(1.0f + 3.0f / 2048), 0x3c02) << "tie goes to even";
}

TEST(Half, InfNanZerosAndSubnormals) {
  EXPECT_EQ(to_half_bits(INFINITY), 0x7c00);
  EXPECT_EQ(to_half_bits(-INFINITY), 0xfc00);
  EXPECT_TRUE(std::isinf(half_to_float(Half{0x7c00})));
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(bits_f32(0x7f800001u))))) << "signaling NaN stays NaN";
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(-NAN))));
  EXPECT_EQ(to_half_bits(0.0f), 0x0000);
  EXPECT_EQ(to_half_bits(-0.0f), 0x8000);
  const float tiny = std::ldexp(1.0f, -24);  // smallest subnormal half
  EXPECT_EQ(to_half_bits(tiny), 0x0001);
  EXPECT_EQ(to_half_bits(-tiny), 0x8001);
  EXPECT_EQ(to_half_bits(tiny / 2), 0x0000) << "half of the smallest subnormal ties to even (zero)";
  EXPECT_EQ(to_half_bits(std::nextafter(tiny / 2, 1.0f)), 0x0001);
  EXPECT_EQ(to_half_bits(3 * tiny / 2), 0x0002) << "1.5 ulp ties to even (2)";
  EXPECT_EQ(to_half_bits(std::ldexp(1.0f, -30)), 0x0000) << "underflow to zero";
  EXPECT_EQ(to_half_bits(1023 * tiny), 0x03ff) << "largest subnormal";
  EXPECT_EQ(to_half_bits(1023.5f * tiny), 0x0400) << "rounds up into the smallest normal";
  EXPECT_EQ(to_half_bits(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(half_to_float(Half{0x0001}), tiny);
  EXPECT_EQ(half_to_float(Half{0x03ff}), 1023 * tiny);
}

TEST(BFloat16, DecodesRoundTripsAndRoundsToNearestEven) {
  for (uint32_t h = 0; h < 65536; ++h) {
    double want = bf16_value(uint16_t(h));
    float got = bf16_to_float(BFloat16{uint16_t(h)});
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << h;
      ASSERT_TRUE(std::isnan(bf16_to_float(float_to_bf16(got)))) << std::hex << h;
      continue;
    }
    ASSERT_EQ(double(got), want) << std::hex << h;
    ASSERT_EQ(to_bf16_bits(got), h) << std::hex << h;
    // Midpoint to the next pattern (within the same sign): float bits h<<16 | 0x8000.
    if ((h & 0x7fff) < 0x7f80) {
      float mid = bits_f32((h << 16) | 0x8000u);
      uint16_t even = (h & 1) ? uint16_t(h + 1) : uint16_t(h);
      ASSERT_EQ(to_bf16_bits(mid), even) << std::hex << h;
      ASSERT_EQ(to_bf16_bits(bits_f32((h << 16) | 0x7fffu)), h) << std::hex << h;
      ASSERT_EQ(to_bf16_bits(bits_f32((h << 16) | 0x8001u)), uint16_t(h + 1)) << std::hex << h;
    }
  }
  EXPECT_EQ(to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(to_bf16_bits(INFINITY), 0x7f80);
  EXPECT_EQ(to_bf16_bits(-INFINITY), 0xff80);
  EXPECT_EQ(to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80) << "rounds past the largest bf16 to inf";
  EXPECT_EQ(to_bf16_bits(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(bits_f32(0x7f800001u))))) << "signaling NaN stays NaN";
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(bits_f32(0xff800001u)))));
  const float sub = std::ldexp(1.0f, -133);  // smallest bf16 subnormal
  EXPECT_EQ(to_bf16_bits(sub), 0x0001);
  EXPECT_EQ(to_bf16_bits(3 * sub), 0x0003);
}

TEST(HalfTensors, AstypeMatchesScalarConversions) {
  // The cast kernels (every ISA) agree with the scalar conversions above.
  TestRng rng(7);
  std::vector<double> v = rng.vec(1000, -70000, 70000);
  for (size_t i = 0; i < 200; ++i) v[i] = std::ldexp(rng.uniform(-1, 1), -int(i % 30));  // small and subnormal
  v[200] = INFINITY;
  v[201] = -INFINITY;
  v[202] = NAN;
  v[203] = 65520;
  v[204] = -0.0;
  Tensor x = make({1000}, v, DType::Float32);
  for_each_isa([&] {
    Tensor h = astype(x, DType::Float16), b = astype(x, DType::BFloat16);
    ASSERT_EQ(h.dtype(), DType::Float16);
    ASSERT_EQ(b.dtype(), DType::BFloat16);
    const Half* hp = h.data<Half>();
    const BFloat16* bp = b.data<BFloat16>();
    for (size_t i = 0; i < v.size(); ++i) {
      float f = float(v[i]);
      if (std::isnan(f)) {
        EXPECT_TRUE(std::isnan(half_to_float(hp[i])));
        EXPECT_TRUE(std::isnan(bf16_to_float(bp[i])));
        continue;
      }
      ASSERT_EQ(hp[i].bits, to_half_bits(f)) << i << " " << v[i];
      ASSERT_EQ(bp[i].bits, to_bf16_bits(f)) << i << " " << v[i];
    }
    // Back to float32: exact.
    std::vector<double> back = values(astype(h, DType::Float32));
    for (size_t i = 0; i < v.size(); ++i)
      if (!std::isnan(v[i])) ASSERT_EQ(back[i], double(half_to_float(Half{to_half_bits(float(v[i]))}))) << i;
  });
}
