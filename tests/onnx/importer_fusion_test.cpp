// Exporters' spellings of a Conv's epilogue, imported from ONNX and optimised: a BatchNormalization
// left as Mul and Add (tf2onnx), HardSwish spelt out with an attribute-form Clip-6 (Keras, hand-written
// PyTorch modules) and as Mul(y, HardSigmoid(y)) (PyTorch before opset 14) all become Conv epilogues,
// with the same outputs as the imported graph.
#include <doctest/doctest.h>

#include <random>

#include "fusion/pass_manager.h"
#include "runtime/executor.h"
#include "tests/onnx/onnx_test_models.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

std::vector<float> values(size_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> pick(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = pick(rng);
  return v;
}

std::vector<Tensor> run(std::shared_ptr<const Graph> graph, const std::vector<Tensor>& inputs) {
  Result<Executor> executor = Executor::create(std::move(graph));
  REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
  Result<std::vector<Tensor>> outputs = executor->run(inputs);
  REQUIRE_MESSAGE(outputs.is_ok(), outputs.status().to_string());
  return std::move(outputs).value();
}

}  // namespace

TEST_CASE("exported epilogues: Mul/Add scale and shift and both HardSwish spellings fold into the Convs") {
  std::mt19937 rng(21);
  OnnxModelBuilder m(10);  // Clip-6: min and max as attributes
  m.input("x", {1, 3, 9, 10});
  m.initializer("w1", {8, 3, 3, 3}, values(8 * 3 * 3 * 3, rng, -0.6f, 0.6f));
  m.initializer("scale", {1, 8, 1, 1}, values(8, rng, 0.5f, 2.0f));
  m.initializer("shift", {8, 1, 1}, values(8, rng, -1.0f, 1.0f));
  m.initializer("three", {}, {3.0f});
  m.initializer("six", {}, {6.0f});
  m.initializer("w2", {5, 8, 1, 1}, values(5 * 8, rng, -0.8f, 0.8f));
  set_ints(m.node("Conv", {"x", "w1"}, {"y1"}), "pads", {1, 1, 1, 1});
  m.node("Mul", {"y1", "scale"}, {"scaled"});
  m.node("Add", {"shift", "scaled"}, {"z"});
  m.node("Add", {"z", "three"}, {"z3"});
  onnx::NodeProto* clip = m.node("Clip", {"z3"}, {"gate"});
  set_float(clip, "min", 0.0f);
  set_float(clip, "max", 6.0f);
  m.node("Mul", {"z", "gate"}, {"zg"});
  m.node("Div", {"zg", "six"}, {"h1"});
  m.node("Conv", {"h1", "w2"}, {"y2"});
  set_float(m.node("HardSigmoid", {"y2"}, {"s2"}), "alpha", 1.0f / 6.0f);
  m.node("Mul", {"y2", "s2"}, {"h2"});
  m.output("h2");

  Result<std::shared_ptr<Graph>> imported = import_model(m);
  REQUIRE_MESSAGE(imported.is_ok(), imported.status().to_string());
  auto fused = std::make_shared<Graph>(**imported);
  Result<std::vector<PassReport>> reports = optimize_graph(*fused);
  REQUIRE_MESSAGE(reports.is_ok(), reports.status().to_string());

  const std::map<std::string, int> ops = count_ops(*fused);
  CHECK(ops == std::map<std::string, int>{{"Conv", 2}});
  for (const Node& conv : fused->nodes()) CHECK(conv.attrs.get_string("fused_activation", "") == "hard_swish");

  std::mt19937 input_rng(22);
  // Inputs up to 3 put the Convs' outputs on both sides of HardSwish's kinks at -3 and 3.
  const std::vector<Tensor> inputs = {random_tensor(DType::kF32, {1, 3, 9, 10}, input_rng, -3.0, 3.0)};
  const std::vector<Tensor> expected = run(*imported, inputs);
  const std::vector<Tensor> actual = run(fused, inputs);
  REQUIRE(actual.size() == 1);
  const ErrorStats error = compare_tensors(actual[0], expected[0]);
  INFO(error.to_string());
  CHECK(error.relative_l2 <= 1e-5);
}
