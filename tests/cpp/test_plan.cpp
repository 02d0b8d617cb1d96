// Plans from C++ alone (cpp/pcp/plan/): a traced computation replays on new arguments, reads
// captured tensors by reference, keeps the gradients it leaves on them, and refuses what it
// cannot replay.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "pcp/autograd/engine.h"
#include "pcp/core/error.h"
#include "pcp/core/random.h"
#include "pcp/ops/fused.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/optim.h"
#include "pcp/plan/memory.h"
#include "pcp/plan/trace.h"
#include "test_util.h"

using namespace pcp;
using namespace pcp_test;

namespace {

// y = sum(tanh(x @ w) * 2), computed by hand in double.
double reference(const std::vector<double>& x, const std::vector<double>& w) {
  double s = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) s += 2 * std::tanh(x[i * 3] * w[j] + x[i * 3 + 1] * w[2 + j] + x[i * 3 + 2] * w[4 + j]);
  return s;
}

}  // namespace

TEST(Plan, ReplaysOnNewArgumentsAndReadsCapturedTensorsWhenItRuns) {
  Tensor w = make({3, 2}, {0.1, -0.2, 0.3, 0.4, -0.5, 0.6});
  Tensor x0 = make({2, 3}, {1, 2, 3, 4, 5, 6});
  std::shared_ptr<plan::Plan> p;
  {
    plan::Trace trace({x0});
    Tensor y = sum(mul(tanh(matmul(x0, w)), scalar(2.0)));
    p = trace.finish({y});
  }
  EXPECT_EQ(plan::Trace::active(), nullptr);
  EXPECT_EQ(p->captured.size(), 1u);  // w (the constant 2 is an immediate of the fused tanh and mul)
  const std::vector<double> x1 = {0.5, -1, 2, 0, 1.5, -0.5};
  EXPECT_NEAR(values(p->run({make({2, 3}, x1)})[0])[0], reference(x1, values(w)), 1e-5);
  index_assign(w, {IndexItem{IndexItem::Int, 0}}, scalar(1.0));  // an update outside the plan
  EXPECT_NEAR(values(p->run({make({2, 3}, x1)})[0])[0], reference(x1, values(w)), 1e-5);
  p->check();
  EXPECT_THROW(p->run({make({3, 2}, x1)}), ValueError);
}

TEST(Plan, ATrainingStepLeavesGradientsAndUpdatesParameters) {
  Tensor w = make({3}, {0.5, -1.0, 2.0});
  w.set_requires_grad(true);
  Tensor m = zeros({3}), v = zeros({3});
  auto step = std::make_shared<HostScalar>(1.0), lr = std::make_shared<HostScalar>(0.1);
  auto train = [&](const Tensor& x) {
    Tensor loss = sum(square(mul(x, w)));
    w.set_grad(Tensor());
    backward(loss);
    adam_step({w}, {w.grad()}, {m}, {v}, step, lr, AdamConfig{0.1});
    return loss;
  };
  Tensor x = make({3}, {1, 2, 3});
  std::shared_ptr<plan::Plan> p;
  {
    plan::Trace trace({x});
    Tensor loss = train(x);
    p = trace.finish({loss});
  }
  // The same steps eagerly on copies, then the plan's replays: the same parameters.
  Tensor w2 = make({3}, values(w)), m2 = make({3}, values(m)), v2 = make({3}, values(v));
  w2.set_requires_grad(true);
  for (int k = 2; k <= 3; ++k) {
    step->value = k;
    p->run({x});
    Tensor loss = sum(square(mul(x, w2)));
    w2.set_grad(Tensor());
    backward(loss);
    adam_step({w2}, {w2.grad()}, {m2}, {v2}, k, AdamConfig{0.1});
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(values(w)[i], values(w2)[i], 1e-6);
      EXPECT_NEAR(values(w.grad())[i], values(w2.grad())[i], 1e-5);
    }
  }
}

