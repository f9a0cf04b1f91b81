// Run-time ISA dispatch (runtime/cpu_features.h, runtime/ops/cpu_kernel_table.h): selecting a
// level, and every dispatched kernel on every level this machine supports against the
// reference kernels. Tolerances: Conv within 1e-5 relative L2 and 1e-4 absolute (f32 GEMM
// against the float64 reference); Exp and Sigmoid within 1e-6 relative (vector_math.h promises
// 2 ulp); the other unary ops within 1e-6 relative plus 1e-6 absolute; Add, Sub, Mul, Div and
// PRelu bit-exact (one correctly rounded f32 operation, as the reference rounds its double result
// once); Pow within 1e-6 relative (the C library's powf); MatMul and Gemm within 1e-5 relative L2;
// MaxPool exact.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/cpu_features.h"
#include "runtime/ops/broadcast.h"
#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/ops.h"
#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

struct ConvShape {
  const char* name;
  int64_t channels, height, width, out_channels, kernel, stride, group;
};

// The paths of cpu_conv: pointwise GEMM, dense GEMM over phase planes (stride 1 and 2, grouped),
// depthwise direct.
// Odd sizes leave vector remainders; 70x66 spans more than one 4096-column GEMM block.
const ConvShape kConvShapes[] = {
    {"1x1", 13, 7, 11, 17, 1, 1, 1},
    {"1x1 large", 8, 70, 66, 5, 1, 1, 1},
    // Deep enough for the GEMM's depth slices on AVX-512 and AVX2, over a block ending mid-vector.
    {"1x1 deep", 400, 5, 13, 20, 1, 1, 1},
    {"3x3 s1 deep", 48, 7, 9, 10, 3, 1, 1},
    {"3x3 s1", 7, 13, 9, 6, 3, 1, 1},
    {"3x3 s2", 5, 15, 13, 9, 3, 2, 1},
    // Output rows of whole vectors (one GEMM per row, straight into Y, with AVX-512 too).
    {"3x3 s1, 32 columns", 5, 6, 32, 11, 3, 1, 1},
    {"5x5 s2 stem, 32 columns", 3, 9, 64, 10, 5, 2, 1},
    {"3x3 s1 grouped", 8, 9, 7, 4, 3, 1, 2},
    {"depthwise 3x3 s1", 19, 13, 17, 19, 3, 1, 19},
    {"depthwise 3x3 s2", 19, 13, 17, 19, 3, 2, 19},
    // Stride 2 wider than a vector (AVX-512's direct kernel overlaps the last vector) and even sizes.
    {"depthwise 3x3 s2 wide", 5, 10, 43, 5, 3, 2, 5},
    {"depthwise 3x3 s2 even", 6, 16, 32, 6, 3, 2, 6},
    {"depthwise 5x5 s2", 6, 21, 22, 6, 5, 2, 6},
    // Stride-1 row blocks: 5x5, three vectors per row (an odd count for two-vector blocks), and
    // fewer rows than a block (the grouped-tap path).
    {"depthwise 5x5 s1", 7, 11, 37, 7, 5, 1, 7},
    {"depthwise 3x3 s1, 3 rows", 5, 3, 40, 5, 3, 1, 5},
    {"depthwise 3x3 s1, 5 vectors a row (inside vectors in a pair and alone)", 4, 9, 70, 4, 3, 1, 4},
    {"depthwise 3x3 s1, rows narrower than a vector", 9, 13, 13, 9, 3, 1, 9},
    {"depthwise 5x5 s1, 7 columns", 4, 9, 7, 4, 5, 1, 4},
    {"5x5 s2 dense stem", 3, 23, 21, 10, 5, 2, 1},
    {"1x1 s2 (dense path)", 6, 9, 11, 7, 1, 2, 1},
    {"1x1 wide", 40, 26, 26, 33, 1, 1, 1},
    {"1x1 45 columns (3-vector edge tile with AVX-512)", 9, 5, 9, 12, 1, 1, 1},
    // Last column blocks of whole vectors (read in place, no panel) and last row tiles of a
    // half tile or fewer rows.
    {"1x1 64 columns, 20 output channels", 11, 8, 8, 20, 1, 1, 1},
    {"1x1 80 columns, 13 output channels", 6, 4, 20, 13, 1, 1, 1},
    // Long k loops (YOLOX-nano's 13 x 13 layers have k of 256 and 512), with a masked edge and a
    // half row tile; and a dense Conv whose k (144) passes a block of B's rows the size of L1.
    {"1x1 k 300 over 13 x 13, 20 output channels", 300, 13, 13, 20, 1, 1, 1},
    {"1x1 k 530 over 3 x 5", 530, 3, 5, 9, 1, 1, 1},
    {"3x3 s1 over 16 channels (k 144)", 16, 9, 10, 12, 3, 1, 1},
};

