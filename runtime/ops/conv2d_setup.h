// From a Conv node's validated problem to the raw-pointer Conv2d its CPU kernels run on, shared by
// the single-Conv kernel (conv_cpu.cpp) and the two-Conv kernels (conv_pair_cpu.cpp).
#pragma once

#include <optional>
#include <vector>

#include "runtime/op_table.h"
#include "runtime/ops/conv_epilogue.h"
#include "runtime/ops/conv_problem.h"
#include "runtime/ops/cpu_kernel_table.h"

namespace edgefuse {

// What the optimised Conv kernels derive from a Conv node and its inputs' dtypes and shapes,
// validated (conv_problem, conv_epilogue) and kept per node (kernel_setup.h): whether the Conv is
// 1-D or 2-D, and then its Conv2d without operand pointers: geometry padded to two spatial dims,
// phase-plane sizes, epilogue (band_rows, band_plane_floats and packed_w are left for the path
// that runs it).
struct ConvSetup {
  bool planar = false;
  Conv2d shape{};
};
Result<const ConvSetup*> conv_setup(const KernelArgs& args, std::optional<ConvSetup>& uncached);

// `shape` (a ConvSetup's) with the operand pointers of args.
Conv2d bind_conv2d(const Conv2d& shape, const KernelArgs& args);

// For a Conv with a pooled residual (Conv2d::residual_pooled), in the GEMM epilogue of outputs in
// rows [oy_begin, oy_end) of image n: residual channels [first_channel, end_channel) over those
// rows, pooled into `buffer` (grown as needed), and `c` reading its residual from there.
Conv2d with_pooled_residual_rows(const Conv2d& c, const CpuKernelTable& kernels, int64_t n, int64_t first_channel,
                                 int64_t end_channel, int64_t oy_begin, int64_t oy_end, std::vector<float>& buffer);

// The weights in the GEMM tile layout of `kernels`' level: packed once and kept in the node's
// cache when they are constant, else packed on every call into a thread-local buffer.
const float* packed_conv_weights(const Conv2d& c, const CpuKernelTable& kernels, const KernelArgs& args);
// The same for the Winograd path's transformed weights (conv_winograd.h), F(tile x tile, 3x3).
const float* winograd_conv_weights(const Conv2d& c, int tile, const CpuKernelTable& kernels, const KernelArgs& args);

// Floats of a dense Conv's band buffer for conv_phase_band (band_plane_floats set): every input
// channel's phase planes, then, for a channels-last input, one input row split by channel.
inline int64_t dense_band_floats(const Conv2d& c) {
  return c.cg * c.sh * c.sw * c.band_plane_floats + (c.channels_last ? c.cg * c.iw : 0);
}

// The B rows of a dense Conv's band GEMM (conv_kernels.cpp) over `planes` in conv_phase_band's
// layout (band_plane_floats set): tap (ch, ky, kx), row (ch * kh + ky) * kw + kx of the weights,
// reads its channel's phase plane (ky*dh % sh, kx*dw % sw) from row ky*dh / sh, column kx*dw / sw
// on. `b_rows` holds kernel_columns pointers.
void dense_tap_rows(const Conv2d& c, const float* planes, const float** b_rows);

}  // namespace edgefuse
