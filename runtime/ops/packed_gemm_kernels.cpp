// The packed GEMM micro-kernel (packed_gemm.h), compiled once per CPU ISA level.
#include <algorithm>
#include <type_traits>

#include "runtime/ops/conv_epilogue_rows.h"
#include "runtime/ops/isa_eigen.h"  // first: Eigen under this level's namespace
#include "runtime/ops/packed_gemm.h"
#include "runtime/ops/simd_activation.h"

namespace edgefuse::EF_ISA_NAMESPACE {

namespace {

constexpr int kRows = kGemmTileRows;
constexpr int kVectors = kGemmTileVectors;
constexpr int kColumns = kGemmTileColumns;
constexpr int kLanes = simd::kLanes;

// B's rows: evenly spaced (a matrix, NCHW input planes) or anywhere (phase-plane taps).
struct StridedRows {
  const float* base;
  int64_t stride;
  const float* row(int64_t k) const { return base + k * stride; }
  StridedRows from(int64_t k) const { return {row(k), stride}; }
};
struct IndirectRows {
  const float* const* rows;
  int64_t offset;
  const float* row(int64_t k) const { return rows[k] + offset; }
  IndirectRows from(int64_t k) const { return {rows + k, offset}; }
};

// One register tile: C [kRows, kColumns] (row stride ldc) = bias + A tile * B [k, kColumns], then
// the residual (row stride ldr; nullptr when absent) and activation K, all on the accumulators,
// which stay in registers across the k loop (the loops below unroll completely) until the tile is
// stored, finished, once.
// With kPrefetch, the same rows of the next column block are requested into cache meanwhile: B's
// rows are up to hundreds of KB apart, too many streams for the hardware prefetchers to follow.
// V < kVectors: a narrower tile, for the last columns of a block. R < kRows: only the first R
// rows of the A tile (still packed kRows apart), for the last rows of a matrix; of those, only
// rows below store_rows are stored. kMaskLast (AVX-512): the last vector's B, residual and C
// lanes go through last_mask, for a block that ends mid-vector. With `resume`, the accumulators
// start from C's stored rows (a partial product over earlier k) instead of the bias.
template <ConvEpilogue::Kind K, bool kPrefetch, typename Rows, int V = kVectors, int R = kRows, bool kMaskLast = false>
inline void tile_product(const float* a_tile, int64_t k, const Rows& b, int64_t column, const float* bias,
                         const float* residual, int64_t ldr, const ConvEpilogue& activation, float* c, int64_t ldc,
                         int residual_rows = R, int store_rows = R, [[maybe_unused]] uint32_t last_mask = 0xFFFF,
                         bool resume = false) {
  // Vector v of a row at p (constant v once the loops unroll).
  const auto load = [&](const float* p, [[maybe_unused]] int v) {
#if defined(__AVX512F__)
    if constexpr (kMaskLast) {
      if (v == V - 1) return simd::Vec(_mm512_maskz_loadu_ps(static_cast<__mmask16>(last_mask), p));
    }
#endif
    return simd::load(p);
  };
  const auto store = [&](float* p, [[maybe_unused]] int v, simd::Vec x) {
#if defined(__AVX512F__)
    if constexpr (kMaskLast) {
      if (v == V - 1) return _mm512_mask_storeu_ps(p, static_cast<__mmask16>(last_mask), x);
    }
#endif
    simd::store(p, x);
  };
  simd::Vec acc[R][V];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    const simd::Vec init = simd::broadcast(bias[r]);
    const bool stored = resume && r < store_rows;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = stored ? load(c + r * ldc + v * kLanes, v) : init;
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* b_row = b.row(kk) + column;
    if constexpr (kPrefetch) {
      for (int line = 0; line < kColumns; line += 16) __builtin_prefetch(b_row + kColumns + line);
    }
    simd::Vec b_vec[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) b_vec[v] = load(b_row + v * kLanes, v);
    const float* a_column = a_tile + kk * kRows;
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const simd::Vec a_value = simd::broadcast(a_column[r]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = simd::fma(a_value, b_vec[v], acc[r][v]);
    }
  }
  // The epilogue on each accumulator as it leaves the registers: the activation's constants and
  // temporaries fit beside the accumulators still live (its constants mostly as broadcast memory
  // operands), and the tile is written once instead of stored, reloaded and stored again.
  // Rows from residual_rows on take no residual (a residual of fewer channels ends in the tile).
  const bool residual_first = residual != nullptr && !activation.residual_after_activation;
  const float* residual_after = residual_first ? nullptr : residual;
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    if (r >= store_rows) break;
    const bool row_residual = r < residual_rows;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      simd::Vec x = acc[r][v];
      if (residual_first && row_residual) x = simd::add(x, load(residual + r * ldr + v * kLanes, v));
      x = simd::activate<K>(x, activation);
      if (residual_after != nullptr && row_residual) x = simd::add(x, load(residual_after + r * ldr + v * kLanes, v));
      store(c + r * ldc + v * kLanes, v, x);
    }
  }
}

