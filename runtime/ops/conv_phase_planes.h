// A Conv input plane rearranged so that every kernel tap reads one contiguous run, whatever the
// stride, dilation and padding: sh x sw zero-padded phase planes of phase_rows x phase_cols,
//   Q[py][px][i][j] = padded input[i * sh + py][j * sw + px],
// in which output (oy, ox) reads tap (ky, kx) at
//   Q[ky*dh % sh][kx*dw % sw][oy + ky*dh / sh][ox + kx*dw / sw].
// Flattening (oy, ox) as oy * phase_cols + ox, each tap is the plane's flattened data from a fixed
// offset on: the depthwise kernel reads it directly, the dense (im2col-free) Conv uses the offsets
// as the rows of its GEMM's B matrix. Each of the ow..phase_cols - 1 columns per row is computed
// and dropped. Geometry in Conv2d (cpu_kernel_table.h).
// Per-ISA (isa_namespace.h): include from per-ISA sources only.
#pragma once

#include <cstdint>

#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/isa_namespace.h"

namespace edgefuse::EF_ISA_NAMESPACE {

// Phase rows [row_begin, row_end) of the sh * sw phase planes of `in`, stored from row 0 of planes
// `plane_floats` long, then a row and kConvPhaseSlack floats of zeros (as far as the plane goes),
// which is as far as readers run past the last row: a band of output rows needs its own rows and
// (kh - 1) * dh / sh more. The whole plane is rows [0, phase_rows).
void fill_phase_rows_range(const Conv2d& c, const float* in, int64_t row_begin, int64_t row_end, float* planes,
                           int64_t plane_floats);

// The same for `channels` channels from first_channel on of a channels-last image (X's image n,
// positions c.channels floats apart), channel ch's planes from planes + ch * sh * sw * plane_floats.
// Each input row is first transposed into `split` (channels x iw floats), one row per channel.
void fill_phase_rows_range_channels_last(const Conv2d& c, const float* image, int64_t first_channel, int64_t channels,
                                         int64_t row_begin, int64_t row_end, float* planes, int64_t plane_floats,
                                         float* split);

}  // namespace edgefuse::EF_ISA_NAMESPACE