TEST(Plan, RefusesWhatAReplayWouldNotRedo) {
  Tensor x = make({2}, {1, 2});
  {
    plan::Trace trace({x});
    Tensor y = mul(x, scalar(3.0));
    EXPECT_THROW(y.item_double(), ValueError);  // a host read of a traced value
    EXPECT_THROW(y.data<float>(), ValueError);  // any, however an op's front end reads it
    EXPECT_THROW(x.raw_data(), ValueError);     // an argument's too
    EXPECT_THROW(rand({2}), ValueError);        // random numbers
    EXPECT_THROW(index_assign(x, {IndexItem{IndexItem::Int, 0}}, scalar(0.0)), ValueError);  // an argument, in place
    Tensor fresh = make({2}, {0, 0});  // memory made here and not yet read by an op: a constant being built
    index_assign(fresh, {IndexItem{IndexItem::Int, 0}}, scalar(5.0));
    EXPECT_NO_THROW(trace.finish({add(y, fresh)}));
  }
  EXPECT_EQ(plan::Trace::active(), nullptr);
}

TEST(PlanPasses, FoldConstantsDropDeadNodesKeepRandomOnes) {
  Tensor x = make({3}, {1, 2, 3});
  std::shared_ptr<plan::Plan> p;
  {
    plan::Trace trace({x});
    Tensor c = mul(make({3}, {1, 1, 1}), scalar(2.0));  // made here: folded into one constant
    Tensor dead = exp(x);                               // read by nothing: removed
    Tensor noise = dropout(make({3}, {1, 1, 1}), 0.5);  // a constant's dropout: drawn on every run
    p = trace.finish({add(mul(x, c), noise)});
    (void)dead;
  }
  std::vector<std::string> ops;
  for (const plan::Node& n : p->nodes) ops.push_back(n.prim->name());
  EXPECT_EQ(ops, (std::vector<std::string>{"dropout", "fused_elementwise"}));  // mul and add, fused
  EXPECT_EQ(p->traced_nodes, 5);  // mul, exp, dropout, mul, add
  Generator::global().seed(7);
  const std::vector<double> a = values(p->run({x})[0]);
  Generator::global().seed(7);
  const std::vector<double> b = values(p->run({x})[0]), c = values(p->run({x})[0]);
  EXPECT_EQ(a, b);  // the same draws from the same generator state
  EXPECT_NE(b, c);  // a fresh mask on the next run (3 elements: equal by chance 1 in 4)
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(b[i] == 2 * (i + 1) || b[i] == 2 * (i + 1) + 2);
}

TEST(PlanRecord, ATrainingStepMadeAgainFromItsRecordRunsTheSame) {
  // record_of / plan_from: what a plan file holds, made back into a plan (primitives by name,
  // host scalars and random draws shared as before), equal in what it computes.
  Tensor w = make({4}, {0.5, -1.0, 2.0, 0.25});
  w.set_requires_grad(true);
  Tensor m = zeros({4}), v = zeros({4});
  auto step = std::make_shared<HostScalar>(1.0), lr = std::make_shared<HostScalar>(0.05);
  Tensor x = make({4}, {1, 2, 3, 4});
  std::shared_ptr<plan::Plan> p;
  {
    plan::Trace trace({x});
    Tensor loss = sum(square(dropout(mul(x, w), 0.25)));
    w.set_grad(Tensor());
    backward(loss);
    adam_step({w}, {w.grad()}, {m}, {v}, step, lr, AdamConfig{0.05});
    p = trace.finish({loss});
  }
  plan::PlanRecord rec = plan::record_of(*p);
  ASSERT_EQ(rec.scalars.size(), 2u);
  ASSERT_EQ(rec.draws.size(), 1u);
  // The copy updates copies of the state: the record's captured tensors, swapped for copies.
  for (auto& c : rec.captured) c.second = make(c.second.shape(), values(c.second));
  auto again = plan::plan_from(rec);
  step->value = 2;
  Generator::global().seed(11);
  const double a = values(p->run({x})[0])[0];
  Generator::global().seed(11);
  const double b = values(again->run({x})[0])[0];
  EXPECT_DOUBLE_EQ(a, b);
  rec.nodes[0].op = "no_such_op";
  EXPECT_THROW(plan::plan_from(rec), ValueError);
}

