// What the Winograd F(2x2) and F(4x4) kernels (conv_winograd.h) share on one CPU ISA level: the
// layout of their transformed matrices and the walk over a band's tile rows. Per-ISA
// (isa_namespace.h): include from per-ISA sources only.
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/ops/conv_winograd.h"
#include "runtime/ops/isa_namespace.h"
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

}  // namespace edgefuse::EF_ISA_NAMESPACE::winograd
