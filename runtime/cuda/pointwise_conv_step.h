// 1x1 Convs (stride 1, no padding, one group, channels-first input), most of a detector's
// arithmetic (82 of YOLOX-nano's 113 Convs): per image a GEMM Y = W X with the fuser's epilogue.
// On a device the block-tiled GEMM of conv_gemm.h computes them; the work items here are the
// host emulation's (and the reference the device kernel is tested against): one item computes a
// tile of kPointwiseRows output channels by kPointwiseColumns positions, so per input channel it
// loads 4 inputs and 4 weights for 16 multiply-adds, with no window arithmetic.
//
// Tiles at the matrix's edges load clamped indices (in bounds, repeated) and store only their
// own outputs, so the accumulators stay in registers. Each output is the bias plus the products in
// input-channel order, as ConvStep sums them.
#pragma once

#include <cstdint>

#include "runtime/cuda/byte_ranges.h"
#include "runtime/cuda/step_kernels.h"

namespace edgefuse::gpu {

inline constexpr int kPointwiseRows = 4;
inline constexpr int kPointwiseColumns = 4;

// Operands: X [N, K, positions], W [M, K, 1...], B (optional), R (optional, [N, residual_channels,
// positions]).
struct PointwiseConvStep : Operands {
  int32_t gemm_tiling = -1;   // on a device: the kGemmTilings index to launch (conv_gemm.h), -1: the cost model's
  bool tensor_cores = false;  // X is binary16 and W fits it: the tensor-core tilings may run the step
  // On a device: the product through cuBLAS, then PointwiseEpilogueStep (cublas_gemm.h), where
  // library_gemm_eligible; gemm_tiling still says how to run it without cuBLAS.
  bool cublas = false;
  int64_t batch = 0;
  int64_t in_channels = 0;   // K
  int64_t out_channels = 0;  // M
  int64_t positions = 0;     // per image: the product of the output's spatial dims
  ActivationParams activation;
  bool residual_after_activation = false;
  int64_t residual_channels = 0;  // R's channels: out_channels, or fewer, the rest taking none

  EF_HOST_DEVICE int64_t row_tiles() const { return (out_channels + kPointwiseRows - 1) / kPointwiseRows; }
  EF_HOST_DEVICE int64_t column_tiles() const { return (positions + kPointwiseColumns - 1) / kPointwiseColumns; }
  EF_HOST_DEVICE int64_t count() const { return batch * row_tiles() * column_tiles(); }

  EF_HOST_DEVICE void run(int64_t i) const {
    const int64_t p0 = (i % column_tiles()) * kPointwiseColumns;
    const int64_t m0 = (i / column_tiles() % row_tiles()) * kPointwiseRows;
    const int64_t n = i / (column_tiles() * row_tiles());
    // Edge tiles read their last row or column again instead of past the matrix.
    int64_t row[kPointwiseRows], column[kPointwiseColumns];
    for (int r = 0; r < kPointwiseRows; ++r) row[r] = m0 + r < out_channels ? m0 + r : out_channels - 1;
    for (int q = 0; q < kPointwiseColumns; ++q) column[q] = p0 + q < positions ? p0 + q : positions - 1;
    float acc[kPointwiseRows][kPointwiseColumns];
    for (int r = 0; r < kPointwiseRows; ++r) {
      const float bias = in[2] != nullptr ? load(2, row[r]) : 0.0f;
      for (int q = 0; q < kPointwiseColumns; ++q) acc[r][q] = bias;
    }
    const int64_t x_image = n * in_channels * positions;
    for (int64_t c = 0; c < in_channels; ++c) {
      float x[kPointwiseColumns], w[kPointwiseRows];
      for (int q = 0; q < kPointwiseColumns; ++q) x[q] = load(0, x_image + c * positions + column[q]);
      for (int r = 0; r < kPointwiseRows; ++r) w[r] = load(1, row[r] * in_channels + c);
      for (int r = 0; r < kPointwiseRows; ++r) {
        for (int q = 0; q < kPointwiseColumns; ++q) acc[r][q] += w[r] * x[q];
      }
    }
    for (int r = 0; r < kPointwiseRows; ++r) {
      const int64_t m = m0 + r;
      for (int q = 0; q < kPointwiseColumns; ++q) {
        const int64_t p = p0 + q;
        if (m >= out_channels || p >= positions) continue;
        const int64_t o = (n * out_channels + m) * positions + p;
        if (in[3] == nullptr || m >= residual_channels) {
          store(o, apply_activation(activation, acc[r][q]));
        } else if (residual_after_activation) {
          store(o, apply_activation(activation, acc[r][q]) + load(3, (n * residual_channels + m) * positions + p));
        } else {
          store(o, apply_activation(activation, acc[r][q] + load(3, (n * residual_channels + m) * positions + p)));
        }
      }
    }
  }
};

// A PointwiseConvStep's epilogue over its product Y = W X, already in `out` (a GEMM library's
// result), in place: Y = act(Y + B + R) or act(Y + B) + R, one work item per element. Operands:
// Y (in[0], the same bytes as out), unused, B (optional), R (optional). The bias is added after
// the products rather than before them, so outputs may differ from the step's in the last bits.
struct PointwiseEpilogueStep : Operands {
  int64_t batch = 0;
  int64_t out_channels = 0;
  int64_t positions = 0;
  ActivationParams activation;
  bool residual_after_activation = false;
  int64_t residual_channels = 0;