// Where a full tile's residual goes: none, before the activation, or after it.
enum class TileResidual { kNone, kBefore, kAfter };

// The full register tile of every GEMM's bulk (kRows x kColumns from the bias, every row stored,
// the residual in every row or none), with no run-time choice left in its epilogue: tile_product's
// per-row and per-vector tests (residual rows, stored rows, resumed sums) cost about 40 cycles a
// tile, a tenth of one of depth 24 (BlazeFace's, YOLOX's 16 and 32: 5-13 % faster, measured in a
// loop over L1-resident operands). Out of line: inlined, GCC spilled accumulators in the k loop
// to make room for SiLU's constants.
template <ConvEpilogue::Kind K, bool kPrefetch, TileResidual kResidual, typename Rows>
__attribute__((noinline)) void full_tile(const float* a_tile, int64_t k, const Rows& b, int64_t column,
                                         const float* bias, const float* residual, int64_t ldr,
                                         const ConvEpilogue& activation, float* c, int64_t ldc) {
  simd::Vec acc[kRows][kVectors];
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) {
    const simd::Vec init = simd::broadcast(bias[r]);
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) acc[r][v] = init;
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* b_row = b.row(kk) + column;
    if constexpr (kPrefetch) {
      for (int line = 0; line < kColumns; line += 16) __builtin_prefetch(b_row + kColumns + line);
    }
    simd::Vec b_vec[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) b_vec[v] = simd::load(b_row + v * kLanes);
    const float* a_column = a_tile + kk * kRows;
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) {
      const simd::Vec a_value = simd::broadcast(a_column[r]);
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) acc[r][v] = simd::fma(a_value, b_vec[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      simd::Vec x = acc[r][v];
      if constexpr (kResidual == TileResidual::kBefore) x = simd::add(x, simd::load(residual + r * ldr + v * kLanes));
      x = simd::activate<K>(x, activation);
      if constexpr (kResidual == TileResidual::kAfter) x = simd::add(x, simd::load(residual + r * ldr + v * kLanes));
      simd::store(c + r * ldc + v * kLanes, x);
    }
  }
}

// A tile of V vectors whose rows past m (rows < kRows) are not stored, straight into Y with the
// epilogue: with half a tile's FMAs when the rows fit (BlazeFace's 28, 36 and 42 channels,
// YOLOX's 4- and 1-channel heads). kMaskLast: the last vector holds last_mask's lanes only.
template <ConvEpilogue::Kind K, typename Rows, int V, bool kMaskLast>
inline void direct_tile(const float* a_tile, int64_t k, const Rows& b, int64_t column, const float* bias,
                        const float* residual, int64_t ldr, const ConvEpilogue& activation, float* c, int64_t ldc,
                        int64_t residual_rows, int64_t rows, uint32_t last_mask, bool resume) {
  const int tile_rows = static_cast<int>(rows), tile_residual_rows = static_cast<int>(residual_rows);
  if (rows <= kRows / 2) {
    tile_product<K, false, Rows, V, kRows / 2, kMaskLast>(a_tile, k, b, column, bias, residual, ldr, activation, c, ldc,
                                                          tile_residual_rows, tile_rows, last_mask, resume);
  } else {
    tile_product<K, false, Rows, V, kRows, kMaskLast>(a_tile, k, b, column, bias, residual, ldr, activation, c, ldc,
                                                      tile_residual_rows, tile_rows, last_mask, resume);
  }
}

// With AVX-512 a block ending mid-vector also runs in place: its last vector's loads and stores
// go through a lane mask (before, its panel copy and side buffer made 13 x 13 planes' last 25
// columns cost 2.7 times a whole block's per column). Other levels copy it into a panel.
#if defined(__AVX512F__)
constexpr bool kMaskedEdges = true;
#else
constexpr bool kMaskedEdges = false;
#endif

