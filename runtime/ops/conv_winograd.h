// Winograd F(2x2, 3x3) for the dense 3x3 stride-1 Convs of YOLOv5- and YOLOv8-style networks,
// most of their multiply-adds: each 2 x 2 block of outputs (a tile) is computed from its 4 x 4
// input patch as
//   Y = A^T [ (G g G^T) . (B^T d B) ] A
// with g the 3 x 3 kernel, d the patch and . elementwise over the 16 transformed positions. Per
// position xi that is one GEMM, U[xi] (out channels x in channels, the transformed weights) times
// V[xi] (in channels x tiles, the transformed patches): 16 products of depth C per 4 outputs where
// the direct Conv takes 36, a 2.25-fold cut in multiply-adds, for two cheap add-only transforms.
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]   G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
//   A^T = [1 1 1 0; 0 1 -1 -1]
// The transforms only add, subtract and halve, so the result stays within a few float roundings
// of the direct sum (unlike the larger F(4x4, 3x3), whose transforms scale by up to 8).
//
// Tiles run in bands of consecutive tiles (row-major over the image's tile grid, a band may start
// mid-row), each band's V and M in a buffer sized to stay in L2, each band reading its own input
// rows (with their zero padding, WinogradGeometry) straight from X.
#pragma once

#include <cstdint>

#include "runtime/ops/cpu_kernel_table.h"

namespace edgefuse {

// Whether Conv `c` (bound, CPU) takes the Winograd path: 3x3, stride 1, no dilation, group 1,
// NCHW in and out, no pooled residual, and enough work for the GEMMs to pay for the transforms,
// whose cost per tile grows as in + out channels where the GEMMs' grows as in x out. Measured on
// one thread (AVX-512, SiLU), Winograd's time over the direct Conv's: 32 -> 32 channels at 80 x 80
// outputs 0.68, 32 -> 64 0.76, 24 -> 24 1.0, 16 -> 32 1.2, 16 -> 16 at 160 x 160 1.0, 32 -> 32 at
// 20 x 20 0.85 (1.0 on two threads); on small planes, where each band's fixed costs weigh more, 64
// -> 64 at 10 x 10 (25 tiles) 0.87 (1.0 on two), 48 -> 48 0.96, 32 -> 32 1.08, and below 25 tiles
// 1.5 to 2 (128 -> 128 at 6 x 6). So in x out >= 14 (in + out) from 100 tiles (20 x 20 outputs)
// on, >= 32 (in + out) from 25 tiles on, and never below.
inline bool conv_winograd_eligible(const Conv2d& c) {
  const int64_t product = c.cg * c.mg, sum = c.cg + c.mg;
  const int64_t tiles = ((c.oh + 1) / 2) * ((c.ow + 1) / 2);
  return c.kh == 3 && c.kw == 3 && c.sh == 1 && c.sw == 1 && c.dh == 1 && c.dw == 1 && c.group == 1 &&
         !c.channels_last && !c.residual_pooled && !c.output_channels_last && c.oh >= 2 && c.ow >= 2 &&
         (tiles >= 100 ? product >= 14 * sum : tiles >= 25 && product >= 32 * sum);
}

// The tile grid and the padded input it reads: tile (ty, tx) covers outputs (2 ty + i, 2 tx + j),
// i, j < 2 (those past oh or ow are computed and dropped), from padded rows 2 ty .. 2 ty + 3 and
// columns 2 tx .. 2 tx + 3; padded (r, s) is input (r - ph, s - pw), zero outside.
struct WinogradGeometry {
  int64_t tile_rows, tile_cols;      // ceil(oh / 2), ceil(ow / 2)
  int64_t padded_rows, padded_cols;  // 2 tile_rows + 2, 2 tile_cols + 2
  int64_t tiles() const { return tile_rows * tile_cols; }
  int64_t padded_plane() const { return padded_rows * padded_cols; }
};

inline WinogradGeometry winograd_geometry(const Conv2d& c) {
  WinogradGeometry g{};
  g.tile_rows = (c.oh + 1) / 2;
  g.tile_cols = (c.ow + 1) / 2;
  g.padded_rows = 2 * g.tile_rows + 2;
  g.padded_cols = 2 * g.tile_cols + 2;
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

}  // namespace edgefuse
