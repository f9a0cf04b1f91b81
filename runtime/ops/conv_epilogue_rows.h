// The fused Conv epilogue (conv_epilogue.h) on contiguous f32 runs, for the per-ISA Conv kernels'
// paths that cannot apply it in registers (a residual added before the activation, edge tiles).
// Include from per-ISA sources only (isa_namespace.h).
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/ops/conv_epilogue.h"
#include "runtime/ops/isa_namespace.h"
#include "runtime/ops/simd_activation.h"

namespace edgefuse::EF_ISA_NAMESPACE {

inline void add_row(float* row, const float* addend, int64_t count) {
  for (int64_t i = 0; i < count; ++i) row[i] += addend[i];
}

// The activation alone, in place on `count` values: the same vector code as the GEMM and
// depthwise loops (simd_activation.h), the last partial vector through a padded copy.
inline void apply_activation(const ConvEpilogue& e, float* data, int64_t count) {
  simd::dispatch_activation(e.kind, [&](auto kind) {
    constexpr ConvEpilogue::Kind K = decltype(kind)::value;
    if constexpr (K == ConvEpilogue::Kind::kNone) return;
    int64_t i = 0;
    for (; i + simd::kLanes <= count; i += simd::kLanes) {
      simd::store(data + i, simd::activate<K>(simd::load(data + i), e));
    }
    if (i == count) return;
    float tail[simd::kLanes] = {};
    std::copy(data + i, data + count, tail);
    simd::store(tail, simd::activate<K>(simd::load(tail), e));
    std::copy(tail, tail + (count - i), data + i);
  });
}

// Everything after bias: the residual (nullptr when absent) before or after the activation.
inline void finish_row(const ConvEpilogue& e, float* row, const float* residual, int64_t count) {
  if (residual != nullptr && !e.residual_after_activation) add_row(row, residual, count);
  apply_activation(e, row, count);
  if (residual != nullptr && e.residual_after_activation) add_row(row, residual, count);
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
