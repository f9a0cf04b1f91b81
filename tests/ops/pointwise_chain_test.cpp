// PointwiseChain: the reference and optimised kernels against the chain run op by op through the
// single ops' reference kernels (an independent oracle), on random chains of every step kind
// with broadcast inputs, constant operands, long rows that cross the kernel's tiles and threads;
// the attribute checks.
#include "runtime/ops/pointwise_chain.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "runtime/ops/broadcast.h"
#include "runtime/thread_pool.h"
#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using edgefuse::test::make_node;
using edgefuse::test::run_op;

namespace {

int64_t pick(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

Tensor run_one(const Node& node, const std::vector<const Tensor*>& inputs, bool reference, ThreadPool* pool = nullptr) {
  auto result = run_op(node, inputs, reference, pool);
  REQUIRE_MESSAGE(result.is_ok(), result.status().to_string());
  return std::move(result.value()[0]);
}

// `full` with random dims set to 1 and leading dims dropped: a shape that broadcasts to it.
Shape broadcast_form(const Shape& full, std::mt19937& rng) {
  Shape shape(full.begin() + pick(rng, 0, static_cast<int64_t>(full.size()) / 2), full.end());
  for (int64_t& dim : shape) {
    if (pick(rng, 0, 2) == 0) dim = 1;
  }
  return shape;
}

struct ChainCase {
  Node node;
  std::vector<Tensor> inputs;
  PointwiseChain chain;
};

// A random chain whose values stay finite: Sqrt and Pow follow a positive bounded step, Exp a
// bounded one (or the head), divisors are operands in [0.5, 1.5]; every input is read.
ChainCase random_chain(std::mt19937& rng) {
  const bool long_rows = pick(rng, 0, 4) == 0;  // rows longer than the CPU kernel's tile
  Shape full;
  if (long_rows) {
    full = {pick(rng, 1, 3), pick(rng, 1100, 2600)};
  } else {
    for (int64_t d = pick(rng, 1, 5); d > 0; --d) full.push_back(pick(rng, 1, 6));
  }
  ChainCase c;
  const int64_t step_count = pick(rng, 1, kMaxChainSteps);
  OpKind previous = OpKind::kAdd;
  int binary_with_input = 0;
  for (int64_t s = 0; s < step_count; ++s) {
    const bool positive_bounded = previous == OpKind::kSigmoid || previous == OpKind::kHardSigmoid;
    const bool bounded = positive_bounded || previous == OpKind::kTanh || previous == OpKind::kClip || s == 0;
    PointwiseChainStep step;
    do {
      step.op = static_cast<OpKind>(pick(rng, 0, kOpCount - 1));
    } while ((!is_pointwise_unary(step.op) && !is_pointwise_binary(step.op)) ||
             ((step.op == OpKind::kSqrt || step.op == OpKind::kPow) && !positive_bounded) ||
             (step.op == OpKind::kExp && !bounded));
    if (step.op == OpKind::kLeakyRelu) step.alpha = 0.1f;
    if (step.op == OpKind::kHardSigmoid) step = {OpKind::kHardSigmoid, -1, false, 0.25f, 0.4f, 0, 0};
    if (step.op == OpKind::kClip) step = {OpKind::kClip, -1, false, 0, 0, -0.5f, 0.8f};
    if (is_pointwise_binary(step.op)) {
      step.chain_on_right = step.op != OpKind::kDiv && step.op != OpKind::kPow && pick(rng, 0, 2) == 0;
      if (pick(rng, 0, 3) == 0) {
        step.operand = -1;
        step.alpha = static_cast<float>(std::uniform_real_distribution<double>(0.5, 1.5)(rng));
      } else {
        step.operand = ++binary_with_input;  // renumbered below
      }
    }
    c.chain.steps.push_back(step);
    previous = step.op;
  }
  // Inputs: the head, then one per binary step with an input operand up to kMaxChainInputs - 1;
  // further such steps reuse one at random (the head included, as in x * sigmoid(x)).
  const int input_count = std::min(1 + binary_with_input, kMaxChainInputs);
  for (PointwiseChainStep& step : c.chain.steps) {
    if (step.operand > 0 && step.operand >= input_count) step.operand = static_cast<int>(pick(rng, 0, input_count - 1));
  }
  for (int k = 0; k < input_count; ++k) {
    const Shape shape = k == 0 && pick(rng, 0, 1) == 0 ? full : broadcast_form(full, rng);
    c.inputs.push_back(k == 0 ? test::random_tensor(DType::kF32, shape, rng, -2.0, 2.0)
                              : test::random_tensor(DType::kF32, shape, rng, 0.5, 1.5));
  }
  c.node = make_node(OpKind::kPointwiseChain, input_count);
  set_pointwise_chain(c.node.attrs, c.chain);
  return c;
}

// The chain op by op, each through its own op's reference kernel (f32 between steps).
Tensor run_op_by_op(const ChainCase& c) {
  Tensor value = c.inputs[0];
  for (const PointwiseChainStep& step : c.chain.steps) {
    if (is_pointwise_unary(step.op)) {
      Node node = make_node(step.op, step.op == OpKind::kClip ? 3 : 1);
      node.attrs.set("alpha", step.alpha);
      node.attrs.set("beta", step.beta);
      const Tensor lo = Tensor::scalar<float>(step.lo);
      const Tensor hi = Tensor::scalar<float>(step.hi);
      value = step.op == OpKind::kClip ? run_one(node, {&value, &lo, &hi}, true) : run_one(node, {&value}, true);
      continue;
    }
    const Tensor constant = Tensor::scalar<float>(step.alpha);
    Tensor other = step.operand < 0 ? constant : c.inputs[static_cast<size_t>(step.operand)];
    if (step.op == OpKind::kPRelu) {  // PRelu's slope must not widen X: bring both to one shape
      const Tensor zeros = Tensor::zeros(DType::kF32, broadcast_shapes(value.shape(), other.shape()).value());
      const Node add = make_node(OpKind::kAdd, 2);
      value = run_one(add, {&value, &zeros}, true);
      other = run_one(add, {&other, &zeros}, true);
    }
    const Node node = make_node(step.op, 2);
    value = step.chain_on_right ? run_one(node, {&other, &value}, true) : run_one(node, {&value, &other}, true);
  }
  return value;
}

}  // namespace

TEST_CASE("PointwiseChain: reference and CPU kernels equal the chain run op by op, on 300 random chains") {
  std::mt19937 rng(31);
  ThreadPool three(3);
  int long_cases = 0;
  int broadcast_heads = 0;
  for (int trial = 0; trial < 300; ++trial) {
    CAPTURE(trial);
    const ChainCase c = random_chain(rng);
    Tensor expected = run_op_by_op(c);
    std::vector<const Tensor*> inputs;
    Shape out;
    for (const Tensor& t : c.inputs) {
      inputs.push_back(&t);
      out = broadcast_shapes(out, t.shape()).value();
    }
    REQUIRE(expected.shape() == out);
    long_cases += out.back() > 1024 ? 1 : 0;
    broadcast_heads += c.inputs[0].shape() != out ? 1 : 0;
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &three}) {
      for (bool reference : {true, false}) {
        if (reference && pool != nullptr) continue;
        INFO(std::string(reference ? "reference" : "cpu"), " threads ", pool ? pool->size() : 0);
        const Tensor actual = run_one(c.node, inputs, reference, pool);
        REQUIRE(actual.shape() == out);
        const test::ErrorStats stats = test::compare_tensors(actual, expected);
        CHECK_MESSAGE(stats.relative_l2 <= 1e-5, stats.to_string());
        CHECK(stats.mismatched_nan == 0);
      }
    }
  }
  CHECK(long_cases > 20);
  CHECK(broadcast_heads > 50);
}

