// The Conv epilogue (fused_activation): a fused Conv, with the optimised and the reference
// kernel, against the unfused Conv followed by the standalone activation op, over the conv
// kernel's paths (pointwise GEMM, dense phase-plane GEMM, depthwise, grouped, 1-D, 3-D reference fallback),
// without a fused residual (Conv input 3), with one added before the activation, and with one
// added after it (fused_residual_after_activation).
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "runtime/executor.h"
#include "runtime/op_table.h"
#include "tests/fusion/fusion_test_graphs.h"
#include "tests/support/numerics.h"

namespace edgefuse::test {
namespace {

struct ConvShape {
  const char* name;
  Shape input;
  Shape weight;
  int64_t group;
  int64_t stride;
  int64_t pad;
};

struct Activation {
  const char* fused;  // fused_activation value
  OpKind op;          // the standalone op (Sigmoid for silu, followed by Mul)
  float alpha, beta;  // LeakyRelu / HardSigmoid attributes
  float lo, hi;       // Clip bounds
};

enum class Residual { kNone, kBeforeActivation, kAfterActivation };

const char* residual_name(Residual residual) {
  switch (residual) {
    case Residual::kNone:
      return "none";
    case Residual::kBeforeActivation:
      return "before activation";
    case Residual::kAfterActivation:
      return "after activation";
  }
  return "?";
}

// Conv [-> Add residual] -> activation [-> Add residual] as separate nodes (fused == false) or one
// Conv with the epilogue and, with a residual, input 3 (a second graph input shaped like the output).
Graph conv_graph(const ConvShape& shape, const Activation& act, bool fused, Residual placement, std::mt19937 rng) {
  const bool residual = placement != Residual::kNone;
  GraphMaker m;
  const ValueId x = m.input(shape.input);
  const size_t spatial = shape.input.size() - 2;
  Shape output_shape = {shape.input[0], shape.weight[0]};
  for (size_t d = 0; d < spatial; ++d) {
    output_shape.push_back((shape.input[d + 2] + 2 * shape.pad - shape.weight[d + 2]) / shape.stride + 1);
  }
  const ValueId r = residual ? m.input(output_shape) : kNoValue;
  Attributes attrs;
  attrs.set("pads", std::vector<int64_t>(2 * spatial, shape.pad));
  attrs.set("strides", std::vector<int64_t>(spatial, shape.stride));
  attrs.set("group", shape.group);
  if (fused) {
    attrs.set("fused_activation", std::string(act.fused));
    attrs.set("fused_alpha", act.alpha);
    attrs.set("fused_beta", act.beta);
    attrs.set("fused_min", act.lo);
    attrs.set("fused_max", act.hi);
    if (placement == Residual::kAfterActivation) attrs.set("fused_residual_after_activation", int64_t{1});
  }
  const ValueId w = m.random_constant(shape.weight, rng);
  const ValueId b = m.random_constant({shape.weight[0]}, rng);
  ValueId y = m.node(OpKind::kConv,
                     residual && fused ? std::vector<ValueId>{x, w, b, r} : std::vector<ValueId>{x, w, b}, attrs);
  if (placement == Residual::kBeforeActivation && !fused) y = m.node(OpKind::kAdd, {y, r});
  if (fused) {
    m.output(y);
    return m.graph();
  }
  Attributes act_attrs;
  act_attrs.set("alpha", act.alpha);
  if (act.op == OpKind::kHardSigmoid) act_attrs.set("beta", act.beta);
  std::vector<ValueId> act_inputs = {y};
  if (act.op == OpKind::kClip) {
    act_inputs.push_back(m.constant(Tensor::scalar<float>(act.lo)));
    act_inputs.push_back(m.constant(Tensor::scalar<float>(act.hi)));
  }
  const ValueId a = m.node(act.op, act_inputs, act_attrs);
  const ValueId activated = std::string(act.fused) == "silu" ? m.node(OpKind::kMul, {y, a}) : a;
  m.output(placement == Residual::kAfterActivation ? m.node(OpKind::kAdd, {activated, r}) : activated);
  return m.graph();
}

TEST_CASE("fused conv epilogue equals conv [+ residual] -> activation op [+ residual]") {
  const ConvShape shapes[] = {
      {"pointwise", {2, 8, 9, 7}, {12, 8, 1, 1}, 1, 1, 0},
      {"3x3 pad 1", {1, 5, 11, 13}, {7, 5, 3, 3}, 1, 1, 1},
      {"3x3 stride 2", {1, 4, 13, 10}, {6, 4, 3, 3}, 1, 2, 1},
      {"depthwise", {1, 6, 9, 9}, {6, 1, 3, 3}, 6, 1, 1},
      {"depthwise, rows of two vectors", {1, 3, 7, 26}, {3, 1, 3, 3}, 3, 1, 1},
      {"depthwise, rows of four vectors", {1, 3, 6, 52}, {3, 1, 3, 3}, 3, 1, 1},
      {"depthwise stride 2", {1, 3, 9, 70}, {3, 1, 3, 3}, 3, 2, 1},
      {"grouped", {1, 8, 7, 7}, {4, 4, 3, 3}, 2, 1, 1},
      {"1-D", {1, 3, 17}, {5, 3, 3}, 1, 1, 1},
      {"3-D", {1, 2, 4, 5, 6}, {3, 2, 3, 3, 3}, 1, 1, 1},
      {"large plane", {1, 3, 80, 80}, {4, 3, 3, 3}, 1, 1, 1},  // several column blocks
  };
  const Activation activations[] = {
      {"relu", OpKind::kRelu, 0.01f, 0, 0, 0},        {"leaky_relu", OpKind::kLeakyRelu, 0.13f, 0, 0, 0},
      {"clip", OpKind::kClip, 0, 0, -0.4f, 0.6f},     {"sigmoid", OpKind::kSigmoid, 0, 0, 0, 0},
      {"hard_swish", OpKind::kHardSwish, 0, 0, 0, 0}, {"hard_sigmoid", OpKind::kHardSigmoid, 0.3f, 0.45f, 0, 0},
      {"silu", OpKind::kSigmoid, 0, 0, 0, 0},
  };
  std::mt19937 rng(11);
  for (const ConvShape& shape : shapes) {
    for (const Activation& act : activations) {
      for (Residual residual : {Residual::kNone, Residual::kBeforeActivation, Residual::kAfterActivation}) {
        CAPTURE(shape.name);
        CAPTURE(act.fused);
        CAPTURE(residual_name(residual));
        const Graph unfused = conv_graph(shape, act, false, residual, rng);
        const Graph fused = conv_graph(shape, act, true, residual, rng);  // same rng state: same weights
        const std::vector<Tensor> inputs = random_inputs_for(unfused, rng);
        const std::vector<Tensor> expected = run_graph(unfused, inputs, true);
        for (bool reference : {false, true}) {
          CAPTURE(reference);
          CHECK(max_relative_l2(run_graph(fused, inputs, reference), expected) <= 1e-5);
        }
      }
    }
  }
}

TEST_CASE("a fused residual of the wrong shape is an invalid model") {
  std::mt19937 rng(13);
  GraphMaker m;
  const ValueId x = m.input({1, 2, 3, 3});
  const ValueId r = m.input({1, 2, 3, 4});
  m.output(m.node(OpKind::kConv, {x, m.random_constant({2, 2, 1, 1}, rng), kNoValue, r}));
  Result<Executor> executor = Executor::create(std::make_shared<const Graph>(m.graph()));
  REQUIRE(executor.is_ok());
  Result<std::vector<Tensor>> outputs = executor->run(random_inputs_for(m.graph(), rng));
  REQUIRE_FALSE(outputs.is_ok());
  CHECK(outputs.status().code() == StatusCode::kInvalidModel);
  CHECK(outputs.status().message().find("fused residual") != std::string::npos);
}

TEST_CASE("fused_residual_after_activation other than 0 or 1 is an invalid model") {
  std::mt19937 rng(14);
  GraphMaker m;
  const ValueId x = m.input({1, 1, 3, 3});
  Attributes attrs;
  attrs.set("fused_activation", std::string("relu"));
  attrs.set("fused_residual_after_activation", int64_t{2});
  m.output(m.node(OpKind::kConv, {x, m.random_constant({1, 1, 1, 1}, rng), kNoValue, x}, attrs));
  Result<Executor> executor = Executor::create(std::make_shared<const Graph>(m.graph()));
  REQUIRE(executor.is_ok());
  Result<std::vector<Tensor>> outputs = executor->run(random_inputs_for(m.graph(), rng));
  REQUIRE_FALSE(outputs.is_ok());
  CHECK(outputs.status().code() == StatusCode::kInvalidModel);
  CHECK(outputs.status().message().find("fused_residual_after_activation") != std::string::npos);
}

TEST_CASE("an unknown fused_activation is an invalid model") {
  std::mt19937 rng(12);
  GraphMaker m;
  const ValueId x = m.input({1, 1, 3, 3});
  Attributes attrs;
  attrs.set("fused_activation", std::string("gelu"));
  m.output(m.node(OpKind::kConv, {x, m.random_constant({1, 1, 1, 1}, rng)}, attrs));
  Result<Executor> executor = Executor::create(std::make_shared<const Graph>(m.graph()));
  REQUIRE(executor.is_ok());
  const std::vector<Tensor> inputs = random_inputs_for(m.graph(), rng);
  Result<std::vector<Tensor>> outputs = executor->run(inputs);
  REQUIRE_FALSE(outputs.is_ok());
  CHECK(outputs.status().code() == StatusCode::kInvalidModel);
  CHECK(outputs.status().message().find("gelu") != std::string::npos);
}

}  // namespace
}  // namespace edgefuse::test
