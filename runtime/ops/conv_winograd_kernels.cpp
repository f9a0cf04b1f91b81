// Winograd F(2x2, 3x3) on one CPU ISA level (conv_winograd.h): the weight and patch transforms, the
// 16 GEMMs through the packed micro-kernel (packed_gemm.h), the output transform with the bias,
// then the residual and activation on the output rows while they are in cache.
#include <algorithm>

#include "runtime/ops/conv_epilogue_rows.h"
#include "runtime/ops/conv_winograd.h"
#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/isa_eigen.h"  // first: Eigen under this level's namespace
#include "runtime/ops/packed_gemm.h"
#include "runtime/ops/simd_packet.h"

EF_DECLARE_CPU_KERNELS(EF_ISA_NAMESPACE)

namespace edgefuse::EF_ISA_NAMESPACE {

namespace {

constexpr int kPositions = 16;  // the 4 x 4 transformed positions, xi = 4 i + j

// Floats from one position's matrix to the next in V and M: a cache line more than the matrix, so
// that the 16 streams of a transform never share their L1 sets (channels x tiles is often a
// multiple of 1024 floats, and 16 streams 4 KiB apart thrashed: 64 channels twice as slow as 80).
int64_t position_stride(int64_t channels, int64_t tiles) {
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

// V[xi][ch][t] = (B^T d B)[xi] for the band's tiles of image `x` (its input planes), each band
// reading its own rows of X: per channel and tile row, the row combinations of B^T d over the
// run's padded columns, straight from the four input rows (zero at the padding's columns and for
// rows outside the image, which read a row of zeros), then the column combinations per tile, whole
// vectors of tiles at a time (the even and odd columns split by simd::deinterleave), the last few
// tiles one by one. `rows` holds 5 x padded_cols floats.
void transform_patches(const Conv2d& c, const WinogradGeometry& g, const float* x, int64_t tile_begin, int64_t tile_end,
                       float* v, float* rows) {
  using simd::Vec;
  const int64_t tiles = tile_end - tile_begin, stride = position_stride(c.cg, tiles);
  float* const r[4] = {rows, rows + g.padded_cols, rows + 2 * g.padded_cols, rows + 3 * g.padded_cols};
  float* const zeros = rows + 4 * g.padded_cols;
  simd::fill_zero(zeros, g.padded_cols);
  for (int64_t ch = 0; ch < c.cg; ++ch) {
    const float* plane = x + ch * c.input_plane;
    float* out = v + ch * tiles;
    for_each_run(g, tile_begin, tile_end, [&](const TileRun& run) {
      const int64_t s_begin = 2 * run.tx_begin, s_end = 2 * run.tx_end + 2;
      // Columns of the padding are zero in all four rows, and so are their combinations; the
      // others, [lo, hi), are input columns lo - pw .. hi - pw - 1 of each row inside the image.
      const int64_t lo = std::clamp(c.pw, s_begin, s_end), hi = std::clamp(c.pw + c.iw, s_begin, s_end);
      for (int i = 0; i < 4; ++i) {
        for (int64_t s = s_begin; s < lo; ++s) r[i][s] = 0.0f;
        for (int64_t s = hi; s < s_end; ++s) r[i][s] = 0.0f;
      }
      const float* d[4];  // padded row 2 ty + i from column lo on
      for (int i = 0; i < 4; ++i) {
        const int64_t iy = 2 * run.ty + i - c.ph;
        d[i] = iy >= 0 && iy < c.ih ? plane + iy * c.iw + (lo - c.pw) : zeros;
      }
      // B^T d: rows d0 - d2, d1 + d2, d2 - d1, d1 - d3.
      float* const r0 = r[0] + lo;
      float* const r1 = r[1] + lo;
      float* const r2 = r[2] + lo;
      float* const r3 = r[3] + lo;
      const int64_t width = hi - lo;
      int64_t j = 0;
      for (; j + simd::kLanes <= width; j += simd::kLanes) {
        const Vec a = simd::load(d[0] + j), b = simd::load(d[1] + j), e = simd::load(d[2] + j),
                  f = simd::load(d[3] + j);
        simd::store(r0 + j, simd::sub(a, e));
        simd::store(r1 + j, simd::add(b, e));
        simd::store(r2 + j, simd::sub(e, b));
        simd::store(r3 + j, simd::sub(b, f));
      }
      for (; j < width; ++j) {
        r0[j] = d[0][j] - d[2][j];
        r1[j] = d[1][j] + d[2][j];
        r2[j] = d[2][j] - d[1][j];
        r3[j] = d[1][j] - d[3][j];
      }
      // (B^T d) B: per tile t, with e0, o0, e1, o1 its row's columns 2 t .. 2 t + 3.
      const int64_t count = run.tx_end - run.tx_begin;
      for (int i = 0; i < 4; ++i) {
        const float* ri = r[i] + s_begin;
        float* v0 = out + (4 * i + 0) * stride + run.offset;
        float* v1 = v0 + stride;
        float* v2 = v1 + stride;
        float* v3 = v2 + stride;
        int64_t t = 0;
        // A vector of tiles reads 2 kLanes + 2 columns, all within the run.s.
        for (; t + simd::kLanes <= count; t += simd::kLanes) {
          Vec e0, o0, e1, o1;
          simd::deinterleave(ri + 2 * t, e0, o0);
          simd::deinterleave(ri + 2 * t + 2, e1, o1);
          simd::store(v0 + t, simd::sub(e0, e1));
          simd::store(v1 + t, simd::add(o0, e1));
          simd::store(v2 + t, simd::sub(e1, o0));
          simd::store(v3 + t, simd::sub(o0, o1));
        }
        for (; t < count; ++t) {
          const float e0 = ri[2 * t], o0 = ri[2 * t + 1], e1 = ri[2 * t + 2], o1 = ri[2 * t + 3];
          v0[t] = e0 - e1;
          v1[t] = o0 + e1;
          v2[t] = e1 - o0;
          v3[t] = o0 - o1;
        }
      }
    });
  }
}

// Output channel k's four outputs per tile, A^T M A plus the bias: o[i][t] for outputs (2 ty + i / 2,
// 2 tx + i % 2); `m` its row of the first position's matrix, the others `stride` floats apart.
void transform_outputs(const float* m, int64_t stride, int64_t tiles, float bias, float* o) {
  using simd::Vec;
  // A^T M A with M's rows m0..m3 (4 positions each): s0 = m0 + m1 + m2, s1 = m1 - m2 - m3, then
  // the same on columns of s0 and s1.
  const auto finish = [](const auto& at, const auto& plus, const auto& minus, auto bias_value, auto put) {
    decltype(at(0)) s0[4], s1[4];
    for (int u = 0; u < 4; ++u) {
      s0[u] = plus(plus(at(u), at(4 + u)), at(8 + u));
      s1[u] = minus(minus(at(4 + u), at(8 + u)), at(12 + u));
    }
    put(0, plus(plus(plus(s0[0], s0[1]), s0[2]), bias_value));
    put(1, plus(minus(minus(s0[1], s0[2]), s0[3]), bias_value));
    put(2, plus(plus(plus(s1[0], s1[1]), s1[2]), bias_value));
    put(3, plus(minus(minus(s1[1], s1[2]), s1[3]), bias_value));
  };
  int64_t t = 0;
  const Vec bias_vector = simd::broadcast(bias);
  for (; t + simd::kLanes <= tiles; t += simd::kLanes) {
    finish([&](int xi) { return simd::load(m + xi * stride + t); }, [](Vec a, Vec b) { return simd::add(a, b); },
           [](Vec a, Vec b) { return simd::sub(a, b); }, bias_vector,
           [&](int i, Vec x) { simd::store(o + i * tiles + t, x); });
  }
  for (; t < tiles; ++t) {
    finish([&](int xi) { return m[xi * stride + t]; }, [](float a, float b) { return a + b; },
           [](float a, float b) { return a - b; }, bias, [&](int i, float x) { o[i * tiles + t] = x; });
  }
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
  // Each position's matrix straight in pack_gemm_a's tile layout (packed_gemm.h): no temporary,
  // whose container would be a function outside this level's namespace (isa_namespace.h).
  for (int xi = 0; xi < kPositions; ++xi) {
    float* const out = packed + xi * packed_gemm_a_floats(c.mg, c.cg);
    for (int64_t tile = 0; tile * kGemmTileRows < c.mg; ++tile) {
      for (int64_t ch = 0; ch < c.cg; ++ch) {
        for (int64_t r = 0; r < kGemmTileRows; ++r) {
          const int64_t k = tile * kGemmTileRows + r;
          out[(tile * c.cg + ch) * kGemmTileRows + r] =
              k < c.mg ? static_cast<float>(transformed_weight(c.w + (k * c.cg + ch) * 9, xi)) : 0.0f;
        }
      }
    }
  }
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
  const GemmRowEpilogue none;
  for (int xi = 0; xi < kPositions; ++xi) {
    packed_gemm(c.packed_w + xi * packed_gemm_a_floats(c.mg, c.cg), c.mg, c.cg, v + xi * v_stride, tiles,
                m + xi * m_stride, tiles, tiles, none, panel);
  }
  for (int64_t k = 0; k < c.mg; ++k) {
    transform_outputs(m + k * tiles, m_stride, tiles, c.bias != nullptr ? c.bias[k] : 0.0f, o);
    float* const y = c.y + (n * c.out_channels + k) * c.output_plane;
    const float* const residual = c.residual != nullptr && k < c.residual_channels
                                      ? c.residual + (n * c.residual_channels + k) * c.output_plane
                                      : nullptr;
    for_each_run(g, tile_begin, tile_end, [&](const TileRun& run) {
      const int64_t x_begin = 2 * run.tx_begin, x_end = std::min(c.ow, 2 * run.tx_end);
      for (int i = 0; i < 2; ++i) {
        const int64_t oy = 2 * run.ty + i;
        if (oy >= c.oh) break;
        float* const row = y + oy * c.ow + x_begin;
        const float* left = o + (2 * i) * tiles + run.offset;
        const float* right = o + (2 * i + 1) * tiles + run.offset;
        const int64_t pairs = (x_end - x_begin) / 2;  // tiles whose two columns are both inside
        int64_t t = 0;
        for (; t + simd::kLanes <= pairs; t += simd::kLanes) {
          simd::interleave_store(row + 2 * t, simd::load(left + t), simd::load(right + t));
        }
        for (; t < pairs; ++t) {
          row[2 * t] = left[t];
          row[2 * t + 1] = right[t];
        }
        if (x_end - x_begin > 2 * pairs) row[2 * pairs] = left[pairs];  // an odd width's last column
        finish_row(c.epilogue, row, residual != nullptr ? residual + oy * c.ow + x_begin : nullptr, x_end - x_begin);
      }
    });
  }
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
