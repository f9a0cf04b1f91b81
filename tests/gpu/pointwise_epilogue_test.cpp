// The cuBLAS path of 1x1 Convs on the host (cublas_gemm.h): a product without bias, residual or
// activation, then PointwiseEpilogueStep over it, must give what PointwiseConvStep gives in one
// pass; and which bound steps may take that path at all.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "runtime/cuda/pointwise_conv_step.h"

namespace edgefuse::test {
namespace {

struct Buffers {
  std::vector<float> x, w, bias, residual, fused, product;
};

// X [batch, k, positions], W [m, k], a residual of `residual_channels` channels.
Buffers random_buffers(int64_t batch, int64_t m, int64_t k, int64_t positions, int64_t residual_channels,
                       std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  Buffers b;
  const auto fill = [&](std::vector<float>& v, int64_t n) {
    v.resize(static_cast<size_t>(n));
    for (float& f : v) f = value(rng);
  };
  fill(b.x, batch * k * positions);
  fill(b.w, m * k);
  fill(b.bias, m);
  fill(b.residual, batch * residual_channels * positions);
  b.fused.assign(static_cast<size_t>(batch * m * positions), 0.0f);
  b.product.assign(b.fused.size(), 0.0f);
  return b;
}

void run_items(const auto& step) {
  for (int64_t i = 0; i < step.count(); ++i) step.run(i);
}

gpu::PointwiseConvStep conv_step(Buffers& b, int64_t batch, int64_t m, int64_t k, int64_t positions) {
  gpu::PointwiseConvStep step;
  step.in[0] = b.x.data();
  step.in[1] = b.w.data();
  step.out = b.fused.data();
  step.batch = batch;
  step.in_channels = k;
  step.out_channels = m;
  step.positions = positions;
  step.residual_channels = m;
  return step;
}

}  // namespace

TEST_CASE("a bare product followed by the epilogue step equals the fused 1x1 Conv step") {
  std::mt19937 rng(7);
  struct Case {
    gpu::Activation activation;
    bool bias, residual, residual_after;
    int64_t residual_channels;  // of m = 12
  };
  const Case cases[] = {
      {gpu::Activation::kNone, true, false, false, 12},    {gpu::Activation::kSilu, true, false, false, 12},
      {gpu::Activation::kRelu, false, true, false, 12},    {gpu::Activation::kSilu, true, true, false, 12},
      {gpu::Activation::kSilu, true, true, true, 12},      {gpu::Activation::kLeakyRelu, true, true, false, 5},
      {gpu::Activation::kClip, true, false, false, 12},    {gpu::Activation::kHardSwish, true, true, true, 7},
      {gpu::Activation::kSigmoid, true, false, false, 12},
  };
  const int64_t batch = 2, m = 12, k = 19, positions = 37;  // nothing a whole tile
  for (const Case& c : cases) {
    INFO("activation ", static_cast<int>(c.activation), " bias ", c.bias, " residual ", c.residual, " after ",
         c.residual_after, " of ", c.residual_channels, " channels");
    Buffers b = random_buffers(batch, m, k, positions, c.residual_channels, rng);
    gpu::PointwiseConvStep step = conv_step(b, batch, m, k, positions);
    step.in[2] = c.bias ? b.bias.data() : nullptr;
    step.in[3] = c.residual ? b.residual.data() : nullptr;
    step.residual_channels = c.residual_channels;
    step.residual_after_activation = c.residual_after;
    step.activation.kind = c.activation;
    step.activation.alpha = 0.1f;
    step.activation.min = -0.5f;
    step.activation.max = 1.5f;
    run_items(step);

    // What cuBLAS computes: the product alone (no bias, residual or activation), into the output.
    gpu::PointwiseConvStep product = conv_step(b, batch, m, k, positions);
    product.out = b.product.data();
    run_items(product);
    gpu::PointwiseConvStep bound = step;
    bound.out = b.product.data();
    const gpu::PointwiseEpilogueStep epilogue = gpu::epilogue_after_product(bound);
    CHECK_FALSE(gpu::epilogue_is_identity(epilogue));
    REQUIRE(epilogue.count() == static_cast<int64_t>(b.product.size()));
    run_items(epilogue);

    // The bias comes after the products instead of first: a few units in the last place.
    double worst = 0;
    for (size_t i = 0; i < b.fused.size(); ++i) {
      const double scale = std::max(1.0, std::fabs(static_cast<double>(b.fused[i])));
      worst = std::max(worst, std::fabs(static_cast<double>(b.product[i]) - b.fused[i]) / scale);
    }
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("the epilogue of a bare product is the identity, so cuBLAS's product is the output") {
  std::mt19937 rng(8);
  Buffers b = random_buffers(1, 4, 3, 5, 4, rng);
  gpu::PointwiseConvStep step = conv_step(b, 1, 4, 3, 5);
  CHECK(gpu::epilogue_is_identity(gpu::epilogue_after_product(step)));
  step.in[2] = b.bias.data();
  CHECK_FALSE(gpu::epilogue_is_identity(gpu::epilogue_after_product(step)));
}

TEST_CASE("cuBLAS may run only f32 steps whose input and residual lie outside the output") {
  std::mt19937 rng(9);
  const int64_t m = 8, k = 8, positions = 16;
  Buffers b = random_buffers(1, m, k, positions, m, rng);
  gpu::PointwiseConvStep step = conv_step(b, 1, m, k, positions);
  CHECK(gpu::library_gemm_eligible(step));
  step.in[3] = b.residual.data();
  CHECK(gpu::library_gemm_eligible(step));

  SUBCASE("fp16 operands") {
    step.half = 1u;
    CHECK_FALSE(gpu::library_gemm_eligible(step));
    step.half = gpu::kHalfOutput;
    CHECK_FALSE(gpu::library_gemm_eligible(step));
  }
  SUBCASE("the residual is the output's own bytes (the planner's in place), or overlaps them") {
    step.in[3] = step.out;
    CHECK_FALSE(gpu::library_gemm_eligible(step));
    std::vector<float> shared(static_cast<size_t>(2 * m * positions));
    step.out = shared.data();
    step.in[3] = shared.data() + m * positions - 1;  // its first float is the output's last
    CHECK_FALSE(gpu::library_gemm_eligible(step));
    step.in[3] = shared.data() + m * positions;  // right after the output
    CHECK(gpu::library_gemm_eligible(step));
  }
  SUBCASE("the input overlaps the output") {
    step.in[0] = step.out;
    CHECK_FALSE(gpu::library_gemm_eligible(step));
  }
  SUBCASE("a matrix too large for cuBLAS's 32-bit sizes") {
    step.positions = int64_t{1} << 31;
    CHECK_FALSE(gpu::library_gemm_eligible(step));
  }
}

}  // namespace edgefuse::test