const char* const kEpilogues[] = {"", "relu", "leaky_relu", "clip", "sigmoid", "hard_swish", "hard_sigmoid", "silu"};

Node conv_node(const ConvShape& s, const std::string& activation, int residual_mode) {
  Node node = make_node(OpKind::kConv, residual_mode < 0 ? 3 : 4);
  const int64_t pad = s.kernel / 2;
  node.attrs.set("strides", std::vector<int64_t>{s.stride, s.stride});
  node.attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  node.attrs.set("group", s.group);
  if (!activation.empty()) node.attrs.set("fused_activation", activation);
  if (activation == "clip") {
    node.attrs.set("fused_min", -0.5f);
    node.attrs.set("fused_max", 0.75f);
  }
  if (residual_mode >= 0) node.attrs.set("fused_residual_after_activation", int64_t{residual_mode});
  return node;
}

Shape conv_output_shape(const ConvShape& s) {
  const int64_t pad = s.kernel / 2;
  return {2, s.out_channels, (s.height + 2 * pad - s.kernel) / s.stride + 1,
          (s.width + 2 * pad - s.kernel) / s.stride + 1};
}

// |actual - expected| <= rel * |expected| + abs element-wise, with equal infinities and NaNs passing.
void check_close(const Tensor& actual, const Tensor& expected, double rel, double abs = 0.0) {
  REQUIRE(actual.numel() == expected.numel());
  const float* a = actual.data<float>();
  const float* e = expected.data<float>();
  int64_t failures = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    if (a[i] == e[i] || (std::isnan(a[i]) && std::isnan(e[i]))) continue;
    // Results below FLT_MIN flush to zero in vector_math; the reference keeps the subnormal.
    const double tolerance = rel * std::fabs(double{e[i]}) + std::max(abs, 1.2e-38);
    if (std::fabs(double{a[i]} - double{e[i]}) > tolerance && failures++ < 5) {
      FAIL_CHECK("element ", i, ": got ", a[i], ", expected ", e[i]);
    }
  }
  CHECK(failures == 0);
}

}  // namespace