// A column block's tiles each read all of its B rows, so B [k, width] should stay in L1 while
// they do: half of a 48 KiB L1d, the rest for the A tiles and Y rows streaming past. A deeper
// product runs in slices of about this depth, the tiles of each slice storing their partial
// sums into Y for the next slice to resume (on Ice Lake, 512 x 256 products over 13 x 13 planes
// ran at 59 % of peak with B from L2, those of depth 128 at 78 %).
constexpr int64_t kDepthSlice = 24 * 1024 / (kColumns * static_cast<int64_t>(sizeof(float)));

// A dense Conv's B rows are its kernel taps over a few input rows (IndirectRows): the 9 taps of a
// 3x3 kernel share most of their cache lines, so its slices run deeper for the same bytes in L1
// (YOLOv8's stride-2 Convs, 32 -> 64 to 128 -> 256 channels: slices of 144-230 rows 5-7 % faster
// than of 96-128, and than one slice of 288).
constexpr int64_t kTapDepthSlice = kDepthSlice * 3 / 2;

// Slices of the depth k: for B rows of their own, one up to 1.5 slices' depth (the partial sums'
// round trip through Y would cost more than B's rows from L2 save), otherwise about kDepthSlice
// each; for taps, about kTapDepthSlice each.
template <typename Rows>
int64_t depth_slices(int64_t k) {
  if constexpr (std::is_same_v<Rows, IndirectRows>)
    return std::max<int64_t>(1, (k + kTapDepthSlice - 1) / kTapDepthSlice);
  return k * 2 <= kDepthSlice * 3 ? 1 : (k + kDepthSlice - 1) / kDepthSlice;
}

// Whether Y's rows share bytes with the residual's: then Y must hold nothing but finished rows
// (a Conv pair writing over its residual, conv_pair.h), so the product runs in one slice.
bool residual_shares_y(const float* y, int64_t ldy, int64_t m, int64_t n, const GemmRowEpilogue& epilogue) {
  if (epilogue.residual == nullptr) return false;
  const int64_t residual_rows = std::min(m, epilogue.residual_rows);
  if (residual_rows <= 0) return false;
  const auto y_begin = reinterpret_cast<uintptr_t>(y);
  const auto y_end = reinterpret_cast<uintptr_t>(y + (m - 1) * ldy + n);
  const auto r_begin = reinterpret_cast<uintptr_t>(epilogue.residual);
  const auto r_end = reinterpret_cast<uintptr_t>(epilogue.residual + (residual_rows - 1) * epilogue.ldr + n);
  return r_begin < y_end && y_begin < r_end;
}

// One tile of A's rows over a block of whole vectors (or, with kMaskedEdges, one ending
// mid-vector) in place on B, stored into Y: the full register tile, or one of just enough
// vectors and fewer rows. The first tile of a whole block fetches the next block's B rows when
// that block is a whole one (`prefetch`).
template <ConvEpilogue::Kind K, typename Rows>
void in_place_tile(const float* a_tile, int64_t k, const Rows& b, int64_t column, int64_t width, bool prefetch,
                   const float* bias, const float* residual, int64_t ldr, int64_t residual_rows, int64_t rows,
                   const ConvEpilogue& activation, float* out, int64_t ldy, bool resume) {
  const int tile_residual_rows = static_cast<int>(residual_rows);
  if (rows == kRows && width == kColumns && !resume && (residual == nullptr || residual_rows == kRows)) {
    const auto run = [&](auto prefetch_next) {
      constexpr bool kNext = decltype(prefetch_next)::value;
      if (residual == nullptr) {
        full_tile<K, kNext, TileResidual::kNone>(a_tile, k, b, column, bias, nullptr, 0, activation, out, ldy);
      } else if (activation.residual_after_activation) {
        full_tile<K, kNext, TileResidual::kAfter>(a_tile, k, b, column, bias, residual, ldr, activation, out, ldy);
      } else {
        full_tile<K, kNext, TileResidual::kBefore>(a_tile, k, b, column, bias, residual, ldr, activation, out, ldy);
      }
    };
    if (prefetch) {
      run(std::true_type{});
    } else {
      run(std::false_type{});
    }
    return;
  }
  if (rows == kRows && width == kColumns) {
    if (prefetch) {
      tile_product<K, true>(a_tile, k, b, column, bias, residual, ldr, activation, out, ldy, tile_residual_rows, kRows,
                            0xFFFF, resume);
    } else {
      tile_product<K, false>(a_tile, k, b, column, bias, residual, ldr, activation, out, ldy, tile_residual_rows, kRows,
                             0xFFFF, resume);
    }
    return;
  }
  const int narrow_vectors = static_cast<int>((width + kLanes - 1) / kLanes);
  const bool whole_vectors = width % kLanes == 0;
  const uint32_t last_mask = whole_vectors ? 0xFFFFu : (1u << (width % kLanes)) - 1u;
  static_assert(kVectors == 3, "one tile per width below");
  const auto run = [&](auto vectors) {
    constexpr int V = decltype(vectors)::value;
    if (whole_vectors) {
      direct_tile<K, Rows, V, false>(a_tile, k, b, column, bias, residual, ldr, activation, out, ldy, residual_rows,
                                     rows, last_mask, resume);
    } else {
      direct_tile<K, Rows, V, kMaskedEdges>(a_tile, k, b, column, bias, residual, ldr, activation, out, ldy,
                                            residual_rows, rows, last_mask, resume);
    }
  };
  if (narrow_vectors == 1) {
    run(std::integral_constant<int, 1>{});
  } else if (narrow_vectors == 2) {
    run(std::integral_constant<int, 2>{});
  } else {
    run(std::integral_constant<int, 3>{});
  }
}