namespace {

// Copies between a tensor and its window [start, end) along `axis`: the window's runs of
// (end - start) x inner elements, one per index before the axis.
void copy_window(const Tensor& whole, Tensor& window, int axis, int64_t start, bool into_window) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= whole.dim(d);
  for (int d = axis + 1; d < whole.rank(); ++d) inner *= whole.dim(d);
  const int64_t run = window.dim(axis) * inner;
  float* w = window.data<float>();
  auto* x = const_cast<float*>(whole.data<float>());
  for (int64_t o = 0; o < outer; ++o) {
    float* at = x + (o * whole.dim(axis) + start) * inner;
    if (into_window) {
      std::copy(at, at + run, w + o * run);
    } else {
      std::copy(w + o * run, w + o * run + run, at);
    }
  }
}

}  // namespace

TEST_CASE("PointwiseChain: windowed chains change their window alone, in place or not, on 200 random chains") {
  std::mt19937 rng(47);
  ThreadPool three(3);
  int in_first_dim = 0, in_last_dim = 0;
  for (int trial = 0; trial < 200; ++trial) {
    CAPTURE(trial);
    ChainCase c = random_chain(rng);
    Shape window_shape;
    for (const Tensor& t : c.inputs) window_shape = broadcast_shapes(window_shape, t.shape()).value();
    const int axis = static_cast<int>(pick(rng, 0, static_cast<int64_t>(window_shape.size()) - 1));
    const int64_t before = pick(rng, 0, 3), after = pick(rng, before == 0 ? 1 : 0, 3);
    Shape full = window_shape;
    full[static_cast<size_t>(axis)] += before + after;
    in_first_dim += axis == 0 ? 1 : 0;
    in_last_dim += axis + 1 == static_cast<int>(full.size()) ? 1 : 0;
    const Tensor x0 = test::random_tensor(DType::kF32, full, rng, -2.0, 2.0);
    c.inputs[0] = Tensor::zeros(DType::kF32, window_shape);
    copy_window(x0, c.inputs[0], axis, before, true);
    Tensor computed = run_op_by_op(c);
    Tensor expected = x0.clone();
    copy_window(expected, computed, axis, before, false);

    c.chain.window = ChainWindow{axis, before, before + window_shape[static_cast<size_t>(axis)]};
    set_pointwise_chain(c.node.attrs, c.chain);
    std::vector<const Tensor*> inputs = {&x0};
    for (size_t k = 1; k < c.inputs.size(); ++k) inputs.push_back(&c.inputs[k]);
    for (bool reference : {true, false}) {
      INFO(std::string(reference ? "reference" : "cpu"));
      const Tensor actual = run_one(c.node, inputs, reference, reference ? nullptr : &three);
      REQUIRE(actual.shape() == full);
      const test::ErrorStats stats = test::compare_tensors(actual, expected);
      CHECK_MESSAGE(stats.relative_l2 <= 1e-5, stats.to_string());
      CHECK(stats.mismatched_nan == 0);
    }
    // In place: the output is X0's bytes; elements outside the window stay bit for bit.
    Tensor in_place = x0.clone();
    std::vector<const Tensor*> in_place_inputs = inputs;
    in_place_inputs[0] = &in_place;
    Tensor* outputs[] = {&in_place};
    REQUIRE(op_def(OpKind::kPointwiseChain).cpu(KernelArgs{c.node, in_place_inputs, outputs, &three}).is_ok());
    CHECK(test::compare_tensors(in_place, expected).relative_l2 <= 1e-5);
    for (int64_t i = 0; i < x0.numel(); i += 7) {
      int64_t index_on_axis = i;
      for (int d = in_place.rank() - 1; d > axis; --d) index_on_axis /= in_place.dim(d);
      index_on_axis %= in_place.dim(axis);
      if (index_on_axis < before || index_on_axis >= full[static_cast<size_t>(axis)] - after) {
        REQUIRE(in_place.data<float>()[i] == x0.data<float>()[i]);
      }
    }
  }
  CHECK(in_first_dim > 20);
  CHECK(in_last_dim > 20);
}

