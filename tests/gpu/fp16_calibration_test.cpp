// fp16 mixed precision: the lowering keeps chosen activations in f32 (whole aliased Concats
// together), and calibrate_fp16's bisection finds the layers that dominate the error, stopping at
// its target. The search runs against an evaluator whose error per layer is set by the test, so
// every pick and every run can be checked.
#include "runtime/cuda/fp16_calibration.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "runtime/cuda/lowering.h"
#include "runtime/memory_plan.h"
#include "tests/fusion/fusion_test_graphs.h"

namespace edgefuse::test {
namespace {

// A chain of `layers` 1x1 convs (each a calibration candidate: constant weights, one activation
// input), every activation in the arena.
struct Chain {
  std::shared_ptr<Graph> graph;
  std::vector<ValueId> layer_inputs;  // per conv, its activation input
};

Chain conv_chain(int layers) {
  GraphMaker m;
  std::mt19937 rng(4);
  Chain chain;
  ValueId x = m.input({1, 4, 8, 8});
  for (int i = 0; i < layers; ++i) {
    chain.layer_inputs.push_back(x);
    x = m.node(OpKind::kConv, {x, m.random_constant({4, 4, 1, 1}, rng)});
  }
  m.output(x);
  chain.graph = std::make_shared<Graph>(std::move(m.graph()));
  return chain;
}

// Outputs whose relative L2 from `reference` is sqrt(sum of share[i]^2 over layers whose input is
// not kept): independent roundings adding in squares, as calibrate_fp16 assumes.
gpu::Fp16Evaluator modelled_errors(const Chain& chain, const std::vector<double>& share, const Tensor& reference,
                                   int& runs) {
  return [&chain, share, &reference, &runs](const std::vector<uint8_t>& keep) -> Result<std::vector<Tensor>> {
    ++runs;
    double squares = 0;
    for (size_t i = 0; i < share.size(); ++i) {
      const auto v = static_cast<size_t>(chain.layer_inputs[i]);
      if (v >= keep.size() || keep[v] == 0) squares += share[i] * share[i];
    }
    Tensor out = reference.clone();
    for (int64_t k = 0; k < out.numel(); ++k) out.data<float>()[k] *= static_cast<float>(1.0 + std::sqrt(squares));
    return std::vector<Tensor>{std::move(out)};
  };
}

Tensor ones(Shape shape) {
  Tensor t = Tensor::empty(DType::kF32, std::move(shape));
  for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = 1.0f;
  return t;
}

}  // namespace

TEST_CASE("fp16 calibration: bisection keeps the layers that dominate the error, in order, until the target") {
  const Chain chain = conv_chain(13);
  const Tensor reference = ones({1, 4, 8, 8});
  const std::vector<Tensor> references = {reference};
  std::vector<double> share(13, 5e-4);
  share[9] = 2e-2;  // dominant
  share[2] = 6e-3;  // second
  int runs = 0;
  Result<gpu::Fp16Calibration> result =
      gpu::calibrate_fp16(*chain.graph, references, modelled_errors(chain, share, reference, runs));
  REQUIRE_MESSAGE(result.is_ok(), result.status().to_string());
  const double all = std::sqrt(11 * 5e-4 * 5e-4 + 2e-2 * 2e-2 + 6e-3 * 6e-3);
  CHECK(result->all_half_error == doctest::Approx(all).epsilon(1e-5));
  REQUIRE(result->kept_nodes.size() == 2);
  CHECK(result->kept_nodes[0] == 9);  // node i is conv i
  CHECK(result->kept_nodes[1] == 2);
  CHECK(result->error == doctest::Approx(std::sqrt(11 * 5e-4 * 5e-4)).epsilon(1e-5));
  CHECK(result->errors.size() == 2);
  CHECK(result->error <= 5e-3);
  // One run for all-fp16, then two per bisection level: 13 candidates take 4 levels, 12 take 4.
  CHECK(result->evaluations == 1 + 2 * 4 + 2 * 4);
  CHECK(runs == result->evaluations);
  for (size_t v = 0; v < result->f32_values.size(); ++v) {
    const bool kept =
        v == static_cast<size_t>(chain.layer_inputs[9]) || v == static_cast<size_t>(chain.layer_inputs[2]);
    CHECK(static_cast<bool>(result->f32_values[v]) == kept);
  }
}

TEST_CASE("fp16 calibration: nothing is kept when fp16 is already within target; at most max_kept_nodes") {
  const Chain chain = conv_chain(5);
  const Tensor reference = ones({1, 4, 8, 8});
  const std::vector<Tensor> references = {reference};
  int runs = 0;
  Result<gpu::Fp16Calibration> within = gpu::calibrate_fp16(
      *chain.graph, references, modelled_errors(chain, std::vector<double>(5, 1e-3), reference, runs));
  REQUIRE(within.is_ok());
  CHECK(within->kept_nodes.empty());
  CHECK(within->evaluations == 1);

  Result<gpu::Fp16Calibration> capped = gpu::calibrate_fp16(
      *chain.graph, references, modelled_errors(chain, std::vector<double>(5, 1e-2), reference, runs),
      gpu::Fp16CalibrationOptions{.target = 1e-6, .max_kept_nodes = 3});
  REQUIRE(capped.is_ok());
  CHECK(capped->kept_nodes.size() == 3);
  CHECK(capped->error == doctest::Approx(std::sqrt(2.0) * 1e-2).epsilon(1e-5));
}

TEST_CASE("fp16 calibration: a NaN or infinite output is the largest error, and its layer is kept") {
  const Tensor reference = ones({1, 4, 8, 8});
  const std::vector<Tensor> references = {reference};
  for (const float bad : {std::nanf(""), std::numeric_limits<float>::infinity()}) {
    CAPTURE(bad);
    Tensor out = reference.clone();
    out.data<float>()[7] = bad;
    CHECK(std::isinf(gpu::largest_relative_l2(std::vector<Tensor>{out}, references)));
  }
  // fp16 overflows at conv 1's input and an output turns NaN (inf - inf) unless that input stays
  // f32: the error must not read as 0.
  const Chain chain = conv_chain(3);
  const auto nan_unless_kept = [&](const std::vector<uint8_t>& keep) -> Result<std::vector<Tensor>> {
    Tensor out = reference.clone();
    const auto v = static_cast<size_t>(chain.layer_inputs[1]);
    if (v >= keep.size() || keep[v] == 0) out.data<float>()[0] = std::nanf("");
    return std::vector<Tensor>{std::move(out)};
  };
  Result<gpu::Fp16Calibration> result = gpu::calibrate_fp16(*chain.graph, references, nan_unless_kept);
  REQUIRE(result.is_ok());
  CHECK(std::isinf(result->all_half_error));
  REQUIRE(result->kept_nodes.size() == 1);
  CHECK(result->kept_nodes.front() == 1);  // node i is conv i
  CHECK(result->error == 0.0);
}

TEST_CASE("fp16 calibration: an evaluator's failure is returned") {
  const Chain chain = conv_chain(3);
  const std::vector<Tensor> references = {ones({1, 4, 8, 8})};
  Result<gpu::Fp16Calibration> result =
      gpu::calibrate_fp16(*chain.graph, references, [](const std::vector<uint8_t>&) -> Result<std::vector<Tensor>> {
        return Status(StatusCode::kInternal, "device lost");
      });
  REQUIRE_FALSE(result.is_ok());
  CHECK(result.status().message().find("device lost") != std::string::npos);
}

TEST_CASE("fp16 storage keeps the chosen activations in f32, an aliased Concat with all its blocks") {
  GraphMaker m;
  std::mt19937 rng(6);
  const ValueId x = m.input({1, 4, 8, 8});
  const ValueId a = m.node(OpKind::kConv, {x, m.random_constant({4, 4, 1, 1}, rng)});
  const ValueId b = m.node(OpKind::kConv, {x, m.random_constant({4, 4, 1, 1}, rng)});
  const ValueId c = m.node(OpKind::kRelu, {a});
  Attributes axis;
  axis.set("axis", int64_t{1});
  const ValueId joined = m.node(OpKind::kConcat, {c, b}, axis);
  m.output(m.node(OpKind::kConv, {joined, m.random_constant({4, 8, 1, 1}, rng)}));
  const Graph& graph = m.graph();
  Result<MemoryPlan> plan =
      plan_memory(graph, std::vector<TensorDesc>{{DType::kF32, {1, 4, 8, 8}}}, gpu::gpu_plan_options());
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  REQUIRE(plan->alias_of[static_cast<size_t>(b)] == joined);  // b is written into the Concat

  const auto lowered_with = [&](std::vector<ValueId> kept) {
    std::vector<uint8_t> keep(graph.values().size(), 0);
    for (ValueId v : kept) keep[static_cast<size_t>(v)] = 1;
    Result<gpu::LoweredPlan> lowered =
        gpu::lower_plan(graph, *plan, gpu::LoweringOptions{.fp16_storage = true, .f32_values = keep});
    REQUIRE_MESSAGE(lowered.is_ok(), lowered.status().to_string());
    return std::move(*lowered);
  };
  const auto half = [](const gpu::LoweredPlan& lowered, ValueId v) {
    return lowered.value_refs[static_cast<size_t>(v)].half;
  };

  const gpu::LoweredPlan none = lowered_with({});
  CHECK(half(none, a));
  CHECK(half(none, b));
  CHECK(half(none, joined));
  const gpu::LoweredPlan only_a = lowered_with({a});
  CHECK_FALSE(half(only_a, a));
  CHECK(half(only_a, b));
  CHECK(half(only_a, joined));
  const gpu::LoweredPlan block = lowered_with({b});  // a block: the Concat and its other block too
  CHECK(half(block, a));
  CHECK_FALSE(half(block, b));
  CHECK_FALSE(half(block, c));
  CHECK_FALSE(half(block, joined));
  // Weights stay f32 in fp16 storage.
  for (const gpu::LoweredStep& step : none.steps) {
    for (const gpu::BufferRef& input : step.inputs) {
      if (input.region == gpu::Region::kConstants) CHECK_FALSE(input.half);
    }
  }
}

}  // namespace edgefuse::test
