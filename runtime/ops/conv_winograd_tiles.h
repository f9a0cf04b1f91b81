// What the Winograd F(2x2) and F(4x4) kernels (conv_winograd.h) share on one CPU ISA level: the
// layout of their transformed matrices, the packing of the transformed weights, the band's GEMMs,
// the walk over its tile rows and the writing of Y's rows. Per-ISA (isa_namespace.h): include
// from per-ISA sources only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "runtime/ops/conv_epilogue_rows.h"
#include "runtime/ops/conv_winograd.h"
#include "runtime/ops/isa_namespace.h"
#include "runtime/ops/packed_gemm.h"
#include "runtime/ops/simd_activation.h"
#include "runtime/ops/simd_packet.h"

namespace edgefuse::EF_ISA_NAMESPACE::winograd {

// Floats from one position's matrix to the next in V and M: a cache line more than the matrix, so
// that the streams of a transform never share their L1 sets (channels x tiles is often a multiple
// of 1024 floats, and 16 streams 4 KiB apart thrashed: 64 channels twice as slow as 80). The
// transforms' last vector of a tile row writes up to kLanes - 1 slots past it (see there).
inline int64_t position_stride(int64_t channels, int64_t tiles) {
  static_assert(simd::kLanes <= 16, "a tile row's last vector writes up to kLanes - 1 slots past its matrix");
  return channels * tiles + 16;
}

// Consecutive tiles of one tile row within a band: tile row ty, columns [tx_begin, tx_end), the
// first of them at `offset` in the band.
struct TileRun {
  int64_t ty, tx_begin, tx_end, offset;
};

// Calls fn(run) for each tile row's part of tiles [tile_begin, tile_end).
template <typename Fn>
void for_each_run(const WinogradGeometry& g, int64_t tile_begin, int64_t tile_end, Fn fn) {
  for (int64_t t = tile_begin; t < tile_end;) {
    const int64_t ty = t / g.tile_cols, tx = t % g.tile_cols;
    const int64_t tx_end = std::min(g.tile_cols, tx + (tile_end - t));
    fn(TileRun{ty, tx, tx_end, t - tile_begin});
    t += tx_end - tx;
  }
}

// The `positions` transformed weight matrices U[xi] (out x in channels, element (k, ch) being
// weight(kernel, xi) of that 3 x 3 kernel, in float64) straight in pack_gemm_a's tile layout
// (packed_gemm.h): no temporary, whose container would be a function outside this level's
// namespace (isa_namespace.h).
template <typename Weight>
void pack_transformed_weights(const Conv2d& c, int positions, Weight weight, float* packed) {
  for (int xi = 0; xi < positions; ++xi) {
    float* const out = packed + xi * packed_gemm_a_floats(c.mg, c.cg);
    for (int64_t tile = 0; tile * kGemmTileRows < c.mg; ++tile) {
      for (int64_t ch = 0; ch < c.cg; ++ch) {
        for (int64_t r = 0; r < kGemmTileRows; ++r) {
          const int64_t k = tile * kGemmTileRows + r;
          out[(tile * c.cg + ch) * kGemmTileRows + r] =
              k < c.mg ? static_cast<float>(weight(c.w + (k * c.cg + ch) * 9, xi)) : 0.0f;
        }
      }
    }
  }
}

// The band's products M[xi] = U[xi] V[xi], one GEMM per position, U being c.packed_w.
inline void multiply_positions(const Conv2d& c, int positions, const float* v, int64_t v_stride, float* m,
                               int64_t m_stride, int64_t tiles, float* panel) {
  const GemmRowEpilogue none;
  for (int xi = 0; xi < positions; ++xi) {
    packed_gemm(c.packed_w + xi * packed_gemm_a_floats(c.mg, c.cg), c.mg, c.cg, v + xi * v_stride, tiles,
                m + xi * m_stride, tiles, tiles, none, panel);
  }
}

// row[kTile t + q] = o_q[t] for the first `width` floats of a tile row's output row (its tiles'
// columns, the last tile's cut at the image's edge), o_q = o + q * o_stride: whole vectors of
// tiles, the rest through a buffer (o's rows must have a vector of slack after them).
template <int kTile>
void interleave_row(float* row, const float* o, int64_t o_stride, int64_t width) {
  static_assert(kTile == 2 || kTile == 4, "F(2x2) or F(4x4)");
  const auto put = [&](float* out, int64_t t) {
    if constexpr (kTile == 2) {
      simd::interleave_store(out, simd::load(o + t), simd::load(o + o_stride + t));
    } else {
      simd::interleave4_store(out, simd::load(o + t), simd::load(o + o_stride + t), simd::load(o + 2 * o_stride + t),
                              simd::load(o + 3 * o_stride + t));
    }
  };
  int64_t t = 0;
  for (; kTile * (t + simd::kLanes) <= width; t += simd::kLanes) put(row + kTile * t, t);
  if (kTile * t == width) return;
  float buffer[kTile * simd::kLanes];
  put(buffer, t);
  simd::copy(row + kTile * t, buffer, width - kTile * t);
}

// Y's rows of the band's tiles, output channel by channel: transform(kind, k, bias, o) puts channel
// k's kTile x kTile outputs per tile into o (row kTile i + j, `tiles` floats and a vector of
// slack, holds output (kTile ty + i, kTile tx + j) of each tile) with the bias and the activation
// `kind`; then each tile row's output rows from o's rows, and the residual where it comes after
// the activation. Where it comes before, the transform leaves the activation to the epilogue on
// the rows.
template <int kTile, typename Transform>
void write_tile_outputs(const Conv2d& c, const WinogradGeometry& g, int64_t n, int64_t tile_begin, int64_t tile_end,
                        float* o, Transform transform) {
  const int64_t tiles = tile_end - tile_begin;
  simd::dispatch_activation(c.epilogue.kind, [&](auto kind) {
    for (int64_t k = 0; k < c.mg; ++k) {
      float* const y = c.y + (n * c.out_channels + k) * c.output_plane;
      const float* const residual = c.residual != nullptr && k < c.residual_channels
                                        ? c.residual + (n * c.residual_channels + k) * c.output_plane
                                        : nullptr;
      const bool activate = residual == nullptr || c.epilogue.residual_after_activation;
      const float bias = c.bias != nullptr ? c.bias[k] : 0.0f;
      if (activate) {
        transform(kind, k, bias, o);
      } else {
        transform(std::integral_constant<ConvEpilogue::Kind, ConvEpilogue::Kind::kNone>{}, k, bias, o);
      }
      for_each_run(g, tile_begin, tile_end, [&](const TileRun& run) {
        const int64_t x_begin = kTile * run.tx_begin, x_end = std::min(c.ow, kTile * run.tx_end);
        for (int i = 0; i < kTile; ++i) {
          const int64_t oy = kTile * run.ty + i;
          if (oy >= c.oh) break;
          float* const row = y + oy * c.ow + x_begin;
          interleave_row<kTile>(row, o + kTile * i * tiles + run.offset, tiles, x_end - x_begin);
          const float* const residual_row = residual != nullptr ? residual + oy * c.ow + x_begin : nullptr;
          if (!activate) {
            finish_row(c.epilogue, row, residual_row, x_end - x_begin);
          } else if (residual_row != nullptr) {
            add_row(row, residual_row, x_end - x_begin);
          }
        }
      });
    }
  });
}

}  // namespace edgefuse::EF_ISA_NAMESPACE::winograd
