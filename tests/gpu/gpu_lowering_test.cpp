// The GPU backend without a GPU: each small graph of gpu_op_cases is planned, lowered to kernel
// steps and run through the host emulation of those steps (the same bodies the device runs),
// then compared with the CPU reference kernels.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "runtime/cuda/host_runner.h"
#include "runtime/cuda/inference_backend.h"
#include "runtime/memory_plan.h"
#include "tests/fusion/fusion_test_graphs.h"
#include "tests/gpu/gpu_op_cases.h"
#include "tests/support/numerics.h"

namespace edgefuse::test {
namespace {

TEST_CASE("every GPU kernel step, emulated on the host, matches the CPU reference kernels") {
  for (const GpuOpCase& c : gpu_op_cases()) {
    INFO("case: ", c.name);
    const gpu::LoweredPlan lowered = lower_for_inputs(*c.graph, c.inputs);
    CHECK(lowered.fallback_count() == c.fallbacks);
    for (const std::string& line : lowered.describe_fallbacks(*c.graph)) MESSAGE("CPU fallback: ", line);
    const std::vector<Tensor> expected = run_graph(*c.graph, c.inputs, true);
    Result<std::vector<Tensor>> actual = gpu::run_lowered_on_host(*c.graph, lowered, c.inputs);
    REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
    check_gpu_outputs(*actual, expected, c.exact, 1e-5);
  }
}

TEST_CASE("in fp16 storage every GPU kernel step, emulated, stays within half precision of the reference") {
  for (const GpuOpCase& c : gpu_op_cases()) {
    INFO("case: ", c.name);
    const gpu::LoweredPlan lowered = lower_for_inputs(*c.graph, c.inputs, gpu::LoweringOptions{.fp16_storage = true});
    CHECK(lowered.fallback_count() == c.fallbacks);
    const std::vector<Tensor> expected = run_graph(*c.graph, c.inputs, true);
    Result<std::vector<Tensor>> actual = gpu::run_lowered_on_host(*c.graph, lowered, c.inputs);
    REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
    // Inputs and weights round to 11 significant bits, so outputs differ at about 2^-11 relative.
    check_gpu_outputs(*actual, expected, false, 2e-3);
  }
}

TEST_CASE(
    "1x1, depthwise and group-1 Convs lower to their kernels, others to the general one, which can take them all") {
  int pointwise_cases = 0, depthwise_cases = 0, gemm_cases = 0;
  for (const GpuOpCase& c : gpu_op_cases()) {
    INFO("case: ", c.name);
    const std::vector<Tensor> expected = run_graph(*c.graph, c.inputs, true);
    for (const bool generic : {false, true}) {
      const gpu::LoweredPlan lowered =
          lower_for_inputs(*c.graph, c.inputs, gpu::LoweringOptions{.generic_conv = generic});
      int pointwise = 0, depthwise = 0, gemm = 0, general = 0;
      for (const gpu::LoweredStep& step : lowered.steps) {
        pointwise += std::holds_alternative<gpu::PointwiseConvStep>(step.params) ? 1 : 0;
        depthwise += std::holds_alternative<gpu::DepthwiseConvStep>(step.params) ? 1 : 0;
        gemm += std::holds_alternative<gpu::ConvGemmStep>(step.params) ? 1 : 0;
        general += std::holds_alternative<gpu::ConvStep>(step.params) ? 1 : 0;
      }
      if (generic) CHECK(pointwise + depthwise + gemm == 0);
      if (!generic && pointwise > 0) ++pointwise_cases;
      if (!generic && depthwise > 0) ++depthwise_cases;
      if (!generic && gemm > 0) ++gemm_cases;
      if (pointwise + depthwise + gemm + general == 0) break;  // no Conv in this case
      Result<std::vector<Tensor>> actual = gpu::run_lowered_on_host(*c.graph, lowered, c.inputs);
      REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
      check_gpu_outputs(*actual, expected, c.exact, 1e-5);
    }
  }
  CHECK(pointwise_cases == 9);  // the cases of gpu_op_cases with a 1x1 Conv
  CHECK(depthwise_cases == 4);  // with a depthwise one the depthwise kernel takes
  CHECK(gemm_cases == 6);       // with a group-1 Conv with a window
}

// Per Conv GEMM step (1x1 or windowed group-1), in order: whether it may run on tensor cores.
std::vector<bool> tensor_core_steps(const gpu::LoweredPlan& lowered) {
  std::vector<bool> flags;
  for (const gpu::LoweredStep& step : lowered.steps) {
    if (const auto* p = std::get_if<gpu::PointwiseConvStep>(&step.params)) flags.push_back(p->tensor_cores);
    if (const auto* p = std::get_if<gpu::ConvGemmStep>(&step.params)) flags.push_back(p->tensor_cores);
  }
  return flags;
}

TEST_CASE("tensor cores may run a Conv GEMM only in fp16 storage, when asked, on a binary16 input") {
  for (const GpuOpCase& c : tensor_core_cases()) {
    INFO("case: ", c.name);
    const auto lowered = [&](bool fp16, bool tensor_cores) {
      return tensor_core_steps(lower_for_inputs(
          *c.graph, c.inputs, gpu::LoweringOptions{.fp16_storage = fp16, .tensor_cores = tensor_cores}));
    };
    CHECK(lowered(true, true) == std::vector<bool>{true});
    CHECK(lowered(true, false) == std::vector<bool>{false});
    CHECK(lowered(false, true) == std::vector<bool>{false});  // f32 storage: X is f32
  }
}

TEST_CASE("tensor cores are refused for a Conv on a graph input, on an input kept f32, or with weights past binary16") {
  // input -> Conv 1x1 -> Conv 1x1 -> Conv 3x3 -> Conv 1x1 with a weight of 1e5 -> output.
  GraphMaker m;
  std::mt19937 rng(21);
  Attributes pointwise;
  pointwise.set("group", int64_t{1});
  Attributes window = pointwise;
  window.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  const ValueId first =
      m.node(OpKind::kConv, {m.input({1, 8, 6, 6}), m.random_constant({16, 8, 1, 1}, rng)}, pointwise);
  const ValueId second = m.node(OpKind::kConv, {first, m.random_constant({16, 16, 1, 1}, rng)}, pointwise);
  const ValueId third = m.node(OpKind::kConv, {second, m.random_constant({16, 16, 3, 3}, rng)}, window);
  Tensor large = random_tensor(DType::kF32, {8, 16, 1, 1}, rng);
  large.data<float>()[5] = 1e5f;
  m.output(m.node(OpKind::kConv, {third, m.constant(std::move(large))}, pointwise));
  const Graph& graph = m.graph();
  const std::vector<Tensor> inputs = {random_tensor(DType::kF32, {1, 8, 6, 6}, rng)};

  const gpu::LoweringOptions fp16_tensor_cores{.fp16_storage = true, .tensor_cores = true};
  CHECK(tensor_core_steps(lower_for_inputs(graph, inputs, fp16_tensor_cores)) ==
        std::vector<bool>{false, true, true, false});
  // The second Conv's output kept f32 (as calibration may): the 3x3 Conv reads f32.
  gpu::LoweringOptions kept = fp16_tensor_cores;
  kept.f32_values.assign(graph.values().size(), 0);
  kept.f32_values[static_cast<size_t>(second)] = 1;
  const gpu::LoweredPlan mixed = lower_for_inputs(graph, inputs, kept);
  CHECK(tensor_core_steps(mixed) == std::vector<bool>{false, true, false, false});
  // The host emulation ignores the flag: the same arithmetic in f32.
  Result<std::vector<Tensor>> emulated = gpu::run_lowered_on_host(graph, mixed, inputs);
  REQUIRE_MESSAGE(emulated.is_ok(), emulated.status().to_string());
  check_gpu_outputs(*emulated, run_graph(graph, inputs, true), false, 2e-3);
}

TEST_CASE("half conversions: every binary16 value round-trips, and floats round to nearest even as the compiler's") {
  int checked = 0;
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = gpu::half_bits_to_float(static_cast<uint16_t>(h));
    const _Float16 reference = std::bit_cast<_Float16>(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      CHECK(std::isnan(static_cast<float>(reference)));
      CHECK(std::isnan(gpu::half_bits_to_float(gpu::float_to_half_bits(f))));
      continue;
    }
    CHECK(f == static_cast<float>(reference));
    CHECK(gpu::float_to_half_bits(f) == h);
    ++checked;
  }
  CHECK(checked == 65536 - 2046);  // all but the NaNs
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    const float f = std::bit_cast<float>(bits(rng));
    if (std::isnan(f)) continue;
    INFO("float bits ", std::bit_cast<uint32_t>(f));
    REQUIRE(gpu::float_to_half_bits(f) == std::bit_cast<uint16_t>(static_cast<_Float16>(f)));
  }
  // Ties: 1 + 2^-11 lies halfway between 1 and the next half, and rounds to the even 1.
  CHECK(gpu::float_to_half_bits(1.0f + 0x1p-11f) == 0x3C00u);
  CHECK(gpu::float_to_half_bits(65520.0f) == 0x7C00u);
  CHECK(gpu::float_to_half_bits(65519.0f) == 0x7BFFu);
}

