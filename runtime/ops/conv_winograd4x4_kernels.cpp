// Winograd F(4x4, 3x3) on one CPU ISA level (conv_winograd.h): the weight transform, the patch
// transform (each input row's horizontal combinations once, then the vertical ones per tile row),
// the 36 GEMMs through the packed micro-kernel (packed_gemm.h), the output transform with the bias
// and activation in registers, then the rows of Y (conv_winograd_tiles.h).
#include <algorithm>

#include "runtime/ops/conv_winograd.h"
#include "runtime/ops/conv_winograd_tiles.h"
#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/isa_eigen.h"  // first: Eigen under this level's namespace
#include "runtime/ops/packed_gemm.h"
#include "runtime/ops/simd_activation.h"
#include "runtime/ops/simd_packet.h"

EF_DECLARE_CPU_KERNELS(EF_ISA_NAMESPACE)

namespace edgefuse::EF_ISA_NAMESPACE {

namespace {

using simd::Vec;
using winograd::for_each_run;
using winograd::position_stride;
using winograd::TileRun;

constexpr int kAlpha = 6;                    // the patch is 6 x 6
constexpr int kPositions = kAlpha * kAlpha;  // xi = 6 i + j

// t = B^T d for six values d (a patch's row or column), 12 operations:
//   t0 = 4 d0 - 5 d2 + d4             t1 = (d4 - 4 d2) + (d3 - 4 d1)   t2 = (d4 - 4 d2) - (d3 - 4 d1)
//   t3 = (d4 - d2) + 2 (d3 - d1)      t4 = (d4 - d2) - 2 (d3 - d1)     t5 = 4 d1 - 5 d3 + d5
inline void input_combinations(const Vec (&d)[kAlpha], Vec (&t)[kAlpha]) {
  const Vec four = simd::broadcast(4.0f), minus_four = simd::broadcast(-4.0f), minus_five = simd::broadcast(-5.0f);
  const Vec a = simd::fma(minus_four, d[2], d[4]);
  const Vec b = simd::fma(minus_four, d[1], d[3]);
  const Vec c = simd::sub(d[4], d[2]);
  const Vec e = simd::sub(d[3], d[1]);
  const Vec e2 = simd::add(e, e);
  t[0] = simd::fma(four, d[0], simd::fma(minus_five, d[2], d[4]));
  t[1] = simd::add(a, b);
  t[2] = simd::sub(a, b);
  t[3] = simd::add(c, e2);
  t[4] = simd::sub(c, e2);
  t[5] = simd::fma(four, d[1], simd::fma(minus_five, d[3], d[5]));
}

// y = A^T m for six values m, 10 operations: with p = m1 + m2, q = m1 - m2, r = m3 + m4,
// s = m3 - m4: y0 = m0 + p + r, y1 = q + 2 s, y2 = p + 4 r, y3 = q + 8 s + m5.
inline void output_combinations(const Vec (&m)[kAlpha], Vec (&y)[4]) {
  const Vec p = simd::add(m[1], m[2]), q = simd::sub(m[1], m[2]);
  const Vec r = simd::add(m[3], m[4]), s = simd::sub(m[3], m[4]);
  y[0] = simd::add(simd::add(m[0], p), r);
  y[1] = simd::fma(simd::broadcast(2.0f), s, q);
  y[2] = simd::fma(simd::broadcast(4.0f), r, p);
  y[3] = simd::add(simd::fma(simd::broadcast(8.0f), s, q), m[5]);
}

// Where a band's rows live in its scratch (winograd4x4_scratch_floats): padded rows [first_row,
// first_row + rows) of the image, each row's horizontal combinations (6 rows of tiles,
// `combined_stride` floats each) and two sets of zero-padded input rows.
struct BandRows {
  int64_t first_row = 0, rows = 0;
  int64_t combined_stride = 0, combined_floats = 0, padded_floats = 0;
  float* combined = nullptr;  // rows x combined_floats, then one zero row of them
  float* padded = nullptr;    // 2 x rows x padded_floats
  const float* combined_row(const Conv2d& c, int64_t padded_row) const {
    const int64_t iy = padded_row - c.ph;
    const int64_t slot = iy >= 0 && iy < c.ih ? padded_row - first_row : rows;  // the zero row
    return combined + slot * combined_floats;
  }
};

// Channel ch's input rows of the band, zero-padded, into padded row set `set`.
void copy_padded_rows(const Conv2d& c, const float* x, int64_t ch, const BandRows& band, int set) {
  const float* plane = x + ch * c.input_plane;
  for (int64_t r = 0; r < band.rows; ++r) {
    const int64_t iy = band.first_row + r - c.ph;
    if (iy < 0 || iy >= c.ih) continue;
    simd::copy(band.padded + (set * band.rows + r) * band.padded_floats + c.pw, plane + iy * c.iw, c.iw);
  }
}

// Each input row's horizontal combinations (d B, per tile the 6 combinations of its padded
// columns 4 tx .. 4 tx + 5): whole vectors of tiles over the row, reading past it into the padded
// row's slack.
void combine_rows(const Conv2d& c, const WinogradGeometry& g, const BandRows& band, int set) {
  for (int64_t r = 0; r < band.rows; ++r) {
    const int64_t iy = band.first_row + r - c.ph;
    if (iy < 0 || iy >= c.ih) continue;
    const float* padded = band.padded + (set * band.rows + r) * band.padded_floats;
    float* combined = band.combined + r * band.combined_floats;
    for (int64_t t = 0; t < g.tile_cols; t += simd::kLanes) {
      Vec d[kAlpha], unused[2], h[kAlpha];
      simd::deinterleave4(padded + 4 * t, d[0], d[1], d[2], d[3]);
      simd::deinterleave4(padded + 4 * t + 4, d[4], d[5], unused[0], unused[1]);
      input_combinations(d, h);
      for (int j = 0; j < kAlpha; ++j) simd::store(combined + j * band.combined_stride + t, h[j]);
    }
  }
}

// V[6 i + j][ch][t] for the band's tiles: per tile row, the vertical combinations of its six
// padded rows' horizontal ones, whole vectors of tiles. The last one's lanes past the run land on
// the slots of the next run's first tiles, or the next channel's, both written after this, or in
// the pad after the last channel's matrix (position_stride).
void combine_columns(const Conv2d& c, const WinogradGeometry& g, const BandRows& band, int64_t tile_begin,
                     int64_t tile_end, float* out, int64_t stride) {
  for_each_run(g, tile_begin, tile_end, [&](const TileRun& run) {
    const float* rows[kAlpha];
    for (int a = 0; a < kAlpha; ++a) rows[a] = band.combined_row(c, 4 * run.ty + a) + run.tx_begin;
    const int64_t count = run.tx_end - run.tx_begin;
    for (int j = 0; j < kAlpha; ++j) {
      for (int64_t t = 0; t < count; t += simd::kLanes) {
        Vec d[kAlpha], v[kAlpha];
        for (int a = 0; a < kAlpha; ++a) d[a] = simd::load(rows[a] + j * band.combined_stride + t);
        input_combinations(d, v);
        for (int i = 0; i < kAlpha; ++i) simd::store(out + (kAlpha * i + j) * stride + run.offset + t, v[i]);
      }
    }
  });
}

// Output channel k's 16 outputs per tile, A^T M A plus the bias, then the activation K: o[4 p + q]
// [t] for output (4 ty + p, 4 tx + q); `m` its row of the first position's matrix, the others
// `stride` floats apart. Whole vectors, the last one overlapping its predecessor (bands have at
// least 16 tiles, run_winograd).
template <ConvEpilogue::Kind K>
void transform_outputs(const float* m, int64_t stride, int64_t tiles, float bias, const ConvEpilogue& e, float* o,
                       int64_t o_stride) {
  const Vec bias_vector = simd::broadcast(bias);
  const auto vector_at = [&](int64_t t) {
    Vec w[4][kAlpha];  // A^T M: row p, column j
    for (int j = 0; j < kAlpha; ++j) {
      Vec column[kAlpha], y[4];
      for (int i = 0; i < kAlpha; ++i) column[i] = simd::load(m + (kAlpha * i + j) * stride + t);
      output_combinations(column, y);
      for (int p = 0; p < 4; ++p) w[p][j] = y[p];
    }
    for (int p = 0; p < 4; ++p) {
      Vec y[4];
      output_combinations(w[p], y);
      for (int q = 0; q < 4; ++q) {
        simd::store(o + (4 * p + q) * o_stride + t, simd::activate<K>(simd::add(y[q], bias_vector), e));
      }
    }
  };
  for (int64_t t = 0; t + simd::kLanes <= tiles; t += simd::kLanes) vector_at(t);
  if (tiles % simd::kLanes != 0) vector_at(tiles - simd::kLanes);
}

// Position xi = 6 i + j of G g G^T for the 3 x 3 kernel g, in float64.
double transformed_weight(const float* g, int xi) {
  static constexpr double kG[kAlpha][3] = {{1.0 / 4, 0, 0},
                                           {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                           {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                           {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                           {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                           {0, 0, 1}};
  const int i = xi / kAlpha, j = xi % kAlpha;
  double sum = 0.0;
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) sum += kG[i][a] * static_cast<double>(g[3 * a + b]) * kG[j][b];
  }
  return sum;
}

}  // namespace

int64_t conv_winograd4x4_weight_floats(const Conv2d& c) {
  return kPositions * packed_gemm_a_floats(c.mg, c.cg);
}

void conv_winograd4x4_pack_weights(const Conv2d& c, float* packed) {
  winograd::pack_transformed_weights(c, kPositions, transformed_weight, packed);
}

void conv_winograd4x4_tiles(const Conv2d& c, int64_t n, int64_t tile_begin, int64_t tile_end, float* scratch,
                            float* panel) {
  const WinogradGeometry g = winograd_geometry(c, 4);
  const int64_t tiles = tile_end - tile_begin;
  const int64_t v_stride = position_stride(c.cg, tiles), m_stride = position_stride(c.mg, tiles);
  float* const v = scratch;
  float* const m = v + kPositions * v_stride;
  float* const o = m + kPositions * m_stride;  // 16 x tiles, and a vector's slack for interleave_row
  BandRows band;
  band.first_row = 4 * (tile_begin / g.tile_cols);
  band.rows = 4 * ((tile_end - 1) / g.tile_cols) + kAlpha - band.first_row;
  band.combined_floats = winograd4x4_row_floats(g);
  band.combined_stride = band.combined_floats / kAlpha;
  band.padded_floats = winograd4x4_padded_row_floats(g);
  band.combined = o + 16 * tiles + 64;
  band.padded = band.combined + (band.rows + 1) * band.combined_floats;
  // The zero row, the padding's columns and every slack read past a row: zero once per band.
  simd::fill_zero(band.combined, (band.rows + 1) * band.combined_floats);
  simd::fill_zero(band.padded, 2 * band.rows * band.padded_floats);

  // Per channel, its rows' horizontal combinations, then the vertical ones; the next channel's
  // rows are copied before this channel's are read, so that those loads, a float or more off the
  // copy's stores, find them in L1 rather than waiting in the store buffer.
  const float* const x = c.x + n * c.channels * c.input_plane;
  copy_padded_rows(c, x, 0, band, 0);
  for (int64_t ch = 0; ch < c.cg; ++ch) {
    if (ch + 1 < c.cg) copy_padded_rows(c, x, ch + 1, band, static_cast<int>((ch + 1) % 2));
    combine_rows(c, g, band, static_cast<int>(ch % 2));
    combine_columns(c, g, band, tile_begin, tile_end, v + ch * tiles, v_stride);
  }
  winograd::multiply_positions(c, kPositions, v, v_stride, m, m_stride, tiles, panel);
  winograd::write_tile_outputs<4>(c, g, n, tile_begin, tile_end, o, [&](auto kind, int64_t k, float bias, float* out) {
    transform_outputs<decltype(kind)::value>(m + k * tiles, m_stride, tiles, bias, c.epilogue, out, tiles);
  });
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
