// The primitive contract (ops/primitive.h): shape inference that forward must honour, several
// outputs with gradients through each, and outputs kept for the VJP that carry no gradient.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "pcp/autograd/engine.h"
#include "pcp/core/grad_mode.h"
#include "pcp/core/error.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"
#include "test_util.h"

using namespace pcp;
using namespace pcp_test;

namespace {

// (2n,) -> its halves (n,) and (n,); the VJP joins the two cotangents. A third output, the
// sum of the input's squares, is not differentiable: it is what a VJP might read.
class SplitHalves : public Primitive {
 public:
  const char* name() const override { return "split_halves"; }
  bool differentiable_output(size_t i) const override { return i < 2; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    const TensorSpec half{{in[0].shape[0] / 2}, in[0].dtype, in[0].device};
    return {half, half, {{}, in[0].dtype, in[0].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    ++forward_calls;
    const int64_t n = specs[0].shape[0];
    Tensor x = in[0];
    Tensor sq = empty(specs[2]);
    double total = 0;
    for (int64_t i = 0; i < 2 * n; ++i) total += x.data<double>()[i] * x.data<double>()[i];
    sq.data<double>()[0] = total;
    return {x.alias({n}, {1}, x.offset()), x.alias({n}, {1}, x.offset() + n), sq};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>&, const std::vector<Tensor>& outs, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    EXPECT_TRUE(gs[0].defined());  // an output no gradient reached gets zeros
    EXPECT_TRUE(gs[1].defined());
    EXPECT_FALSE(gs[2].defined());  // a non-differentiable one gets nothing
    EXPECT_TRUE(outs[2].defined());
    return {concatenate({gs[0], gs[1]}, 0)};
  }
  int forward_calls = 0;
};

// Says (3,) but makes (2,).
class Liar : public Primitive {
 public:
  const char* name() const override { return "liar"; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    return {{{3}, in[0].dtype, in[0].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override {
    return {Tensor::empty({2}, in[0].dtype())};
  }
};

}  // namespace

TEST(Primitive, ForwardMustMatchShapeInference) {
  Tensor x = make({2}, {1, 2}, DType::Float64);
  PCP_EXPECT_THROW_MSG(pcp::apply<Liar>({x}), RuntimeError, "liar");
}

TEST(Primitive, InferRunsNothing) {
  auto prim = std::make_shared<SplitHalves>();
  auto specs = prim->infer({TensorSpec{{8}, DType::Float32, cpu_device()}});
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].shape, Shape{4});
  EXPECT_EQ(specs[2].shape, Shape{});
  EXPECT_EQ(prim->forward_calls, 0);
}

TEST(Primitive, GradientsFlowThroughEveryOutput) {
  Tensor x = make({4}, {1, 2, 3, 4}, DType::Float64);
  x.set_requires_grad(true);
  auto prim = std::make_shared<SplitHalves>();
  std::vector<Tensor> y = apply_all(prim, {x});
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(values(y[0]), (std::vector<double>{1, 2}));
  EXPECT_EQ(values(y[1]), (std::vector<double>{3, 4}));
  EXPECT_EQ(values(y[2]), (std::vector<double>{30}));
  EXPECT_TRUE(y[0].requires_grad());
  EXPECT_EQ(y[1].output_nr(), 1u);
  EXPECT_FALSE(y[2].requires_grad());  // not differentiable: no grad_fn
  EXPECT_EQ(y[2].grad_fn(), nullptr);
  // d/dx [sum(y0^2) + 3 sum(y1)] = [2 x0, 3]
  backward(add(sum(mul(y[0], y[0])), mul(sum(y[1]), weak_scalar(3.0))), Tensor(), false, /*retain_graph=*/true);
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 4, 3, 3}));
  // Only one output used: the other's cotangent is zeros.
  x.set_grad(Tensor());
  backward(sum(mul(y[1], y[1])), Tensor(), false, /*retain_graph=*/true);  // grad() below goes through it too
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 0, 6, 8}));
  // grad() of a non-first output.
  Tensor z = mul(y[1], weak_scalar(5.0));
  std::vector<Tensor> g = grad(sum(z), {y[1]});
  EXPECT_EQ(values(g[0]), (std::vector<double>{5, 5}));
  EXPECT_EQ(prim->forward_calls, 1);
}

// Autocast casts a product's float32 inputs to the scope's type in apply(); the gradient goes
// back through the casts to the float32 leaves, and backward runs with autocast off.
TEST(Primitive, AutocastCastsByPolicyAndGradientsReachFloat32Leaves) {
  Tensor a = make({2, 2}, {1.0, 2.0, 3.0, 4.0}), b = make({2, 2}, {1.0 / 3, 0.5, -1.0, 0.25});
  a.set_requires_grad(true);
  Tensor y, s;
  {
    AutocastGuard bf16(DType::BFloat16);
    y = matmul(a, b);
    s = softmax(y, -1);
    EXPECT_EQ(y.dtype(), DType::BFloat16);
    EXPECT_EQ(s.dtype(), DType::Float32);
    EXPECT_EQ(add(y, weak_scalar(1.0)).dtype(), DType::BFloat16);  // arithmetic keeps its inputs' type
  }
  EXPECT_FALSE(autocast_dtype().has_value());
  EXPECT_EQ(matmul(a, b).dtype(), DType::Float32);
  // 1/3 rounds to 0.333984375 in bfloat16; y[0][0] = 1 * that + 2 * -1 = -1.666015625, rounded
  // once to bfloat16 (steps of 2^-7 in [1, 2)): -1.6640625.
  EXPECT_EQ(values(y)[0], -1.6640625);
  backward(sum(astype(y, DType::Float32)));
  EXPECT_EQ(a.grad().dtype(), DType::Float32);
  // d sum(a @ b) / da[i][k] = sum_j b[k][j], a bfloat16 product of the bfloat16 b: 0.833984375
  // rounds (steps of 2^-8 in [0.5, 1), a tie, to even) to 0.8359375.
  EXPECT_EQ(values(a.grad()), (std::vector<double>{0.8359375, -0.75, 0.8359375, -0.75}));
  PCP_EXPECT_THROW_MSG(set_autocast_dtype(DType::Int32), ValueError, "autocast");
}