TEST_CASE("a Concat whose inputs are written in place is skipped; one on a later axis is copied") {
  const std::vector<GpuOpCase> cases = gpu_op_cases();
  for (const GpuOpCase& c : cases) {
    const gpu::LoweredPlan lowered = lower_for_inputs(*c.graph, c.inputs);
    if (c.name.rfind("SPP", 0) == 0) CHECK(lowered.plan.concats_aliased == 1);
    if (c.name.rfind("concat on a later axis", 0) == 0) CHECK(lowered.plan.concats_aliased == 0);
  }
}

TEST_CASE("a windowed chain runs on its window alone in its input's bytes, else after a copy of that input") {
  for (const GpuOpCase& c : gpu_op_cases()) {
    if (c.name.rfind("windowed chains", 0) != 0) continue;
    const gpu::LoweredPlan lowered = lower_for_inputs(*c.graph, c.inputs);
    int windowed = 0, copies = 0;
    int64_t window_items = 0;
    for (const gpu::LoweredStep& step : lowered.steps) {
      if (const auto* chain = std::get_if<gpu::ChainStep>(&step.params)) {
        windowed += chain->windowed ? 1 : 0;
        window_items += chain->count();
      }
      copies += std::holds_alternative<gpu::BlockCopyStep>(step.params) ? 1 : 0;
    }
    CHECK(windowed == 3);
    CHECK(window_items == 2 * 3 * 4 * 2 + 2 * 2 * 4 * 7 + 2 * 3 * 2 * 7);  // the windows' elements
    CHECK(copies == 2);  // the Relu's output, read twice, and the graph output: not the Sigmoid's
  }
}

