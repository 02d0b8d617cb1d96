// Errors: representative ops throw pcp::ValueError / TypeError / IndexError /
// NotImplementedError with messages that name the op (and what it saw).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "pcp/autograd/engine.h"
#include "pcp/core/allocator.h"
#include "pcp/core/error.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"
#include "test_util.h"

using namespace pcp;
using namespace pcp_test;

TEST(Errors, HierarchyAndFail) {
  try {
    fail<TypeError>("myop: got ", 3, " and ", 4.5);
    FAIL() << "fail returned";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "myop: got 3 and 4.5");
    EXPECT_NE(dynamic_cast<const TypeError*>(&e), nullptr);
    EXPECT_EQ(dynamic_cast<const ValueError*>(&e), nullptr);
  }
  EXPECT_THROW(fail<IndexError>("x"), std::runtime_error);
  EXPECT_THROW(fail("default is ValueError"), ValueError);
}

TEST(Errors, ValueErrors) {
  Tensor a = zeros({3}), b = zeros({4}), m23 = zeros({2, 3}), m45 = zeros({4, 5});
  PCP_EXPECT_THROW_MSG(add(a, b), ValueError, "add", "(3,)", "(4,)");
  PCP_EXPECT_THROW_MSG(mul(m23, zeros({3, 2})), ValueError, "mul", "(2, 3)", "(3, 2)");
  PCP_EXPECT_THROW_MSG(where(zeros({2}, DType::Bool), a, a), ValueError, "where");
  PCP_EXPECT_THROW_MSG(matmul(m23, m45), ValueError, "matmul", "(2, 3)", "(4, 5)");
  PCP_EXPECT_THROW_MSG(matmul(scalar(1.0), m23), ValueError, "matmul");
  PCP_EXPECT_THROW_MSG(matmul(zeros({2, 2, 3}), zeros({3, 3, 2})), ValueError, "matmul");  // batch 2 vs 3
  PCP_EXPECT_THROW_MSG(reshape(m23, {4, 2}), ValueError, "reshape", "(2, 3)", "(4, 2)");
  PCP_EXPECT_THROW_MSG(reshape(m23, {-1, -1}), ValueError, "reshape");
  PCP_EXPECT_THROW_MSG(reshape(m23, {-1, 4}), ValueError, "reshape");
  PCP_EXPECT_THROW_MSG(broadcast_to(m23, {3, 3}), ValueError, "broadcast_to", "(2, 3)", "(3, 3)");
  PCP_EXPECT_THROW_MSG(slice(m23, 1, 0, 3, 0), ValueError, "slice", "step");
  PCP_EXPECT_THROW_MSG(permute(m23, {0}), ValueError, "permute");
  PCP_EXPECT_THROW_MSG(permute(m23, {1, 1}), ValueError, "permute");
  PCP_EXPECT_THROW_MSG(squeeze(m23, std::vector<int64_t>{0}), ValueError, "squeeze");
  PCP_EXPECT_THROW_MSG(concatenate({m23, m45}, 0), ValueError, "concatenate");
  PCP_EXPECT_THROW_MSG(concatenate({}, 0), ValueError, "concatenate");
  PCP_EXPECT_THROW_MSG(stack({a, b}), ValueError, "stack");
  PCP_EXPECT_THROW_MSG(split(m23, 2, 1), ValueError, "split");
  PCP_EXPECT_THROW_MSG(max(zeros({0, 3}), std::vector<int64_t>{0}), ValueError, "max");
  PCP_EXPECT_THROW_MSG(layer_norm(m23, zeros({2}), Tensor()), ValueError, "layer_norm", "weight");
  PCP_EXPECT_THROW_MSG(layer_norm(scalar(1.0), Tensor(), Tensor()), ValueError, "layer_norm");
  PCP_EXPECT_THROW_MSG(cross_entropy(m23, zeros({3}, DType::Int64)), ValueError, "cross_entropy", "(3,)");
  PCP_EXPECT_THROW_MSG(dropout(a, 1.5), ValueError, "dropout");
  PCP_EXPECT_THROW_MSG(arange(0, 1, 0, DType::Float32), ValueError, "arange");
  PCP_EXPECT_THROW_MSG(zeros({2, -1}), ValueError, "zeros", "(2, -1)");
  PCP_EXPECT_THROW_MSG(randint(5, 5, {3}), ValueError, "randint");
  PCP_EXPECT_THROW_MSG(m23.item_double(), ValueError, "item", "(2, 3)");
  PCP_EXPECT_THROW_MSG(neg(Tensor()), ValueError, "neg", "undefined");
  PCP_EXPECT_THROW_MSG(reduction_from_name("avg"), ValueError, "avg");
  PCP_EXPECT_THROW_MSG(parse_device("cuda:0"), ValueError, "cuda:0");
  PCP_EXPECT_THROW_MSG(
      scaled_dot_product_attention(zeros({2, 3, 4}), zeros({2, 3, 5}), zeros({2, 3, 4})), ValueError,
      "scaled_dot_product_attention");
  // Autograd misuse.
  Tensor x = zeros({3});
  x.set_requires_grad(true);
  Tensor y = mul(x, x);
  PCP_EXPECT_THROW_MSG(backward(y), ValueError, "backward", "(3,)");
  PCP_EXPECT_THROW_MSG(backward(y, zeros({4})), ValueError, "backward", "(4,)");
  PCP_EXPECT_THROW_MSG(backward(sum(a)), ValueError, "backward");
  PCP_EXPECT_THROW_MSG(y.set_requires_grad(false), ValueError, "requires_grad");
  PCP_EXPECT_THROW_MSG(index_assign(x, {IndexItem{IndexItem::Int, 0, {}, {}}}, scalar(1.0)), ValueError,
                       "index_assign");
}