TEST_CASE("PointwiseChain: windows must fit input 0 and the other inputs must not widen them") {
  Node node = make_node(OpKind::kPointwiseChain, 2);
  PointwiseChain chain{{{OpKind::kAdd, 1}}, ChainWindow{1, 2, 4}};
  set_pointwise_chain(node.attrs, chain);
  const Tensor x = Tensor::zeros(DType::kF32, {3, 5});
  const Tensor fits = Tensor::zeros(DType::kF32, {3, 2});
  const Tensor widens = Tensor::zeros(DType::kF32, {2, 3, 2});
  CHECK(run_op(node, {&x, &fits}, true).is_ok());
  CHECK(run_op(node, {&x, &widens}, true).status().to_string().find("widens the chain's window") != std::string::npos);
  chain.window = ChainWindow{1, 4, 6};
  set_pointwise_chain(node.attrs, chain);
  CHECK(run_op(node, {&x, &fits}, true).status().to_string().find("does not fit input 0") != std::string::npos);
  node.attrs.set("chain_window", std::vector<int64_t>{1, 3, 3});
  CHECK(run_op(node, {&x, &fits}, true).status().to_string().find("chain_window must be") != std::string::npos);
}

TEST_CASE("PointwiseChain: a chain whose output takes its input's bytes (in place) is unchanged") {
  std::mt19937 rng(5);
  PointwiseChain chain;
  chain.steps = {{OpKind::kSigmoid}, {OpKind::kMul, 0}, {OpKind::kAdd, 1}, {OpKind::kSub, -1, true, 0.5f}};
  Node node = make_node(OpKind::kPointwiseChain, 2);
  set_pointwise_chain(node.attrs, chain);
  const Tensor x = test::random_tensor(DType::kF32, {3, 2000}, rng);
  const Tensor bias = test::random_tensor(DType::kF32, {3, 1}, rng);
  const Tensor expected = run_one(node, {&x, &bias}, true);
  Tensor in_place = x.clone();
  Tensor* outputs[] = {&in_place};
  const Tensor* inputs[] = {&in_place, &bias};
  ThreadPool two(2);
  REQUIRE(op_def(OpKind::kPointwiseChain).cpu(KernelArgs{node, inputs, outputs, &two}).is_ok());
  CHECK(test::compare_tensors(in_place, expected).relative_l2 <= 1e-6);
  // 0.5 - (sigmoid(x) * x + bias): the constant on the left of the last step.
  const float x0 = x.data<float>()[0];
  const double silu = x0 / (1.0 + std::exp(-static_cast<double>(x0)));
  CHECK(expected.data<float>()[0] == doctest::Approx(0.5 - (silu + bias.data<float>()[0])).epsilon(1e-5));
}

