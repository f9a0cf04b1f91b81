// Winograd F(2x2, 3x3) on one CPU ISA level (conv_winograd.h): the weight and patch transforms, the
// 16 GEMMs through the packed micro-kernel (packed_gemm.h), the output transform with the bias and
// activation in registers, then the rows of Y (conv_winograd_tiles.h).
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

constexpr int kPositions = 16;  // the 4 x 4 transformed positions, xi = 4 i + j

using winograd::for_each_run;
using winograd::position_stride;
using winograd::TileRun;

// V[xi][ch][t] = (B^T d B)[xi] for the band's tiles of image `x` (its input planes), each band
// reading its own rows of X. Per channel, first the row combinations of B^T d of every tile row
// (run) of the band over its padded columns, straight from the four input rows (rows outside the
// image read a row of zeros), each run into rows of its own, then the column combinations per
// tile, whole vectors of tiles at a time (the even and odd columns split by simd::deinterleave).
// The column pass reads the rows two floats off the row pass's stores: right after them, as a
// run at a time did, most of those loads waited for the stores to reach L1 (their data spans two
// stores, which store forwarding cannot merge). `rows` holds 4 x padded_cols floats per run, a
// row of zeros and kWinogradRowSlack more (winograd_scratch_floats).
void transform_patches(const Conv2d& c, const WinogradGeometry& g, const float* x, int64_t tile_begin, int64_t tile_end,
                       float* v, float* rows) {
  using simd::Vec;
  const int64_t tiles = tile_end - tile_begin, stride = position_stride(c.cg, tiles);
  int64_t runs = 0;
  for_each_run(g, tile_begin, tile_end, [&](const TileRun&) { ++runs; });
  const auto run_rows = [&](int64_t k, int i) { return rows + (4 * k + i) * g.padded_cols; };
  float* const zeros = run_rows(runs, 0);
  simd::fill_zero(zeros, g.padded_cols + kWinogradRowSlack);  // the slack too: no stale floats read
  // The padding's columns are zero in all four rows, and so are their combinations: written once.
  const int64_t right_pad = std::min(c.pw + c.iw, g.padded_cols);
  for (int64_t k = 0; k < runs; ++k) {
    for (int i = 0; i < 4; ++i) {
      std::fill(run_rows(k, i), run_rows(k, i) + c.pw, 0.0f);
      std::fill(run_rows(k, i) + right_pad, run_rows(k, i) + g.padded_cols, 0.0f);
    }
  }
  for (int64_t ch = 0; ch < c.cg; ++ch) {
    const float* plane = x + ch * c.input_plane;
    int64_t k = 0;
    for_each_run(g, tile_begin, tile_end, [&](const TileRun& run) {
      // Padded columns [lo, hi) of the run are input columns lo - pw .. hi - pw - 1.
      const int64_t s_begin = 2 * run.tx_begin, s_end = 2 * run.tx_end + 2;
      const int64_t lo = std::clamp(c.pw, s_begin, s_end), hi = std::clamp(c.pw + c.iw, s_begin, s_end);
      const float* d[4];  // padded row 2 ty + i from column lo on
      for (int i = 0; i < 4; ++i) {
        const int64_t iy = 2 * run.ty + i - c.ph;
        d[i] = iy >= 0 && iy < c.ih ? plane + iy * c.iw + (lo - c.pw) : zeros;
      }
      // B^T d: rows d0 - d2, d1 + d2, d2 - d1, d1 - d3.
      float* const r0 = run_rows(k, 0) + lo;
      float* const r1 = run_rows(k, 1) + lo;
      float* const r2 = run_rows(k, 2) + lo;
      float* const r3 = run_rows(k, 3) + lo;
      ++k;
      const int64_t width = hi - lo;
      const auto combine_rows = [&](int64_t j) {
        const Vec a = simd::load(d[0] + j), b = simd::load(d[1] + j), e = simd::load(d[2] + j),
                  f = simd::load(d[3] + j);
        simd::store(r0 + j, simd::sub(a, e));
        simd::store(r1 + j, simd::add(b, e));
        simd::store(r2 + j, simd::sub(e, b));
        simd::store(r3 + j, simd::sub(b, f));
      };
      if (width >= simd::kLanes) {
        // Whole vectors, the last one overlapping its predecessor (the same values again).
        for (int64_t j = 0; j + simd::kLanes <= width; j += simd::kLanes) combine_rows(j);
        combine_rows(width - simd::kLanes);
      } else {
        for (int64_t j = 0; j < width; ++j) {
          r0[j] = d[0][j] - d[2][j];
          r1[j] = d[1][j] + d[2][j];
          r2[j] = d[2][j] - d[1][j];
          r3[j] = d[1][j] - d[3][j];
        }
      }
    });
    float* const out = v + ch * tiles;
    k = 0;
    for_each_run(g, tile_begin, tile_end, [&](const TileRun& run) {
      // (B^T d) B: per tile t, with e0, o0, e1, o1 its row's columns 2 t .. 2 t + 3.
      const int64_t count = run.tx_end - run.tx_begin;
      for (int i = 0; i < 4; ++i) {
        const float* ri = run_rows(k, i) + 2 * run.tx_begin;
        float* v0 = out + (4 * i + 0) * stride + run.offset;
        float* v1 = v0 + stride;
        float* v2 = v1 + stride;
        float* v3 = v2 + stride;
        // Whole vectors of tiles only, each reading 2 kLanes + 2 columns. The last one's lanes past
        // the run compute from the columns after it (the next rows, at the end the slack) and land
        // on the slots of the next run's first tiles, or the next channel's, both written after
        // this, or in the pad after the last channel's matrix (position_stride): a partial vector
        // at the end of every tile row (20 x 20 outputs are 10 tiles wide) cost scalar loops.
        for (int64_t t = 0; t < count; t += simd::kLanes) {
          Vec e0, o0, e1, o1;
          simd::deinterleave(ri + 2 * t, e0, o0);
          simd::deinterleave(ri + 2 * t + 2, e1, o1);
          simd::store(v0 + t, simd::sub(e0, e1));
          simd::store(v1 + t, simd::add(o0, e1));
          simd::store(v2 + t, simd::sub(e1, o0));
          simd::store(v3 + t, simd::sub(o0, o1));
        }
      }
      ++k;
    });
  }
}