TEST_CASE("a Transpose of a fused Concat is one gather when its inputs live in the arena, else one per input") {
  for (const GpuOpCase& c : gpu_op_cases()) {
    if (c.name.rfind("transposes of fused Concats", 0) != 0) continue;
    for (const bool fp16 : {false, true}) {
      INFO("fp16 storage: ", fp16);
      const gpu::LoweredPlan lowered = lower_for_inputs(*c.graph, c.inputs, gpu::LoweringOptions{.fp16_storage = fp16});
      std::map<NodeId, int> gathers;  // per Transpose node
      for (const gpu::LoweredStep& step : lowered.steps) {
        if (std::holds_alternative<gpu::GatherStep>(step.params)) ++gathers[step.node];
      }
      REQUIRE(gathers.size() == 2);
      // The head's three levels are Relu outputs in the arena: one kernel. The other Transpose reads
      // two graph inputs, each its own buffer: a gather each.
      for (const auto& [node, count] : gathers) {
        CHECK(count == (c.graph->node(node).inputs.size() == 3 ? 1 : 2));
      }
    }
    return;
  }
  FAIL("no op case of Transposes of fused Concats");
}

// A [2, 7, 5] output of values in (0, 1): rows whose column 2 reaches 0.5 come back, others are zeros.
TEST_CASE("a row filter brings back exactly the passing rows, in f32 and in fp16 storage") {
  GraphMaker m;
  m.output(m.node(OpKind::kSigmoid, {m.node(OpKind::kMul, {m.input({2, 7, 5}), m.input({2, 7, 5})})}));
  const Graph& graph = m.graph();
  std::mt19937 rng(4);
  const std::vector<Tensor> inputs = {random_tensor(DType::kF32, {2, 7, 5}, rng, -1.5, 1.5),
                                      random_tensor(DType::kF32, {2, 7, 5}, rng, -1.5, 1.5)};
  Tensor expected = run_graph(graph, inputs, true)[0];
  int passing = 0;
  for (int64_t row = 0; row < 14; ++row) {
    float* values = expected.data<float>() + row * 5;
    if (values[2] >= 0.5f) {
      ++passing;
    } else {
      std::fill(values, values + 5, 0.0f);
    }
  }
  REQUIRE(passing > 2);
  REQUIRE(passing < 12);
  for (const bool fp16 : {false, true}) {
    INFO("storage: ", std::string(fp16 ? "fp16" : "fp32"));
    const gpu::LoweredPlan lowered = lower_for_inputs(
        graph, inputs, gpu::LoweringOptions{.fp16_storage = fp16, .row_filter = gpu::RowFilter{0, 2, 0.5f}});
    REQUIRE(lowered.row_filter.has_value());
    CHECK(lowered.row_filter->batch == 2);
    Result<std::vector<Tensor>> actual = gpu::run_lowered_on_host(graph, lowered, inputs);
    REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
    check_gpu_outputs(*actual, {expected}, false, fp16 ? 2e-3 : 1e-6);
    // The rows left out are zeros, bit for bit; the others are not.
    for (int64_t row = 0; row < 14; ++row) {
      const float* want = expected.data<float>() + row * 5;
      const float* got = (*actual)[0].data<float>() + row * 5;
      CHECK((want[2] == 0.0f) == std::all_of(got, got + 5, [](float v) { return v == 0.0f; }));
    }
  }
}