TEST_CASE("isa dispatch: names, resolution of EDGEFUSE_CPU_ISA values and switching levels") {
  ActiveIsaGuard guard;
  for (CpuIsa isa : {CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    CHECK(cpu_isa_from_name(cpu_isa_name(isa)) == isa);
  }
  CHECK(cpu_isa_supported(CpuIsa::kPortable));
  CHECK(cpu_isa_supported(best_cpu_isa()));
  CHECK(*resolve_cpu_isa("") == best_cpu_isa());
  CHECK(*resolve_cpu_isa("portable") == CpuIsa::kPortable);

  const Result<CpuIsa> unknown = resolve_cpu_isa("sse9");
  REQUIRE_FALSE(unknown.is_ok());
  CHECK(unknown.status().message().find("'sse9'") != std::string::npos);

  for (CpuIsa isa : {CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    CAPTURE(cpu_isa_name(isa));
    CHECK(resolve_cpu_isa(cpu_isa_name(isa)).is_ok() == cpu_isa_supported(isa));
    CHECK(set_cpu_isa_for_testing(isa).is_ok() == cpu_isa_supported(isa));
  }
  for (CpuIsa isa : supported_isas()) {
    REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
    CHECK(active_cpu_isa() == isa);
    CHECK(cpu_kernel_table().isa == isa);
  }
  for (CpuIsa isa : supported_isas()) CHECK(isa <= best_cpu_isa());
  CHECK(cpu_isa_supported(CpuIsa::kAvx2) == (cpu_isa_compiled(CpuIsa::kAvx2) && best_cpu_isa() >= CpuIsa::kAvx2));
}

TEST_CASE("isa dispatch: Conv on every supported level matches the reference, each epilogue and residual") {
  ActiveIsaGuard guard;
  ThreadPool pool(2);
  uint32_t seed = 11;
  for (const ConvShape& s : kConvShapes) {
    std::mt19937 rng(seed++);
    const Tensor x = random_tensor(DType::kF32, {2, s.channels, s.height, s.width}, rng);
    const Tensor w = random_tensor(DType::kF32, {s.out_channels, s.channels / s.group, s.kernel, s.kernel}, rng);
    const Tensor b = random_tensor(DType::kF32, {s.out_channels}, rng);
    const Tensor r = random_tensor(DType::kF32, conv_output_shape(s), rng);
    for (const char* activation : kEpilogues) {
      for (int residual_mode : {-1, 0, 1}) {  // none, added before, added after the activation
        const Node node = conv_node(s, activation, residual_mode);
        std::vector<const Tensor*> inputs = {&x, &w, &b};
        if (residual_mode >= 0) inputs.push_back(&r);
        auto expected = run_op(node, inputs, true);
        REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
        for (CpuIsa isa : supported_isas()) {
          REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
          INFO(s.name, " epilogue '", activation, "' residual ", residual_mode, " isa ", cpu_isa_name(isa));
          auto actual = run_op(node, inputs, false, &pool);
          REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
          const ErrorStats error = compare_tensors(actual->at(0), expected->at(0));
          CHECK_MESSAGE(error.relative_l2 <= 1e-5, error.to_string());
          CHECK_MESSAGE(error.max_abs <= 1e-4, error.to_string());
          CHECK(error.mismatched_nan == 0);
        }
      }
    }
  }
}

TEST_CASE("isa dispatch: Conv's packed weights kept in the node's cache are rebuilt for a new level or tensor") {
  ActiveIsaGuard guard;
  std::mt19937 rng(23);
  const ConvShape s{"1x1", 24, 9, 11, 20, 1, 1, 1};
  const Tensor x = random_tensor(DType::kF32, {2, s.channels, s.height, s.width}, rng);
  const Tensor b = random_tensor(DType::kF32, {s.out_channels}, rng);
  const Tensor w1 = random_tensor(DType::kF32, {s.out_channels, s.channels, 1, 1}, rng);
  const Tensor w2 = random_tensor(DType::kF32, {s.out_channels, s.channels, 1, 1}, rng);
  const Node node = conv_node(s, "silu", -1);
  KernelCache cache;
  constexpr uint32_t kWeightsConstant = 1u << 1;
  // Twice per level and weight tensor: the first run fills the cache, the second reuses it; the
  // level changes between rounds, and so does the weight tensor.
  for (int round = 0; round < 2; ++round) {
    for (const Tensor* w : {&w1, &w2}) {
      auto expected = run_op(node, {&x, w, &b}, true);
      REQUIRE(expected.is_ok());
      for (CpuIsa isa : supported_isas()) {
        REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
        for (int run = 0; run < 2; ++run) {
          INFO("round ", round, " isa ", cpu_isa_name(isa), " run ", run);
          auto actual = run_op(node, {&x, w, &b}, false, nullptr, &cache, kWeightsConstant);
          REQUIRE(actual.is_ok());
          CHECK(!cache.data.empty());
          const ErrorStats error = compare_tensors(actual->at(0), expected->at(0));
          CHECK_MESSAGE(error.relative_l2 <= 1e-5, error.to_string());
        }
      }
    }
  }
  // Weights that are not constant are never cached.
  KernelCache unused;
  REQUIRE(run_op(node, {&x, &w1, &b}, false, nullptr, &unused, 0).is_ok());
  CHECK(unused.data.empty());
}

// The epilogue runs on SIMD vectors in whole GEMM tiles (simd_activation.h) and on scalars at the
// edges. A 1x1 Conv of zero input and weights whose bias holds, one per output channel, the values
// where formulas break (NaN, infinities, signed zeros, denormals, exp's underflow and overflow
// ends, hard_swish's kinks) puts each value through the activation at every column: 24 channels
// make whole tiles of rows on every level, 100 columns whole and partial tiles of columns. Within
// 1e-6 relative (2 ulp for exp, about 2^-27 for the reciprocal), or 1e-35 absolute: exp flushes
// results below FLT_MIN to zero, so SiLU of x < -87.3 may be 0 instead of about x * 1e-38.
TEST_CASE("isa dispatch: Conv epilogues on every level at the edge values of each activation") {
  ActiveIsaGuard guard;
  const float inf = std::numeric_limits<float>::infinity();
  const float edges[] = {std::numeric_limits<float>::quiet_NaN(),
                         inf,
                         -inf,
                         0.0f,
                         -0.0f,
                         1e-42f,
                         -1e-42f,
                         std::numeric_limits<float>::min(),
                         -87.5f,
                         -88.8f,
                         -103.9f,
                         -1e30f,
                         88.8f,
                         1e30f,
                         -3.0f,
                         3.0f,
                         -2.9999998f,
                         0.5f,
                         -0.5f,
                         20.0f,
                         -20.0f,
                         -0.75f,
                         0.125f,
                         7.0f};
  constexpr int64_t kChannels = std::size(edges), kColumns = 100;
  static_assert(kChannels % 8 == 0, "whole tiles of rows");
  Tensor x = Tensor::empty(DType::kF32, {1, 4, 1, kColumns});
  std::fill_n(x.data<float>(), x.numel(), 0.0f);
  Tensor w = Tensor::empty(DType::kF32, {kChannels, 4, 1, 1});
  std::fill_n(w.data<float>(), w.numel(), 0.0f);
  Tensor b = Tensor::empty(DType::kF32, {kChannels});
  std::copy(std::begin(edges), std::end(edges), b.data<float>());
  const ConvShape s{"bias only", 4, 1, kColumns, kChannels, 1, 1, 1};
  for (const char* activation : kEpilogues) {
    const Node node = conv_node(s, activation, -1);
    auto expected = run_op(node, {&x, &w, &b}, true);
    REQUIRE(expected.is_ok());
    for (CpuIsa isa : supported_isas()) {
      REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
      INFO("epilogue '", std::string(activation), "' isa ", cpu_isa_name(isa));
      auto actual = run_op(node, {&x, &w, &b}, false);
      REQUIRE(actual.is_ok());
      check_close(actual->at(0), expected->at(0), 1e-6, 1e-35);
    }
  }
}

TEST_CASE("isa dispatch: Exp and Sigmoid on every supported level, across the whole f32 range") {
  ActiveIsaGuard guard;
  ThreadPool pool(2);
  std::mt19937 rng(5);
  for (int64_t n : {1, 7, 13, 127, 16 * 1024 + 3}) {
    // [-100, 100] crosses both ends of exp's range (underflow below -87.3, overflow above 88.7).
    Tensor x = random_tensor(DType::kF32, {n}, rng, -100.0, 100.0);
    if (n > 7) {
      float* values = x.data<float>();
      values[1] = std::numeric_limits<float>::quiet_NaN();
      values[2] = std::numeric_limits<float>::infinity();
      values[3] = -std::numeric_limits<float>::infinity();
      values[4] = 0.0f;
    }
    for (OpKind op : {OpKind::kExp, OpKind::kSigmoid}) {
      const Node node = make_node(op, 1);
      auto expected = run_op(node, {&x}, true);
      REQUIRE(expected.is_ok());
      for (CpuIsa isa : supported_isas()) {
        REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
        INFO(op_name(op), " n=", n, " isa ", cpu_isa_name(isa));
        auto actual = run_op(node, {&x}, false, &pool);
        REQUIRE(actual.is_ok());
        check_close(actual->at(0), expected->at(0), 1e-6);
      }
    }
  }
}

TEST_CASE("isa dispatch: the other unary ops on every supported level match the reference") {
  ActiveIsaGuard guard;
  std::mt19937 rng(6);
  const Tensor x = random_tensor(DType::kF32, {3, 127}, rng, -8.0, 8.0);
  const Tensor lo = Tensor::from_vector<float>({}, {-1.5f});
  const Tensor hi = Tensor::from_vector<float>({}, {2.0f});
  for (OpKind op : {OpKind::kRelu, OpKind::kLeakyRelu, OpKind::kTanh, OpKind::kHardSigmoid, OpKind::kHardSwish,
                    OpKind::kClip, OpKind::kSqrt}) {
    Node node = make_node(op, op == OpKind::kClip ? 3 : 1);
    std::vector<const Tensor*> inputs = {&x};
    if (op == OpKind::kClip) inputs = {&x, &lo, &hi};
    if (op == OpKind::kLeakyRelu) node.attrs.set("alpha", 0.3f);
    auto expected = run_op(node, inputs, true);
    REQUIRE(expected.is_ok());
    for (CpuIsa isa : supported_isas()) {
      REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
      INFO(op_name(op), " isa ", cpu_isa_name(isa));
      auto actual = run_op(node, inputs, false);
      REQUIRE(actual.is_ok());
      // Absolute 1e-6 too: HardSigmoid's alpha * x + beta cancels near 0, where the f32 result keeps
      // only its rounding error (and FMA contraction on AVX2 and up changes that error).
      check_close(actual->at(0), expected->at(0), 1e-6, 1e-6);  // sqrt of negatives: NaN on both sides
    }
  }
}

TEST_CASE("isa dispatch: binary ops on every supported level match the reference on each broadcast path") {
  ActiveIsaGuard guard;
  ThreadPool pool(2);
  struct Shapes {
    Shape a, b;
  };
  const Shapes cases[] = {
      {{2, 3, 13, 7}, {2, 3, 13, 7}},  // one flat run
      {{2, 5, 7, 9}, {5, 1, 1}},       // per-channel rows, b a scalar per row
      {{5, 1, 1}, {2, 5, 7, 9}},       // the same with a broadcast
      {{3, 127}, {1}},                 // scalar b
      {{1}, {3, 127}},                 // scalar a
      {{4, 1, 7}, {1, 6, 7}},          // rows reading both operands contiguously
      {{1, 200, 130}, {1, 200, 130}},  // more than one 16K-element chunk
  };
  std::mt19937 rng(8);
  for (const Shapes& shapes : cases) {
    // Positive bases keep Pow real; other ops see both signs through the shifted b.
    const Tensor a = random_tensor(DType::kF32, shapes.a, rng, 0.1, 3.0);
    const Tensor b = random_tensor(DType::kF32, shapes.b, rng, -2.0, 2.0);
    for (OpKind op : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kPow, OpKind::kPRelu}) {
      const Node node = make_node(op, 2);
      std::vector<const Tensor*> inputs = {&a, &b};
      if (op == OpKind::kPRelu) {  // the slope must broadcast to x unidirectionally
        if (check_unidirectional_broadcast(shapes.a, shapes.b).is_ok()) {
          inputs = {&b, &a};
        } else if (!check_unidirectional_broadcast(shapes.b, shapes.a).is_ok()) {
          continue;
        }
      }
      auto expected = run_op(node, inputs, true);
      REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
      for (CpuIsa isa : supported_isas()) {
        REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
        INFO(op_name(op), " ", shape_to_string(shapes.a), " op ", shape_to_string(shapes.b), " isa ",
             cpu_isa_name(isa));
        auto actual = run_op(node, inputs, false, &pool);
        REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
        check_close(actual->at(0), expected->at(0), op == OpKind::kPow ? 1e-6 : 0.0);
      }
    }
  }
}

TEST_CASE("isa dispatch: MatMul and Gemm on every supported level match the reference") {
  ActiveIsaGuard guard;
  ThreadPool pool(2);
  std::mt19937 rng(9);
  // MatMul with batch broadcasting; 37 rows split into row blocks on two threads.
  const Tensor a = random_tensor(DType::kF32, {3, 37, 19}, rng);
  const Tensor b = random_tensor(DType::kF32, {19, 23}, rng);
  const Node matmul = make_node(OpKind::kMatMul, 2);
  auto expected = run_op(matmul, {&a, &b}, true);
  REQUIRE(expected.is_ok());
  for (CpuIsa isa : supported_isas()) {
    REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
    INFO("MatMul isa ", cpu_isa_name(isa));
    auto actual = run_op(matmul, {&a, &b}, false, &pool);
    REQUIRE(actual.is_ok());
    const ErrorStats error = compare_tensors(actual->at(0), expected->at(0));
    CHECK_MESSAGE(error.relative_l2 <= 1e-5, error.to_string());
  }
  // Gemm, each transposition, alpha and beta, C broadcast over rows.
  const Tensor c = random_tensor(DType::kF32, {23}, rng);
  for (int64_t trans_a : {0, 1}) {
    for (int64_t trans_b : {0, 1}) {
      const Tensor ga = random_tensor(DType::kF32, trans_a != 0 ? Shape{19, 37} : Shape{37, 19}, rng);
      const Tensor gb = random_tensor(DType::kF32, trans_b != 0 ? Shape{23, 19} : Shape{19, 23}, rng);
      Node gemm = make_node(OpKind::kGemm, 3);
      gemm.attrs.set("transA", trans_a);
      gemm.attrs.set("transB", trans_b);
      gemm.attrs.set("alpha", 0.75f);
      gemm.attrs.set("beta", -1.5f);
      auto gemm_expected = run_op(gemm, {&ga, &gb, &c}, true);
      REQUIRE(gemm_expected.is_ok());
      for (CpuIsa isa : supported_isas()) {
        REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
        INFO("Gemm transA ", trans_a, " transB ", trans_b, " isa ", cpu_isa_name(isa));
        auto actual = run_op(gemm, {&ga, &gb, &c}, false, &pool);
        REQUIRE(actual.is_ok());
        const ErrorStats error = compare_tensors(actual->at(0), gemm_expected->at(0));
        CHECK_MESSAGE(error.relative_l2 <= 1e-5, error.to_string());
      }
    }
  }
}

TEST_CASE("isa dispatch: MaxPool on every supported level equals the reference exactly") {
  ActiveIsaGuard guard;
  ThreadPool pool(2);
  std::mt19937 rng(10);
  Tensor x = random_tensor(DType::kF32, {2, 5, 23, 19}, rng);
  // NaN and infinities where windows meet borders and each other (the stride-1 path reduces a padded
  // copy flattened, and must order its maxima as the separable path does).
  const float specials[] = {std::nanf(""), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()};
  for (int64_t i = 0; i < x.numel(); i += 37) x.data<float>()[i] = specials[(i / 37) % 3];
  struct Window {
    int64_t kernel, stride, pad_end;
  };
  for (const Window w :
       {Window{5, 1, 2}, Window{13, 1, 6}, Window{4, 1, 1}, Window{3, 1, 0}, Window{3, 2, 1}, Window{2, 2, 1}}) {
    Node node = make_node(OpKind::kMaxPool, 1);
    const int64_t pad = w.kernel / 2;
    node.attrs.set("kernel_shape", std::vector<int64_t>{w.kernel, w.kernel});
    node.attrs.set("strides", std::vector<int64_t>{w.stride, w.stride});
    node.attrs.set("pads", std::vector<int64_t>{pad, pad, w.pad_end, w.pad_end});
    auto expected = run_op(node, {&x}, true);
    REQUIRE(expected.is_ok());
    for (CpuIsa isa : supported_isas()) {
      REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
      INFO("kernel ", w.kernel, " stride ", w.stride, " isa ", cpu_isa_name(isa));
      auto actual = run_op(node, {&x}, false, &pool);
      REQUIRE(actual.is_ok());
      check_close(actual->at(0), expected->at(0), 0.0);  // a max selects an input: no rounding
    }
  }
}

// 2x2 stride 2 without padding on even sizes has its own one-pass loop (pool_kernels.cpp).
TEST_CASE("isa dispatch: MaxPool 2x2 stride 2 on every supported level equals the reference exactly") {
  ActiveIsaGuard guard;
  std::mt19937 rng(12);
  Tensor x = random_tensor(DType::kF32, {2, 3, 8, 38}, rng);
  x.data<float>()[5] = std::numeric_limits<float>::infinity();
  x.data<float>()[77] = -std::numeric_limits<float>::infinity();
  x.data<float>()[100] = std::numeric_limits<float>::quiet_NaN();
  Node node = make_node(OpKind::kMaxPool, 1);
  node.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  node.attrs.set("strides", std::vector<int64_t>{2, 2});
  auto expected = run_op(node, {&x}, true);
  REQUIRE(expected.is_ok());
  for (CpuIsa isa : supported_isas()) {
    REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
    INFO("isa ", cpu_isa_name(isa));
    auto actual = run_op(node, {&x}, false);
    REQUIRE(actual.is_ok());
    check_close(actual->at(0), expected->at(0), 0.0);
  }
}

TEST_CASE("isa dispatch: the register-tiled transpose on every supported level equals the index map") {
  std::mt19937 rng(14);
  struct Shape2 {
    int64_t rows, cols, src_padding;  // padding 0 with 2-4 rows: densely interleaved (NHWC channels)
  };
  for (const Shape2& shape : {Shape2{37, 45, 5},
                              {16, 16, 5},
                              {3, 70, 5},
                              {64, 8, 5},
                              {1, 1, 5},
                              {2, 37, 0},
                              {3, 70, 0},
                              {4, 19, 0},
                              {3, 16384, 0}}) {
    const int64_t rows = shape.rows, cols = shape.cols;
    const int64_t src_stride = rows + shape.src_padding, dst_stride = cols + 3;  // padding beyond the block
    std::vector<float> src(static_cast<size_t>(cols * src_stride));
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (float& v : src) v = value(rng);
    for (CpuIsa isa : supported_isas()) {
      INFO(rows, " x ", cols, " isa ", cpu_isa_name(isa));
      std::vector<float> dst(static_cast<size_t>(rows * dst_stride), -7.0f);
      cpu_kernel_table(isa).transpose_f32(src.data(), src_stride, dst.data(), dst_stride, rows, cols);
      int64_t wrong = 0;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < dst_stride; ++c) {
          const float want = c < cols ? src[static_cast<size_t>(c * src_stride + r)] : -7.0f;  // padding untouched
          wrong += dst[static_cast<size_t>(r * dst_stride + c)] != want ? 1 : 0;
        }
      }
      CHECK(wrong == 0);
    }
  }
}

