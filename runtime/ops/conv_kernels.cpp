// Conv's GEMM paths on one CPU ISA level (compiled once per level, see cpu_kernel_table.h);
// conv_cpu.cpp plans the work and threads it, conv_depthwise_kernels.cpp has the depthwise path.
//   pointwise (1x1, stride 1, no padding): Y[n, g] = W[g] (Mg x Cg) * X[n, g] (Cg x H*W), a GEMM
//     straight on the input planes;
//   dense (any other kernel, stride, dilation or padding), per band of output rows: the input
//     channels' rows for the band become phase planes (conv_phase_planes.h), in which each
//     (channel, ky, kx) tap is one contiguous run, and those runs are the rows of B:
//     W[g] (Mg x Cg*kh*kw) * B, with no im2col copy. Rows of whole vectors take one product per
//     output row, straight into Y; others one product over band x phase_cols outputs per channel,
//     whose rows are then compacted into Y. A band's buffers stay in L2.
// Both run the packed micro-kernel of packed_gemm.h, epilogue included.
#include <algorithm>

#include "runtime/ops/conv_epilogue_rows.h"
#include "runtime/ops/conv_phase_planes.h"
#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/isa_eigen.h"  // first: Eigen under this level's namespace
#include "runtime/ops/packed_gemm.h"
#include "runtime/ops/simd_packet.h"

EF_DECLARE_CPU_KERNELS(EF_ISA_NAMESPACE)