template <ConvEpilogue::Kind K, typename Rows>
void packed_gemm_with(const float* packed_a, int64_t m, int64_t k, const Rows& b, float* y, int64_t ldy, int64_t n,
                      const GemmRowEpilogue& epilogue, float* panel) {
  // Blocks of whole vectors (every block but a last one ending mid-vector, and that one too with
  // kMaskedEdges) run in place on B and store into Y, with fewer rows (or stores) past m, in depth
  // slices when B's rows would not stay in L1. Otherwise a last block ending mid-vector is copied
  // into a zero-padded panel, and its tiles computed into `partial` without residual or
  // activation; only their valid part is copied out and finished row by row.
  alignas(64) float partial[kRows * kColumns];
  const ConvEpilogue none;
  const int64_t tiles = (m + kRows - 1) / kRows;
  const int64_t slices = residual_shares_y(y, ldy, m, n, epilogue) ? 1 : depth_slices<Rows>(k);
  // Tile `tile` of the block at `column`: its rows of A and Y, their bias, where it stores, and
  // the rows that take the residual: all, none, or (a residual of fewer channels ending inside
  // the tile) the first few.
  struct TileRows {
    int64_t row = 0, rows = 0, residual_rows = 0;
    float bias[kRows] = {};
    float* out = nullptr;
    const float* residual = nullptr;
  };
  const auto tile_rows = [&](int64_t tile, int64_t column) {
    TileRows t;
    t.row = tile * kRows;
    t.rows = std::min<int64_t>(kRows, m - t.row);
    if (epilogue.bias != nullptr) std::copy_n(epilogue.bias + t.row, t.rows, t.bias);
    t.out = y + t.row * ldy + column;
    t.residual_rows = epilogue.residual != nullptr ? std::clamp<int64_t>(epilogue.residual_rows - t.row, 0, t.rows) : 0;
    t.residual = t.residual_rows > 0 ? epilogue.residual + t.row * epilogue.ldr + column : nullptr;
    return t;
  };
  for (int64_t column = 0; column < n; column += kColumns) {
    const int64_t width = std::min<int64_t>(kColumns, n - column);
    const bool narrow = width < kColumns;
    const int narrow_vectors = static_cast<int>((width + kLanes - 1) / kLanes);
    const bool in_place = width % kLanes == 0 || kMaskedEdges;
    const bool prefetch_next = column + 2 * kColumns <= n;
    if (in_place) {
      for (int64_t slice = 0; slice < slices; ++slice) {
        const int64_t k_begin = k * slice / slices, depth = k * (slice + 1) / slices - k_begin;
        const Rows slice_rows = b.from(k_begin);
        const bool last = slice == slices - 1, resume = slice > 0;
        for (int64_t tile = 0; tile < tiles; ++tile) {
          const TileRows t = tile_rows(tile, column);
          const float* a_tile = packed_a + (tile * k + k_begin) * kRows;
          const bool prefetch = tile == 0 && prefetch_next;
          if (last) {
            in_place_tile<K>(a_tile, depth, slice_rows, column, width, prefetch, t.bias, t.residual, epilogue.ldr,
                             t.residual_rows, t.rows, epilogue.activation, t.out, ldy, resume);
          } else {
            in_place_tile<ConvEpilogue::Kind::kNone>(a_tile, depth, slice_rows, column, width, prefetch, t.bias,
                                                     nullptr, 0, 0, t.rows, none, t.out, ldy, resume);
          }
        }
      }
      continue;
    }
    for (int64_t kk = 0; kk < k; ++kk) {
      std::copy_n(b.row(kk) + column, width, panel + kk * kColumns);
      std::fill(panel + kk * kColumns + width, panel + kk * kColumns + narrow_vectors * kLanes, 0.0f);
    }
    const StridedRows panel_rows{panel, kColumns};
    for (int64_t tile = 0; tile < tiles; ++tile) {
      const TileRows t = tile_rows(tile, column);
      const float* a_tile = packed_a + tile * k * kRows;
      static_assert(kVectors == 3, "one narrow tile per width below");
      if (narrow_vectors == 1) {
        tile_product<ConvEpilogue::Kind::kNone, false, StridedRows, 1>(a_tile, k, panel_rows, 0, t.bias, nullptr, 0,
                                                                       none, partial, kColumns);
      } else if (narrow_vectors == 2) {
        tile_product<ConvEpilogue::Kind::kNone, false, StridedRows, 2>(a_tile, k, panel_rows, 0, t.bias, nullptr, 0,
                                                                       none, partial, kColumns);
      } else {
        tile_product<ConvEpilogue::Kind::kNone, false>(a_tile, k, panel_rows, 0, t.bias, nullptr, 0, none, partial,
                                                       kColumns);
      }
      // The activation on whole vectors of `partial` (its columns past `width` are computed and
      // dropped), the residual on the valid part only, before the row is stored: the residual may
      // be Y's own bytes (a Conv pair run in place, conv_pair.h).
      const bool residual_first = t.residual != nullptr && !epilogue.activation.residual_after_activation;
      for (int64_t r = 0; r < t.rows; ++r) {
        float* tile_row = partial + r * kColumns;
        const float* residual_row = r < t.residual_rows ? t.residual + r * epilogue.ldr : nullptr;
        if (residual_first && residual_row != nullptr) add_row(tile_row, residual_row, width);
        for (int v = 0; v < (narrow ? narrow_vectors : kVectors); ++v) {
          simd::store(tile_row + v * kLanes, simd::activate<K>(simd::load(tile_row + v * kLanes), epilogue.activation));
        }
        if (residual_row != nullptr && !residual_first) add_row(tile_row, residual_row, width);
        std::copy_n(tile_row, width, t.out + r * ldy);
      }
    }
  }
}

}  // namespace