TEST(Errors, TypeErrors) {
  Tensor i = zeros({2, 2}, DType::Int32), f = zeros({2, 2}), b = zeros({2, 2}, DType::Bool);
  PCP_EXPECT_THROW_MSG(matmul(b, b), TypeError, "matmul", "bool");
  PCP_EXPECT_THROW_MSG(bitwise_left_shift(f, i), TypeError, "bitwise_left_shift", "float32");
  PCP_EXPECT_THROW_MSG(bitwise_right_shift(i, b), TypeError, "bitwise_right_shift", "bool");
  PCP_EXPECT_THROW_MSG(neg(zeros({2}, DType::Bool)), TypeError, "neg", "bool");
  PCP_EXPECT_THROW_MSG(rand({2}, DType::Int64), TypeError, "rand", "int64");
  PCP_EXPECT_THROW_MSG(randn({2}, DType::Bool), TypeError, "randn");
  PCP_EXPECT_THROW_MSG(i.set_requires_grad(true), TypeError, "requires_grad", "int32");
  PCP_EXPECT_THROW_MSG(cross_entropy(f, zeros({2})), TypeError, "cross_entropy", "float32");
  PCP_EXPECT_THROW_MSG(take(f, zeros({1})), TypeError, "take", "float32");
  PCP_EXPECT_THROW_MSG(embedding(f, zeros({1})), TypeError, "embedding");
  PCP_EXPECT_THROW_MSG(one_hot(f, 3), TypeError, "one_hot");
  PCP_EXPECT_THROW_MSG(dtype_from_name("complex64"), TypeError, "complex64");
}

