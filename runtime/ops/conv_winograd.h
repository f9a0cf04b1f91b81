// Winograd F(2x2, 3x3) and F(4x4, 3x3) for the dense 3x3 stride-1 Convs of YOLOv5- and
// YOLOv8-style networks, most of their multiply-adds: each m x m block of outputs (a tile, m = 2
// or 4) is computed from its (m + 2) x (m + 2) input patch as
//   Y = A^T [ (G g G^T) . (B^T d B) ] A
// with g the 3 x 3 kernel, d the patch and . elementwise over the (m + 2)^2 transformed positions.
// Per position xi that is one GEMM, U[xi] (out channels x in channels, the transformed weights)
// times V[xi] (in channels x tiles, the transformed patches): F(2x2) takes 16 products of depth C
// per 4 outputs where the direct Conv takes 36 (2.25 times fewer multiply-adds), F(4x4) 36 per 16
// (4 times fewer), for the transforms. F(2x2):
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]   G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
//   A^T = [1 1 1 0; 0 1 -1 -1]
// whose transforms only add, subtract and halve, so the result stays within a few float roundings
// of the direct sum. F(4x4), on the points 0, +-1, +-2:
//   B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
//   G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
//   A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
// whose coefficients up to 8 cost about a decimal digit: within about 1e-5 of the direct sum.
//
// Tiles run in bands of consecutive tiles (row-major over the image's tile grid, a band may start
// mid-row), each band's V and M in a buffer sized to stay in L2, each band reading its own input
// rows (with their zero padding, WinogradGeometry) straight from X.
#pragma once

#include <cstdint>

#include "runtime/ops/cpu_kernel_table.h"