  EF_HOST_DEVICE int64_t count() const { return batch * out_channels * positions; }

  EF_HOST_DEVICE void run(int64_t i) const {
    const int64_t p = i % positions;
    const int64_t m = i / positions % out_channels;
    const int64_t n = i / (positions * out_channels);
    float v = load(0, i);
    if (in[2] != nullptr) v += load(2, m);
    if (in[3] == nullptr || m >= residual_channels) {
      store(i, apply_activation(activation, v));
    } else if (residual_after_activation) {
      store(i, apply_activation(activation, v) + load(3, (n * residual_channels + m) * positions + p));
    } else {
      store(i, apply_activation(activation, v + load(3, (n * residual_channels + m) * positions + p)));
    }
  }
};

// Whether `step` (bound to its buffers) may run as a library's f32 GEMM and then
// PointwiseEpilogueStep: every operand f32, each matrix's sizes within a 32-bit int, and neither
// X nor a residual in Y's bytes (the product would overwrite them before they are read).
inline bool library_gemm_eligible(const PointwiseConvStep& step) {
  constexpr int64_t kLargestInt = 2147483647;
  if (step.half != 0 || step.in[0] == nullptr || step.in[1] == nullptr || step.out == nullptr) return false;
  if (step.batch > kLargestInt || step.in_channels * step.positions > kLargestInt ||
      step.out_channels * step.positions > kLargestInt || step.out_channels * step.in_channels > kLargestInt) {
    return false;
  }
  const auto overlaps_output = [&](const void* begin, int64_t floats) {
    return byte_ranges_overlap(begin, static_cast<size_t>(floats) * 4, step.out,
                               static_cast<size_t>(step.batch * step.out_channels * step.positions) * 4);
  };
  if (overlaps_output(step.in[0], step.batch * step.in_channels * step.positions)) return false;
  return step.in[3] == nullptr || !overlaps_output(step.in[3], step.batch * step.residual_channels * step.positions);
}

// The epilogue of `step` (a Conv step with the fuser's epilogue: bias, residual, activation) as
// PointwiseEpilogueStep over the bare product already in its output, `positions` per channel.
template <typename ConvWithEpilogue>
inline PointwiseEpilogueStep epilogue_over_output(const ConvWithEpilogue& step, int64_t positions) {
  PointwiseEpilogueStep e;
  e.in[0] = step.out;
  e.in[2] = step.in[2];
  e.in[3] = step.in[3];
  e.out = step.out;
  e.batch = step.batch;
  e.out_channels = step.out_channels;
  e.positions = positions;
  e.activation = step.activation;
  e.residual_after_activation = step.residual_after_activation;
  e.residual_channels = step.residual_channels;
  return e;
}

// The epilogue PointwiseEpilogueStep applies after `step`'s product; needed unless it is the identity.
inline PointwiseEpilogueStep epilogue_after_product(const PointwiseConvStep& step) {
  return epilogue_over_output(step, step.positions);
}

inline bool epilogue_is_identity(const PointwiseEpilogueStep& e) {
  return e.in[2] == nullptr && e.in[3] == nullptr && e.activation.kind == Activation::kNone;
}

}  // namespace edgefuse::gpu