TEST(Errors, IndexErrors) {
  Tensor x = zeros({2, 3, 4});
  PCP_EXPECT_THROW_MSG(sum(x, std::vector<int64_t>{3}), IndexError, "sum", "3");
  PCP_EXPECT_THROW_MSG(mean(x, std::vector<int64_t>{-4}), IndexError, "mean", "-4");
  PCP_EXPECT_THROW_MSG(argmax(x, 5), IndexError, "argmax");
  PCP_EXPECT_THROW_MSG(argsort(x, 3), IndexError, "argsort");
  PCP_EXPECT_THROW_MSG(cumsum(x, -4), IndexError, "cumsum");
  PCP_EXPECT_THROW_MSG(searchsorted(x, x), ValueError, "searchsorted", "1-D");
  PCP_EXPECT_THROW_MSG(softmax(x, 3), IndexError, "softmax");
  PCP_EXPECT_THROW_MSG(slice(x, 7, 0, 1), IndexError, "slice");
  PCP_EXPECT_THROW_MSG(swapaxes(x, 0, 9), IndexError, "swapaxes");
  PCP_EXPECT_THROW_MSG(unsqueeze(x, 5), IndexError, "unsqueeze");
  PCP_EXPECT_THROW_MSG(concatenate({x, x}, 3), IndexError, "concatenate");
  PCP_EXPECT_THROW_MSG(take(x, make({2}, {0, 4}, DType::Int64), 2), IndexError, "take", "4");
  PCP_EXPECT_THROW_MSG(take(x, make({1}, {-3}, DType::Int64), 0), IndexError, "take", "-3");
  PCP_EXPECT_THROW_MSG(embedding(zeros({5, 2}), make({1}, {5}, DType::Int64)), IndexError, "embedding", "5");
  PCP_EXPECT_THROW_MSG(cross_entropy(zeros({2, 3}), make({2}, {0, 3}, DType::Int64)), IndexError, "cross_entropy",
                       "3");
  PCP_EXPECT_THROW_MSG(index(x, {IndexItem{IndexItem::Int, 2, {}, {}}}), IndexError, "index", "2");
  PCP_EXPECT_THROW_MSG(index(x, std::vector<IndexItem>(4, IndexItem{IndexItem::Int, 0, {}, {}})), IndexError,
                       "index", "too many");
  PCP_EXPECT_THROW_MSG(index(x, {IndexItem{IndexItem::Array, 0, {}, zeros({2})}}), IndexError, "index", "float32");
}

TEST(Errors, ValidIndicesStillWork) {
  // The checks above must not reject valid inputs: negative indices wrap (reference by hand).
  Tensor x = make({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(values(take(x, make({3}, {-1, 0, 1}, DType::Int64), 1)), (std::vector<double>{2, 0, 1, 5, 3, 4}));
  EXPECT_EQ(values(index(x, {IndexItem{IndexItem::Int, -1, {}, {}}})), (std::vector<double>{3, 4, 5}));
  Tensor e = embedding(make({3, 2}, {1, 2, 3, 4, 5, 6}), make({2, 2}, {2, 0, 1, 2}, DType::Int32));
  EXPECT_EQ(e.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(values(e), (std::vector<double>{5, 6, 1, 2, 3, 4, 5, 6}));
}

namespace {

// A primitive with a forward but no VJP: its gradient must raise NotImplementedError naming it.
class Twice : public Primitive {
 public:
  const char* name() const override { return "twice_no_vjp"; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override { return {in[0]}; }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    Tensor out = empty(specs[0]);
    const double* src = in[0].data<double>();
    double* dst = out.data<double>();
    for (int64_t i = 0; i < out.numel(); ++i) dst[i] = 2 * src[i];
    return {out};
  }
};

}  // namespace

TEST(Errors, PrimitiveWithoutVjp) {
  Tensor x = make({3}, {1, 2, 3}, DType::Float64);
  x.set_requires_grad(true);
  Tensor y = pcp::apply<Twice>({x});
  EXPECT_EQ(values(y), (std::vector<double>{2, 4, 6}));
  EXPECT_TRUE(y.requires_grad());
  ASSERT_NE(y.grad_fn(), nullptr);
  PCP_EXPECT_THROW_MSG(backward(sum(y)), NotImplementedError, "twice_no_vjp");
  // A custom primitive's output that is an input handle is replaced by a fresh handle.
  struct Identity : Primitive {
    const char* name() const override { return "identity"; }
    std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override { return {in[0]}; }
    std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override {
      return {in[0]};
    }
    std::vector<Tensor> vjp(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                            const std::vector<bool>&) override {
      return {gs[0]};
    }
  };
  Tensor z = pcp::apply<Identity>({x});
  EXPECT_FALSE(z.is_same(x));
  EXPECT_EQ(z.storage().get(), x.storage().get());
  backward(sum(mul(z, z)));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 4, 6}));
}