namespace edgefuse::EF_ISA_NAMESPACE {

static_assert(kGemmTileColumns <= kGemmPanelColumns, "the callers' scratch holds a panel of kGemmPanelColumns");
static_assert(kGemmRowBlockUnit % kGemmTileRows == 0, "row blocks start on a packed tile");

namespace {

// Bias, residual and activation of output channels [row_begin, ...) of group g, image n, with the
// GEMM's output at `y` (row stride ldy) and the residual laid out like Y.
GemmRowEpilogue row_epilogue(const Conv2d& c, int64_t n, int64_t g, int64_t row_begin, int64_t column) {
  GemmRowEpilogue epilogue;
  epilogue.bias = c.bias != nullptr ? c.bias + g * c.mg + row_begin : nullptr;
  // A residual of fewer channels (group 1) covers the first rows only, or none of these.
  const int64_t first_channel = g * c.mg + row_begin;
  epilogue.residual_rows = c.residual_channels - first_channel;
  epilogue.residual =
      c.residual != nullptr && epilogue.residual_rows > 0
          ? c.residual + n * c.residual_image + first_channel * c.residual_plane + (column - c.residual_begin)
          : nullptr;
  epilogue.ldr = c.residual_plane;
  epilogue.activation = c.epilogue;
  return epilogue;
}

// Every output channel of group g over the first `columns` flattened outputs (band rows x
// phase_cols) into `flat` (row stride ldf).
void dense_block(const Conv2d& c, const float* const* b_rows, int64_t g, int64_t columns, float* flat, int64_t ldf,
                 float* panel) {
  const int64_t k = c.kernel_columns;
  // The flattened product has no residual layout: a residual added before the activation leaves
  // the activation to dense_finish too.
  GemmRowEpilogue epilogue;
  epilogue.bias = c.bias != nullptr ? c.bias + g * c.mg : nullptr;
  const bool residual_first = c.residual != nullptr && !c.epilogue.residual_after_activation;
  if (!residual_first) epilogue.activation = c.epilogue;
  packed_gemm_indirect(c.packed_w + g * packed_gemm_a_floats(c.mg, k), c.mg, k, b_rows, 0, flat, ldf, columns, epilogue,
                       panel);
}

// The band's output rows compacted from `flat` into `out`, the residual added.
void dense_finish(const Conv2d& c, int64_t n, int64_t g, const float* flat, int64_t ldf, int64_t oy_begin,
                  int64_t oy_end, float* out, int64_t out_plane) {
  const bool residual_first = c.residual != nullptr && !c.epilogue.residual_after_activation;
  for (int64_t m = 0; m < c.mg; ++m) {
    const int64_t channel = g * c.mg + m;
    // Channels past a residual of fewer channels take none (and were activated by the GEMM only
    // when no channel adds the residual first).
    const bool has_residual = c.residual != nullptr && channel < c.residual_channels;
    const int64_t plane = (n * c.residual_channels + channel) * c.output_plane;
    for (int64_t oy = oy_begin; oy < oy_end; ++oy) {
      float* row = out + m * out_plane + (oy - oy_begin) * c.ow;
      simd::copy(row, flat + m * ldf + (oy - oy_begin) * c.phase_cols, c.ow);
      const float* residual = has_residual ? c.residual + plane + oy * c.ow : nullptr;
      if (residual_first) {
        finish_row(c.epilogue, row, residual, c.ow);
      } else if (residual != nullptr) {
        add_row(row, residual, c.ow);
      }
    }
  }
}

}  // namespace

int64_t conv_packed_weight_floats(const Conv2d& c) {
  return c.group * packed_gemm_a_floats(c.mg, c.kernel_columns);
}

void conv_pack_weights(const Conv2d& c, float* packed) {
  const int64_t k = c.kernel_columns;
  for (int64_t g = 0; g < c.group; ++g) {
    pack_gemm_a(c.w + g * c.mg * k, c.mg, k, k, packed + g * packed_gemm_a_floats(c.mg, k));
  }
}

void conv_pointwise_block(const Conv2d& c, int64_t n, int64_t g, int64_t row_begin, int64_t row_end, int64_t begin,
                          int64_t end, float* out, int64_t ldo, float* panel) {
  const int64_t k = c.kernel_columns;
  // Packed tiles are kGemmTileRows rows each and row_begin is a multiple of it.
  const float* packed = c.packed_w + g * packed_gemm_a_floats(c.mg, k) + row_begin * k;
  packed_gemm(packed, row_end - row_begin, k, c.x + (n * c.channels + g * c.cg) * c.input_plane + begin, c.input_plane,
              out, ldo, end - begin, row_epilogue(c, n, g, row_begin, begin), panel);
}

void conv_pointwise_from(const Conv2d& c, int64_t n, const float* b, int64_t ldb, int64_t begin, int64_t end,
                         float* panel) {
  packed_gemm(c.packed_w, c.mg, c.kernel_columns, b, ldb, c.y + n * c.out_channels * c.output_plane + begin,
              c.output_plane, end - begin, row_epilogue(c, n, 0, 0, begin), panel);
}

void conv_phase_band(const Conv2d& c, int64_t n, int64_t g, int64_t oy_begin, float* planes) {
  const int64_t rows = std::min(c.band_rows, c.oh - oy_begin) + (c.phase_rows - c.oh);
  if (c.channels_last) {
    fill_phase_rows_range_channels_last(c, c.x + n * c.channels * c.input_plane, g * c.cg, c.cg, oy_begin,
                                        oy_begin + rows, planes, c.band_plane_floats,
                                        planes + c.cg * c.sh * c.sw * c.band_plane_floats);
    return;
  }
  const int64_t per_channel = c.sh * c.sw * c.band_plane_floats;
  for (int64_t ch = 0; ch < c.cg; ++ch) {
    fill_phase_rows_range(c, c.x + (n * c.channels + g * c.cg + ch) * c.input_plane, oy_begin, oy_begin + rows,
                          planes + ch * per_channel, c.band_plane_floats);
  }
}

void conv_dense_band(const Conv2d& c, const float* const* b_rows, int64_t n, int64_t g, int64_t oy_begin,
                     int64_t oy_end, float* out, int64_t out_plane, float* flat, int64_t ldf, float* panel) {
  if (c.ow % simd::kLanes == 0) {
    // Rows of whole vectors: a GEMM per output row, straight into `out` with the whole epilogue
    // (its tiles then never end mid-vector), instead of the flattened product compacted after.
    const int64_t k = c.kernel_columns;
    const float* packed = c.packed_w + g * packed_gemm_a_floats(c.mg, k);
    for (int64_t oy = oy_begin; oy < oy_end; ++oy) {
      packed_gemm_indirect(packed, c.mg, k, b_rows, (oy - oy_begin) * c.phase_cols, out + (oy - oy_begin) * c.ow,
                           out_plane, c.ow, row_epilogue(c, n, g, 0, oy * c.ow), panel);
    }
    return;
  }
  dense_block(c, b_rows, g, (oy_end - oy_begin) * c.phase_cols, flat, ldf, panel);
  dense_finish(c, n, g, flat, ldf, oy_begin, oy_end, out, out_plane);
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
