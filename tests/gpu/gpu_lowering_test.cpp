// The GPU backend without a GPU: each small graph of gpu_op_cases is planned, lowered to kernel
// steps and run through the host emulation of those steps (the same bodies the device runs),
// then compared with the CPU reference kernels.
#include <doctest/doctest.h>

#include "runtime/cuda/host_runner.h"
#include "tests/fusion/fusion_test_graphs.h"
#include "tests/gpu/gpu_op_cases.h"

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

TEST_CASE("a Concat whose inputs are written in place is skipped; one on a later axis is copied") {
  const std::vector<GpuOpCase> cases = gpu_op_cases();
  for (const GpuOpCase& c : cases) {
    const gpu::LoweredPlan lowered = lower_for_inputs(*c.graph, c.inputs);
    if (c.name.rfind("SPP", 0) == 0) CHECK(lowered.plan.concats_aliased == 1);
    if (c.name.rfind("concat on a later axis", 0) == 0) CHECK(lowered.plan.concats_aliased == 0);
  }
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