// Nearest 2x upsampling (Resize's usual case): widths below, at and past a vector of every level,
// with a guard after the output that must stay untouched.
TEST_CASE("isa dispatch: 2x upsampling on every supported level duplicates each value exactly") {
  std::mt19937 rng(33);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (const int64_t width : {1, 3, 4, 7, 8, 9, 13, 16, 26, 33}) {
    const int64_t rows = 5;
    std::vector<float> src(static_cast<size_t>(rows * width));
    for (float& v : src) v = value(rng);
    for (CpuIsa isa : supported_isas()) {
      INFO("width ", width, " isa ", cpu_isa_name(isa));
      const int64_t out_size = 4 * rows * width;
      std::vector<float> dst(static_cast<size_t>(out_size + 16), -7.0f);
      cpu_kernel_table(isa).upsample2x_f32(src.data(), dst.data(), rows, width);
      int64_t wrong = 0;
      for (int64_t i = 0; i < out_size + 16; ++i) {
        const int64_t row = i / (2 * width), column = i % (2 * width);
        const float want = i < out_size ? src[static_cast<size_t>(row / 2 * width + column / 2)] : -7.0f;
        wrong += dst[static_cast<size_t>(i)] != want ? 1 : 0;
      }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("isa dispatch: Softmax on every supported level matches the reference, contiguous and strided") {
  ActiveIsaGuard guard;
  ThreadPool pool(2);
  struct SoftmaxCase {
    Shape shape;
    int64_t axis;
    bool legacy;
  };
  // Last axis (contiguous groups, 1000 long like a classifier's); YOLOv8's DFL ([1, 16, 4, cells]
  // over axis 1: groups 4 x cells apart, in blocks of columns with a ragged end); a middle axis of
  // several outer slices; opset-11 flattening.
  const SoftmaxCase cases[] = {
      {{3, 1000}, -1, false}, {{1, 16, 4, 1029}, 1, false}, {{2, 7, 5, 33}, 1, false}, {{2, 3, 4, 5}, 1, true}};
  std::mt19937 rng(41);
  for (const SoftmaxCase& c : cases) {
    // Logits up to +-30: large enough that a missing max subtraction would overflow exp's sum.
    const Tensor x = random_tensor(DType::kF32, c.shape, rng, -30.0, 30.0);
    Node node = make_node(OpKind::kSoftmax, 1);
    node.attrs.set("axis", c.axis);
    if (c.legacy) node.attrs.set("legacy_flatten", int64_t{1});
    auto expected = run_op(node, {&x}, true);
    REQUIRE(expected.is_ok());
    for (CpuIsa isa : supported_isas()) {
      REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
      INFO(shape_to_string(c.shape), " axis ", c.axis, c.legacy ? " legacy" : "", " isa ", cpu_isa_name(isa));
      auto actual = run_op(node, {&x}, false, &pool);
      REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
      const ErrorStats error = compare_tensors(actual->at(0), expected->at(0));
      CHECK_MESSAGE(error.relative_l2 <= 1e-6, error.to_string());
      CHECK_MESSAGE(error.max_abs <= 1e-6, error.to_string());
      CHECK(error.mismatched_nan == 0);
    }
  }
}

TEST_CASE("isa dispatch: SoftmaxExpectation on every supported level matches the reference") {
  ActiveIsaGuard guard;
  ThreadPool pool(2);
  struct ExpectationCase {
    Shape shape;
    int64_t axis;
  };
  // YOLOv8's DFL ([1, 4, 16, cells] over the 16 bins, cells apart, a ragged last block of columns);
  // the last axis (contiguous groups); a first axis.
  const ExpectationCase cases[] = {{{1, 4, 16, 1029}, 2}, {{3, 7, 9}, -1}, {{5, 2, 300}, 0}};
  std::mt19937 rng(43);
  for (const ExpectationCase& c : cases) {
    const Tensor x = random_tensor(DType::kF32, c.shape, rng, -30.0, 30.0);
    const int64_t length =
        c.shape[static_cast<size_t>(c.axis < 0 ? c.axis + static_cast<int64_t>(c.shape.size()) : c.axis)];
    const Tensor weights = random_tensor(DType::kF32, {length}, rng, 0.0, 16.0);
    const Tensor bias = random_tensor(DType::kF32, {1}, rng, -1.0, 1.0);
    Node node = make_node(OpKind::kSoftmaxExpectation, 3);
    node.attrs.set("axis", c.axis);
    auto expected = run_op(node, {&x, &weights, &bias}, true);
    REQUIRE(expected.is_ok());
    for (CpuIsa isa : supported_isas()) {
      REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
      INFO(shape_to_string(c.shape), " axis ", c.axis, " isa ", cpu_isa_name(isa));
      auto actual = run_op(node, {&x, &weights, &bias}, false, &pool);
      REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
      const ErrorStats error = compare_tensors(actual->at(0), expected->at(0));
      CHECK_MESSAGE(error.relative_l2 <= 1e-6, error.to_string());
      CHECK(error.mismatched_nan == 0);
    }
  }
}