// Output channel k's four outputs per tile, A^T M A plus the bias, then the activation K: o[i][t]
// (o_stride floats a row) for outputs (2 ty + i / 2, 2 tx + i % 2); `m` its row of the first
// position's matrix, the others `stride` floats apart. Whole vectors, the last one overlapping
// its predecessor (bands have at least 16 tiles, run_winograd).
template <ConvEpilogue::Kind K>
void transform_outputs(const float* m, int64_t stride, int64_t tiles, float bias, const ConvEpilogue& e, float* o,
                       int64_t o_stride) {
  using simd::Vec;
  const Vec bias_vector = simd::broadcast(bias);
  const auto vector_at = [&](int64_t t) {
    const auto at = [&](int xi) { return simd::load(m + xi * stride + t); };
    // A^T M A with M's rows m0..m3 (4 positions each): s0 = m0 + m1 + m2, s1 = m1 - m2 - m3, then
    // the same on columns of s0 and s1.
    Vec s0[4], s1[4];
    for (int u = 0; u < 4; ++u) {
      s0[u] = simd::add(simd::add(at(u), at(4 + u)), at(8 + u));
      s1[u] = simd::sub(simd::sub(at(4 + u), at(8 + u)), at(12 + u));
    }
    const auto put = [&](int i, Vec x) { simd::store(o + i * o_stride + t, simd::activate<K>(x, e)); };
    put(0, simd::add(simd::add(simd::add(s0[0], s0[1]), s0[2]), bias_vector));
    put(1, simd::add(simd::sub(simd::sub(s0[1], s0[2]), s0[3]), bias_vector));
    put(2, simd::add(simd::add(simd::add(s1[0], s1[1]), s1[2]), bias_vector));
    put(3, simd::add(simd::sub(simd::sub(s1[1], s1[2]), s1[3]), bias_vector));
  };
  for (int64_t t = 0; t + simd::kLanes <= tiles; t += simd::kLanes) vector_at(t);
  if (tiles % simd::kLanes != 0) vector_at(tiles - simd::kLanes);
}

// Position xi = 4 i + j of G g G^T for the 3 x 3 kernel g, in float64: row i of G g, then its
// combination j.
double transformed_weight(const float* g, int xi) {
  const auto combine = [](int row, double a, double b, double d) {
    switch (row) {
      case 0:
        return a;
      case 1:
        return 0.5 * (a + b + d);
      case 2:
        return 0.5 * (a - b + d);
      default:
        return d;
    }
  };
  double gg[3];
  for (int col = 0; col < 3; ++col) gg[col] = combine(xi / 4, g[col], g[3 + col], g[6 + col]);
  return combine(xi % 4, gg[0], gg[1], gg[2]);
}

}  // namespace

int64_t conv_winograd_weight_floats(const Conv2d& c) {
  return kPositions * packed_gemm_a_floats(c.mg, c.cg);
}

void conv_winograd_pack_weights(const Conv2d& c, float* packed) {
  winograd::pack_transformed_weights(c, kPositions, transformed_weight, packed);
}

void conv_winograd_tiles(const Conv2d& c, int64_t n, int64_t tile_begin, int64_t tile_end, float* scratch,
                         float* panel) {
  const WinogradGeometry g = winograd_geometry(c);
  const int64_t tiles = tile_end - tile_begin;
  const int64_t v_stride = position_stride(c.cg, tiles), m_stride = position_stride(c.mg, tiles);
  float* const v = scratch;
  float* const m = v + kPositions * v_stride;
  float* const o = m + kPositions * m_stride;
  transform_patches(c, g, c.x + n * c.channels * c.input_plane, tile_begin, tile_end, v, o + 4 * tiles);
  winograd::multiply_positions(c, kPositions, v, v_stride, m, m_stride, tiles, panel);
  winograd::write_tile_outputs<2>(c, g, n, tile_begin, tile_end, o, [&](auto kind, int64_t k, float bias, float* out) {
    transform_outputs<decltype(kind)::value>(m + k * tiles, m_stride, tiles, bias, c.epilogue, out, tiles);
  });
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