namespace edgefuse {

// Which Winograd path Conv `c` (bound, CPU) takes: the output tile size m, 2 or 4, or 0 for none.
// Only 3x3, stride 1, no dilation, group 1, NCHW in and out, no pooled residual, and enough work
// for the GEMMs to pay for the transforms, whose cost per tile grows as in + out channels where
// the GEMMs' grows as in x out. Measured on one thread (AVX-512, SiLU), F(2x2)'s time over the
// direct Conv's: 32 -> 32 channels at 80 x 80 outputs 0.68, 32 -> 64 0.76, 24 -> 24 1.0, 16 -> 32
// 1.2, 16 -> 16 at 160 x 160 1.0, 32 -> 32 at 20 x 20 0.85 (1.0 on two threads); on small planes,
// where each band's fixed costs weigh more, 64 -> 64 at 10 x 10 (25 tiles) 0.87 (1.0 on two),
// 48 -> 48 0.96, 32 -> 32 1.08, and below 25 tiles 1.5 to 2 (128 -> 128 at 6 x 6). So in x out
// >= 14 (in + out) from 100 tiles (20 x 20 outputs) on, >= 32 (in + out) from 25 tiles on, and
// never below. F(4x4)'s time over F(2x2)'s: 64 -> 64 at 80 x 80 0.79 (0.84 on two threads), 80 ->
// 80 0.80, 48 -> 48 0.86, 32 -> 64 0.81 (0.85), 32 -> 32 1.16; at 40 x 40 (100 of its tiles) 64
// -> 64 0.89 but 1.09 on two threads (bands of 25 tiles), 128 -> 128 at 20 x 20 0.92 but 1.14 on
// two, 96 -> 96 1.22, and at 10 x 10 1.6. So F(4x4) from 200 of its tiles on (about 56 x 56
// outputs), with in x out >= 20 (in + out); the choice does not depend on the threads, so that
// the numbers do not either.
inline int conv_winograd_tile(const Conv2d& c) {
  const int64_t product = c.cg * c.mg, sum = c.cg + c.mg;
  const int64_t tiles = ((c.oh + 1) / 2) * ((c.ow + 1) / 2);
  const bool eligible = c.kh == 3 && c.kw == 3 && c.sh == 1 && c.sw == 1 && c.dh == 1 && c.dw == 1 && c.group == 1 &&
                        !c.channels_last && !c.residual_pooled && !c.output_channels_last && c.oh >= 2 && c.ow >= 2 &&
                        (tiles >= 100 ? product >= 14 * sum : tiles >= 25 && product >= 32 * sum);
  if (!eligible) return 0;
  return ((c.oh + 3) / 4) * ((c.ow + 3) / 4) >= 200 && product >= 20 * sum ? 4 : 2;
}

// The tile grid of m x m output tiles and the padded input it reads: tile (ty, tx) covers outputs
// (m ty + i, m tx + j), i, j < m (those past oh or ow are computed and dropped), from padded rows
// m ty .. m ty + m + 1 and the same columns; padded (r, s) is input (r - ph, s - pw), zero outside.
struct WinogradGeometry {
  int64_t tile_rows, tile_cols;  // ceil(oh / m), ceil(ow / m)
  int64_t padded_cols;           // m tile_cols + 2
  int64_t tiles() const { return tile_rows * tile_cols; }
};

inline WinogradGeometry winograd_geometry(const Conv2d& c, int64_t m = 2) {
  WinogradGeometry g{};
  g.tile_rows = (c.oh + m - 1) / m;
  g.tile_cols = (c.ow + m - 1) / m;
  g.padded_cols = m * g.tile_cols + 2;
  return g;
}

// Floats after the padded rows that the patch transform's last vector of tiles may read: two
// vectors of the widest level (AVX-512).
inline constexpr int64_t kWinogradRowSlack = 32;

// Floats of the scratch conv_winograd_tiles needs for a band of `tiles` tiles: V (16 x in channels
// x tiles), M (16 x out channels x tiles), each position's matrix a cache line apart, one output
// channel's four outputs per tile, four padded rows (the input rows' combinations) per tile row
// the band spans, a row of zeros, and their slack.
inline int64_t winograd_scratch_floats(const Conv2d& c, int64_t tiles) {
  const WinogradGeometry g = winograd_geometry(c);
  const int64_t max_runs = tiles / g.tile_cols + 2;
  return 16 * (tiles * (c.cg + c.mg) + 32) + 4 * tiles + (4 * max_runs + 1) * g.padded_cols + kWinogradRowSlack;
}

// F(4x4)'s band buffers (conv_winograd4x4_tiles), in floats: the horizontal combinations of one
// input row, 6 rows of tiles (whole vectors of the widest level and one more); one zero-padded
// input row, with room for the last vector of tiles' reads past it.
inline int64_t winograd4x4_row_floats(const WinogradGeometry& g) {
  return 6 * ((g.tile_cols + 15) / 16 * 16 + 16);
}
inline int64_t winograd4x4_padded_row_floats(const WinogradGeometry& g) {
  return (g.padded_cols + 80 + 15) / 16 * 16;
}
// Padded input rows a band of `tiles` tiles reads, at most.
inline int64_t winograd4x4_band_rows(const WinogradGeometry& g, int64_t tiles) {
  return 4 * (tiles / g.tile_cols + 2) + 2;
}

// Floats of the scratch conv_winograd4x4_tiles needs for a band of `tiles` tiles: V (36 x in
// channels x tiles) and M (36 x out channels x tiles), each position's matrix a cache line apart,
// one output channel's 16 outputs per tile and a vector's slack, the band's rows' horizontal
// combinations and one zero row of them, and two sets of padded input rows (one channel's while
// the next channel's are copied).
inline int64_t winograd4x4_scratch_floats(const Conv2d& c, int64_t tiles) {
  const WinogradGeometry g = winograd_geometry(c, 4);
  const int64_t rows = winograd4x4_band_rows(g, tiles);
  return 36 * (tiles * (c.cg + c.mg) + 32) + 16 * tiles + 64 + (rows + 1) * winograd4x4_row_floats(g) +
         2 * rows * winograd4x4_padded_row_floats(g);
}

}  // namespace edgefuse