TEST_CASE("PointwiseChain: malformed chain attributes are invalid models naming the step") {
  const Tensor x = Tensor::zeros(DType::kF32, {4});
  const auto error_of = [&](const PointwiseChain& chain, int inputs, const Attributes* raw = nullptr) {
    Node node = make_node(OpKind::kPointwiseChain, inputs);
    if (raw != nullptr) {
      node.attrs = *raw;
    } else {
      set_pointwise_chain(node.attrs, chain);
    }
    const std::vector<const Tensor*> args(static_cast<size_t>(inputs), &x);
    Result<std::vector<Tensor>> result = run_op(node, args, true);
    REQUIRE_FALSE(result.is_ok());
    return result.status().to_string();
  };
  CHECK(error_of({}, 1).find("chain_ops has 0 steps") != std::string::npos);
  CHECK(error_of({{{OpKind::kRelu, 0}}}, 1).find("step 0: unary Relu has operand 0") != std::string::npos);
  CHECK(error_of({{{OpKind::kRelu}, {OpKind::kAdd, 2}}}, 2).find("step 1: Add reads input 2 of 2") !=
        std::string::npos);
  CHECK(error_of({{{OpKind::kConv}}}, 1).find("step 0: Conv is not a pointwise op") != std::string::npos);
  PointwiseChain long_chain;
  long_chain.steps.assign(kMaxChainSteps + 1, PointwiseChainStep{OpKind::kRelu});
  CHECK(error_of(long_chain, 1).find("expected 1 to 8") != std::string::npos);
  CHECK(error_of({{{OpKind::kAdd, 1}}}, 5).find("5 inputs, at most 4") != std::string::npos);
  Attributes mismatched;
  set_pointwise_chain(mismatched, {{{OpKind::kRelu}, {OpKind::kExp}}});
  mismatched.set("chain_on_right", std::vector<int64_t>{0});
  CHECK(error_of({}, 1, &mismatched).find("disagree on the step count") != std::string::npos);
}

TEST_CASE("PointwiseChain: inputs must be f32 and broadcast together") {
  Node node = make_node(OpKind::kPointwiseChain, 2);
  set_pointwise_chain(node.attrs, {{{OpKind::kAdd, 1}}});
  const Tensor a = Tensor::zeros(DType::kF32, {2, 3});
  const Tensor b = Tensor::zeros(DType::kF32, {4});
  const Tensor i = Tensor::zeros(DType::kI64, {3});
  CHECK(run_op(node, {&a, &b}, true).status().to_string().find("cannot be broadcast") != std::string::npos);
  CHECK(run_op(node, {&a, &i}, true).status().to_string().find("expected f32") != std::string::npos);
}
