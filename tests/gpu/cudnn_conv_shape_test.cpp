// The cuDNN path of windowed Convs on the host (cudnn_conv_shape.h): cuDNN itself runs only on a
// device, so these check what it is told. The convolution a CudnnConvShape describes, computed
// the way cuDNN defines it (cross-correlation over X's strides, the same padding at both ends),
// must equal the step's bare convolution; that convolution followed by the epilogue step must
// equal the fused step; and steps cuDNN cannot express, or whose buffers it would overwrite, are
// kept off it.
#include "runtime/cuda/cudnn_conv_shape.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "tests/gpu/gpu_op_cases.h"

namespace edgefuse::test {
namespace {

struct ConvCase {
  const char* name;
  int64_t batch, in_channels, out_channels;
  int64_t input[2], kernel[2], stride[2], dilation[2], pad_begin[2], output[2];
  bool channels_last;
};

// Padding after the input differs from before in some: cuDNN sees only the sizes this implies.
const ConvCase kCases[] = {
    {"YOLOX's stem after the Focus fold (channels-last)",
     1,
     3,
     16,
     {24, 20},
     {6, 6},
     {2, 2},
     {1, 1},
     {2, 2},
     {12, 10},
     true},
    {"3x3, padding 1", 2, 5, 7, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {9, 11}, false},
    {"3x3 stride 2, padding before only", 1, 4, 6, {8, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {4, 4}, false},
    {"5x5 stride 2 (BlazeFace's first)", 1, 3, 8, {16, 16}, {5, 5}, {2, 2}, {1, 1}, {1, 1}, {7, 7}, false},
    {"dilated 3x3", 1, 3, 4, {12, 10}, {3, 3}, {1, 1}, {2, 3}, {2, 3}, {12, 10}, false},
    {"1-d (H of 1)", 2, 6, 5, {1, 17}, {1, 3}, {1, 2}, {1, 1}, {0, 1}, {1, 9}, false},
    {"channels-last, batch 3, stride 3", 3, 4, 5, {10, 11}, {2, 3}, {3, 3}, {1, 1}, {0, 1}, {3, 4}, true},
};

gpu::ConvStep make_step(const ConvCase& c) {
  gpu::ConvStep step;
  step.batch = c.batch;
  step.in_channels = c.in_channels;
  step.out_channels = c.out_channels;
  step.input_channels_last = c.channels_last;
  for (int a = 0; a < 2; ++a) {
    step.input[a + 1] = c.input[a];
    step.kernel[a + 1] = c.kernel[a];
    step.stride[a + 1] = c.stride[a];
    step.dilation[a + 1] = c.dilation[a];
    step.pad_begin[a + 1] = c.pad_begin[a];
    step.output[a + 1] = c.output[a];
  }
  step.residual_channels = c.out_channels;
  return step;
}

std::vector<float> random_floats(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = value(rng);
  return v;
}

void run_items(const auto& step) {
  for (int64_t i = 0; i < step.count(); ++i) step.run(i);
}

// cuDNN's forward convolution (cross-correlation) of the 4-d descriptors `shape` stands for, in
// float64: X through its strides, W [M, C, KH, KW] and Y [N, M, OH, OW] packed.
std::vector<double> described_convolution(const gpu::CudnnConvShape& s, const std::vector<float>& x,
                                          const std::vector<float>& w) {
  int xs[4];
  s.input_strides(xs);
  std::vector<double> y(static_cast<size_t>(s.batch) * s.out_channels * s.output[0] * s.output[1], 0.0);
  size_t o = 0;
  for (int n = 0; n < s.batch; ++n) {
    for (int m = 0; m < s.out_channels; ++m) {
      for (int oh = 0; oh < s.output[0]; ++oh) {
        for (int ow = 0; ow < s.output[1]; ++ow, ++o) {
          double sum = 0;
          for (int c = 0; c < s.in_channels; ++c) {
            for (int kh = 0; kh < s.kernel[0]; ++kh) {
              const int ih = oh * s.stride[0] - s.pad[0] + kh * s.dilation[0];
              if (ih < 0 || ih >= s.input[0]) continue;
              for (int kw = 0; kw < s.kernel[1]; ++kw) {
                const int iw = ow * s.stride[1] - s.pad[1] + kw * s.dilation[1];
                if (iw < 0 || iw >= s.input[1]) continue;
                const size_t xi = static_cast<size_t>(n) * xs[0] + static_cast<size_t>(c) * xs[1] +
                                  static_cast<size_t>(ih) * xs[2] + static_cast<size_t>(iw) * xs[3];
                const size_t wi = ((static_cast<size_t>(m) * s.in_channels + c) * s.kernel[0] + kh) * s.kernel[1] + kw;
                sum += static_cast<double>(x[xi]) * w[wi];
              }
            }
          }
          y[o] = sum;
        }
      }
    }
  }
  return y;
}

// Largest difference relative to max(1, |expected|).
double worst_difference(const std::vector<float>& actual, const auto& expected) {
  REQUIRE(actual.size() == expected.size());
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double e = static_cast<double>(expected[i]);
    worst = std::max(worst, std::fabs(static_cast<double>(actual[i]) - e) / std::max(1.0, std::fabs(e)));
  }
  return worst;
}

}  // namespace

TEST_CASE("the convolution cuDNN is told to compute is each step's bare convolution") {
  std::mt19937 rng(21);
  for (const ConvCase& c : kCases) {
    INFO("case: ", c.name);
    gpu::ConvStep step = make_step(c);
    const std::optional<gpu::CudnnConvShape> shape = gpu::cudnn_conv_shape(step);
    REQUIRE(shape.has_value());
    CHECK(shape->batch == c.batch);
    CHECK(shape->input_channels_last == c.channels_last);
    CHECK(shape->output[0] == c.output[0]);
    CHECK(shape->output[1] == c.output[1]);
    // cuDNN's own output size from the descriptors: (H + 2 pad - dilated kernel) / stride + 1.
    for (int a = 0; a < 2; ++a) {
      const int span = shape->input[a] + 2 * shape->pad[a] - (shape->kernel[a] - 1) * shape->dilation[a] - 1;
      CHECK(span / shape->stride[a] + 1 == shape->output[a]);
    }
    const std::vector<float> x = random_floats(c.batch * c.in_channels * c.input[0] * c.input[1], rng);
    const std::vector<float> w = random_floats(c.out_channels * c.in_channels * c.kernel[0] * c.kernel[1], rng);
    std::vector<float> y(static_cast<size_t>(c.batch * c.out_channels * c.output[0] * c.output[1]));
    step.in[0] = x.data();
    step.in[1] = w.data();
    step.out = y.data();
    run_items(gpu::bare_convolution(step));
    CHECK(worst_difference(y, described_convolution(*shape, x, w)) < 1e-5);
  }
}

TEST_CASE("cuDNN's bare convolution followed by the epilogue step equals the fused Conv step") {
  std::mt19937 rng(22);
  struct Epilogue {
    gpu::Activation activation;
    bool bias, residual, residual_after;
    int64_t residual_channels;  // of the case's out_channels, 0: all
  };
  const Epilogue epilogues[] = {
      {gpu::Activation::kSilu, true, false, false, 0}, {gpu::Activation::kRelu, false, true, false, 0},
      {gpu::Activation::kSilu, true, true, true, 0},   {gpu::Activation::kLeakyRelu, true, true, false, 3},
      {gpu::Activation::kNone, true, false, false, 0},
  };
  for (const ConvCase& c : kCases) {
    for (const Epilogue& e : epilogues) {
      INFO("case: ", c.name, ", activation ", static_cast<int>(e.activation), " bias ", e.bias, " residual ",
           e.residual, " after ", e.residual_after);
      gpu::ConvStep step = make_step(c);
      const int64_t positions = c.output[0] * c.output[1];
      step.residual_channels = e.residual_channels > 0 ? e.residual_channels : c.out_channels;
      const std::vector<float> x = random_floats(c.batch * c.in_channels * c.input[0] * c.input[1], rng);
      const std::vector<float> w = random_floats(c.out_channels * c.in_channels * c.kernel[0] * c.kernel[1], rng);
      const std::vector<float> bias = random_floats(c.out_channels, rng);
      const std::vector<float> residual = random_floats(c.batch * step.residual_channels * positions, rng);
      std::vector<float> fused(static_cast<size_t>(c.batch * c.out_channels * positions));
      std::vector<float> split(fused.size());
      step.in[0] = x.data();
      step.in[1] = w.data();
      step.in[2] = e.bias ? bias.data() : nullptr;
      step.in[3] = e.residual ? residual.data() : nullptr;
      step.activation.kind = e.activation;
      step.activation.alpha = 0.1f;
      step.residual_after_activation = e.residual_after;
      step.out = fused.data();
      run_items(step);

      step.out = split.data();
      run_items(gpu::bare_convolution(step));
      const gpu::PointwiseEpilogueStep epilogue = gpu::epilogue_after_convolution(step);
      CHECK(gpu::epilogue_is_identity(epilogue) == (!e.bias && !e.residual && e.activation == gpu::Activation::kNone));
      REQUIRE(epilogue.count() == static_cast<int64_t>(split.size()));
      run_items(epilogue);
      // The bias comes after the products instead of first: a few units in the last place.
      CHECK(worst_difference(split, fused) < 1e-5);
    }
  }
}

TEST_CASE("Convs cuDNN's legacy API cannot express are kept off it") {
  const gpu::ConvStep plain = make_step(kCases[1]);
  REQUIRE(gpu::cudnn_conv_shape(plain).has_value());

  gpu::ConvStep grouped = plain;
  grouped.group = 5;
  CHECK_FALSE(gpu::cudnn_conv_shape(grouped).has_value());

  gpu::ConvStep volumetric = plain;
  volumetric.input[0] = 3;
  volumetric.output[0] = 3;
  CHECK_FALSE(gpu::cudnn_conv_shape(volumetric).has_value());

  // ONNX SAME_UPPER with an even kernel pads after the input only: with the padding before (0)
  // at both ends cuDNN would compute one output fewer.
  gpu::ConvStep same_upper = plain;
  same_upper.kernel[1] = same_upper.kernel[2] = 2;
  same_upper.pad_begin[1] = same_upper.pad_begin[2] = 0;
  CHECK_FALSE(gpu::cudnn_conv_shape(same_upper).has_value());

  gpu::ConvStep huge = plain;
  huge.batch = int64_t{1} << 26;  // 2^26 x 5 x 99 inputs: beyond a 32-bit int
  CHECK_FALSE(gpu::cudnn_conv_shape(huge).has_value());
}

TEST_CASE("cuDNN may run only f32 steps whose input and residual lie outside the output") {
  gpu::ConvGemmStep step{make_step(kCases[1])};  // 2 x 5 x 9 x 11 in, 2 x 7 x 9 x 11 out
  const size_t input_floats = 2 * 5 * 9 * 11, output_floats = 2 * 7 * 9 * 11;
  std::vector<float> x(input_floats), w(7 * 5 * 9), y(output_floats), r(output_floats);
  step.in[0] = x.data();
  step.in[1] = w.data();
  step.out = y.data();
  CHECK(gpu::cudnn_conv_eligible(step));
  step.in[3] = r.data();
  CHECK(gpu::cudnn_conv_eligible(step));

  SUBCASE("fp16 operands") {
    step.half = 1u;
    CHECK_FALSE(gpu::cudnn_conv_eligible(step));
    step.half = gpu::kHalfOutput;
    CHECK_FALSE(gpu::cudnn_conv_eligible(step));
  }
  SUBCASE("the residual or the input shares the output's bytes") {
    std::vector<float> shared(input_floats + output_floats);
    step.out = shared.data();
    step.in[3] = shared.data();
    CHECK_FALSE(gpu::cudnn_conv_eligible(step));
    step.in[3] = r.data();
    step.in[0] = shared.data() + output_floats - 1;  // its first float is the output's last
    CHECK_FALSE(gpu::cudnn_conv_eligible(step));
    step.in[0] = shared.data() + output_floats;  // right after the output
    CHECK(gpu::cudnn_conv_eligible(step));
  }
  SUBCASE("a shape cuDNN cannot take") {
    step.group = 5;
    CHECK_FALSE(gpu::cudnn_conv_eligible(step));
  }
}

// The device test (test_cuda) runs every op case with cuDNN wherever it may: these are the steps
// it hands to cuDNN, counted without a device.
TEST_CASE("the op cases give cuDNN their f32 windowed group-1 Convs, 2-d and 1-d, not the 3-d one") {
  int windowed = 0, eligible = 0;
  for (const GpuOpCase& c : gpu_op_cases()) {
    const gpu::LoweredPlan lowered = lower_for_inputs(*c.graph, c.inputs);
    const HostBoundPlan bound_plan(lowered, c.inputs);
    for (const gpu::LoweredStep& step : lowered.steps) {
      if (!std::holds_alternative<gpu::ConvGemmStep>(step.params)) continue;
      ++windowed;
      const bool may = gpu::cudnn_conv_eligible(std::get<gpu::ConvGemmStep>(gpu::bind_step(step, bound_plan.bindings)));
      eligible += may ? 1 : 0;
      MESSAGE(c.name, ": ", std::string(may ? "cuDNN" : "our kernel only"));
    }
  }
  CHECK(eligible >= 3);
  CHECK(eligible < windowed);
}

}  // namespace edgefuse::test