TEST(Errors, FailedOpsDoNotLeakMemory) {
  const int64_t before = CpuAllocator::instance().stats().active_bytes;
  for (int k = 0; k < 20; ++k) {
    EXPECT_THROW(add(zeros({3, 5}), zeros({4, 5})), ValueError);
    EXPECT_THROW(cross_entropy(zeros({2, 3}), make({2}, {0, 9}, DType::Int64)), IndexError);
    EXPECT_THROW(take(zeros({3}), make({1}, {3}, DType::Int64)), IndexError);
    EXPECT_THROW(matmul(zeros({2, 3}), zeros({2, 3})), ValueError);
  }
  EXPECT_EQ(CpuAllocator::instance().stats().active_bytes, before);
}

// ---------------------------------------------------------------------------------------------
// The crash classes of the API fuzz, at the C++ level (the Python suite has the rest).

TEST(Errors, SizesThatOverflowThrow) {
  PCP_EXPECT_THROW_MSG(zeros({int64_t(1) << 32, int64_t(1) << 32}), ValueError, "too big");
  PCP_EXPECT_THROW_MSG(zeros({0, int64_t(1) << 62, int64_t(1) << 62}), ValueError, "too big");  // as NumPy
  PCP_EXPECT_THROW_MSG(zeros({int64_t(1) << 31, int64_t(1) << 31}), MemoryError, "2**63 bytes");
  PCP_EXPECT_THROW_MSG(Tensor::empty({INT64_MAX}, DType::Float32), MemoryError, "empty");
  PCP_EXPECT_THROW_MSG(CpuAllocator::instance().allocate(~size_t(0)), MemoryError, "bytes");
  PCP_EXPECT_THROW_MSG(broadcast_to(zeros({1}), {int64_t(1) << 32, int64_t(1) << 32}), ValueError, "broadcast_to");
  PCP_EXPECT_THROW_MSG(arange_int(0, INT64_MAX, 1, DType::Float32), MemoryError, "2**63 bytes");
  PCP_EXPECT_THROW_MSG(arange_int(INT32_MAX - 1, int64_t(INT32_MAX) + 2, 1, DType::Int32), OverflowError, "int32");
  EXPECT_EQ(values(arange_int(INT64_MAX - 2, INT64_MAX, 1, DType::Int64)).size(), 2u);
}

TEST(Errors, EmptyRowsInFusedOps) {
  EXPECT_EQ(softmax(zeros({3, 0})).shape(), (Shape{3, 0}));
  EXPECT_EQ(log_softmax(zeros({0})).shape(), (Shape{0}));
  EXPECT_EQ(layer_norm(zeros({0, 5}), ones({5}), zeros({5})).shape(), (Shape{0, 5}));
  Tensor q = zeros({1, 2, 0, 4});
  EXPECT_EQ(scaled_dot_product_attention(q, q, q, true).shape(), (Shape{1, 2, 0, 4}));
  EXPECT_EQ(values(matmul(ones({2, 0}), ones({0, 3}))), std::vector<double>(6, 0.0));
}

TEST(Errors, FreeingADeepGraphDoesNotRecurse) {
  Tensor x = ones({2});
  x.set_requires_grad(true);
  Tensor y = x;
  for (int i = 0; i < 200000; ++i) y = add(y, weak_scalar(0.0));
  backward(sum(y));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{1, 1}));
  y = Tensor();  // frees 200,000 nodes; recursion would overflow the stack (under ASan too)
}

TEST(Errors, BackwardRefusesTensorsModifiedInPlace) {
  Tensor w = make({2}, {1, 2});
  w.set_requires_grad(true);
  Tensor a = make({2}, {3, 4});
  Tensor y = sum(mul(a, w));
  index_assign(a, {}, weak_scalar(0.0));  // mul's VJP reads a
  PCP_EXPECT_THROW_MSG(backward(y), RuntimeError, "backward", "modified in place", "mul");
  Tensor b = make({2}, {3, 4});
  Tensor z = sum(add(b, w));  // add's VJP reads nothing
  index_assign(b, {}, weak_scalar(0.0));
  backward(z);
  EXPECT_EQ(values(w.grad()), (std::vector<double>{1, 1}));
}