void pack_gemm_a(const float* a, int64_t m, int64_t k, int64_t lda, float* packed) {
  for (int64_t tile = 0; tile * kRows < m; ++tile) {
    float* out = packed + tile * k * kRows;
    const int64_t rows = std::min<int64_t>(kRows, m - tile * kRows);
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t r = 0; r < rows; ++r) out[kk * kRows + r] = a[(tile * kRows + r) * lda + kk];
      for (int64_t r = rows; r < kRows; ++r) out[kk * kRows + r] = 0.0f;
    }
  }
}

void packed_gemm(const float* packed_a, int64_t m, int64_t k, const float* b, int64_t ldb, float* y, int64_t ldy,
                 int64_t n, const GemmRowEpilogue& epilogue, float* panel) {
  simd::dispatch_activation(epilogue.activation.kind, [&](auto kind) {
    packed_gemm_with<decltype(kind)::value>(packed_a, m, k, StridedRows{b, ldb}, y, ldy, n, epilogue, panel);
  });
}

void packed_gemm_indirect(const float* packed_a, int64_t m, int64_t k, const float* const* b_rows, int64_t b_offset,
                          float* y, int64_t ldy, int64_t n, const GemmRowEpilogue& epilogue, float* panel) {
  simd::dispatch_activation(epilogue.activation.kind, [&](auto kind) {
    packed_gemm_with<decltype(kind)::value>(packed_a, m, k, IndirectRows{b_rows, b_offset}, y, ldy, n, epilogue, panel);
  });
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
