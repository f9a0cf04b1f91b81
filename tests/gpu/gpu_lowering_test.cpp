// The GPU backend without a GPU: each small graph of gpu_op_cases is planned, lowered to kernel
// steps and run through the host emulation of those steps (the same bodies the device runs),
// then compared with the CPU reference kernels.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <random>

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