TEST(PlanPasses, CommonSubexpressionsMergeButNotAcrossWrites) {
  Tensor x = make({3}, {0.5, 1, 2});
  Tensor w = make({3}, {1, 1, 1});  // state a step writes
  std::shared_ptr<plan::Plan> p;
  {
    plan::Trace trace({x});
    Tensor a = add(exp(x), exp(x));          // the second exp is the first
    Tensor before = mul(x, w);
    clip_grad_norm({w}, 0.5);                // writes w: what reads w after is new
    Tensor after = mul(x, w);
    p = trace.finish({a, before, after});
  }
  std::vector<std::string> ops;
  for (const plan::Node& n : p->nodes) ops.push_back(n.prim->name());
  // before's mul reads x as the exps do: it fuses with them (a sibling); after's cannot (w was written).
  EXPECT_EQ(ops, (std::vector<std::string>{"fused_elementwise", "clip_grad_norm", "mul"}));
  EXPECT_EQ(dynamic_cast<const FusedElementwise&>(*p->nodes[0].prim).program().code.size(), 3u);  // one exp, add, mul
  const std::vector<Tensor> out = p->run({make({3}, {0, 0, 1})});
  EXPECT_NEAR(values(out[0])[2], 2 * std::exp(1.0), 1e-5);
  // w was clipped to norm 0.5 by the trace; the replay's clip leaves it (nearly) so.
  EXPECT_NEAR(values(out[1])[2], 0.5 / std::sqrt(3.0), 1e-5);
  EXPECT_NEAR(values(out[2])[2], values(out[1])[2], 1e-6);
}

TEST(PlanMemory, ValuesAliveAtOnceViewsSharingTheirInputs) {
  Tensor x0 = Tensor::empty({256, 4}, DType::Float64);  // float64: not fused, each op its own value
  std::shared_ptr<plan::Plan> p;
  {
    plan::Trace trace({x0});
    Tensor a = exp(x0);                              // 8 KiB
    Tensor v = reshape(permute(a, {1, 0}), {1024});  // views of a: no bytes
    Tensor b = add(v, scalar(1.0));                  // 8 KiB, a still read below
    Tensor c = mul(b, reshape(a, {1024}));           // 8 KiB: a, b and c alive; then a and b freed
    Tensor d = sqrt(c);                              // 8 KiB: c and d
    p = trace.finish({sum(d)});
  }
  const plan::MemoryPlan m = plan::plan_memory(*p);
  EXPECT_EQ(m.peak_bytes, 3 * 8192);
  EXPECT_EQ(m.allocated_bytes, 4 * 8192 + 8);  // and the 0-d sum
  EXPECT_EQ(m.allocations, 5);
  EXPECT_EQ(p->nodes[size_t(m.peak_node)].prim->name(), std::string("mul"));
}

TEST(PlanPasses, ElementwiseChainsFuseIntoOneNodeThatComputesTheSame) {
  const std::vector<double> xv = {0.5, -1, 2, 0.25, -0.75, 1.5};
  Tensor x = make({2, 3}, xv), b = make({3}, {0.1, -0.2, 0.3}), w = make({3, 1}, {1, 2, 3});
  const auto f = [&](const Tensor& in) {
    Tensor h = tanh(add(mul(in, scalar(2.0)), b));  // a row broadcast and a scalar
    return std::vector<Tensor>{sub(h, exp(in)), matmul(h, w)};  // h: read by a matmul too
  };
  std::shared_ptr<plan::Plan> p;
  {
    plan::Trace trace({x});
    p = trace.finish(f(x));
  }
  std::vector<std::string> ops;
  for (const plan::Node& n : p->nodes) ops.push_back(n.prim->name());
  EXPECT_EQ(ops, (std::vector<std::string>{"fused_elementwise", "matmul"}));
  EXPECT_EQ(p->nodes[0].outputs.size(), 2u);  // h and the difference
  const Tensor x2 = make({2, 3}, {1, 0, -2, 0.5, 3, -1});
  const std::vector<Tensor> got = p->run({x2}), want = f(x2);
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < values(want[i]).size(); ++j) EXPECT_NEAR(values(got[i])[j], values(want[i])[j], 1e-6);
}