TEST_CASE("a row filter on a missing output, a bad column or a zero threshold is refused") {
  GraphMaker m;
  m.output(m.node(OpKind::kRelu, {m.input({1, 4, 3})}));
  const std::vector<Tensor> inputs = {Tensor::empty(DType::kF32, {1, 4, 3})};
  Result<MemoryPlan> plan = plan_memory(m.graph(), std::vector<TensorDesc>{inputs[0].desc()}, gpu::gpu_plan_options());
  REQUIRE(plan.is_ok());
  for (const gpu::RowFilter& filter :
       {gpu::RowFilter{1, 0, 0.5f}, gpu::RowFilter{0, 3, 0.5f}, gpu::RowFilter{0, 1, 0.0f}}) {
    Result<gpu::LoweredPlan> lowered = gpu::lower_plan(m.graph(), *plan, gpu::LoweringOptions{.row_filter = filter});
    REQUIRE_FALSE(lowered.is_ok());
    CHECK(lowered.status().code() == StatusCode::kInvalidArgument);
    CHECK(lowered.status().message().find("row filter") != std::string::npos);
  }
}

TEST_CASE("a CPU backend's filled run hands host buffers to the filler and runs what it wrote") {
  GraphMaker m;
  m.output(m.node(OpKind::kRelu, {m.input({2, 3})}));
  auto graph = std::make_shared<const Graph>(std::move(m.graph()));
  Result<std::unique_ptr<InferenceBackend>> backend = create_inference_backend(graph, InferenceDevice::kCpu);
  REQUIRE_MESSAGE(backend.is_ok(), backend.status().to_string());
  const TensorDesc desc{DType::kF32, {2, 3}};
  const std::vector<float> written = {-1, 2, -3, 4, -5, 6};
  Result<std::vector<Tensor>> out =
      (*backend)->run_filled(std::span(&desc, 1), [&](std::span<void* const> inputs, void* stream) -> Status {
        CHECK(stream == nullptr);
        std::memcpy(inputs[0], written.data(), written.size() * sizeof(float));
        return Status::ok();
      });
  REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
  CHECK(std::vector<float>((*out)[0].values<float>().begin(), (*out)[0].values<float>().end()) ==
        std::vector<float>{0, 2, 0, 4, 0, 6});
  // A filler's error is the run's error.
  Result<std::vector<Tensor>> failed = (*backend)->run_filled(
      std::span(&desc, 1), [](std::span<void* const>, void*) { return invalid_argument("bad frame"); });
  REQUIRE_FALSE(failed.is_ok());
  CHECK(failed.status().message() == "bad frame");
}

TEST_CASE("inputs that do not match the planned shapes are rejected with both shapes named") {
  const std::vector<GpuOpCase> cases = gpu_op_cases();
  const GpuOpCase& c = cases.front();
  const gpu::LoweredPlan lowered = lower_for_inputs(*c.graph, c.inputs);
  const std::vector<Tensor> wrong = {Tensor::empty(DType::kF32, {1, 3, 7, 8})};
  Result<std::vector<Tensor>> run = gpu::run_lowered_on_host(*c.graph, lowered, wrong);
  REQUIRE_FALSE(run.is_ok());
  CHECK(run.status().code() == StatusCode::kInvalidArgument);
  CHECK(run.status().message().find("[1, 3, 7, 8]") != std::string::npos);
  CHECK(run.status().message().find("[1, 3, 7, 9]") != std::string::npos);
}

}  // namespace
}  // namespace edgefuse::test
